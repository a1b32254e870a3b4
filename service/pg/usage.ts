// Usage of keys against their quotas, and the per-key rate limit, counted in the team server's PostgreSQL so
// that every API node sees the same counts (the port: service/store/usage.ts). A charge is one statement:
// it adds the queries only where the sum stays within the quota, so concurrent charges from any number of
// nodes never pass it. Keys without a quota are counted in memory and written every second.
import { periodOf, UNQUOTED_CHARGE, type Charge, type UsageMeter } from '../store/usage.js';
import type { KeyQuota, KeyRecord } from '../store/keys.js';
import type { PgPool, Queryable } from './db.js';

const FLUSH_MS = 1000;
/** Rate windows older than this are swept. */
const RATE_KEEP_S = 60;

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

  /** One more call of the key in this second, counted across every API node. */
  async takeRate(key: KeyRecord): Promise<boolean> {
    if (key.rateLimit <= 0) return true;
    const second = Math.floor(Date.now() / 1000);
    const { rows } = await this.pool.query<{ calls: number }>(
      `INSERT INTO key_rate (key_id, second, calls) VALUES ($1, $2, 1)
       ON CONFLICT (key_id, second) DO UPDATE SET calls = key_rate.calls + 1 RETURNING calls`,
      [key.id, second],
    );
    if (second - this.lastSweep > RATE_KEEP_S) {
      this.lastSweep = second;
      void this.pool
        .query('DELETE FROM key_rate WHERE second < $1', [second - RATE_KEEP_S])
        .catch(() => undefined);
    }
    return (rows[0]?.calls ?? 0) <= key.rateLimit;
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
    await this.flush();
  }
}
