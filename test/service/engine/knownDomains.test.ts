// The free-mail domains the engine keeps what it learnt of (service/engine/knownDomains.ts): an address at a
// kept domain gets the verdict it got before the domain was kept, every check of the address itself still
// made; only free-mail domains are kept.
import { describe, expect, test } from 'vitest';
import { knownDomain } from '../../../service/engine/knownDomains.js';
import { NO_POLICY, verifyOffline, type VerifyPolicy } from '../../../service/engine/index.js';

const withCorrections: VerifyPolicy = { ...NO_POLICY, corrections: true };

describe('known free-mail domains', () => {
  test('an address at a kept domain is judged as before it was kept', () => {
    // Each address first at a domain not kept yet, then again with the domain kept.
    const addresses = [
      'first.person@gmail.com',
      'ab@gmail.com', // too short a username for Gmail: 125 (the provider's rules still apply)
      'support@gmail.com', // a role account
      'noreply@gmail.com', // an unaccepted username: 500
      'a..b@gmail.com', // the local part's own checks still apply
      `${'x'.repeat(65)}@gmail.com`, // too long a local part
      'Jane.Doe@GMAIL.COM',
    ];
    expect(knownDomain('gmail.com')).toBeUndefined();
    const first = addresses.map((address) => verifyOffline(address, withCorrections));
    expect(knownDomain('gmail.com')).toEqual({ ascii: 'gmail.com', type: 'freeisp' });
    expect(addresses.map((address) => verifyOffline(address, withCorrections))).toEqual(first);
    expect(first.map((verdict) => verdict.code)).toEqual([10, 125, 10, 500, 120, 130, 10]);
    expect(first[0].domainType).toBe('freeisp');
    expect(first[2].roleAccount).toBe(true);
  });

  test('keeps free-mail domains only: not a company’s, not a misspelt provider the free-mail list names', () => {
    verifyOffline('jane@acme-widgets.com', withCorrections);
    expect(knownDomain('acme-widgets.com')).toBeUndefined();
    // gmial.com is in the free-mail list, but as a misspelling of gmail.com: no domain type, not kept.
    const typo = verifyOffline('jane@gmial.com', withCorrections);
    expect(typo.domainType).toBeUndefined();
    expect(knownDomain('gmial.com')).toBeUndefined();
    expect(verifyOffline('jane@gmial.com', withCorrections)).toEqual(typo);
  });
});
