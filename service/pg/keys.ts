// Keys of a team server, in PostgreSQL: the same records and rules as the single-node store
// (service/store/keys.ts), and a registry for the request path that caches keys and drops its cache when any
// node changes a key (key_changes' version, read at most every `recheckMs`).
import { randomBytes } from 'node:crypto';
import type { ServiceName } from '../../shared/api/services.js';
import type { VerificationMode } from '../../shared/api/codes.js';
import { ALTERNATE_EMAIL_MATCHES_DEFAULT, BULK_INTELLIGENCE_LIMIT } from '../../shared/api/limits.js';
import { DEFAULT_KEY_CHECKS, type ChecksLevel } from '../engine/online/levels.js';
import type { KeyField } from '../identity/fields.js';
import {
  DEFAULT_BOUNCE_MAX_AGE_DAYS,
  DEFAULT_MAX_BYTES_DAY,
  DEFAULT_MAX_LISTS,
  DEFAULT_MAX_UPLOADS,
  DEFAULT_RATE_LIMIT,
  hashKey,
  keyConfigProblem,
  normaliseListEntry,
  REVOKED_LIST_REASON,
  type KeyConfig,
  type KeyQuota,
  type KeyRecord,
} from '../store/keys.js';
import { addUsage } from './usage.js';
import { inTransaction, type PgPool, type Queryable } from './db.js';
import { KeyCache } from '../store/keyCache.js';

interface KeyRow {
  id: number;
  key_hint: string;
  label: string;
  mode: VerificationMode;
  services: ServiceName[];
  legacy_accept_all: boolean;
  rate_limit: number;
  created_at: string;
  revoked_at: string | null;
  checks: ChecksLevel;
  fields: KeyField[] | null;
  alternate_max: number;
  bulk_limit: number;
  quota: number | null;
  quota_period: 'day' | 'month' | 'total';
  is_trial: boolean;
  known_bouncers: boolean;
  bounce_max_age_days: number;
  max_lists: number;
  max_bytes_day: string;
  max_uploads: number;
  entries: { kind: 'allow' | 'suppress'; entry: string }[] | null;
}

const SELECT_KEYS = `
  SELECT k.*, (SELECT json_agg(json_build_object('kind', e.kind, 'entry', e.entry))
               FROM key_list_entries e WHERE e.key_id = k.id) AS entries
  FROM keys k`;

function toRecord(row: KeyRow): KeyRecord {
  const allow = new Set<string>();
  const suppress = new Set<string>();
  for (const { kind, entry } of row.entries ?? []) (kind === 'allow' ? allow : suppress).add(entry);
  return {
    id: row.id,
    hint: row.key_hint,
    label: row.label,
    mode: row.mode,
    services: new Set(row.services),
    legacyAcceptAll: row.legacy_accept_all,
    rateLimit: row.rate_limit,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    allow,
    suppress,
    checks: row.checks,
    fields: row.fields === null ? null : new Set(row.fields),
    alternateMax: row.alternate_max,
    bulkLimit: row.bulk_limit,
    quota: row.quota === null ? null : { limit: row.quota, period: row.quota_period, isTrial: row.is_trial },
    knownBouncers: row.known_bouncers,
    bounceMaxAgeDays: row.bounce_max_age_days,
    maxLists: row.max_lists,
    maxBytesDay: Number(row.max_bytes_day),
    maxUploads: row.max_uploads,
  };
}

async function bumpKeys(db: Queryable): Promise<void> {
  await db.query('UPDATE key_changes SET version = version + 1 WHERE id = 1');
}

/** Creates a key and returns it: the only time the key itself is known to the service. */
export async function createPgKey(
  pool: PgPool,
  config: KeyConfig,
): Promise<{ key: string; record: KeyRecord }> {
  const problem = keyConfigProblem(config);
  if (problem) throw new Error(problem);
  const key = `msk_${randomBytes(24).toString('base64url')}`;
  const id = await inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: number }>(
      `INSERT INTO keys (key_hash, key_hint, label, mode, services, legacy_accept_all, rate_limit, created_at, checks,
                         fields, alternate_max, bulk_limit, quota, quota_period, is_trial, known_bouncers,
                         bounce_max_age_days, max_lists, max_bytes_day, max_uploads)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING id`,
      [
        hashKey(key),
        key.slice(-4),
        config.label ?? '',
        config.mode,
        JSON.stringify([...new Set(config.services)]),
        config.legacyAcceptAll === true,
        config.rateLimit ?? DEFAULT_RATE_LIMIT,
        new Date().toISOString(),
        config.checks ?? DEFAULT_KEY_CHECKS,
        config.fields ? JSON.stringify([...new Set(config.fields)]) : null,
        config.alternateMax ?? ALTERNATE_EMAIL_MATCHES_DEFAULT,
        config.bulkLimit ?? BULK_INTELLIGENCE_LIMIT,
        config.quota?.limit ?? null,
        config.quota?.period ?? 'total',
        config.quota?.isTrial === true,
        config.knownBouncers === true,
        config.bounceMaxAgeDays ?? DEFAULT_BOUNCE_MAX_AGE_DAYS,
        config.maxLists ?? DEFAULT_MAX_LISTS,
        config.maxBytesDay ?? DEFAULT_MAX_BYTES_DAY,
        config.maxUploads ?? DEFAULT_MAX_UPLOADS,
      ],
    );
    const keyId = rows[0].id;
    for (const [kind, entries] of [
      ['allow', config.allow],
      ['suppress', config.suppress],
    ] as const) {
      for (const line of entries ?? []) {
        const entry = normaliseListEntry(line);
        if (entry)
          await client.query(
            'INSERT INTO key_list_entries (key_id, kind, entry) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
            [keyId, kind, entry],
          );
      }
    }
    await bumpKeys(client);
    return keyId;
  });
  return { key, record: (await getPgKeyById(pool, id))! };
}

