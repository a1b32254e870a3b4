// syntaxVerdict (the app's pre-check of a million rows) against verifyOffline: the same address, and an
// invalid verdict exactly when verifyOffline's is invalid under no client lists — over syntax errors,
// unaccepted and role usernames, disposable and typo domains, IDN, quoted local parts and white space.
import { describe, expect, it } from 'vitest';
import { statusForCode } from '../../../shared/api/codes.js';
import { NO_POLICY, syntaxVerdict, verifyOffline } from '../../../service/engine/index.js';

const ADDRESSES = [
  'jane.doe@example.com',
  ' Jane.Doe@Example.COM ',
  'jane..doe@example.com',
  '.jane@example.com',
  'jane@',
  '@example.com',
  'jane',
  'jane@@example.com',
  'jane@example',
  'jane@example.con',
  'jane@exa mple.com',
  'jane doe@example.com',
  'jane@example.com.',
  'jane@-example.com',
  'jane@example..com',
  `${'a'.repeat(65)}@example.com`,
  `jane@${'a'.repeat(250)}.com`,
  'abuse@example.com',
  'no-reply@example.com',
  'No_Reply+tag@example.com',
  'mailer-daemon@example.com',
  'postmaster@example.com',
  'info@example.com',
  'sales@example.com',
  'jane@mailinator.com',
  'jane@gmial.com',
  'jane@gmai.com',
  'jane@hotmial.com',
  'ab@gmail.com',
  'a@yahoo.com',
  'jane_doe@yahoo.com',
  'jane.@gmail.com',
  'josé@exämple.com',
  'jane@xn--exmple-cua.com',
  '"jane doe"@example.com',
  '"jane@doe"@example.com',
  'jane(comment)@example.com',
  'jane@[127.0.0.1]',
  'jane@example.com,bob@example.com',
  'jane@example.com;',
  '<jane@example.com>',
  'mailto:jane@example.com',
  'jane@localhost',
  'jane+news@gmail.com',
  '',
  '   ',
  'ünïcödé@例え.jp',
];

describe('syntaxVerdict', () => {
  it('agrees with verifyOffline on the address and on every invalid verdict', () => {
    for (const input of ADDRESSES) {
      const full = verifyOffline(input, NO_POLICY);
      const quick = syntaxVerdict(input);
      expect(quick.address, input).toBe(full.address);
      expect(statusForCode(quick.code, 'email_validation') === 'invalid', input).toBe(
        statusForCode(full.code, 'email_validation') === 'invalid',
      );
      if (statusForCode(full.code, 'email_validation') === 'invalid')
        expect(quick.code, input).toBe(full.code);
    }
    // The list reaches each kind of verdict it must tell apart.
    const statuses = new Set(
      ADDRESSES.map((a) => statusForCode(verifyOffline(a, NO_POLICY).code, 'email_validation')),
    );
    expect(statuses).toContain('invalid');
    expect(statuses).toContain('unknown');
    expect(ADDRESSES.map((a) => verifyOffline(a, NO_POLICY).code)).toEqual(
      expect.arrayContaining([500, 525]),
    );
  });
});
