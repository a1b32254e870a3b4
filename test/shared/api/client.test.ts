import { afterEach, describe, expect, it } from 'vitest';
import {
  createClient,
  isRecordError,
  parseContentDisposition,
  parseRetryAfter,
  redact,
  safeFileName,
  type ApiResult,
  type ClientOptions,
} from '../../../shared/api/index.js';
import { fakeSleep, sendJson, startServer, type Handler, type TestServer } from './httpServer.js';

// A key with every character that needs care in a URL or a header.
const KEY = 'sk_t3st+key/=&% x';
const ENCODED_KEY = encodeURIComponent(KEY);

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(handler: Handler): Promise<TestServer> {
  const server = await startServer(handler);
  servers.push(server);
  return server;
}

function client(server: { url: string }, extra: Partial<ClientOptions> = {}) {
  return createClient({ baseUrl: server.url, apiKey: KEY, sleep: fakeSleep().sleep, ...extra });
}

function expectNoKey(result: ApiResult<unknown>): void {
  const text = JSON.stringify(result);
  expect(text).not.toContain(KEY);
  expect(text).not.toContain(ENCODED_KEY);
}

const statusDocument = {
  list_id: 7,
  name: 'customers.csv',
  status: 'Results',
  records: 2,
  size_bytes: 30,
  created_at: '2024-05-01T10:00:00Z',
  services: { email_validation: { input_count: 2, completed_count: 2, status: 'Completed' } },
};

/** A service answering every endpoint plausibly. */
const everyEndpoint: Handler = (req, res) => {
  const path = `${req.method} ${req.url.pathname}`;
  switch (path) {
    case 'GET /v5/ev':
      return sendJson(res, 200, {
        safe_to_send: { address: req.url.searchParams.get('email'), status: 'valid', status_code: 20 },
      });
    case 'GET /ae':
      return sendJson(res, 200, {
        alternate_email: [{ email: 'other@example.com', email_match_type: 'Individual' }],
      });
    case 'GET /v5/eppend':
      return req.url.searchParams.has('email')
        ? sendJson(res, 200, {
            postal_address: {
              first_name: 'Ann',
              last_name: 'Lee',
              address: '1 Main St',
              city: 'Springfield',
              state: 'IL',
              zip: '62701-1234',
            },
          })
        : sendJson(res, 200, { email_append: [{ email: 'ann@example.com', email_match_type: 'Household' }] });
    case 'POST /v5/eppend/bulk':
    case 'POST /v5/ei/bulk':
      return sendJson(
        res,
        200,
        (JSON.parse(req.body.toString()) as unknown[]).map(() => ({})),
      );
    case 'GET /v5/td':
      return sendJson(res, 200, { age: '25-34', financial_segement: 'Deal Seekers' });
    case 'POST /v5/list':
      return sendJson(
        res,
        202,
        { list_id: 7, size_bytes: req.body.length },
        { Location: 'http://x/v5/list/7' },
      );
    case 'GET /v5/list/7':
      return sendJson(res, 200, statusDocument);
    case 'POST /v5/list/7/purchase':
      return sendJson(res, 200, { purchased: true });
    case 'GET /v5/list/7/results':
      res.writeHead(200, {
        'Content-Type': 'text/csv',
        'Content-Disposition': 'attachment; filename=customers-7-Service.csv',
      });
      return void res.end('email,Validation Status\na@b.co,valid\n');
    default:
      res.writeHead(404);
      res.end();
  }
};