export async function getPgKeyById(db: Queryable, id: number): Promise<KeyRecord | undefined> {
  const { rows } = await db.query<KeyRow>(`${SELECT_KEYS} WHERE k.id = $1`, [id]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The active (not revoked) key with this value, if any. */
export async function findActivePgKey(db: Queryable, key: string): Promise<KeyRecord | undefined> {
  const { rows } = await db.query<KeyRow>(`${SELECT_KEYS} WHERE k.key_hash = $1 AND k.revoked_at IS NULL`, [
    hashKey(key),
  ]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

export async function listPgKeys(db: Queryable): Promise<KeyRecord[]> {
  const { rows } = await db.query<KeyRow>(`${SELECT_KEYS} ORDER BY k.id`);
  return rows.map(toRecord);
}

export async function setPgKeyChecks(db: Queryable, id: number, checks: ChecksLevel): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE keys SET checks = $1 WHERE id = $2', [checks, id]);
  await bumpKeys(db);
  return (rowCount ?? 0) > 0;
}

/**
 * Whether the key of this id is active, asked in the transaction that adds a list: the key's row stays locked
 * (FOR SHARE) until that transaction ends, so a revocation made meanwhile waits for the list and then stops it,
 * and one made before is seen here.
 */
export async function lockActivePgKey(client: Queryable, id: number): Promise<boolean> {
  const { rows } = await client.query('SELECT 1 FROM keys WHERE id = $1 AND revoked_at IS NULL FOR SHARE', [
    id,
  ]);
  return rows.length > 0;
}

/**
 * Revokes a key given by its value or its numeric id. Returns whether an active key was revoked. Its lists
 * waiting or running stop with status Error and the reason (E8), their reserved records given back in the
 * period they were charged in; the nodes' work on them finds them ended and stops. Its lists waiting for a
 * purchase (Processed), which no one can make any more, are deleted with all their data. Its lists with results
 * stay until their retention.
 */
export async function revokePgKey(pool: PgPool, keyOrId: string): Promise<boolean> {
  const byId = /^\d+$/.test(keyOrId);
  return inTransaction(pool, async (client) => {
    const at = new Date().toISOString();
    const { rows } = await client.query<{
      id: number;
      quota: number | null;
      quota_period: KeyQuota['period'];
    }>(
      `UPDATE keys SET revoked_at = $1 WHERE ${byId ? 'id' : 'key_hash'} = $2 AND revoked_at IS NULL
       RETURNING id, quota, quota_period`,
      [at, byId ? Number(keyOrId) : hashKey(keyOrId)],
    );
    await bumpKeys(client);
    const key = rows[0];
    if (!key) return false;
    const { rows: stopped } = await client.query<{ reserved: number; charged_period: string | null }>(
      `UPDATE lists SET status = 'Error', service_status = 'Error', reason = $1, updated_at = $2, finished_at = $2
       WHERE key_id = $3 AND status IN ('Pending', 'Processing') RETURNING reserved, charged_period`,
      [REVOKED_LIST_REASON, at, key.id],
    );
    const quota =
      key.quota === null ? null : { limit: Number(key.quota), period: key.quota_period, isTrial: false };
    for (const list of stopped)
      if (list.reserved > 0)
        await addUsage(client, key.id, quota, -list.reserved, list.charged_period ?? undefined);
    // Those waiting for a purchase go, their input, parts and journal with them (ON DELETE CASCADE).
    await client.query(`DELETE FROM lists WHERE key_id = $1 AND status = 'Processed'`, [key.id]);
    return true;
  });
}

/** How long a key that is not known is remembered as such (a client retrying a wrong key asks nothing more). */
export const KEY_MISS_TTL_MS = 5_000;
/** Misses remembered at most. */
const MAX_MISSES = 10_000;
/** Keys remembered as found valid at most. */
const MAX_KNOWN = 100_000;

/**
 * Key lookups for the request path of an API node: hits are answered from the cache, which is dropped when
 * key_changes moves (checked at most every `recheckMs`, in the background), so a key revoked on any node
 * stops working everywhere within about that time. A cache not confirmed for `maxStaleMs` (an idle node, or
 * PostgreSQL not answering) answers nothing until it is confirmed again; and a lookup that was asked before
 * the cache was last dropped is not kept (it may have read the key before a revocation that dropped it).
 * A key that is not known is remembered as a miss for a few seconds (or until key_changes moves: a key made
 * meanwhile works within `recheckMs`), and the same key asked again while its lookup runs waits for that
 * lookup: each unknown key costs one query, however often it is tried.
 */
export class PgKeyRegistry {
  private readonly cache = new KeyCache<KeyRecord>();
  private readonly misses = new Map<string, number>();
  private readonly pending = new Map<string, Promise<KeyRecord | undefined>>();
  /** Keys found valid on this node, for the limit of failed authentications (isKnown). */
  private readonly known = new Set<string>();
  private version = -1;
  private lastCheck = 0;
  /** When the last version check that confirmed the cache was asked. */
  private confirmedAt = 0;
  /** Bumped on each drop of the cache: a lookup begun before one is not kept. */
  private generation = 0;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly pool: PgPool,
    private readonly recheckMs = 250,
    private readonly maxStaleMs = 1000,
  ) {}

  /** The key, from the cache when it is there (synchronously), else from the database. */
  lookup(key: string): KeyRecord | undefined | Promise<KeyRecord | undefined> {
    this.refreshIfDue();
    if (Date.now() - this.confirmedAt > this.maxStaleMs) {
      // Not confirmed lately: the cache may hold a key revoked meanwhile.
      const checked = this.checking ?? this.refresh();
      return checked.then(() => this.find(key));
    }
    // By the key as given (a hash of it on every request costs more than the rest of the lookup).
    const hit = this.cache.get(key);
    if (hit) return hit;
    return this.find(key);
  }

  /**
   * Whether this node has found the key valid before (kept when the cache is dropped, and never answers for
   * the key itself: a revoked key is looked up, and refused, all the same).
   */
  isKnown(key: string): boolean {
    return this.cache.has(key) || this.known.has(key);
  }

  invalidate(): void {
    this.drop();
  }

  private find(key: string): KeyRecord | undefined | Promise<KeyRecord | undefined> {
    const hit = this.cache.get(key);
    if (hit) return hit;
    const missed = this.misses.get(key);
    if (missed !== undefined) {
      if (Date.now() < missed) return undefined;
      this.misses.delete(key);
    }
    const asked = this.pending.get(key);
    if (asked) return asked;
    const generation = this.generation;
    const lookup: Promise<KeyRecord | undefined> = findActivePgKey(this.pool, key)
      .then((record) => {
        if (record) {
          if (this.known.size >= MAX_KNOWN) this.known.clear();
          this.known.add(key);
        }
        // A lookup asked before the cache was dropped may have read the key before a revocation: not kept.
        if (generation === this.generation) {
          if (record) this.cache.set(key, record);
          else this.rememberMiss(key);
        }
        return record;
      })
      .finally(() => {
        if (this.pending.get(key) === lookup) this.pending.delete(key);
      });
    this.pending.set(key, lookup);
    return lookup;
  }

  private drop(): void {
    this.cache.clear();
    this.misses.clear();
    this.pending.clear();
    this.generation++;
  }

  private rememberMiss(key: string): void {
    if (this.misses.size >= MAX_MISSES) {
      // The oldest go first (a Map iterates in insertion order).
      const now = Date.now();
      for (const [old, until] of this.misses)
        if (until <= now || this.misses.size >= MAX_MISSES) this.misses.delete(old);
        else break;
    }
    this.misses.set(key, Date.now() + KEY_MISS_TTL_MS);
  }

  private refreshIfDue(): void {
    if (Date.now() - this.lastCheck < this.recheckMs || this.checking) return;
    void this.refresh();
  }

  private refresh(): Promise<void> {
    const asked = Date.now();
    this.lastCheck = asked;
    this.checking = this.pool
      .query<{ version: number }>('SELECT version FROM key_changes WHERE id = 1')
      .then(({ rows }) => {
        const version = rows[0]?.version ?? 0;
        if (version !== this.version) {
          this.version = version;
          this.drop();
        }
        this.confirmedAt = asked;
      })
      .catch(() => this.drop())
      .finally(() => (this.checking = undefined));
    return this.checking;
  }
}
