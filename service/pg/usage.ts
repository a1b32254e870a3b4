// Usage of keys against their quotas, and the per-key rate limit, counted in the team server's PostgreSQL so
// that every API node sees the same counts (the port: service/store/usage.ts). A charge is one statement:
// it adds the queries only where the sum stays within the quota, so concurrent charges from any number of
// nodes never pass it. Keys without a quota are counted in memory and written every second.
//
// The rate limit (calls per key and second of each node's clock, E1–E6) is counted in the node and settled
// with PostgreSQL in batches, so that a call costs the request path no statement and a refused call no write:
// every RATE_SETTLE_MS, and at once when a key has used its share, one statement adds each key's calls admitted
// since to key_rate and reads back the cluster's counts. A node admits a call while the cluster's count it last
// read plus its own calls since stays under the limit, and admits at most an eighth of the limit (its share,
// 1/RATE_SHARE) between two reads: a call past its share waits for the next read (a millisecond or so) and is
// decided then. Hence the last node to read before its last call knew every other node's calls but the share
// each admitted since its own last read, and in a second the nodes together admit at most
// limit + (nodes − 1) × ⌈limit / RATE_SHARE⌉; one API node admits exactly the limit. A call is refused only
// when the count its node knows, never above the true one, has reached the limit. While PostgreSQL cannot be
// reached, each node counts alone (at most the limit each).
import { periodOf, UNQUOTED_CHARGE, type Charge, type UsageMeter } from '../store/usage.js';
import type { KeyQuota, KeyRecord } from '../store/keys.js';
import type { PgPool, Queryable } from './db.js';

const FLUSH_MS = 1000;
/** Rate windows older than this are swept. */
const RATE_KEEP_S = 60;
/** How often a node settles the calls it admitted with the cluster's count (and learns the others'). */
const RATE_SETTLE_MS = 250;
/** A node admits at most 1/RATE_SHARE of a key's limit between two reads of the cluster's count. */
export const RATE_SHARE = 8;

/** One key's calls in the current second, as this node knows them. */
interface RateCount {
  readonly keyId: number;
  /** The second (of this node's clock) counted. */
  second: number;
  /** The cluster's count of the second, as the last settlement read it (this node's settled calls in it). */
  cluster: number;
  /** Calls admitted here that the settlement in flight is adding. */
  settling: number;
  /** Calls admitted here since, not sent yet. */
  fresh: number;
  /** Calls past this node's share, waiting for the settlement to be decided. */
  waiting: { readonly limit: number; readonly resolve: (fits: boolean) => void }[];
}

/** Calls of a key and second sent in a settlement (`count`: the key's count, for those of this second). */
interface RateSettled {
  readonly keyId: number;
  readonly second: number;
  readonly n: number;
  readonly count?: RateCount;
}

/** The calls of this node's share a key may admit between two reads of the cluster's count. */
const shareOf = (limit: number) => Math.ceil(limit / RATE_SHARE);

/**
 * Adds `n` queries to a key's usage in `period` (default: its quota's current period; a list's refund or
 * settlement goes to the period it was charged in). Negative `n` gives some back.
 */
export async function addUsage(
  db: Queryable,
  keyId: number,
  quota: KeyQuota | null,
  n: number,
  period = periodOf(quota?.period ?? 'total'),
): Promise<void> {
  if (n === 0) return;
  await db.query(
    `INSERT INTO key_usage (key_id, period, used) VALUES ($1, $2, greatest(0, $3::bigint))
     ON CONFLICT (key_id, period) DO UPDATE SET used = greatest(0, key_usage.used + $3::bigint)`,
    [keyId, period, n],
  );
}

export class PgUsageMeter implements UsageMeter {
  private readonly pending = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private lastSweep = 0;
  private readonly rates = new Map<number, RateCount>();
  /** Calls of seconds past, admitted and not sent yet. */
  private leftovers: RateSettled[] = [];
  private rateTimer: NodeJS.Timeout | undefined;
  /** The settlement in flight, if any: one at a time. */
  private settlement: Promise<void> | undefined;
  /** False after a settlement failed (PostgreSQL unreachable): each node then counts alone. */
  private isSettling = true;