describe('key placement', () => {
  it('sends the key as query parameter api_key on E1–E6 and as header api_key on E7–E10', async () => {
    const server = await serve(everyEndpoint);
    const api = client(server);
    const calls: [string, () => Promise<ApiResult<unknown>>, 'query' | 'header'][] = [
      ['E1', () => api.verify('a+b@example.com'), 'query'],
      ['E2', () => api.alternateEmail('a@example.com'), 'query'],
      [
        'E3 email append',
        () => api.emailAppend({ first: 'Ann', last: 'Lee', street: '1 Main St', zip: '62701' }),
        'query',
      ],
      ['E3 postal append', () => api.postalAppend('a@example.com'), 'query'],
      ['E4', () => api.identityBulk([{ email: 'a@example.com' }]), 'query'],
      ['E5', () => api.intelligence({ email: 'a@example.com' }), 'query'],
      [
        'E6',
        () => api.intelligenceBulk([{ email: 'a@example.com' }, { md5_email: 'f'.repeat(32) }]),
        'query',
      ],
      ['E7', () => api.submitList({ name: 'customers.csv', body: 'email\na@b.co\n' }), 'header'],
      ['E8', () => api.listStatus(7), 'header'],
      ['E9', () => api.purchase(7), 'header'],
      ['E10', () => api.results(7), 'header'],
    ];
    for (const [name, call, place] of calls) {
      const result = await call();
      expect(result.ok, name).toBe(true);
      const request = server.requests.at(-1)!;
      if (place === 'query') {
        expect(request.url.searchParams.get('api_key'), name).toBe(KEY);
        expect(request.rawUrl, name).toContain(`api_key=${ENCODED_KEY}`);
        expect(request.headers['api_key'], name).toBeUndefined();
      } else {
        expect(request.headers['api_key'], name).toBe(KEY);
        expect(request.url.searchParams.has('api_key'), name).toBe(false);
      }
    }
    expect(server.requests).toHaveLength(calls.length);
  });

  it('percent-encodes plus and at signs in the email (E1, E5)', async () => {
    const server = await serve(everyEndpoint);
    const api = client(server);
    const verified = await api.verify('first+tag@example.com', { timeout: 2.5 });
    expect(server.requests[0].rawUrl).toContain('email=first%2Btag%40example.com');
    expect(server.requests[0].url.searchParams.get('timeout')).toBe('2.5');
    expect(verified.ok && 'safe_to_send' in verified.value && verified.value.safe_to_send.address).toBe(
      'first+tag@example.com',
    );
    await api.intelligence({ email: 'x+y@example.com', first: 'Ann', fields: ['age', 'gender'] });
    expect(server.requests[1].rawUrl).toContain('email=x%2By%40example.com');
    expect(server.requests[1].url.searchParams.get('fields')).toBe('age,gender');
  });

  it('sends bulk bodies as JSON with the application/json content type', async () => {
    const server = await serve(everyEndpoint);
    const result = await client(server).intelligenceBulk([
      { email: 'a@example.com' },
      { sha1_email: 'a'.repeat(40) },
    ]);
    expect(result).toMatchObject({ ok: true, value: [{}, {}] });
    expect(server.requests[0].headers['content-type']).toBe('application/json');
    expect(JSON.parse(server.requests[0].body.toString())).toEqual([
      { email: 'a@example.com' },
      { sha1_email: 'a'.repeat(40) },
    ]);
  });

  it('normalises the misspelt financial_segement in an E5 answer', async () => {
    const server = await serve(everyEndpoint);
    const result = await client(server).intelligence({ email: 'a@example.com' });
    expect(result.ok && !isRecordError(result.value) && result.value.financial_segment).toBe('Deal Seekers');
  });

  it('sends the E9 body and reads the unspecified answer', async () => {
    const server = await serve(everyEndpoint);
    const result = await client(server).purchase(7, { options: { email_append: { match_type: 'I' } } });
    expect(result).toMatchObject({ ok: true, value: { purchased: true } });
    expect(JSON.parse(server.requests[0].body.toString())).toEqual({
      options: { email_append: { match_type: 'I' } },
    });
    expect(server.requests[0].headers['content-type']).toBe('application/json');
  });
});

