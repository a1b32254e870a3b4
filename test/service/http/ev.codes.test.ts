// Every code the offline engine can give, through HTTP, in both modes: one request per syntax defect.
// Expected statuses are written out from the spec's table rather than derived, so a wrong table fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../helpers/service.js';

type Expectation = [input: string, code: number, safeToSend: string, legacy: string, note: string];

const CASES: Expectation[] = [
  ['jane.doe@example.com', 10, 'valid', 'unknown', 'syntax OK'],
  ['   ', 100, 'invalid', 'invalid', 'blank: general syntax error'],
  ['jane(work)@example.com', 110, 'invalid', 'invalid', 'invalid character'],
  ['"jane"@example.com', 110, 'invalid', 'invalid', 'quoted local part'],
  ['jane@exa_mple.com', 115, 'invalid', 'invalid', 'domain label character'],
  ['jane@localhost', 115, 'invalid', 'invalid', 'dotless domain'],
  ['jane@[192.0.2.1]', 115, 'invalid', 'invalid', 'IP literal'],
  ['jane@example.com.', 115, 'invalid', 'invalid', 'trailing dot'],
  ['.jane@example.com', 120, 'invalid', 'invalid', 'leading dot in username'],
  ['ja..ne@example.com', 120, 'invalid', 'invalid', 'consecutive dots in username'],
  ['jane@gmail.com', 125, 'invalid', 'invalid', 'too short for Gmail'],
  [`${'a'.repeat(65)}@example.com`, 130, 'invalid', 'invalid', 'username over 64 octets'],
  [
    `${'j'.repeat(64)}@${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.com`,
    130,
    'invalid',
    'invalid',
    'over 254',
  ],
  ['@example.com', 140, 'invalid', 'invalid', 'no username'],
  ['jane@', 145, 'invalid', 'invalid', 'no domain'],
  ['jane.example.com', 150, 'invalid', 'invalid', 'no @'],
  ['jane@doe@example.com', 155, 'invalid', 'invalid', 'two @'],
  ['x@foo.notarealtld', 200, 'invalid', 'invalid', 'TLD not in the root zone'],
  ['Jane Doe <jane@example.com>', 210, 'invalid', 'invalid', 'display name around the address'],
  ['jane@example.com,', 210, 'invalid', 'invalid', 'trailing comma'],
  ['jane doe@example.com', 215, 'invalid', 'invalid', 'unquoted space'],
  ['jane\t@example.com', 215, 'invalid', 'invalid', 'a tab inside'],
  [' test@iana.org', 210, 'invalid', 'invalid', 'a leading space'],
  ['test@iana.org\r\n', 210, 'invalid', 'invalid', 'a trailing CR LF'],
  ['\r\n test@iana.org', 210, 'invalid', 'invalid', 'a leading CR LF and space'],
  ['\ttest@iana.org', 210, 'invalid', 'invalid', 'a leading tab'],
  ['test@iana.org\n', 210, 'invalid', 'invalid', 'a trailing LF'],
  ['me.;@example.com', 110, 'invalid', 'invalid', 'a semicolon unquoted'],
  ['me,you@example.com', 110, 'invalid', 'invalid', 'a comma unquoted'],
  ['me:you@example.com', 110, 'invalid', 'invalid', 'a colon unquoted'],
  ['me<you>@example.com', 110, 'invalid', 'invalid', 'angle brackets unquoted'],
  ['me[you]@example.com', 110, 'invalid', 'invalid', 'square brackets unquoted'],
  ['me\\you@example.com', 110, 'invalid', 'invalid', 'a backslash unquoted'],
  ['me"you@example.com', 110, 'invalid', 'invalid', 'a quote unquoted'],
  ['me(you)@example.com', 110, 'invalid', 'invalid', 'parentheses unquoted'],
  [`j@${'a'.repeat(64)}.com`, 115, 'invalid', 'invalid', 'a label over 63 octets'],
  [`j@${'a'.repeat(58)}ü.de`, 115, 'invalid', 'invalid', 'a label over 63 octets after IDNA'],
  [
    `j@${Array(4)
      .fill(`${'a'.repeat(58)}ü`)
      .join('.')}.com`,
    130,
    'invalid',
    'invalid',
    'a domain over 253 octets after IDNA',
  ],
  ['jane@in-addr.arpa', 200, 'invalid', 'invalid', 'special-use .arpa'],
  ['jane@mail.example', 200, 'invalid', 'invalid', 'special-use .example'],
  ['jane@mail.invalid', 200, 'invalid', 'invalid', 'special-use .invalid'],
  ['jane@mail.localhost', 200, 'invalid', 'invalid', 'special-use .localhost'],
  ['jane@mail.test', 200, 'invalid', 'invalid', 'special-use .test'],
  ['jane@mail.local', 200, 'invalid', 'invalid', 'special-use .local'],
  ['jane@mail.onion', 200, 'invalid', 'invalid', 'special-use .onion'],
  ['jane@mail.alt', 200, 'invalid', 'invalid', 'special-use .alt'],
  ['abuse@example.com', 500, 'invalid', 'invalid', 'complaint desk'],
  ['noreply@example.com', 500, 'invalid', 'invalid', 'takes no mail'],
  ['someone@mailinator.com', 525, 'trap', 'risky', 'disposable'],
];

