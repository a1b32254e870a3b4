// Usage of keys against their quotas (spec "Limits" and 403 "query limit exceeded"), and the per-key rate limit
// (429): the port the endpoints count through, and its single-node adapter on the service's SQLite database
// (its rate limit counted in memory). The team server's adapter (service/pg/usage.ts) counts in PostgreSQL, so
// that every API node sees the same count (its rate limit in each node, settled in batches). Billable queries:
// an E1 call, a list record, and each record E2–E6 answer from the data (an E2, E3 or E5 call, an E4 or E6
// record; not a per-record error), reserved before the work and settled after (http/auth.ts reserveQueries: a
// charge, then an adjustment of what was not answered).
//
// A key with a quota is charged atomically, and only if the whole charge fits: a list larger than what is left
// is refused at submission, never cut in the middle. A key without a quota is counted too (for `keys usage`),
// in memory and written every second, so that its calls cost the request path no write.
import type { KeyQuotaInfo } from '../../shared/api/listServices.js';
import type { ServiceDb } from './db.js';
import type { KeyQuota, KeyRecord } from './keys.js';
import { formatCount } from '../../shared/count.js';

/** The usage period of a quota now: the UTC day, the UTC month, or all time. */
export function periodOf(period: KeyQuota['period'], at: Date = new Date()): string {
  const iso = at.toISOString();
  if (period === 'day') return iso.slice(0, 10);
  if (period === 'month') return iso.slice(0, 7);
  return 'total';
}