  constructor(private readonly pool: PgPool) {}

  async charge(key: KeyRecord, n: number): Promise<Charge> {
    const quota = key.quota;
    if (n <= 0) return { ok: true, period: periodOf(quota?.period ?? 'total') };
    if (!quota) {
      this.pending.set(key.id, (this.pending.get(key.id) ?? 0) + n);
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
      return UNQUOTED_CHARGE;
    }
    const period = periodOf(quota.period);
    if (n <= quota.limit) {
      const { rows } = await this.pool.query(
        `INSERT INTO key_usage (key_id, period, used) VALUES ($1, $2, $3)
         ON CONFLICT (key_id, period) DO UPDATE SET used = key_usage.used + excluded.used
           WHERE key_usage.used + excluded.used <= $4
         RETURNING used`,
        [key.id, period, n, quota.limit],
      );
      if (rows.length > 0) return { ok: true, period };
    }
    return { ok: false, used: await this.used(key) };
  }

  async used(key: KeyRecord): Promise<number> {
    if (!key.quota) return 0;
    const { rows } = await this.pool.query<{ used: number }>(
      'SELECT used FROM key_usage WHERE key_id = $1 AND period = $2',
      [key.id, periodOf(key.quota.period)],
    );
    return rows[0]?.used ?? 0;
  }

  async adjust(keyId: number, quota: KeyQuota | null, delta: number, period?: string): Promise<void> {
    await addUsage(this.pool, keyId, quota, delta, period);
  }

  /**
   * One more call of the key in this second, counted across every API node: answered from the node's counts,
   * synchronously, unless the node has used its share since its last read of the cluster's count.
   */
  takeRate(key: KeyRecord): boolean | Promise<boolean> {
    const limit = key.rateLimit;
    if (limit <= 0) return true;
    const second = Math.floor(Date.now() / 1000);
    let count = this.rates.get(key.id);
    if (!count) {
      count = { keyId: key.id, second, cluster: 0, settling: 0, fresh: 0, waiting: [] };
      this.rates.set(key.id, count);
    }
    const fits = this.admit(count, limit, second);
    if (fits !== undefined) return fits;
    return new Promise<boolean>((resolve) => {
      count.waiting.push({ limit, resolve });
      this.settle();
    });
  }

  /** Whether one more call fits; undefined: this node's share is used, the call waits for a settlement. */
  private admit(count: RateCount, limit: number, second: number): boolean | undefined {
    if (count.second !== second) {
      // A new second. What was admitted in the last one and not sent yet goes with the next settlement (so
      // that key_rate holds what was admitted each second).
      if (count.fresh > 0) this.leftovers.push({ keyId: count.keyId, second: count.second, n: count.fresh });
      count.second = second;
      count.cluster = count.settling = count.fresh = 0;
    }
    const mine = count.settling + count.fresh;
    if (count.cluster + mine >= limit) return false;
    if (mine >= shareOf(limit) && this.isSettling) return undefined;
    count.fresh++;
    this.rateTimer ??= setTimeout(() => this.settle(), RATE_SETTLE_MS).unref();
    return true;
  }

