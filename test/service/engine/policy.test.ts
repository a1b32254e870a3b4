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

describe('known bouncers: code 520', () => {
  const bounced = (...addresses: string[]) => {
    const asked: string[] = [];
    const set = new Set(addresses);
    return {
      asked,
      policy: (lists: Parameters<typeof policy>[0] = {}): VerifyPolicy => ({
        ...policy(lists),
        isBounced: (local, domain) => {
          asked.push(`${local}@${domain}`);
          return set.has(`${local.toLowerCase()}@${domain}`);
        },
      }),
    };
  };

  test('asks in either form of an IDN domain', () => {
    const known = bounced('jane.doe@example.com', 'jo@xn--mnchen-3ya.de');
    expect(verifyOffline('Jane.Doe@Example.com', known.policy())).toEqual({
      address: 'Jane.Doe@example.com',
      code: 520,
    });
    expect(verifyOffline('jo@münchen.de', known.policy()).code).toBe(520);
    expect(verifyOffline('john@example.com', known.policy()).code).toBe(10);
    expect(known.asked).toEqual([
      'Jane.Doe@example.com',
      'jo@münchen.de',
      'jo@xn--mnchen-3ya.de',
      'john@example.com',
    ]);
  });

  test('comes after syntax, the suppression list (255) and the allow list (55)', () => {
    const known = bounced('jane@example.com', 'jo@example.com', 'al@example.com');
    const p = known.policy({ suppress: ['jo@example.com'], allow: ['al@example.com'] });
    expect(verifyOffline(' jane@example.com', p).code).toBe(210);
    expect(verifyOffline('jo@example.com', p).code).toBe(255);
    expect(verifyOffline('al@example.com', p).code).toBe(55);
    expect(verifyOffline('jane@example.com', p).code).toBe(520);
  });

  test('beats unaccepted usernames (500) and disposable domains (525), and keeps what was learnt', () => {
    const p = bounced('abuse@example.com', 'jane@mailinator.com').policy();
    expect(verifyOffline('abuse@example.com', p)).toEqual({
      address: 'abuse@example.com',
      code: 520,
      roleAccount: true,
    });
    expect(verifyOffline('jane@mailinator.com', p)).toMatchObject({ code: 520, domainType: 'disposable' });
  });

  test('gets no correction, and is never offered as one', () => {
    const known = bounced('jane.doe@gmial.com', 'jo.smith@gmail.com');
    const p = known.policy({ corrections: true });
    expect(verifyOffline('jane.doe@gmial.com', p)).toEqual({ address: 'jane.doe@gmial.com', code: 520 });
    expect(verifyOffline('jo.smith@gmial.com', p)).toEqual({ address: 'jo.smith@gmial.com', code: 10 });
    expect(verifyOffline('jane.doe@gmial.com', { ...p, isBounced: () => false }).corrections).toEqual([
      'jane.doe@gmail.com',
    ]);
  });
});