describe('answers', () => {
  it('tolerates status codes and list members it does not know', async () => {
    const server = await serve((req, res) =>
      req.url.pathname === '/v5/ev'
        ? sendJson(res, 200, {
            email_validation: { address: 'a@b.co', status: 'valid', status_code: 611, novel: 1 },
          })
        : sendJson(res, 200, { ...statusDocument, status: 'Archived', reason: 'gone', extra: { a: 1 } }),
    );
    const api = client(server);
    const verified = await api.verify('a@b.co');
    expect(
      verified.ok && 'email_validation' in verified.value && verified.value.email_validation.status_code,
    ).toBe(611);
    const list = await api.listStatus(7);
    expect(list.ok && list.value).toMatchObject({ status: 'Archived', reason: 'gone', extra: { a: 1 } });
  });

  it('gives a per-record error on 200 as a value, and on 400 as an http error carrying it', async () => {
    let status = 200;
    const server = await serve((_req, res) =>
      sendJson(res, status, { error_code: 400, error_msg: 'Invalid United States postal address.' }),
    );
    const api = client(server);
    const onOk = await api.emailAppend({ first: 'A', last: 'B', street: '0 Nowhere' });
    expect(onOk.ok && isRecordError(onOk.value)).toBe(true);
    status = 400;
    const onError = await api.emailAppend({ first: 'A', last: 'B', street: '0 Nowhere' });
    expect(onError).toMatchObject({
      ok: false,
      error: {
        kind: 'http',
        status: 400,
        recordError: { error_code: 400, error_msg: 'Invalid United States postal address.' },
      },
    });
    expect(!onError.ok && onError.error.message).toContain('Invalid United States postal address.');
  });

  it('answers invalid-response for a body that is not JSON or not the expected shape', async () => {
    let body = 'not json';
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(body);
    });
    const api = client(server);
    expect(await api.listStatus(7)).toMatchObject({
      ok: false,
      error: { kind: 'invalid-response', status: 200 },
    });
    body = JSON.stringify({ name: 'no id' });
    const shaped = await api.listStatus(7);
    expect(shaped).toMatchObject({ ok: false, error: { kind: 'invalid-response' } });
    expect(!shaped.ok && shaped.error.message).toContain('list_id');
  });

  it('answers 404 on E8 as an http error', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('List not found');
    });
    const result = await client(server).listStatus(99);
    expect(result).toMatchObject({ ok: false, error: { kind: 'http', status: 404, body: 'List not found' } });
    expect(server.requests).toHaveLength(1);
  });
});

describe('retries', () => {
  it('retries a 429 after the Retry-After seconds it asks for', async () => {
    let calls = 0;
    const server = await serve((_req, res) => {
      calls++;
      if (calls <= 2) {
        res.writeHead(429, { 'Retry-After': '3' });
        res.end('slow down');
        return;
      }
      sendJson(res, 200, { safe_to_send: { address: 'a@b.co', status: 'valid', status_code: 20 } });
    });
    const { delays, sleep } = fakeSleep();
    const retries: unknown[] = [];
    const api = client(server, { sleep, onRetry: (info) => retries.push(info) });
    const result = await api.verify('a@b.co');
    expect(result.ok).toBe(true);
    expect(delays).toEqual([3000, 3000]);
    expect(retries).toEqual([
      { attempt: 1, delayMs: 3000, reason: 'HTTP 429', status: 429 },
      { attempt: 2, delayMs: 3000, reason: 'HTTP 429', status: 429 },
    ]);
    expect(server.requests).toHaveLength(3);
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    const now = Date.parse('2024-05-01T10:00:00Z');
    let calls = 0;
    const server = await serve((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(429, { 'Retry-After': new Date(now + 12_000).toUTCString() });
        res.end();
        return;
      }
      sendJson(res, 200, statusDocument);
    });
    const { delays, sleep } = fakeSleep();
    const result = await client(server, { sleep, now: () => now }).listStatus(7);
    expect(result.ok).toBe(true);
    expect(delays).toEqual([12_000]);
  });

  it('gives up on a Retry-After longer than it will wait, with the wait in the error', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(429, { 'Retry-After': '3600' });
      res.end();
    });
    const { delays, sleep } = fakeSleep();
    const result = await client(server, { sleep }).verify('a@b.co');
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'http', status: 429, retryAfterMs: 3_600_000 },
    });
    expect(delays).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('retries 502 and 503 with exponential backoff and full jitter, then gives up with an error value', async () => {
    let calls = 0;
    const server = await serve((_req, res) => {
      calls++;
      res.writeHead(calls % 2 ? 502 : 503, { 'Content-Type': 'text/plain' });
      res.end('upstream unavailable');
    });
    const { delays, sleep } = fakeSleep();
    const api = client(server, {
      sleep,
      retries: 3,
      random: () => 0.5,
      backoffBaseMs: 1000,
      backoffMaxMs: 3000,
    });
    const result = await api.intelligence({ email: 'a@b.co' });
    // 0.5 × min(3000, 1000 × 2^n) for n = 0, 1, 2
    expect(delays).toEqual([500, 1000, 1500]);
    expect(server.requests).toHaveLength(4);
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'http', status: 503, body: 'upstream unavailable' },
    });
    expect(!result.ok && result.error.message).toContain('after 3 retries');
  });

  it('does not retry other statuses', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(500);
      res.end();
    });
    const { delays, sleep } = fakeSleep();
    const result = await client(server, { sleep }).verify('a@b.co');
    expect(result).toMatchObject({ ok: false, error: { kind: 'http', status: 500 } });
    expect(delays).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a purchase on 503 but not on 502, which may come after the purchase was made', async () => {
    let status = 502;
    const server = await serve((_req, res) => {
      res.writeHead(status);
      res.end();
    });
    const api = client(server, { retries: 2 });
    expect(await api.purchase(7)).toMatchObject({ ok: false, error: { status: 502 } });
    expect(server.requests).toHaveLength(1);
    status = 503;
    expect(await api.purchase(7)).toMatchObject({ ok: false, error: { status: 503 } });
    expect(server.requests).toHaveLength(4);
  });
});

