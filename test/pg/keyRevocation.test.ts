// A key revoked on a team server stops working on every API node within 2 s, even on a node whose lookup of
// the key was on its way when the key was revoked (read before, answered after: it must not put the key back
// in the node's cache); and the key's lists waiting or running stop with status Error and the reason in E8.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type PgPool } from '../../service/pg/db.js';
import { createPgKey, PgKeyRegistry, revokePgKey } from '../../service/pg/keys.js';
import { REVOKED_LIST_REASON, type KeyRecord } from '../../service/store/keys.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

let cluster: PostgresCluster;
let pool: PgPool;

beforeAll(async () => {
  cluster = await startPostgres();
  pool = await openPostgres(await cluster.createDatabase('revocation'));
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await cluster?.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The pool as an API node sees it over a slow network: answers to key lookups (by hash) are held back until
 * `release` is called, after the query has read the key.
 */
function slowLookups(real: PgPool) {
  let held: (() => void)[] = [];
  let isHolding = true;
  const pool = new Proxy(real, {
    get(target, name, receiver) {
      if (name !== 'query') return Reflect.get(target, name, receiver) as unknown;
      return async (text: string, values?: unknown[]) => {
        const answer = await target.query(text, values);
        if (isHolding && text.includes('key_hash')) await new Promise<void>((resolve) => held.push(resolve));
        return answer;
      };
    },
  });
  return {
    pool,
    release() {
      isHolding = false;
      for (const resolve of held) resolve();
      held = [];
    },
    get waiting() {
      return held.length;
    },
  };
}

async function lookup(registry: PgKeyRegistry, key: string): Promise<KeyRecord | undefined> {
  return registry.lookup(key);
}

describe('a revoked key on a team server', () => {
  it(
    'is refused within 2 s even after a lookup that read it before the revocation and answered after',
    { timeout: 20_000 },
    async () => {
      const { key } = await createPgKey(pool, { mode: 'safe_to_send', services: ['validation'] });
      const slow = slowLookups(pool);
      const registry = new PgKeyRegistry(slow.pool);
      // The node's first look at the key is on its way (it has read the key) when the key is revoked elsewhere.
      const first = lookup(registry, key);
      while (slow.waiting === 0) await pause(5);
      expect(await revokePgKey(pool, key)).toBe(true);
      // The node notices the change (its next check of key_changes) before the old answer arrives.
      await pause(400);
      const other = lookup(registry, 'msk_nobody');
      await pause(400);
      slow.release();
      expect(await other).toBeUndefined();
      expect((await first)?.id).toBeDefined();
      // From now on the key is refused, here and on any node, however long the node keeps its cache.
      const deadline = Date.now() + 2000;
      while (Date.now() < deadline) await pause(100);
      for (let i = 0; i < 5; i++) {
        expect(await lookup(registry, key)).toBeUndefined();
        await pause(300);
      }
    },
  );

  it('is refused by an idle node at its first request after the revocation', async () => {
    const { key } = await createPgKey(pool, { mode: 'safe_to_send', services: ['validation'] });
    const registry = new PgKeyRegistry(pool);
    // Requests for a while: the node's cache holds the key.
    for (let i = 0; i < 4; i++) {
      expect(await lookup(registry, key)).toBeDefined();
      await pause(300);
    }
    // No request for a while, then the key is revoked: the first request after must not be answered from the
    // cache of before.
    await pause(1500);
    expect(await revokePgKey(pool, key)).toBe(true);
    expect(await lookup(registry, key)).toBeUndefined();
  });

  it("stops the key's waiting lists with status Error and the reason, and gives their records back", async () => {
    const { key, record } = await createPgKey(pool, {
      mode: 'safe_to_send',
      services: ['validation'],
      quota: { limit: 100, period: 'month', isTrial: false },
    });
    const period = new Date().toISOString().slice(0, 7);
    await pool.query('INSERT INTO key_usage (key_id, period, used) VALUES ($1, $2, 7)', [record.id, period]);
    const { rows } = await pool.query<{ id: number }>(
      `INSERT INTO lists (key_id, name, input_file, options, size_bytes, created_at, updated_at, services, run,
                          reserved, charged_period)
       VALUES ($1, 'a.csv', 'input.csv', '{}', 10, $2, $2, '["email_validation"]', 1, 7, $3) RETURNING id`,
      [record.id, new Date().toISOString(), period],
    );
    expect(await revokePgKey(pool, String(record.id))).toBe(true);
    const { rows: lists } = await pool.query<{ status: string; reason: string }>(
      'SELECT status, reason FROM lists WHERE id = $1',
      [rows[0].id],
    );
    expect(lists[0]).toEqual({ status: 'Error', reason: REVOKED_LIST_REASON });
    const { rows: used } = await pool.query<{ used: string }>(
      'SELECT used FROM key_usage WHERE key_id = $1 AND period = $2',
      [record.id, period],
    );
    expect(Number(used[0].used)).toBe(0);
    expect(key).toMatch(/^msk_/);
  });
});
