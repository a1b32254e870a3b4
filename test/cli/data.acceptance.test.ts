// Acceptance (issue 6): a client written against the provider's documented API works unchanged against
// `mailsieve serve --tls-self-signed`, apart from host and certificate: JSON bodies, hashed lookups, bulk
// order, error texts. The client here is plain fetch (undici) over HTTPS, trusting the served certificate,
// the key in the `api_key` query parameter — and then our own REST client, built to the spec.
import { connect } from 'node:tls';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../shared/api/client.js';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { activityRows, md5, PEOPLE_ROWS, sha1, writeCsv } from '../service/identity/fixture.js';

/** The server's certificate in PEM, as a client would be handed it for a self-signed service. */
function servedCertificate(url: URL): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
      const der = socket.getPeerCertificate().raw.toString('base64');
      socket.end();
      resolve(
        `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
      );
    });
    socket.on('error', reject);
  });
}

const JANE_POSTAL = {
  first_name: 'Jane',
  last_name: 'Doe',
  address: '12 Main Street',
  city: 'Springfield',
  state: 'IL',
  zip: '62704-1234',
};

describe('a provider client against mailsieve serve --tls-self-signed (acceptance)', () => {
  let dir: { path: string; remove(): void };
  let server: Awaited<ReturnType<typeof startCli>>;
  let base: string;
  let agent: Agent;
  let key: string;
  let eamKey: string;

  /** What a provider client does: HTTPS, key in the query string, JSON. */
  const call = async (
    path: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ) => {
    const response = await undiciFetch(`${base}${path}`, { ...init, dispatcher: agent });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      body: type.startsWith('application/json') ? (JSON.parse(text) as unknown) : text,
    };
  };
  const get = (path: string, params: Record<string, string>, apiKey = key) =>
    call(`${path}?${new URLSearchParams({ ...params, api_key: apiKey }).toString()}`);
  const post = (
    path: string,
    records: unknown,
    apiKey = key,
    headers = { 'Content-Type': 'application/json' },
  ) =>
    call(`${path}${path.includes('?') ? '&' : '?'}api_key=${encodeURIComponent(apiKey)}`, {
      method: 'POST',
      body: JSON.stringify(records),
      headers,
    });

  beforeAll(async () => {
    dir = tempDir();
    const svc = `${dir.path}/svc`;
    for (const [kind, file] of [
      ['people', writeCsv(dir.path, 'people.csv', PEOPLE_ROWS)],
      ['activity', writeCsv(dir.path, 'activity.csv', activityRows())],
    ])
      expect((await runCli(['data', 'import', kind, file, '--data-dir', svc])).code).toBe(0);
    key = (
      await runCli(['keys', 'create', '--data-dir', svc, '--services', 'all', '--alternate-max', '3'])
    ).stdout.trim();
    eamKey = (await runCli(['keys', 'create', '--data-dir', svc, '--services', 'eam'])).stdout.trim();
    server = await startCli(
      ['serve', '--port', '0', '--data-dir', svc, '--tls-self-signed'],
      /listening on (https:\/\/\S+)/,
    );
    base = server.match[1];
    agent = new Agent({ connect: { ca: await servedCertificate(new URL(base)) } });
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
    dir?.remove();
  });

  it('E5: JSON bodies by email and by hashed email (MD5, SHA-1 of the lower-cased address)', async () => {
    const byEmail = await get('/v5/td', {
      email: 'Jane.Doe@example.com',
      fields: 'age,gender,interests,eam',
    });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body).toMatchObject({
      age: '35-44',
      gender: 'Female',
      interests: { travel: true },
      eam: { longevity: 3, velocity: 2, popularity: 2 },
    });
    expect(
      await get('/v5/td', { md5_email: md5('jane.doe@example.com'), fields: 'age,gender,interests,eam' }),
    ).toEqual(byEmail);
    expect(
      await get('/v5/td', { sha1_email: sha1('jane.doe@example.com'), fields: 'age,gender,interests,eam' }),
    ).toEqual(byEmail);
  });

  it('E6: the bulk answer keeps the request order, with {} and per-record errors in place', async () => {
    const { status, body } = await post('/v5/ei/bulk?fields=age', [
      { sha1_email: sha1('jim.doe@example.net') },
      { email: 'nobody@example.com' },
      { email: 'not-an-address' },
      { first: 'Jane', last: 'Doe', street: '12 Main St', zip: '62704' },
      { first: 'Jane', last: 'Doe', street: '404 Lost Rd', zip: '62704' },
    ]);
    expect(status).toBe(200);
    const eam = { date_first_seen: 'now', longevity: 0, velocity: 0, popularity: 0 };
    expect(body).toEqual([
      { age: '18-20', eam },
      { eam },
      { error_code: 400, error_msg: 'Invalid identifier.' },
      { age: '35-44', eam: expect.objectContaining({ longevity: 3 }) as unknown },
      { error_code: 400, error_msg: 'Invalid United States postal address.' },
    ]);
  });

  it('error texts: Invalid API key., Invalid JSON, Too many records…, Duplicate identfiers', async () => {
    expect(await get('/v5/td', { email: 'jane.doe@example.com' }, 'msk_wrong')).toEqual({
      status: 401,
      body: 'Invalid API key.',
    });
    expect(
      await post('/v5/ei/bulk', [{ email: 'a@example.com' }], key, {} as { 'Content-Type': string }),
    ).toEqual({
      status: 400,
      body: { error_code: 400, error_msg: 'Invalid JSON' },
    });
    const many = Array.from({ length: 5001 }, (_, i) => ({ email: `p${i}@example.com` }));
    expect(await post('/v5/ei/bulk', many)).toEqual({
      status: 400,
      body: {
        error_code: 400,
        error_msg: 'Too many records requested. Limit is 5000 and you requested 5001.',
      },
    });
    expect(
      await post('/v5/ei/bulk', [{ email: 'a@example.com' }, { email: 'a@example.com' }], eamKey),
    ).toEqual({
      status: 400,
      body: { error_code: 400, error_msg: 'Duplicate identfiers' },
    });
  });

  it('E2, E3 and E4 answer as the spec shows', async () => {
    expect((await get('/ae', { email: 'jane.doe@example.com' })).body).toEqual({
      alternate_email: [
        { email: 'jd@example.org', email_match_type: 'Individual' },
        { email: 'john.doe@example.com', email_match_type: 'Household' },
        { email: 'jim.doe@example.net', email_match_type: 'Household' },
      ],
    });
    expect((await get('/v5/eppend', { email: 'jane.doe@example.com' })).body).toEqual({
      postal_address: JANE_POSTAL,
    });
    expect(
      (
        await get('/v5/eppend', {
          first: 'Ann',
          last: 'Roe',
          street: '7 Elm Ave',
          city: 'Salem',
          state: 'MA',
          zip: '01970',
        })
      ).body,
    ).toEqual({ email_append: [{ email: 'ann.roe@example.com', email_match_type: 'Individual' }] });
    const bulk = await post('/v5/eppend/bulk', [{ email: 'ann.roe@example.com' }, { email: 'bad' }]);
    expect(bulk.body).toEqual([{}, { error_code: 400, error_msg: 'Invalid identifier.' }]);
  });

  it('our REST client, built to the spec, reads every answer', async () => {
    const client = createClient({
      baseUrl: base,
      apiKey: key,
      fetch: ((input: string, init?: RequestInit) =>
        undiciFetch(input, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch,
    });
    const td = await client.intelligence({
      md5_email: md5('jd@example.org'),
      fields: ['age', 'postal_address'],
    });
    expect(td).toMatchObject({ ok: true, value: { age: '35-44', postal_address: JANE_POSTAL } });
    const bulk = await client.intelligenceBulk([{ email: 'jd@example.org' }, { email: 'x' }]);
    expect(
      bulk.ok && bulk.value.map((element) => ('error_msg' in element ? element.error_msg : element.age)),
    ).toEqual(['35-44', 'Invalid identifier.']);
    expect(await client.alternateEmail('john.doe@example.com')).toMatchObject({
      ok: true,
      value: {
        alternate_email: [
          { email: 'jane.doe@example.com', email_match_type: 'Household' },
          { email: 'jd@example.org', email_match_type: 'Household' },
          { email: 'jim.doe@example.net', email_match_type: 'Household' },
        ],
      },
    });
    expect(await client.postalAppend('jane.doe@example.com')).toMatchObject({
      ok: true,
      value: { postal_address: JANE_POSTAL },
    });
    const invalid = await client.emailAppend({ first: 'A', last: 'B', street: '1 Nowhere', zip: '62704' });
    expect(invalid).toMatchObject({
      ok: false,
      error: {
        status: 400,
        recordError: { error_code: 400, error_msg: 'Invalid United States postal address.' },
      },
    });
    expect(await client.identityBulk([{ email: 'jim.doe@example.net' }])).toMatchObject({
      ok: true,
      value: [
        {
          alternate_email: [
            { email: 'jane.doe@example.com', email_match_type: 'Household' },
            { email: 'jd@example.org', email_match_type: 'Household' },
            { email: 'john.doe@example.com', email_match_type: 'Household' },
          ],
        },
      ],
    });
  });
});
