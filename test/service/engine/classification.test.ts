import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { usernameKey, usernameKind, usernameKindOf } from '../../../service/engine/roles.js';
import {
  NO_POLICY,
  domainTypeOf,
  isRoleAccount,
  isUnacceptedUsername,
  verifyOffline,
} from '../../../service/engine/index.js';

describe('role accounts', () => {
  test.each([
    'info',
    'sales',
    'Support',
    'ADMIN',
    'contact',
    'office',
    'team',
    'hr',
    'jobs',
    'billing',
    'webmaster',
  ])('%s@ is a role account with code 10', (local) => {
    expect(verifyOffline(`${local}@acme-widgets.com`, NO_POLICY)).toEqual({
      address: `${local}@acme-widgets.com`,
      code: 10,
      roleAccount: true,
    });
  });

  test('matched before a +tag and regardless of separators', () => {
    expect(isRoleAccount('sales+eu')).toBe(true);
    expect(isRoleAccount('Customer.Service')).toBe(true);
    expect(isRoleAccount('customer_service')).toBe(true);
  });

  test('a person is not a role account, and the key is absent', () => {
    expect(isRoleAccount('jane.doe')).toBe(false);
    expect(isRoleAccount('information.officer')).toBe(false);
    expect(verifyOffline('jane.doe@acme-widgets.com', NO_POLICY)).not.toHaveProperty('roleAccount');
  });
});

test('the per-address answer (usernameKindOf, from a hash of the characters) is usernameKind of the key', () => {
  const roles = readFileSync(
    new URL('../../../service/engine/data/role-accounts.txt', import.meta.url),
    'utf8',
  );
  const unaccepted = readFileSync(
    new URL('../../../service/engine/data/unaccepted-usernames.txt', import.meta.url),
    'utf8',
  );
  const names = [...roles.split('\n'), ...unaccepted.split('\n')]
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((name) => name !== '');
  expect(names.length).toBeGreaterThan(50);
  const locals = ['jane.doe', 'Zoë', 'ınfo', 'info\u0130', 'x+info', '', '+', '._-', 'Info.', 'ＩＮＦＯ'];
  for (const name of names) {
    const dotted = name.length > 2 ? `${name.slice(0, 2)}.${name.slice(2)}` : name;
    locals.push(name, name.toUpperCase(), `${dotted}+tag`, `_${name}-`, `${name}x`, `é${name}`);
  }
  for (const local of locals) expect(usernameKindOf(local), local).toBe(usernameKind(usernameKey(local)));
  expect(usernameKindOf('No-Reply+x')).toBe('unaccepted');
  expect(usernameKindOf('Sales.Team')).toBe(usernameKind('salesteam'));
});

describe('unaccepted usernames: code 500, and role accounts too', () => {
  test.each([
    'abuse',
    'Abuse+reports',
    'noc',
    'security',
    'spam',
    'no-reply',
    'noreply',
    'no_reply',
    'donotreply',
    'do-not-reply',
    'mailer-daemon',
  ])('%s@', (local) => {
    const verdict = verifyOffline(`${local}@acme-widgets.com`, NO_POLICY);
    expect(verdict.code).toBe(500);
    expect(verdict.roleAccount).toBe(true);
    expect(isUnacceptedUsername(local)).toBe(true);
  });

  test('postmaster is a role account, not unaccepted (RFC 5321 requires it to take mail)', () => {
    expect(verifyOffline('postmaster@acme-widgets.com', NO_POLICY)).toMatchObject({
      code: 10,
      roleAccount: true,
    });
  });
});

describe('domain types', () => {
  test.each([
    ['jane.doe@gmail.com', 'freeisp', 10],
    ['jane@gmx.de', 'freeisp', 10],
    ['jane@mailinator.com', 'disposable', 525],
    ['jane@inbox.mailinator.com', 'disposable', 525], // the wildcard list covers subdomains
    ['jane@guerrillamail.com', 'disposable', 525],
    ['jane@comcast.net', 'paidisp', 10],
    ['jane@mail.comcast.net', 'paidisp', 10], // a subdomain of a curated domain
    ['jane@btinternet.com', 'paidisp', 10], // curated paidisp wins over free-email-domains
    ['5551234567@vtext.com', 'wireless', 10],
    ['5551234567@txt.att.net', 'wireless', 10], // the most specific curated domain wins over att.net
    ['5551234567@tmomail.net', 'wireless', 10],
    ['abc123@privaterelay.appleid.com', 'privacy', 10],
    ['jane@duck.com', 'privacy', 10],
    ['x.y@mozmail.com', 'privacy', 10],
    ['jane@anonaddy.me', 'privacy', 10], // curated privacy wins over the disposable wildcard list
    ['jane@harvard.edu', 'edu', 10],
    ['jane@cs.ox.ac.uk', 'edu', 10],
    ['jane@unsw.edu.au', 'edu', 10],
    ['jane@nasa.gov', 'gov', 10],
    ['jane@army.mil', 'gov', 10],
    ['jane@justice.gouv.fr', 'gov', 10],
    ['jane@cabinetoffice.gov.uk', 'gov', 10],
    ['jane@tbs-sct.gc.ca', 'gov', 10],
    ['jane@redcross.org', 'org', 10],
    ['jane@oxfam.org.uk', 'org', 10],
    ['jane@greenpeace.ngo', 'org', 10],
    ['jane@email.edu.pl', 'freeisp', 10], // a free mail domain under edu.* is not a school
  ])('%s → %s', (address, domainType, code) => {
    expect(verifyOffline(address, NO_POLICY)).toMatchObject({ code, domainType });
  });

  test('an unclassified domain has no domain type offline', () => {
    expect(verifyOffline('jane@acme-widgets.com', NO_POLICY)).not.toHaveProperty('domainType');
    expect(domainTypeOf('acme-widgets.com')).toBeUndefined();
    expect(domainTypeOf('ac.com')).toBeUndefined(); // ac.* is only under a country-code TLD
  });

  test('an IDN domain is classified by its ASCII form', () => {
    expect(domainTypeOf('xn--mnchen-3ya.de')).toBeUndefined();
    expect(verifyOffline('jane@uni-münchen.edu', NO_POLICY)).toMatchObject({ code: 10, domainType: 'edu' });
  });

  test('an address with a syntax error gets no domain type or role', () => {
    expect(verifyOffline('info@mailinator.com,', NO_POLICY)).toEqual({
      address: 'info@mailinator.com,',
      code: 210,
    });
  });
});
