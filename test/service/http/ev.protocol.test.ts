import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../../service/store/keys.js';
import { get, startTestService, type TestService } from '../../helpers/service.js';

/** Sends raw bytes on a fresh connection and returns whatever comes back before the server closes it. */
function raw(url: string, bytes: Buffer | string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.setTimeout(5000, () => socket.destroy());
    socket.end(bytes);
  });
}

describe('E1 GET /v5/ev: protocol', () => {
  let svc: TestService;
  let key: string;
  const ev = (query: string) => get(`${svc.url}/v5/ev?${query}`);

  beforeAll(async () => {
    svc = await startTestService();
    key = svc.key({ services: ['validation', 'corrections'] });
  });
  afterAll(() => svc.close());

  it('answers a good request with JSON', async () => {
    const res = await ev(`email=jane.doe%40example.com&api_key=${key}`);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expect(JSON.parse(res.text)).toHaveProperty('safe_to_send.address', 'jane.doe@example.com');
  });

  it('401 with the plain-text body for a wrong, missing or revoked key', async () => {
    for (const query of [
      'email=a%40example.com&api_key=wrong',
      'email=a%40example.com',
      'email=a%40example.com&api_key=',
    ]) {
      const res = await ev(query);
      expect(res.status).toBe(401);
      expect(res.type).toMatch(/^text\/plain/);
      expect(res.text).toBe('Invalid API key.');
    }
    const revoked = svc.key();
    svc.db.prepare(`UPDATE keys SET revoked_at = 'x' WHERE key_hint = ?`).run(revoked.slice(-4));
    svc.service.keys.invalidate();
    expect((await ev(`email=a%40example.com&api_key=${revoked}`)).status).toBe(401);
  });

  it('accepts the key only as a query parameter on E1', async () => {
    const res = await get(`${svc.url}/v5/ev?email=a%40example.com`, { headers: { api_key: key } });
    expect(res.status).toBe(401);
  });

  it('403 for a key without a verification section', async () => {
    const noValidation = svc.key({ services: ['intelligence'] });
    const res = await ev(`email=a%40example.com&api_key=${noValidation}`);
    expect(res.status).toBe(403);
    const body = JSON.parse(res.text) as { error_code: number; error_msg: string };
    expect(body.error_code).toBe(403);
    expect(body.error_msg).toMatch(/not enabled/);
  });

  it('400 with a JSON explanation for a missing or malformed parameter', async () => {
    const cases: [string, RegExp][] = [
      [`api_key=${key}`, /Missing parameter 'email'/],
      [`email=a%40example.com&timeout=abc&api_key=${key}`, /'timeout' must be a number/],
      [`email=a%40example.com&timeout=0&api_key=${key}`, /more than 0 and at most 30/],
      [`email=a%40example.com&timeout=30.5&api_key=${key}`, /at most 30/],
      [`email=a%40example.com&timeout=-1&api_key=${key}`, /at most 30/],
      [`email=a%40example.com&email=b%40example.com&api_key=${key}`, /given more than once/],
      [`email=${'a'.repeat(11_000)}&api_key=${key}`, /too long/],
    ];
    for (const [query, message] of cases) {
      const res = await ev(query);
      expect(res.status, query.slice(0, 80)).toBe(400);
      const body = JSON.parse(res.text) as { error_code: number; error_msg: string };
      expect(body.error_code).toBe(400);
      expect(body.error_msg).toMatch(message);
    }
  });

  it('accepts fractional timeouts up to 30', async () => {
    for (const timeout of ['0.5', '10', '30', '2.25']) {
      expect((await ev(`email=a%40example.com&timeout=${timeout}&api_key=${key}`)).status).toBe(200);
    }
  });

  it('never echoes the key in an error', async () => {
    const res = await ev(`email=a%40example.com&email=b&api_key=${key}`);
    expect(res.text).not.toContain(key);
  });

  it('405 naming the method for a known path, JSON 404 for an unknown route', async () => {
    const post = await get(`${svc.url}/v5/ev?api_key=${key}`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('GET');
    expect(JSON.parse(post.text)).toMatchObject({ error_code: 405 });
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      expect((await get(`${svc.url}/v5/ev`, { method })).status).toBe(405);
    }
    const missing = await get(`${svc.url}/v5/nothing-here`);
    expect(missing.status).toBe(404);
    expect(missing.type).toMatch(/^application\/json/);
    const body = JSON.parse(missing.text) as { error_code: number; error_msg: string };
    expect(body.error_code).toBe(404);
    expect(body.error_msg).toMatch(/No such endpoint/);
  });

  it('a trailing slash gets the endpoint’s answer; a real 405 names the methods the path takes', async () => {
    const slashed = await get(`${svc.url}/v5/ev/?email=jane.doe%40example.com&api_key=${key}`);
    expect(slashed.status).toBe(200);
    expect(JSON.parse(slashed.text)).toMatchObject({ safe_to_send: { status_code: 10 } });
    const slashedKey = await get(`${svc.url}/v5/key/?api_key=${key}`);
    expect(slashedKey.status).toBe(200);
    const list = await get(`${svc.url}/v5/list/999999/`, { headers: { api_key: key } });
    expect(list.status).toBe(404);
    expect(JSON.parse(list.text)).toMatchObject({ error_code: 404 });
    const results = await get(`${svc.url}/v5/list/999999/results/`, { headers: { api_key: key } });
    expect(results.status).toBe(404);

    const post = await get(`${svc.url}/v5/ev/`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((JSON.parse(post.text) as { error_msg: string }).error_msg).toBe(
      'Method POST is not allowed on /v5/ev/; use GET or HEAD.',
    );
    const getList = await get(`${svc.url}/v5/list`);
    expect(getList.status).toBe(405);
    expect(getList.headers.get('allow')).toBe('POST');
    const putList = await get(`${svc.url}/v5/list/1/`, { method: 'PUT' });
    expect(putList.status).toBe(405);
    expect(putList.headers.get('allow')).toBe('GET, HEAD');
    const getPurchase = await get(`${svc.url}/v5/list/1/purchase`);
    expect(getPurchase.status).toBe(405);
    expect(getPurchase.headers.get('allow')).toBe('POST');
  });

  it('429 past the key’s calls per second, with Retry-After', async () => {
    const limited = createKey(svc.db, { mode: 'safe_to_send', services: ['validation'], rateLimit: 5 }).key;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await ev(`email=a%40example.com&api_key=${limited}`)).status);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(5);
    expect(statuses).toContain(429);
    const res = await ev(`email=a%40example.com&api_key=${limited}`);
    if (res.status === 429) expect(res.headers.get('retry-after')).toBe('1');
  });

  it('answers garbage with a 4xx and a message, and keeps serving', async () => {
    const answers = [
      await raw(
        svc.url,
        Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00, 0x13, 0x37, 0x0d, 0x0a, 0x0d, 0x0a]),
      ),
      await raw(svc.url, 'GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n'),
      await raw(svc.url, `GET /v5/ev?email=${'x'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
    ];
    for (const answer of answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(answer).toMatch(/"error_msg":"[^"]+"/);
    }
    const bad = await ev(`email=%E0%A4%A&api_key=${key}`);
    expect(bad.status).toBeLessThan(500);
    expect((await ev(`email=a%40example.com&api_key=${key}`)).status).toBe(200);
  });

  it('answers pipelined requests in order, and a malformed one after an answer', async () => {
    // The answers of one turn are held to its end (service/http/coalesce.ts): the malformed request's answer,
    // written on the connection before it is destroyed, must not drop the answer before it.
    const request = (email: string) =>
      `GET /v5/ev?email=${email}%40example.com&api_key=${key} HTTP/1.1\r\nHost: x\r\n\r\n`;
    const statusesOf = (answer: string) => answer.match(/HTTP\/1\.1 \d{3}/g);
    const answers = await raw(svc.url, request('first') + request('second') + request('third'));
    expect(statusesOf(answers)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    const order = ['first', 'second', 'third'].map((name) => answers.indexOf(`"${name}@example.com"`));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBeGreaterThan(0);
    // Node drops what it has not answered yet when it meets the malformed request, as without holding.
    const withError = await raw(svc.url, request('first') + 'GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(statusesOf(withError)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 400']);
    expect(withError).toMatch(/"first@example\.com".*"error_msg":"Malformed HTTP request\."/s);
  });

  it('survives a fuzz loop of random queries and bodies', async () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const alphabet = 'ab@.%&=?#+ -_\u00e9\u4e2d"\'<>\\/\u0000;,:[]()!~*0123456789';
    const randomText = (n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const methods = ['GET', 'POST', 'PUT', 'DELETE'];
    for (let i = 0; i < 200; i++) {
      const method = methods[Math.floor(random() * methods.length)];
      const query =
        `email=${encodeURIComponent(randomText(Math.floor(random() * 80)))}&api_key=${key}` +
        (random() < 0.3
          ? `&${encodeURIComponent(randomText(5))}=${encodeURIComponent(randomText(10))}`
          : '') +
        (random() < 0.2 ? `&timeout=${encodeURIComponent(randomText(3))}` : '');
      const init: RequestInit = { method };
      if (method !== 'GET' && random() < 0.7) {
        init.body = new Uint8Array(Array.from({ length: 64 }, () => Math.floor(random() * 256)));
        init.headers = { 'content-type': random() < 0.5 ? 'application/json' : 'application/octet-stream' };
      }
      const res = await get(`${svc.url}/v5/ev?${query}`, init);
      expect(res.status, `${method} ${query}`).toBeLessThan(500);
      if (res.status >= 400 && res.status !== 401) expect(res.text).toMatch(/"error_msg":"[^"]+"/);
    }
    expect((await ev(`email=a%40example.com&api_key=${key}`)).status).toBe(200);
  });
});

describe('closing the service', () => {
  it('does not wait on a client that stopped halfway through a request', async () => {
    const svc = await startTestService();
    const { hostname, port } = new URL(svc.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.on('error', () => undefined);
    // Headers begun, never finished: the connection holds a request in flight.
    socket.write('GET /v5/ev?email=a%40example.com HTTP/1.1\r\nHost: x\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await svc.close();
    expect(Date.now() - started).toBeLessThan(10_000);
    socket.destroy();
  });
});
