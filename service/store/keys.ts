import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { listDir } from '../lists/names.js';
import { ChangeWatch, RECHECK_MS } from './changes.js';
import { KeyCache } from './keyCache.js';
import type { ServiceDb } from './db.js';
import { statement } from './statements.js';
import { periodOf } from './usage.js';
import type { ServiceName } from '../../shared/api/services.js';
import type { VerificationMode } from '../../shared/api/codes.js';
import { DEFAULT_KEY_CHECKS, type ChecksLevel } from '../engine/online/levels.js';
import type { KeyField } from '../identity/fields.js';
import { ALTERNATE_EMAIL_MATCHES_DEFAULT, BULK_INTELLIGENCE_LIMIT } from '../../shared/api/limits.js';

/** A key's quota of billable queries (spec "Limits"; a trial key's is 100 in all). */
export interface KeyQuota {
  readonly limit: number;
  /** The quota is per day or per calendar month (UTC), or in all. */
  readonly period: 'day' | 'month' | 'total';
  /** A trial key (`keys create --trial`). */
  readonly isTrial: boolean;
}

/** The spec's limited trial: 100 queries. */
export const TRIAL_QUOTA: KeyQuota = { limit: 100, period: 'total', isTrial: true };

export interface KeyConfig {
  readonly label?: string;
  readonly mode: VerificationMode;
  readonly services: readonly ServiceName[];
  /** Report accept-all domains as catchall / unverifiable instead of valid (DESIGN.md). */
  readonly legacyAcceptAll?: boolean;
  /** Calls per second on E1–E6; 0 for no limit. */
  readonly rateLimit?: number;
  /** Allow-list entries (code 55): whole addresses or domains. */
  readonly allow?: Iterable<string>;
  /** Suppression entries (code 255): whole addresses or domains. */
  readonly suppress?: Iterable<string>;
  /** How far E1 checks go for this key: offline (default), dns or smtp (docs/online-checks.md). */
  readonly checks?: ChecksLevel;
  /** Intelligence fields (and `month_last_open`) the key is enabled for; null or absent: every field. */
  readonly fields?: readonly KeyField[] | null;
  /** Alternate email matches per answer (E2), 1 to 5; default 1. */
  readonly alternateMax?: number;
  /** Records per E6 request for an activity-metrics key, up to 10,000; default 5,000 (docs/identity.md). */
  readonly bulkLimit?: number;
  /** Billable queries allowed (E1 calls, list records, E5/E6 records); none: no quota. */
  readonly quota?: KeyQuota;
  /** The imported hard bounces answer code 520 (docs/identity.md, "Bounces"). Default false. */
  readonly knownBouncers?: boolean;
  /** How many days a hard bounce counts, from the day of the verification. Default 365. */
  readonly bounceMaxAgeDays?: number;
  /** Lists waiting or running at once (E7 answers 429 past it); 0: no limit. Default DEFAULT_MAX_LISTS. */
  readonly maxLists?: number;
  /** Bytes of lists submitted a UTC day (E7 answers 429 past it); 0: no limit. Default DEFAULT_MAX_BYTES_DAY. */
  readonly maxBytesDay?: number;
  /** Uploads (E7) arriving at once (E7 answers 429 past it, before the body); 0: no limit. Default DEFAULT_MAX_UPLOADS. */
  readonly maxUploads?: number;
}

export interface KeyRecord {
  readonly id: number;
  /** The last four characters, to tell keys apart without showing them. */
  readonly hint: string;
  readonly label: string;
  readonly mode: VerificationMode;
  readonly services: ReadonlySet<ServiceName>;
  readonly legacyAcceptAll: boolean;
  readonly rateLimit: number;
  readonly createdAt: string;
  readonly revokedAt: string | null;
  readonly allow: ReadonlySet<string>;
  readonly suppress: ReadonlySet<string>;
  readonly checks: ChecksLevel;
  /** Enabled intelligence fields and `month_last_open`; null: every field. */
  readonly fields: ReadonlySet<KeyField> | null;
  readonly alternateMax: number;
  readonly bulkLimit: number;
  /** Its quota of billable queries; null for none. */
  readonly quota: KeyQuota | null;
  readonly knownBouncers: boolean;
  readonly bounceMaxAgeDays: number;
  /** Lists waiting or running at once; 0: no limit. */
  readonly maxLists: number;
  /** Bytes of lists submitted a UTC day; 0: no limit. */
  readonly maxBytesDay: number;
  /** Uploads arriving at once; 0: no limit. */
  readonly maxUploads: number;
}