describe('E1 status codes through HTTP', () => {
  let svc: TestService;
  type Mode = 'safe_to_send' | 'email_validation';
  /** A key with the client's allow and suppression lists (safe_to_send only), and keys without them. */
  let listed: { safe_to_send: string };
  let plainKeys: Record<Mode, string>;
  const plain = (mode: Mode) => plainKeys[mode];

  beforeAll(async () => {
    svc = await startTestService();
    const lists = {
      allow: ['vip@blocked-partner.com', 'mailinator.com'],
      suppress: ['dne@example.com', 'blocked-partner.com'],
    };
    listed = { safe_to_send: svc.key({ mode: 'safe_to_send', ...lists }) };
    plainKeys = {
      safe_to_send: svc.key({ mode: 'safe_to_send' }),
      email_validation: svc.key({ mode: 'email_validation' }),
    };
  });
  afterAll(() => svc.close());

  async function verify(email: string, key: string) {
    const res = await fetch(`${svc.url}/v5/ev?email=${encodeURIComponent(email)}&api_key=${key}`);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, Record<string, unknown>>;
  }

  for (const [input, code, safeToSend, legacy, note] of CASES) {
    it(`${code} (${note}): ${safeToSend} / ${legacy}`, async () => {
      const a = await verify(input, plain('safe_to_send'));
      expect(Object.keys(a)).toEqual(['safe_to_send']);
      expect(a.safe_to_send).toMatchObject({ status: safeToSend, status_code: code });
      const b = await verify(input, plain('email_validation'));
      expect(Object.keys(b)).toEqual(['email_validation']);
      expect(b.email_validation).toMatchObject({ status: legacy, status_code: code });
      expect(b.email_validation).not.toHaveProperty('engagement_score');
    });
  }

  it('white space around an address: 210 with the trimmed address as the correction, in both modes', async () => {
    for (const mode of ['safe_to_send', 'email_validation'] as const) {
      const key = svc.key({ mode, services: ['validation', 'corrections'] });
      for (const input of [' test@iana.org', 'test@iana.org\r\n', '\r\n test@iana.org', '\ttest@iana.org ']) {
        const result = (await verify(input, key))[mode];
        expect(result).toEqual({
          address: input,
          status: 'invalid',
          status_code: 210,
          email_corrections: ['test@iana.org'],
        });
      }
      // A typo and white space: one correction for both.
      expect((await verify(' jane.doe@gmiol.com', key))[mode]).toMatchObject({
        status_code: 210,
        email_corrections: ['jane.doe@gmail.com'],
      });
      expect((await verify('jane.doe@gmail.c', key))[mode]).toMatchObject({
        status_code: 200,
        email_corrections: ['jane.doe@gmail.com'],
      });
      // Without corrections on the key: the verdict alone.
      expect((await verify(' test@iana.org', plain(mode)))[mode]).not.toHaveProperty('email_corrections');
    }
  });

  it('255 (client suppression) beats 55 (client allow); 55 overrides disposable', async () => {
    const suppressed = await verify('dne@example.com', listed.safe_to_send);
    expect(suppressed.safe_to_send).toMatchObject({ status: 'invalid', status_code: 255 });
    const domainSuppressed = await verify('vip@blocked-partner.com', listed.safe_to_send);
    expect(domainSuppressed.safe_to_send).toMatchObject({ status: 'invalid', status_code: 255 });
    const allowed = await verify('someone@mailinator.com', listed.safe_to_send);
    expect(allowed.safe_to_send).toMatchObject({
      status: 'valid',
      status_code: 55,
      domain_type: 'disposable',
    });
  });

  it('legacy keys have no allow or suppression lists: codes 55 and 255 do not occur in that mode', () => {
    expect(() => svc.key({ mode: 'email_validation', allow: ['mailinator.com'] })).toThrow(
      /email_validation/,
    );
    expect(() => svc.key({ mode: 'email_validation', suppress: ['example.com'] })).toThrow(
      /email_validation/,
    );
  });

  it('reports role accounts, domain types, and keeps internationalised addresses', async () => {
    const role = await verify('Sales@Example.COM', plain('safe_to_send'));
    expect(role.safe_to_send).toEqual({
      address: 'Sales@example.com',
      status: 'valid',
      status_code: 10,
      role_account: true,
    });
    expect((await verify('jane.doe@gmail.com', plain('safe_to_send'))).safe_to_send).toMatchObject({
      domain_type: 'freeisp',
    });
    expect((await verify('prof@cs.stanford.edu', plain('safe_to_send'))).safe_to_send).toMatchObject({
      domain_type: 'edu',
    });
    expect((await verify('jörg@münchen.de', plain('safe_to_send'))).safe_to_send).toMatchObject({
      address: 'jörg@münchen.de',
      status_code: 10,
    });
  });

  it('offers corrections only to keys with corrections on', async () => {
    expect((await verify('jane.doe@gmial.com', plain('safe_to_send'))).safe_to_send).not.toHaveProperty(
      'email_corrections',
    );
    const withCorrections = svc.key({ mode: 'email_validation', services: ['validation', 'corrections'] });
    expect((await verify('jane.doe@yahooo.com', withCorrections)).email_validation).toMatchObject({
      status: 'unknown',
      status_code: 10,
      email_corrections: ['jane.doe@yahoo.com'],
    });
  });
});
