// What one client can take from the others before and around authentication on a team server (issue 27,
// point 4). Uploads are stored on a pool of their own: twenty uploads of one key held in their insert (a lock
// on list_blobs stands for a slow disk or a 1 GiB list) leave the node's connections free, and E1 of another
// key answers in under a second. A key that is not known costs one query however often it is tried (a short
// cache of misses), and an address that keeps trying wrong keys gets 429 with Retry-After, while keys the
// node knows and other addresses go on.
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgKeyRegistry } from '../../service/pg/keys.js';
import { AUTH_FAILURES_PER_WINDOW } from '../../service/http/authFailures.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { submit } from '../service/lists/helpers.js';

let team: TeamCluster;
let api: TeamProcess;
let db: pg.Pool;

beforeAll(async () => {
  team = await startTeam();
  api = await team.api();
  db = new pg.Pool({ connectionString: team.database, max: 4 });
}, 60_000);

afterAll(async () => {
  await db?.end();
  await team?.close();
});

const ev = async (key: string, from?: Agent) => {
  const started = Date.now();
  const response = await undiciFetch(
    `${api.url}/v5/ev?email=jane%40example.com&api_key=${encodeURIComponent(key)}`,
    from ? { dispatcher: from } : {},
  );
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    text: await response.text(),
    ms: Date.now() - started,
  };
};

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('uploads and E1', () => {
  it('E1 of another key answers in under a second while one key has 20 uploads in their insert', async () => {
    const uploader = await team.key(['--max-uploads', '20']);
    const other = await team.key();
    // The uploads' inserts wait behind this lock as long as the test holds it, each holding its connection.
    const lock = await db.connect();
    let uploads: Promise<{ status: number; text: string }>[] = [];
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE list_blobs IN EXCLUSIVE MODE');
      uploads = Array.from({ length: 20 }, (_, i) =>
        submit(api.url, uploader, `email\nperson${i}@example.com\n`, { query: { header: 'true' } }),
      );
      const waiting = async () => {
        const { rows } = await db.query<{ n: number }>(
          // In their insert (one at a time: a key stores one list at a time on a node, the others wait their
          // turn in the node, or for the key's turn across nodes with the old code).
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock'
             AND (query LIKE 'INSERT INTO list_blobs%' OR query LIKE 'SELECT pg_advisory_xact_lock%')`,
        );
        return rows[0]?.n ?? 0;
      };
      await until('uploads held in their insert', async () => (await waiting()) >= 1);
      // Time for every upload to reach the database (the old code then holds 20 connections).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const answer = await ev(other);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.ms).toBeLessThan(1000);
    } finally {
      await lock.query('COMMIT').catch(() => undefined);
      lock.release();
    }
    const done = await Promise.all(uploads);
    expect(done.map((answer) => answer.status)).toEqual(done.map(() => 202));
  }, 60_000);
});

describe('keys that are not known', () => {
  it('costs one query per unknown key, however often it is tried at once or in turn', async () => {
    let lookups = 0;
    const counting = {
      query: (text: string, values?: unknown[]) => {
        if (text.includes('key_hash')) lookups++;
        return db.query(text, values);
      },
    } as unknown as pg.Pool;
    const registry = new PgKeyRegistry(counting, 60_000);
    const unknown = 'msk_not-a-key-of-this-server';
    const first = await Promise.all(Array.from({ length: 20 }, async () => registry.lookup(unknown)));
    expect(first.every((record) => record === undefined)).toBe(true);
    for (let i = 0; i < 20; i++) expect(await registry.lookup(unknown)).toBeUndefined();
    expect(lookups).toBe(1);
    // A key that exists is found (and kept) all the same.
    const real = await team.key();
    expect((await registry.lookup(real))?.id).toBeGreaterThan(0);
    expect(registry.lookup(real)).toHaveProperty('id');
  });

  it('answers 429 with Retry-After to an address past its failed authentications; others go on', async () => {
    const good = await team.key();
    const trying = new Agent({ localAddress: '127.0.0.6' });
    const elsewhere = new Agent({ localAddress: '127.0.0.7' });
    expect((await ev(good, trying)).status).toBe(200);
    for (let i = 0; i < AUTH_FAILURES_PER_WINDOW; i++) {
      const answer = await ev(`msk_guess${i}`, trying);
      expect(answer.status, `guess ${i}`).toBe(401);
      expect(answer.text).toBe('Invalid API key.');
    }
    const stopped = await ev('msk_guess-again', trying);
    expect(stopped.status).toBe(429);
    expect(Number(stopped.retryAfter)).toBeGreaterThan(0);
    expect(stopped.text).toMatch(/too many failed authentications from this address/);
    // List endpoints too.
    const list = await undiciFetch(`${api.url}/v5/list/1`, {
      headers: { api_key: 'msk_guess-list' },
      dispatcher: trying,
    });
    expect(list.status).toBe(429);
    // A key the node has found valid still works from that address, even once a change of keys (a key made
    // on any node) has dropped the node's cache; another address is not concerned.
    expect((await ev(good, trying)).status).toBe(200);
    await team.key();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await ev(good, elsewhere); // the node sees the change (it looks every 250 ms, on requests)
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await ev('msk_guess-after', trying)).status).toBe(429);
    expect((await ev(good, trying)).status).toBe(200);
    expect((await ev('msk_guess0', elsewhere)).status).toBe(401);
    await trying.close();
    await elsewhere.close();
  });

  it('behind a balancer given to --trust-proxy, counts each client by its X-Forwarded-For', async () => {
    const behind = await team.api(['--trust-proxy', '127.0.0.0/8']);
    const guess = async (client: string, i: number) =>
      (
        await fetch(`${behind.url}/v5/ev?email=jane%40example.com&api_key=msk_guess${i}`, {
          headers: { 'x-forwarded-for': client },
        })
      ).status;
    for (let i = 0; i < AUTH_FAILURES_PER_WINDOW; i++) expect(await guess('198.51.100.7', i)).toBe(401);
    expect(await guess('198.51.100.7', 999)).toBe(429);
    // Another client behind the same balancer (the same address to the node) is not concerned.
    expect(await guess('198.51.100.8', 0)).toBe(401);
    await behind.stop();
  });
});