describe('timeouts and network errors', () => {
  it('answers timeout when the service does not answer in time, without retrying', async () => {
    const server = await serve(() => {
      // Never answer.
    });
    const { delays, sleep } = fakeSleep();
    const started = Date.now();
    const result = await client(server, { sleep, timeoutMs: 200 }).listStatus(7);
    expect(result).toMatchObject({ ok: false, error: { kind: 'timeout' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(delays).toEqual([]);
  });

  it('waits longer than the E1 timeout it asks the service for', async () => {
    const server = await serve((_req, res) => {
      setTimeout(
        () => sendJson(res, 200, { safe_to_send: { address: 'a@b.co', status: 'unknown', status_code: 5 } }),
        300,
      );
    });
    // The client timeout alone (100 ms) would abort; E1's timeout of 1 s stretches the wait.
    const result = await client(server, { timeoutMs: 100 }).verify('a@b.co', { timeout: 1 });
    expect(result.ok).toBe(true);
  });

  it('answers network for a closed port, retrying a GET but not a POST', async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    const get = fakeSleep();
    const api = createClient({ baseUrl: closed.url, apiKey: KEY, sleep: get.sleep, retries: 2 });
    const result = await api.verify('a@b.co');
    expect(result).toMatchObject({ ok: false, error: { kind: 'network' } });
    expect(!result.ok && result.error.message).toMatch(/ECONNREFUSED|fetch failed/);
    expect(get.delays).toHaveLength(2);
    expectNoKey(result);

    const post = fakeSleep();
    const bulk = await createClient({ baseUrl: closed.url, apiKey: KEY, sleep: post.sleep }).intelligenceBulk(
      [{ email: 'a@b.co' }],
    );
    expect(bulk).toMatchObject({ ok: false, error: { kind: 'network' } });
    expect(post.delays).toEqual([]);
  });

  it('answers aborted when the caller cancels, also during a backoff', async () => {
    const server = await serve(() => undefined);
    const controller = new AbortController();
    const pending = client(server).listStatus(7, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ ok: false, error: { kind: 'aborted' } });

    const busy = await serve((_req, res) => {
      res.writeHead(503);
      res.end();
    });
    const later = new AbortController();
    const api = createClient({
      baseUrl: busy.url,
      apiKey: KEY,
      sleep: (_ms, signal) => {
        later.abort();
        return signal?.aborted ? Promise.reject(new Error('aborted')) : Promise.resolve();
      },
    });
    expect(await api.listStatus(7, { signal: later.signal })).toMatchObject({
      ok: false,
      error: { kind: 'aborted' },
    });
    expect(busy.requests).toHaveLength(1);
  });
});

describe('the key stays secret', () => {
  it('never appears in an error message, an error body or a retry notice', async () => {
    // A hostile or misconfigured service that echoes the request target, key and all.
    const server = await serve((req, res) => {
      const status = req.url.pathname === '/v5/td' ? 200 : req.url.pathname === '/v5/ev' ? 401 : 503;
      res.writeHead(status, { 'Content-Type': 'text/plain' });
      res.end(`You asked for ${req.rawUrl} with key ${KEY} (${String(req.headers['api_key'])})`);
    });
    const notices: string[] = [];
    const api = client(server, { retries: 1, onRetry: (info) => notices.push(JSON.stringify(info)) });
    const results = [
      await api.verify('a@b.co'),
      await api.intelligence({ email: 'a@b.co' }),
      await api.listStatus(7),
    ];
    for (const result of results) {
      expect(result.ok).toBe(false);
      expectNoKey(result);
      expect(!result.ok && result.error.body).toContain('[redacted]');
    }
    expect(notices.length).toBeGreaterThan(0);
    for (const notice of notices) expect(notice).not.toContain(KEY);
  });

  it('redacts the raw key, its URL encodings, and any api_key query value', () => {
    const text = `a ${KEY} b ${ENCODED_KEY} c ${new URLSearchParams({ api_key: KEY }).toString()} d ?api_key=other&x=1`;
    const clean = redact(text, KEY);
    expect(clean).not.toContain(KEY);
    expect(clean).not.toContain(ENCODED_KEY);
    expect(clean).not.toContain('other');
    expect(clean).toContain('&x=1');
  });
});

describe('results (E10)', () => {
  it('streams the body and names the file from Content-Disposition', async () => {
    const content = 'email,Validation Status\n' + 'someone@example.com,valid\n'.repeat(20_000);
    const server = await serve((_req, res) => {
      res.writeHead(200, {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(content)),
        'Content-Disposition': 'attachment; filename=Spring Customers-42-Service.csv',
      });
      res.end(content);
    });
    const result = await client(server, { timeoutMs: 5_000 }).results(42);
    if (!result.ok) throw new Error(result.error.message);
    expect(result.value.fileName).toBe('Spring Customers-42-Service.csv');
    expect(result.value.contentType).toBe('text/csv; charset=utf-8');
    expect(result.value.contentLength).toBe(Buffer.byteLength(content));
    expect(await new Response(result.value.body).text()).toBe(content);
  });

  it('parses the forms of Content-Disposition and reduces the name to a safe file name', () => {
    expect(parseContentDisposition('attachment; filename=list-1-Service.zip')).toBe('list-1-Service.zip');
    expect(parseContentDisposition('attachment; filename="my \\"best\\" list-1-Service.csv"')).toBe(
      'my "best" list-1-Service.csv',
    );
    expect(
      parseContentDisposition(
        `attachment; filename="fallback.csv"; filename*=UTF-8''r%C3%A9sum%C3%A9-1-Service.csv`,
      ),
    ).toBe('résumé-1-Service.csv');
    expect(parseContentDisposition("attachment; filename*=iso-8859-1'en'caf%E9.csv")).toBe('café.csv');
    expect(parseContentDisposition('attachment')).toBeUndefined();
    expect(parseContentDisposition(null)).toBeUndefined();
    expect(safeFileName('../../etc/passwd')).toBe('passwd');
    expect(safeFileName('..\\..\\evil.csv')).toBe('evil.csv');
    expect(safeFileName('a\u0000b\r\n.csv')).toBe('ab.csv');
    expect(safeFileName('..')).toBeUndefined();
  });

  it('reads Retry-After in both forms', () => {
    expect(parseRetryAfter('7', 0)).toBe(7000);
    expect(parseRetryAfter('Wed, 01 May 2024 10:00:05 GMT', Date.parse('2024-05-01T10:00:00Z'))).toBe(5000);
    expect(parseRetryAfter('Wed, 01 May 2024 09:00:00 GMT', Date.parse('2024-05-01T10:00:00Z'))).toBe(0);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(parseRetryAfter(null, 0)).toBeUndefined();
  });
});

describe('createClient', () => {
  it('keeps a base path and refuses a base URL that is not http(s)', async () => {
    const server = await serve(everyEndpoint);
    const api = createClient({ baseUrl: `${server.url}/`, apiKey: KEY });
    expect(api.baseUrl).toBe(server.url);
    expect(JSON.stringify(api)).not.toContain(KEY);
    const prefixed = createClient({ baseUrl: `${server.url}/api/`, apiKey: KEY });
    await prefixed.listStatus(7);
    expect(server.requests.at(-1)!.url.pathname).toBe('/api/v5/list/7');
    expect(() => createClient({ baseUrl: 'ftp://example.com', apiKey: KEY })).toThrow(TypeError);
  });

  it('sends the user agent when given one', async () => {
    const server = await serve(everyEndpoint);
    await client(server, { userAgent: 'Mailsieve/0.1' }).listStatus(7);
    expect(server.requests[0].headers['user-agent']).toBe('Mailsieve/0.1');
  });
});