  /**
   * Adds every key's fresh calls of this second to key_rate and reads back the cluster's counts (one
   * statement, rows in order so that nodes settling at once never deadlock, and each once: a clock set back
   * may give a second twice), then decides the waiting calls.
   */
  private settle(): void {
    if (this.settlement) return;
    if (this.rateTimer) clearTimeout(this.rateTimer);
    this.rateTimer = undefined;
    const second = Math.floor(Date.now() / 1000);
    const batch = this.leftovers;
    this.leftovers = [];
    for (const [keyId, count] of this.rates) {
      if (count.second === second) {
        if (count.fresh === 0) continue;
        batch.push({ keyId, second, n: count.fresh, count });
        count.settling += count.fresh;
        count.fresh = 0;
      } else if (count.waiting.length === 0) {
        // A key not called this second: its count goes (what it admitted last goes with this settlement).
        if (count.fresh > 0) batch.push({ keyId, second: count.second, n: count.fresh });
        this.rates.delete(keyId);
      }
    }
    if (second - this.lastSweep > RATE_KEEP_S) {
      this.lastSweep = second;
      void this.pool
        .query('DELETE FROM key_rate WHERE second < $1', [second - RATE_KEEP_S])
        .catch(() => undefined);
    }
    const added =
      batch.length === 0
        ? Promise.resolve()
        : this.pool
            .query<{ key_id: string; second: string; calls: number }>(
              `INSERT INTO key_rate (key_id, second, calls)
               SELECT key_id, second, sum(calls) FROM unnest($1::bigint[], $2::bigint[], $3::int[])
                 AS t (key_id, second, calls) GROUP BY key_id, second ORDER BY key_id, second
               ON CONFLICT (key_id, second) DO UPDATE SET calls = key_rate.calls + excluded.calls
               RETURNING key_id, second, calls`,
              [
                batch.map((sent) => sent.keyId),
                batch.map((sent) => sent.second),
                batch.map((sent) => sent.n),
              ],
            )
            .then(
              ({ rows }) => {
                this.isSettling = true;
                const calls = new Map<number, number>();
                for (const row of rows)
                  if (Number(row.second) === second) calls.set(Number(row.key_id), row.calls);
                for (const { keyId, n, count } of batch) {
                  if (count?.second !== second) continue;
                  count.settling -= n;
                  count.cluster = Math.max(count.cluster, calls.get(keyId) ?? 0);
                }
              },
              () => {
                // Not written (or not known to be): this second's calls go with the next settlement, those of
                // seconds past are dropped; meanwhile this node counts alone, against the whole limit.
                this.isSettling = false;
                for (const { n, count } of batch) {
                  if (count?.second !== second) continue;
                  count.settling -= n;
                  count.fresh += n;
                }
              },
            );
    this.settlement = added.then(() => {
      this.settlement = undefined;
      this.decideWaiting();
    });
  }

  /** Decides the calls that waited for a settlement; those past the share again wait for the next one. */
  private decideWaiting(): void {
    const second = Math.floor(Date.now() / 1000);
    let isWaiting = false;
    let hasFresh = false;
    for (const count of this.rates.values()) {
      if (count.waiting.length > 0) {
        const waiting = count.waiting;
        count.waiting = [];
        for (const call of waiting) {
          const fits = this.admit(count, call.limit, second);
          if (fits === undefined) count.waiting.push(call);
          else call.resolve(fits);
        }
        isWaiting ||= count.waiting.length > 0;
      }
      hasFresh ||= count.fresh > 0;
    }
    hasFresh ||= this.leftovers.length > 0;
    if (isWaiting) this.settle();
    else if (hasFresh) this.rateTimer ??= setTimeout(() => this.settle(), RATE_SETTLE_MS).unref();
  }

  async usage(keys: readonly KeyRecord[]): Promise<Map<number, number>> {
    await this.flush();
    const out = new Map<number, number>();
    for (const key of keys) {
      const { rows } = await this.pool.query<{ used: number }>(
        'SELECT used FROM key_usage WHERE key_id = $1 AND period = $2',
        [key.id, periodOf(key.quota?.period ?? 'total')],
      );
      out.set(key.id, rows[0]?.used ?? 0);
    }
    return out;
  }

  private async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const counts = [...this.pending];
    this.pending.clear();
    for (const [keyId, n] of counts) await addUsage(this.pool, keyId, null, n).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.rateTimer) clearTimeout(this.rateTimer);
    this.rateTimer = undefined;
    await this.settlement;
    await this.flush();
  }
}