interface KeyRow {
  id: number;
  key_hash: string;
  key_hint: string;
  label: string;
  mode: VerificationMode;
  services: string;
  legacy_accept_all: number;
  rate_limit: number;
  created_at: string;
  revoked_at: string | null;
  checks: ChecksLevel;
  fields: string | null;
  alternate_max: number;
  bulk_limit: number;
  quota: number | null;
  quota_period: 'day' | 'month' | 'total';
  is_trial: number;
  known_bouncers: number;
  bounce_max_age_days: number;
  max_lists: number;
  max_bytes_day: number;
  max_uploads: number;
}

export const DEFAULT_RATE_LIMIT = 500;
/** How many days a hard bounce counts by default (`keys create --bounce-max-age-days`). */
export const DEFAULT_BOUNCE_MAX_AGE_DAYS = 365;
export const BOUNCE_MAX_AGE_DAYS_LIMIT = 36_500;
/** Lists a key may have waiting or running at once, by default (`keys create --max-lists`). */
export const DEFAULT_MAX_LISTS = 20;
/** Bytes of lists a key may submit a UTC day, by default (`keys create --max-bytes-day`): 5 GiB. */
export const DEFAULT_MAX_BYTES_DAY = 5 * 1024 ** 3;
/**
 * Uploads a key may send at once, by default (`keys create --max-uploads`): two, so that a client sends its next
 * list while the last is stored, and no client holds more of a node's sockets, disk and upload connections.
 */
export const DEFAULT_MAX_UPLOADS = 2;

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Normalises a list entry: lower case, trimmed; blank lines and `#` comments give null. */
export function normaliseListEntry(line: string): string | null {
  const entry = line.trim().toLowerCase();
  if (entry === '' || entry.startsWith('#')) return null;
  return entry.startsWith('@') ? entry.slice(1) : entry;
}

/**
 * Why a key cannot be made as asked, or undefined: the spec's table has a dash for codes 55 (allowed) and
 * 255 (suppressed) in `email_validation` mode, so a legacy key has no allow or suppression list.
 */
export function keyConfigProblem(config: Pick<KeyConfig, 'mode' | 'allow' | 'suppress'>): string | undefined {
  if (config.mode !== 'email_validation') return undefined;
  const holdsEntries = (entries: Iterable<string> | undefined) =>
    [...(entries ?? [])].some((line) => normaliseListEntry(line) !== null);
  const lists = [
    holdsEntries(config.allow) && 'an allow list',
    holdsEntries(config.suppress) && 'a suppression list',
  ];
  const named = lists.filter(Boolean);
  if (named.length === 0) return undefined;
  return (
    `A key in email_validation (legacy) mode cannot have ${named.join(' or ')}: codes 55 and 255 do not occur ` +
    'in that mode. Use --mode safe_to_send for a key with --allow or --suppress.'
  );
}

