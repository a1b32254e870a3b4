import { describe, expect, test } from 'vitest';
import { correctDomain, verifyOffline, type VerifyPolicy } from '../../../service/engine/index.js';
import { statusForCode } from '../../../shared/api/codes.js';

const WITH_CORRECTIONS: VerifyPolicy = { corrections: true, allow: new Set(), suppress: new Set() };
const correctionsOf = (input: string, policy = WITH_CORRECTIONS): readonly string[] | undefined =>
  verifyOffline(input, policy).corrections;

test('acceptance: jane.doe@gmial.com is valid offline and corrected to gmail.com', () => {
  const verdict = verifyOffline('jane.doe@gmial.com', WITH_CORRECTIONS);
  expect(verdict.code).toBe(10);
  expect(statusForCode(verdict.code, 'safe_to_send')).toBe('valid');
  expect(verdict.corrections).toEqual(['jane.doe@gmail.com']);
});

test('a typo-squatted look-alike on the free-mail list is not reported as a free ISP', () => {
  expect(verifyOffline('jane.doe@gmial.com', WITH_CORRECTIONS)).toEqual({
    address: 'jane.doe@gmial.com',
    code: 10,
    corrections: ['jane.doe@gmail.com'],
  });
  expect(
    verifyOffline('jane.doe@hotmial.com', { ...WITH_CORRECTIONS, corrections: false }),
  ).not.toHaveProperty('domainType');
  expect(verifyOffline('jane.doe@gmx.com', WITH_CORRECTIONS)).toMatchObject({ domainType: 'freeisp' });
});

test('no corrections unless the policy asks for them', () => {
  expect(verifyOffline('jane.doe@gmial.com', { ...WITH_CORRECTIONS, corrections: false })).not.toHaveProperty(
    'corrections',
  );
});

test('a correct address gets no corrections key', () => {
  expect(verifyOffline('jane.doe@gmail.com', WITH_CORRECTIONS)).not.toHaveProperty('corrections');
});

describe('misspelt provider domains', () => {
  test.each([
    ['jane.doe@gamil.com', 10, 'jane.doe@gmail.com'],
    ['jane.doe@gmaill.com', 10, 'jane.doe@gmail.com'],
    ['jane.doe@gmail.con', 200, 'jane.doe@gmail.com'],
    ['jane.doe@gmail.cmo', 200, 'jane.doe@gmail.com'],
    ['jane.doe@gmial.con', 200, 'jane.doe@gmail.com'],
    ['jane.doe@gmail.co', 10, 'jane.doe@gmail.com'],
    ['jane.doe@gmail', 115, 'jane.doe@gmail.com'],
    ['jane.doe@gmailcom', 115, 'jane.doe@gmail.com'],
    ['jane.doe@hotmial.com', 10, 'jane.doe@hotmail.com'],
    ['jane.doe@hotmial.co.uk', 10, 'jane.doe@hotmail.co.uk'],
    ['jane.doe@hotmail.co.uj', 200, 'jane.doe@hotmail.co.uk'],
    ['jane.doe@yahooo.com', 10, 'jane.doe@yahoo.com'],
    ['jane.doe@outlok.com', 10, 'jane.doe@outlook.com'],
    ['jane.doe@iclod.com', 10, 'jane.doe@icloud.com'],
    ['jane.doe@aol.con', 200, 'jane.doe@aol.com'],
    ['jane.doe@comcats.net', 10, 'jane.doe@comcast.net'],
    ['jane.doe@protomail.com', 10, 'jane.doe@protonmail.com'],
    ['Jane.Doe@GMIAL.COM', 10, 'Jane.Doe@gmail.com'],
    ['jane.doe@gmiol.com', 10, 'jane.doe@gmail.com'], // two slips, length and first letter kept
    ['jane.doe@gmail.c', 200, 'jane.doe@gmail.com'], // the TLD cut short
    ['jane.doe@hotmail.co.u', 200, 'jane.doe@hotmail.co.uk'],
    ['jane.doe@outlook.', 115, 'jane.doe@outlook.com'],
    ['jane.doe@outlok.c', 200, 'jane.doe@outlook.com'],
    ['jane.doe@gmai.com', 525, 'jane.doe@gmail.com'], // a squatted typo the disposable list names
  ])('%s (%i) → %s', (input, code, corrected) => {
    const verdict = verifyOffline(input, WITH_CORRECTIONS);
    expect(verdict.code).toBe(code);
    expect(verdict.corrections).toEqual([corrected]);
  });

  test.each([
    'gmx.com', // not gmail.com
    'gmx.net',
    'hotmail.co.uk', // not hotmail.com
    'ymail.com', // not gmail.com
    'mail.com',
    'email.com',
    'me.com',
    'mac.com',
    'aol.com',
    'aim.com',
    'live.com',
    'googlemail.com',
    'outlook.fr',
    'yahoo.com.ar', // a real Yahoo domain, though one edit from yahoo.com.au
    'hotmail.co.jp',
    'comcast.net',
    'earthlink.net',
    'earthling.net', // a real provider one edit from earthlink.net
    'y7mail.com', // Yahoo7, one edit from ymail.com
    'duck.com',
    'foxmail.com', // two edits from hotmail.com, but not two slips of the keys
    'popmail.com',
    'homemail.com',
    'prontomail.com', // two slips from protonmail.com, a service of its own
  ])('a real provider is never corrected: %s', (domain) => {
    expect(correctDomain(domain)).toBeUndefined();
    expect(correctionsOf(`jane.doe@${domain}`)).toBeUndefined();
  });

  test.each([
    ['aon.com', 'a real company one edit from aol.com: short names are not corrected by spelling'],
    ['xmail.com', 'as near gmail.com as ymail.com'],
    ['hotmail.co', 'hotmail.com or hotmail.co.uk?'],
    ['yahoo.co', 'yahoo.com, yahoo.co.uk or yahoo.co.in?'],
    ['example.co', 'a real TLD on an unknown domain'],
    ['gmail.co.uk', 'a real domain whose name matches but whose suffix is real too'],
    ['mail.gmial.com', 'a subdomain'],
  ])('no correction for an unclear case: %s (%s)', (domain) => {
    expect(correctionsOf(`jane.doe@${domain}`)).toBeUndefined();
  });
});