/** When the current period of a quota ends and the next begins (undefined: never, a quota in all). */
export function renewsAt(period: KeyQuota['period'], at: Date = new Date()): Date | undefined {
  if (period === 'total') return undefined;
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** When the current period of a quota ends (undefined: never), ISO date. */
function renewsOn(period: KeyQuota['period'], at: Date = new Date()): string | undefined {
  return renewsAt(period, at)?.toISOString().slice(0, 10);
}

/** A key's quota as `GET /v5/key` tells it, from its use in the current period (the usage port's count). */
export function quotaInfo(quota: KeyQuota, used: number, at: Date = new Date()): KeyQuotaInfo {
  return {
    limit: quota.limit,
    used,
    left: Math.max(0, quota.limit - used),
    period: quota.period,
    renews_at: renewsAt(quota.period, at)?.toISOString() ?? null,
    trial: quota.isTrial,
  };
}


/** The 403 message when a charge does not fit: what the quota is, what is left, when it renews. */
export function quotaExceededMessage(quota: KeyQuota, used: number, asked: number, what = 'queries'): string {
  const left = Math.max(0, quota.limit - used);
  const per = quota.period === 'total' ? '' : ` per ${quota.period}`;
  const renewal = renewsOn(quota.period);
  const renews = renewal ? `; it renews on ${renewal}` : '';
  if (left === 0)
    return quota.isTrial
      ? `Query limit exceeded: this trial key's ${formatCount(quota.limit)} queries are used up${renews}.`
      : `Query limit exceeded: this key's quota of ${formatCount(quota.limit)} queries${per} is used up${renews}.`;
  const of = quota.isTrial ? `of its ${formatCount(quota.limit)} trial queries` : `of its quota of ${formatCount(quota.limit)}${per}`;
  return (
    `Query limit exceeded: ${formatCount(asked)} ${what} were asked, but this key has only ${formatCount(left)} queries left ` +
    `${of}${renews}.`
  );
}

/** A charge that fitted names the usage period it was counted in (a list's refund goes back to it). */
export type Charge =
  { readonly ok: true; readonly period: string } | { readonly ok: false; readonly used: number };

/** The charge of a key without a quota: counted in all time (one answer, made once: E1 calls it every time). */
export const UNQUOTED_CHARGE: Charge = Object.freeze({ ok: true, period: 'total' });

/** What the endpoints count through. Answers are values or promises (the team server asks its database). */
export interface UsageMeter {
  /** Charges `n` billable queries to the key, all or none. */
  charge(key: KeyRecord, n: number): Charge | Promise<Charge>;
  /**
   * The key's use in its quota's current period (0 without a quota), read without charging: whether anything
   * is left, asked before counting what a large request holds.
   */
  used(key: KeyRecord): number | Promise<number>;
  /**
   * Adds `delta` queries to a key's use without a quota check (negative: gives back queries charged for work
   * not done, as a list found invalid; positive: a list's records beyond those reserved at submission), in
   * `period` (the one the work was charged in; default: the quota's current period).
   */
  adjust(keyId: number, quota: KeyQuota | null, delta: number, period?: string): void | Promise<void>;
  /**
   * Whether one more call fits the key's rate limit (calls per second; 0: none). Answered at once from memory,
   * but for the few calls a team server's node decides after its next settlement.
   */
  takeRate(key: KeyRecord): boolean | Promise<boolean>;
  /** Each key's use in the period of its quota (or in all, without one). */
  usage(keys: readonly KeyRecord[]): Promise<Map<number, number>>;
  close(): Promise<void>;
}

/** Calls per second per key, counted in one-second windows, in this process (one node). */
export class RateWindows {
  private readonly windows = new Map<number, { start: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  take(key: KeyRecord): boolean {
    if (key.rateLimit <= 0) return true;
    const now = this.now();
    const window = this.windows.get(key.id);
    if (!window || now - window.start >= 1000) {
      this.windows.set(key.id, { start: now, count: 1 });
      return true;
    }
    window.count += 1;
    return window.count <= key.rateLimit;
  }
}

/** How often the counts of keys without a quota are written. */
const FLUSH_MS = 1000;

export class SqliteUsageMeter implements UsageMeter {
  private readonly rate = new RateWindows();
  /** Queries of keys without a quota, not written yet. */
  private readonly pending = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly ensure;
  private readonly add;
  private readonly addWithin;
  private readonly selectUsed;

  constructor(private readonly db: ServiceDb) {
    this.ensure = db.prepare(
      'INSERT INTO key_usage (key_id, period, used) VALUES (?, ?, 0) ON CONFLICT DO NOTHING',
    );
    this.add = db.prepare('UPDATE key_usage SET used = max(0, used + ?) WHERE key_id = ? AND period = ?');
    this.addWithin = db.prepare(
      'UPDATE key_usage SET used = used + ? WHERE key_id = ? AND period = ? AND used + ? <= ? RETURNING used',
    );
    this.selectUsed = db.prepare('SELECT used FROM key_usage WHERE key_id = ? AND period = ?').pluck();
  }

  charge(key: KeyRecord, n: number): Charge {
    if (n <= 0) return { ok: true, period: periodOf(key.quota?.period ?? 'total') };
    if (!key.quota) {
      this.pending.set(key.id, (this.pending.get(key.id) ?? 0) + n);
      this.timer ??= setTimeout(() => this.flush(), FLUSH_MS).unref();
      return UNQUOTED_CHARGE;
    }
    const period = periodOf(key.quota.period);
    const charged = this.db.transaction(() => {
      this.ensure.run(key.id, period);
      return this.addWithin.get(n, key.id, period, n, key.quota!.limit) !== undefined;
    })();
    if (charged) return { ok: true, period };
    return { ok: false, used: this.used(key) };
  }

  used(key: KeyRecord): number {
    if (!key.quota) return 0;
    return (this.selectUsed.get(key.id, periodOf(key.quota.period)) as number | undefined) ?? 0;
  }

  adjust(
    keyId: number,
    quota: KeyQuota | null,
    delta: number,
    period = periodOf(quota?.period ?? 'total'),
  ): void {
    if (delta === 0) return;
    this.db.transaction(() => {
      this.ensure.run(keyId, period);
      this.add.run(delta, keyId, period);
    })();
  }

  takeRate(key: KeyRecord): boolean {
    return this.rate.take(key);
  }

  async usage(keys: readonly KeyRecord[]): Promise<Map<number, number>> {
    this.flush();
    const select = this.db.prepare('SELECT used FROM key_usage WHERE key_id = ? AND period = ?').pluck();
    const out = new Map<number, number>();
    for (const key of keys)
      out.set(
        key.id,
        (select.get(key.id, periodOf(key.quota?.period ?? 'total')) as number | undefined) ?? 0,
      );
    return Promise.resolve(out);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const counts = [...this.pending];
    this.pending.clear();
    try {
      this.db.transaction(() => {
        for (const [keyId, n] of counts) {
          this.ensure.run(keyId, 'total');
          this.add.run(n, keyId, 'total');
        }
      })();
    } catch {
      // A key deleted meanwhile, or the database closing: those counts are not kept.
    }
  }

  close(): Promise<void> {
    this.flush();
    return Promise.resolve();
  }
}
