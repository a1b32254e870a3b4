// A domain's claim (service/pg/knowledge.ts) against a real PostgreSQL: the node asking renews its claim for as
// long as it asks — a catch-all probe can wait minutes for its turn at a busy host — so another node waits for
// its answer instead of asking too; a claim whose node died (no more renewals) expires, and another node asks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type PgPool } from '../../service/pg/db.js';
import { PgSharedKnowledge } from '../../service/pg/knowledge.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

const CLAIM_MS = 300;
let cluster: PostgresCluster;
let pool: PgPool;

beforeAll(async () => {
  cluster = await startPostgres();
  pool = await openPostgres(await cluster.createDatabase('claims'));
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await cluster?.close();
});

const after = <V>(ms: number, value: V) => new Promise<V>((resolve) => setTimeout(() => resolve(value), ms));

describe('a domain claimed by one node', () => {
  it('is waited for by the others for as long as its node asks, well past the claim time', async () => {
    const nodeA = new PgSharedKnowledge(pool, undefined, { claimMs: CLAIM_MS });
    const nodeB = new PgSharedKnowledge(pool, undefined, { claimMs: CLAIM_MS });
    let asksOfB = 0;
    const a = nodeA.load(
      'catchall',
      'slow.example',
      () => after(6 * CLAIM_MS, { acceptsAll: true }),
      () => 60_000,
    );
    await after(50, undefined);
    const b = nodeB.load(
      'catchall',
      'slow.example',
      () => {
        asksOfB++;
        return Promise.resolve({ acceptsAll: false });
      },
      () => 60_000,
    );
    expect(await a).toEqual({ acceptsAll: true });
    expect(await b).toEqual({ acceptsAll: true });
    expect(asksOfB).toBe(0);
    expect(nodeA.stats).toEqual({ asked: 1, shared: 0 });
    expect(nodeB.stats).toEqual({ asked: 0, shared: 1 });
  });

  it('is taken over once its node stops renewing it (the node died)', async () => {
    const dying = new AbortController();
    const nodeA = new PgSharedKnowledge(pool, dying.signal, { claimMs: CLAIM_MS });
    const nodeB = new PgSharedKnowledge(pool, undefined, { claimMs: CLAIM_MS });
    // Node A claims and never answers; then it dies: its renewals stop.
    void nodeA.load(
      'mx',
      'lost.example',
      () => new Promise<string>(() => undefined),
      () => 60_000,
    );
    await after(2 * CLAIM_MS, undefined);
    dying.abort();
    const started = Date.now();
    const b = await nodeB.load(
      'mx',
      'lost.example',
      () => Promise.resolve('asked by B'),
      () => 60_000,
    );
    expect(b).toBe('asked by B');
    expect(Date.now() - started).toBeLessThan(10 * CLAIM_MS);
    expect(nodeB.stats).toEqual({ asked: 1, shared: 0 });
  });
});