/** Creates a key and returns it: the only time the key itself is known to the service. */
export function createKey(db: ServiceDb, config: KeyConfig): { key: string; record: KeyRecord } {
  const problem = keyConfigProblem(config);
  if (problem) throw new Error(problem);
  const key = `msk_${randomBytes(24).toString('base64url')}`;
  const insertEntry = db.prepare(
    'INSERT OR IGNORE INTO key_list_entries (key_id, kind, entry) VALUES (?, ?, ?)',
  );
  const id = db.transaction(() => {
    const result = db
      .prepare(
        `INSERT INTO keys (key_hash, key_hint, label, mode, services, legacy_accept_all, rate_limit, created_at, checks,
                           fields, alternate_max, bulk_limit, quota, quota_period, is_trial, known_bouncers,
                           bounce_max_age_days, max_lists, max_bytes_day, max_uploads)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        hashKey(key),
        key.slice(-4),
        config.label ?? '',
        config.mode,
        JSON.stringify([...new Set(config.services)]),
        config.legacyAcceptAll ? 1 : 0,
        config.rateLimit ?? DEFAULT_RATE_LIMIT,
        new Date().toISOString(),
        config.checks ?? DEFAULT_KEY_CHECKS,
        config.fields ? JSON.stringify([...new Set(config.fields)]) : null,
        config.alternateMax ?? ALTERNATE_EMAIL_MATCHES_DEFAULT,
        config.bulkLimit ?? BULK_INTELLIGENCE_LIMIT,
        config.quota?.limit ?? null,
        config.quota?.period ?? 'total',
        config.quota?.isTrial === true ? 1 : 0,
        config.knownBouncers ? 1 : 0,
        config.bounceMaxAgeDays ?? DEFAULT_BOUNCE_MAX_AGE_DAYS,
        config.maxLists ?? DEFAULT_MAX_LISTS,
        config.maxBytesDay ?? DEFAULT_MAX_BYTES_DAY,
        config.maxUploads ?? DEFAULT_MAX_UPLOADS,
      );
    const keyId = Number(result.lastInsertRowid);
    for (const [kind, entries] of [
      ['allow', config.allow],
      ['suppress', config.suppress],
    ] as const) {
      for (const line of entries ?? []) {
        const entry = normaliseListEntry(line);
        if (entry) insertEntry.run(keyId, kind, entry);
      }
    }
    return keyId;
  })();
  return { key, record: getKeyById(db, id)! };
}

function toRecord(db: ServiceDb, row: KeyRow): KeyRecord {
  const allow = new Set<string>();
  const suppress = new Set<string>();
  const entries = statement(db, 'SELECT kind, entry FROM key_list_entries WHERE key_id = ?').all(row.id) as {
    kind: 'allow' | 'suppress';
    entry: string;
  }[];
  for (const { kind, entry } of entries) (kind === 'allow' ? allow : suppress).add(entry);
  return {
    id: row.id,
    hint: row.key_hint,
    label: row.label,
    mode: row.mode,
    services: new Set(JSON.parse(row.services) as ServiceName[]),
    legacyAcceptAll: row.legacy_accept_all === 1,
    rateLimit: row.rate_limit,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    allow,
    suppress,
    checks: row.checks,
    fields: row.fields === null ? null : new Set(JSON.parse(row.fields) as KeyField[]),
    alternateMax: row.alternate_max,
    bulkLimit: row.bulk_limit,
    quota:
      row.quota === null ? null : { limit: row.quota, period: row.quota_period, isTrial: row.is_trial === 1 },
    knownBouncers: row.known_bouncers === 1,
    bounceMaxAgeDays: row.bounce_max_age_days,
    maxLists: row.max_lists,
    maxBytesDay: row.max_bytes_day,
    maxUploads: row.max_uploads,
  };
}

export function getKeyById(db: ServiceDb, id: number): KeyRecord | undefined {
  const row = statement(db, 'SELECT * FROM keys WHERE id = ?').get(id) as KeyRow | undefined;
  return row ? toRecord(db, row) : undefined;
}

/** The active (not revoked) key with this value, if any. */
export function findActiveKey(db: ServiceDb, key: string): KeyRecord | undefined {
  const row = statement(db, 'SELECT * FROM keys WHERE key_hash = ? AND revoked_at IS NULL').get(
    hashKey(key),
  ) as KeyRow | undefined;
  return row ? toRecord(db, row) : undefined;
}

export function listKeys(db: ServiceDb): KeyRecord[] {
  const rows = db.prepare('SELECT * FROM keys ORDER BY id').all() as KeyRow[];
  return rows.map((row) => toRecord(db, row));
}

/** Sets how far E1 checks go for a key (docs/online-checks.md). Returns whether the key exists. */
export function setKeyChecks(db: ServiceDb, id: number, checks: ChecksLevel): boolean {
  return db.prepare('UPDATE keys SET checks = ? WHERE id = ?').run(checks, id).changes > 0;
}

/** Sets the uploads a key may send at once (0: no limit). Returns whether the key exists. */
export function setKeyMaxUploads(db: ServiceDb, id: number, maxUploads: number): boolean {
  return db.prepare('UPDATE keys SET max_uploads = ? WHERE id = ?').run(maxUploads, id).changes > 0;
}

/** Turns a key's known bouncers (code 520) on or off. Returns whether the key exists. */
export function setKeyKnownBouncers(db: ServiceDb, id: number, isOn: boolean): boolean {
  return db.prepare('UPDATE keys SET known_bouncers = ? WHERE id = ?').run(isOn ? 1 : 0, id).changes > 0;
}

/** E8's reason of a list stopped because its key was revoked. */
export const REVOKED_LIST_REASON = 'The key that submitted this list was revoked; the list was stopped.';

/** E7's answer for a list whose key was revoked while it was uploading: 401, as for an unknown key. */
export class RevokedKeyError extends Error {
  constructor() {
    super('The key was revoked while its list was uploading.');
  }
}

/** Whether the key of this id is active (not revoked): asked in the transaction that adds a list. */
export function isActiveKeyId(db: ServiceDb, id: number): boolean {
  return statement(db, 'SELECT 1 FROM keys WHERE id = ? AND revoked_at IS NULL').get(id) !== undefined;
}

/**
 * Revokes a key given by its value or its numeric id. Returns whether an active key was revoked. Its lists
 * waiting or running stop with status Error and the reason (E8), their reserved records given back in the
 * period they were charged in; the service's work on them finds them ended and stops. Its lists waiting for a
 * purchase (Processed), which no one can make any more, are deleted with their files (the folders under
 * `dataDir`; without it, by the service's next retention sweep). Its lists with results stay until their
 * retention.
 */
export function revokeKey(db: ServiceDb, keyOrId: string, dataDir?: string): boolean {
  const now = new Date().toISOString();
  const byId = /^\d+$/.test(keyOrId);
  const unbought: number[] = [];
  const isRevoked = db.transaction(() => {
    const key = db
      .prepare(
        `UPDATE keys SET revoked_at = ? WHERE ${byId ? 'id' : 'key_hash'} = ? AND revoked_at IS NULL
         RETURNING id, quota_period`,
      )
      .get(now, byId ? Number(keyOrId) : hashKey(keyOrId)) as
      { id: number; quota_period: KeyQuota['period'] } | undefined;
    if (!key) return false;
    const stopped = db
      .prepare(
        `UPDATE lists SET status = 'Error', service_status = 'Error', reason = ?, updated_at = ?, finished_at = ?
         WHERE key_id = ? AND status IN ('Pending', 'Processing') RETURNING reserved, charged_period`,
      )
      .all(REVOKED_LIST_REASON, now, now, key.id) as { reserved: number; charged_period: string | null }[];
    const giveBack = db.prepare(
      'UPDATE key_usage SET used = max(0, used - ?) WHERE key_id = ? AND period = ?',
    );
    for (const list of stopped)
      if (list.reserved > 0)
        giveBack.run(list.reserved, key.id, list.charged_period ?? periodOf(key.quota_period));
    // Those waiting for a purchase go, their parts and journal with them (ON DELETE CASCADE).
    const deleted = db.prepare(`DELETE FROM lists WHERE key_id = ? AND status = 'Processed' RETURNING id`);
    unbought.push(...(deleted.pluck().all(key.id) as number[]));
    return true;
  })();
  if (dataDir !== undefined)
    for (const id of unbought) rmSync(listDir(dataDir, id), { recursive: true, force: true });
  return isRevoked;
}

/**
 * Key lookups for the request path. Hits are cached, by the key as given (hashing it again on every request
 * cost more than the rest of the lookup; keyCache.ts); the cache is dropped whenever the database changed (ChangeWatch,
 * asked at most every `recheckMs`), so a key revoked by `mailsieve keys revoke` in another process stops
 * working within that time, without a database read on every request.
 */
export class KeyRegistry {
  private readonly cache = new KeyCache<KeyRecord>();
  private readonly changes: ChangeWatch;
  private generation = -1;

  constructor(
    private readonly db: ServiceDb,
    recheckMs = RECHECK_MS,
  ) {
    this.changes = new ChangeWatch(db, recheckMs);
  }

  lookup(key: string): KeyRecord | undefined {
    const generation = this.changes.generation();
    if (generation !== this.generation) {
      this.generation = generation;
      this.cache.clear();
    }
    const hit = this.cache.get(key);
    if (hit) return hit;
    const record = findActiveKey(this.db, key);
    if (record) this.cache.set(key, record);
    return record;
  }

  invalidate(): void {
    this.cache.clear();
  }
}
