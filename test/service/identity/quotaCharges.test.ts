// What E2–E6 charge against a key's quota on the single node (its SQLite adapter of the usage port; the team
// server's: test/pg/bulkQuota.test.ts). Every record answered from the data counts — `{}` when nobody matched
// included, as on E5 — and a per-record error (a malformed address, a record naming no one) does not. A key
// whose quota has nothing left is refused 403 before any work: an exhausted trial key's 5,000-record E6 is
// refused without the bulk pool being asked, and the records a bulk request reserved but did not answer with
// data go back.
import Fastify from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { refuseExhausted, reserveQueries, type AuthContext } from '../../../service/http/auth.js';
import { keyInfoSchema } from '../../../shared/api/listServices.js';
import { BulkPool } from '../../../service/identity/bulkPool.js';
import { findActiveKey, TRIAL_QUOTA, type KeyQuota } from '../../../service/store/keys.js';
import { quotaExceededMessage, SqliteUsageMeter } from '../../../service/store/usage.js';
import { bulkRecordCount } from '../../../service/http/routes/bulkBody.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';
import { getJson, importFixture, postJson, query } from './fixture.js';
import { stalledClient } from '../../helpers/stalledClients.js';

let service: TestService;
let dir: { path: string; remove(): void };

beforeAll(async () => {
  service = await startTestService();
  dir = tempDir();
  await importFixture(service.db, dir.path);
});
afterAll(async () => {
  await service.close();
  dir.remove();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const IDENTITY = ['alternate_email', 'email_append', 'postal_append'] as const;
const quota = (limit: number): KeyQuota => ({ limit, period: 'total', isTrial: false });

/** The key's use of its quota, as `GET /v5/key` tells it (not billable). */
async function used(key: string): Promise<number> {
  const response = await fetch(`${service.url}/v5/key`, { headers: { api_key: key } });
  expect(response.status).toBe(200);
  return keyInfoSchema.parse(await response.json()).quota!.used;
}

const get = (path: string, key: string, params: Record<string, string>) =>
  getJson(service.url, `${path}?${query({ ...params, api_key: key })}`);
const post = (path: string, key: string, records: unknown[]) =>
  postJson(service.url, `${path}?${query({ api_key: key })}`, records);

describe('E2–E4 count against the quota, per record answered from the data', () => {
  it('charges E2 and both kinds of E3 one query each when answered, {} included, and nothing for a per-record error', async () => {
    const key = service.key({ services: [...IDENTITY], quota: quota(50) });
    expect(await get('/ae', key, { email: 'jane.doe@example.com' })).toMatchObject({ status: 200 });
    expect(await used(key)).toBe(1);
    expect(await get('/ae', key, { email: 'nobody@example.com' })).toMatchObject({ status: 200, body: {} });
    expect(await used(key)).toBe(2);
    expect(await get('/ae', key, { email: 'not an address' })).toMatchObject({ status: 400 });
    expect(await used(key)).toBe(2);
    expect(await get('/v5/eppend', key, { email: 'jane.doe@example.com' })).toMatchObject({ status: 200 });
    expect(await used(key)).toBe(3);
    const append = { first: 'Jane', last: 'Doe', street: '12 Main Street', zip: '62704' };
    expect(await get('/v5/eppend', key, append)).toMatchObject({ status: 200 });
    expect(await used(key)).toBe(4);
    // A request refused for its parameters is not a query: nothing is looked up.
    expect(await get('/v5/eppend', key, { first: 'Jane' })).toMatchObject({ status: 400 });
    expect(await used(key)).toBe(4);
  });

  it('charges E4 per record answered, not its per-record errors', async () => {
    const key = service.key({ services: [...IDENTITY], quota: quota(50) });
    const records = [
      { email: 'jane.doe@example.com' },
      { email: 'nobody@example.com' },
      { email: 'not an address' },
      { first: 'Jane', last: 'Doe', street: '12 Main Street', zip: '62704' },
      { city: 'Springfield' },
      'not a record',
    ];
    const answer = await post('/v5/eppend/bulk', key, records);
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(6);
    expect(await used(key)).toBe(3);
  });

  it('refuses E2, E3 and E4 with 403 in words when the quota has nothing left', async () => {
    const key = service.key({ services: [...IDENTITY], quota: quota(2) });
    expect(await post('/v5/eppend/bulk', key, [{ email: 'jane.doe@example.com' }])).toMatchObject({
      status: 200,
    });
    expect(await get('/ae', key, { email: 'john.doe@example.com' })).toMatchObject({ status: 200 });
    const usedUp = {
      status: 403,
      body: { error_code: 403, error_msg: "Query limit exceeded: this key's quota of 2 queries is used up." },
    };
    expect(await get('/ae', key, { email: 'jane.doe@example.com' })).toMatchObject(usedUp);
    expect(await get('/v5/eppend', key, { email: 'jane.doe@example.com' })).toMatchObject(usedUp);
    const append = { first: 'Jane', last: 'Doe', street: '12 Main Street', zip: '62704' };
    expect(await get('/v5/eppend', key, append)).toMatchObject(usedUp);
    expect(await post('/v5/eppend/bulk', key, [{ email: 'jim.doe@example.net' }])).toMatchObject({
      status: 403,
      body: { error_msg: quotaExceededMessage(quota(2), 2, 1, 'records') },
    });
    expect(await used(key)).toBe(2);
  });
});

describe('E5 and E6: reserved before the work, settled after', () => {
  it('gives back what was not answered from the data: E6 records with a per-record error, E5 a blank address', async () => {
    const key = service.key({ services: ['intelligence'], quota: quota(100) });
    const records = [
      { email: 'jane.doe@example.com' },
      { email: 'nobody@example.com' },
      { email: 'not an address' },
      { first: 'Jane' },
      42,
    ];
    const answer = await post('/v5/ei/bulk', key, records);
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(5);
    expect(await used(key)).toBe(2);
    expect(await get('/v5/td', key, { email: '' })).toMatchObject({ status: 400 });
    expect(await used(key)).toBe(2);
    expect(await get('/v5/td', key, { email: 'nobody@example.com' })).toMatchObject({
      status: 200,
      body: {},
    });
    expect(await used(key)).toBe(3);
  });

  it('refuses an exhausted trial key’s 5,000-record E6 with 403 before any work: the bulk pool is never asked', async () => {
    const key = service.key({ services: ['intelligence'], quota: TRIAL_QUOTA });
    const hundred = Array.from({ length: 100 }, (_, i) => ({ email: `person${i}@example.com` }));
    expect((await post('/v5/ei/bulk', key, hundred)).status).toBe(200);
    expect(await used(key)).toBe(100);

    const run = vi.spyOn(BulkPool.prototype, 'run');
    const records = Array.from({ length: 5_000 }, (_, i) => ({ email: `person${i}@example.com` }));
    const refused = await post('/v5/ei/bulk', key, records);
    expect(refused).toEqual({
      status: 403,
      body: {
        error_code: 403,
        error_msg: "Query limit exceeded: this trial key's 100 queries are used up.",
      },
    });
    expect(run).not.toHaveBeenCalled();
    // A body that is not an array still reserves a record: no free parse for an exhausted key.
    expect((await post('/v5/ei/bulk', key, { email: 'jane.doe@example.com' } as never)).status).toBe(403);
    expect(run).not.toHaveBeenCalled();
    expect(await used(key)).toBe(100);
  });

  it('refuses an exhausted key’s E6 and E4 before their bodies: 403 at once, the rest of the body never sent', async () => {
    const key = service.key({ services: ['intelligence', ...IDENTITY], quota: quota(1) });
    expect((await get('/ae', key, { email: 'jane.doe@example.com' })).status).toBe(200);
    expect(await used(key)).toBe(1);
    const port = Number(new URL(service.url).port);
    for (const path of ['/v5/ei/bulk', '/v5/eppend/bulk']) {
      // The headers of a 16 MB body and its first bytes, then nothing: answered without waiting for the rest.
      const client = stalledClient(
        port,
        `POST ${path}?api_key=${key} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Content-Length: 16000000\r\n\r\n[`,
        1024,
      );
      try {
        await client.closed;
        expect(client.status()).toBe(403);
        expect(client.text()).toContain('Query limit exceeded');
        expect(client.closedAt()! - client.startedAt).toBeLessThan(5_000);
      } finally {
        client.socket.destroy();
      }
    }
    expect(await used(key)).toBe(1);
  });

  it('gives a reservation back in full when the request is refused after it (400 in the worker)', async () => {
    const key = service.key({ services: ['eam'], quota: quota(10) });
    // An activity-metrics key: duplicate identifiers fail the whole request, after the reservation.
    const duplicate = await post('/v5/ei/bulk', key, [
      { email: 'jane.doe@example.com' },
      { email: 'Jane.Doe@example.com' },
    ]);
    expect(duplicate.status).toBe(400);
    expect(await used(key)).toBe(0);
    // Records beyond what is left are refused whole, with the count asked, and not worked on.
    const run = vi.spyOn(BulkPool.prototype, 'run');
    const eleven = Array.from({ length: 11 }, (_, i) => ({ email: `p${i}@example.com` }));
    expect(await post('/v5/ei/bulk', key, eleven)).toMatchObject({
      status: 403,
      body: { error_msg: quotaExceededMessage(quota(10), 0, 11, 'records') },
    });
    expect(run).not.toHaveBeenCalled();
    expect((await post('/v5/ei/bulk', key, eleven.slice(0, 10))).status).toBe(200);
    expect(await used(key)).toBe(10);
  });
});

describe('the records a bulk body reserves', () => {
  it('counts a JSON array’s members as JSON.parse does, without parsing it', () => {
    const bodies = [
      '[]',
      ' [ ] ',
      '[{}]',
      '[{"email":"a@example.com"},{"email":"b@example.com"}]',
      // Strings holding what would be structure, and ending in escaped backslashes or quotes.
      String.raw`[{"email":"a,b]@example.com"}, "x\\", "y\\\"],z", [1,[2,3]], {"a":{"b":[1,2]}}, 42, null]`,
      JSON.stringify(
        Array.from({ length: 1_000 }, (_, i) => ({ email: `p${i}@example.com`, first: 'A,[B]{"C"}' })),
      ),
      `\n\t[\r\n${'{"zip": 62704},\n'.repeat(9)}{"zip": 1}]`,
    ];
    for (const body of bodies)
      expect(bulkRecordCount(body, 5_000)).toBe((JSON.parse(body) as unknown[]).length);
  });

  it('stops past the limit, and counts a body that is no array as one', () => {
    expect(bulkRecordCount(`[${'1,'.repeat(8 * 1024 * 1024)}1]`, 5_000)).toBe(5_001);
    expect(bulkRecordCount(JSON.stringify(Array.from({ length: 5_000 }, () => ({}))), 5_000)).toBe(5_000);
    expect(bulkRecordCount('{"email":"a@example.com"}', 5_000)).toBe(1);
    expect(bulkRecordCount('not json', 5_000)).toBe(1);
    // An unfinished text counts what it has begun.
    expect(bulkRecordCount('[{"email":"a@example.com"}, {"email":"b', 5_000)).toBe(2);
  });
});

describe('a request counted only once its key has some quota left', () => {
  // As bulkRoute's hook (refuseExhausted, before the body) and sendBulk (reserveQueries of the body's count).
  it('refuses a key with nothing left without counting its request, and counts one with room', async () => {
    const usage = new SqliteUsageMeter(service.db);
    const context: AuthContext = { keys: { lookup: () => undefined, invalidate: () => undefined }, usage };
    const exhausted = findActiveKey(service.db, service.key({ quota: TRIAL_QUOTA }))!;
    expect(usage.charge(exhausted, 100).ok).toBe(true);
    const room = findActiveKey(service.db, service.key({ quota: quota(10) }))!;
    const count = vi.fn(() => 4);
    const app = Fastify();
    app.get<{ Querystring: { who: string } }>('/probe', async (request, reply) => {
      const key = request.query.who === 'exhausted' ? exhausted : room;
      if (await refuseExhausted(context, key, reply, 'records')) return reply;
      const reservation = await reserveQueries(context, key, reply, count(), 'records');
      if (!reservation) return reply;
      await reservation.settle(3);
      return { reserved: true };
    });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const refused = await fetch(`${base}/probe?who=exhausted`);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({
        error_code: 403,
        error_msg: "Query limit exceeded: this trial key's 100 queries are used up.",
      });
      expect(count).not.toHaveBeenCalled();
      expect((await fetch(`${base}/probe?who=room`)).status).toBe(200);
      expect(count).toHaveBeenCalledTimes(1);
      // Four reserved, three answered: one given back.
      expect(usage.used(room)).toBe(3);
    } finally {
      await app.close();
    }
  });
});