describe('fixable syntax errors: the error code stays, the correction is offered', () => {
  test.each([
    [' jane.doe@example.com', 210, 'jane.doe@example.com'],
    ['jane.doe@example.com\r\n', 210, 'jane.doe@example.com'],
    ['\r\n jane.doe@gmial.com\t', 210, 'jane.doe@gmail.com'],
    ['jane.doe@example.com,', 210, 'jane.doe@example.com'],
    ['jane.doe@example.com.,', 210, 'jane.doe@example.com'],
    ['<jane.doe@example.com>', 210, 'jane.doe@example.com'],
    ['Jane Doe <jane.doe@example.com>', 210, 'jane.doe@example.com'],
    ['"jane.doe@example.com"', 210, 'jane.doe@example.com'],
    ['jane.doe@example.com.', 115, 'jane.doe@example.com'],
    ['jane.doe @ example.com', 215, 'jane.doe@example.com'],
    ['jane. doe@example.com', 215, 'jane.doe@example.com'],
    ['jane.doe@exam ple.com', 215, 'jane.doe@example.com'],
    ['jane.doe@@example.com', 155, 'jane.doe@example.com'],
    ['jane.doe.gmail.com', 150, 'jane.doe@gmail.com'],
    ['jane.doe gmail.com', 150, 'jane.doe@gmail.com'],
    ['jane.doe@gmail,com', 110, 'jane.doe@gmail.com'],
    ['"jane.doe"@example.com', 110, 'jane.doe@example.com'],
    ['.jane.doe@example.com', 120, 'jane.doe@example.com'],
    ['jane..doe@example.com', 120, 'jane.doe@example.com'],
    ['jane.doe@example..com', 115, 'jane.doe@example.com'],
    ['jane.doe@ｇｍａｉｌ．ｃｏｍ', 115, 'jane.doe@gmail.com'],
    ['jane.doe@example.con', 200, 'jane.doe@example.com'],
    ['jane.doe@example.ogr', 200, 'jane.doe@example.org'],
    ['jane.doe@example.c', 200, 'jane.doe@example.com'],
    ['jane.doe@gmial.com,', 210, 'jane.doe@gmail.com'], // repaired, then respelt
  ])('%j (%i) → %s', (input, code, corrected) => {
    const verdict = verifyOffline(input, WITH_CORRECTIONS);
    expect(verdict.code).toBe(code);
    expect(verdict.corrections).toEqual([corrected]);
  });

  test.each([
    ['jane doe@example.com', 'jane.doe, janedoe or jane_doe?'],
    ['jane@doe@example.com', 'which @?'],
    ['janedoe', 'no domain to be found'],
    ['jane@x.com(comment)', 'nothing plainly meant'],
    ['jane.doe@exa_mple.com', 'no rule fixes it'],
  ])('no correction where a repair would be a guess: %j (%s)', (input) => {
    expect(correctionsOf(input)).toBeUndefined();
  });
});

describe('a correction must pass every check itself', () => {
  test('not when the corrected address breaks the provider rules', () => {
    expect(verifyOffline('jo@gmial.com', WITH_CORRECTIONS)).toEqual({ address: 'jo@gmial.com', code: 10 });
  });

  test('not when the corrected address is suppressed; yes when it is allowed', () => {
    const suppressing = { ...WITH_CORRECTIONS, suppress: new Set(['gmail.com']) };
    expect(correctionsOf('jane.doe@gmial.com', suppressing)).toBeUndefined();
    const allowing = { ...WITH_CORRECTIONS, allow: new Set(['jane.doe@gmail.com']) };
    expect(correctionsOf('jane.doe@gmial.com', allowing)).toEqual(['jane.doe@gmail.com']);
  });

  test('not when the repaired address is itself disposable', () => {
    expect(correctionsOf('jane.doe@mailinator.com,')).toBeUndefined();
  });

  test('no corrections for list decisions or unaccepted usernames', () => {
    expect(correctionsOf('abuse@gmial.com')).toBeUndefined();
    expect(
      correctionsOf('jane.doe@gmial.com', { ...WITH_CORRECTIONS, allow: new Set(['gmial.com']) }),
    ).toBeUndefined();
    expect(
      correctionsOf('jane.doe@gmial.com', { ...WITH_CORRECTIONS, suppress: new Set(['gmial.com']) }),
    ).toBeUndefined();
  });
});
