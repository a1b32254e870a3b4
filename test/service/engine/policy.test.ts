import { describe, expect, test } from 'vitest';
import { verifyOffline, type VerifyPolicy } from '../../../service/engine/index.js';

const policy = (lists: { allow?: string[]; suppress?: string[]; corrections?: boolean }): VerifyPolicy => ({
  corrections: lists.corrections ?? false,
  allow: new Set(lists.allow ?? []),
  suppress: new Set(lists.suppress ?? []),
});

describe('client suppression list: code 255', () => {
  test('by whole address, the local part compared case-insensitively', () => {
    const p = policy({ suppress: ['jane.doe@example.com'] });
    expect(verifyOffline('Jane.Doe@Example.com', p)).toEqual({ address: 'Jane.Doe@example.com', code: 255 });
    expect(verifyOffline('john@example.com', p).code).toBe(10);
  });

  test('by domain, that domain exactly', () => {
    const p = policy({ suppress: ['example.com'] });
    expect(verifyOffline('anyone@example.com', p).code).toBe(255);
    expect(verifyOffline('anyone@mail.example.com', p).code).toBe(10);
  });

  test('an IDN domain matches in either form', () => {
    expect(verifyOffline('jane@münchen.de', policy({ suppress: ['xn--mnchen-3ya.de'] })).code).toBe(255);
    expect(verifyOffline('jane@xn--mnchen-3ya.de', policy({ suppress: ['münchen.de'] })).code).toBe(10);
    expect(verifyOffline('jane@münchen.de', policy({ suppress: ['jane@münchen.de'] })).code).toBe(255);
  });

  test('beats unaccepted usernames and disposable domains, and keeps what was learnt', () => {
    const p = policy({ suppress: ['mailinator.com', 'abuse@example.com'] });
    expect(verifyOffline('jane@mailinator.com', p)).toMatchObject({ code: 255, domainType: 'disposable' });
    expect(verifyOffline('abuse@example.com', p)).toMatchObject({ code: 255, roleAccount: true });
  });
});

describe('client allow list: code 55', () => {
  test('by whole address and by domain', () => {
    expect(verifyOffline('jane@example.com', policy({ allow: ['jane@example.com'] })).code).toBe(55);
    expect(verifyOffline('jane@example.com', policy({ allow: ['example.com'] })).code).toBe(55);
  });

  test('overrides unaccepted usernames and disposable domains', () => {
    const p = policy({ allow: ['abuse@example.com', 'mailinator.com'] });
    expect(verifyOffline('abuse@example.com', p)).toEqual({
      address: 'abuse@example.com',
      code: 55,
      roleAccount: true,
    });
    expect(verifyOffline('jane@mailinator.com', p)).toMatchObject({ code: 55, domainType: 'disposable' });
  });

  test('does not override a syntax error: an address that does not parse matches no list', () => {
    const p = policy({ allow: ['example.com', 'jane@gmail.com'], suppress: ['other.com'] });
    expect(verifyOffline('jane@example.com,', p).code).toBe(210);
    expect(verifyOffline('jane@gmail.com', p).code).toBe(125);
    expect(verifyOffline('jane doe@other.com', p).code).toBe(215);
  });
});

test('suppression beats allow', () => {
  const p = policy({ allow: ['example.com', 'jane@example.com'], suppress: ['jane@example.com'] });
  expect(verifyOffline('jane@example.com', p).code).toBe(255);
  expect(verifyOffline('john@example.com', p).code).toBe(55);
});

test('an unaccepted username beats a disposable domain', () => {
  expect(verifyOffline('abuse@mailinator.com', policy({}))).toMatchObject({
    code: 500,
    domainType: 'disposable',
  });
});
