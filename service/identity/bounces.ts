// Known bouncers (code 520, "Matched to known bouncers"): the user's own hard bounces, imported from an email
// platform's export (import.bounces.ts), answer 520 for the keys that have them (`keys create
// --known-bouncers`, and the app's own key), in E1 and in lists, offline. See docs/identity.md, "Bounces".
//
// One rule decides whether a stored bounce counts, written once in SQL (COUNTS): its latest hard bounce is at
// most the key's `bounce_max_age_days` old on the day of the verification, and the address has no open or
// click in the imported activity data after it. E1 asks it of one address per request (BounceLookup); a list
// asks it once, at its start, of every stored bounce, and hands the addresses that count to its verify
// workers as a set of 64-bit hashes in shared memory (knownBouncerSet; bounces.list.ts).
import type Database from 'better-sqlite3';
import { hashAsciiLowerAddressInto, hashInto, SharedHashSet64 } from '../lists/read/dupTable.js';

const DAY_S = 86_400;

/** The earliest bounce (Unix seconds) that counts at `nowS` for a key whose bounces count `maxAgeDays`. */
export function bounceCutoff(nowS: number, maxAgeDays: number): number {
  return nowS - maxAgeDays * DAY_S;
}

/**
 * Whether the bounce of `ref_bounces b` counts, given `@cutoff`: recent enough, and no open or click after it
 * (`ref_activity` is clustered by address and time, so this reads the address's events after the bounce
 * only). A `seen` event is no sign that mail arrived; only opens and clicks are.
 */
const COUNTS = `b.bounced_at >= @cutoff AND NOT EXISTS (
  SELECT 1 FROM ref_emails e JOIN ref_activity a ON a.email_id = e.id
  WHERE e.email = b.email AND a.occurred_at > b.bounced_at AND a.kind IN ('open', 'click'))`;

/** Whether any bounce is stored: without one, a list does not look addresses up at all. */
export function hasBounces(db: Database.Database): boolean {
  return db.prepare('SELECT 1 FROM ref_bounces LIMIT 1').get() !== undefined;
}

/** E1's lookups: one indexed query per address, on the service's connection. */
export class BounceLookup {
  private readonly counts: Database.Statement<[{ email: string; cutoff: number }], number>;

  constructor(db: Database.Database) {
    this.counts = db
      .prepare<[{ email: string; cutoff: number }], number>(
        `SELECT 1 FROM ref_bounces b WHERE b.email = @email AND ${COUNTS}`,
      )
      .pluck();
  }

  /** Whether `local@domain` (compared lower-cased) has a bounce that counts now for a key of `maxAgeDays`. */
  isBounced(
    local: string,
    domain: string,
    maxAgeDays: number,
    nowS = Math.floor(Date.now() / 1000),
  ): boolean {
    const email = `${local}@${domain}`.toLowerCase();
    return this.counts.get({ email, cutoff: bounceCutoff(nowS, maxAgeDays) }) !== undefined;
  }
}

/**
 * The addresses whose bounce counts at `nowS` for a key of `maxAgeDays`, as a shared set of their hashes;
 * undefined when none does. 16 to 32 bytes an address; a false match between two different addresses of a
 * 1,000,000-row list against 1,000,000 bounces is about a one-in-twenty-million chance (64-bit hashes).
 */
export function knownBouncerSet(
  db: Database.Database,
  maxAgeDays: number,
  nowS: number,
): SharedHashSet64 | undefined {
  const stored = db.prepare('SELECT count(*) FROM ref_bounces').pluck().get() as number;
  if (stored === 0) return undefined;
  const set = SharedHashSet64.create(stored);
  const hash = new Uint32Array(2);
  const addresses = db
    .prepare<[{ cutoff: number }], string>(`SELECT b.email FROM ref_bounces b WHERE ${COUNTS}`)
    .pluck()
    .iterate({ cutoff: bounceCutoff(nowS, maxAgeDays) });
  for (const address of addresses) {
    hashInto(address, hash, 0);
    set.add(hash[0], hash[1]);
  }
  return set.size > 0 ? set : undefined;
}

/**
 * The engine's `isBounced` over a set made by knownBouncerSet (in any thread given its buffer). It runs for
 * every row of a list: an ASCII address is hashed from its parts, lower-cased as it goes, without making the
 * address (half the cost of hashing a lower-cased copy).
 */
export function isBouncedIn(buffer: SharedArrayBuffer): (local: string, domain: string) => boolean {
  const set = new SharedHashSet64(buffer);
  const hash = new Uint32Array(2);
  return (local, domain) => {
    if (!hashAsciiLowerAddressInto(local, domain, hash, 0))
      hashInto(`${local}@${domain}`.toLowerCase(), hash, 0);
    return set.has(hash[0], hash[1]);
  };
}

export interface BounceImportRow {
  id: number;
  name: string;
  started_at: string;
  finished_at: string | null;
  rows_read: number;
  hard: number;
  soft: number;
  other: number;
  rows_rejected: number;
}

export interface BounceStatus {
  /** Addresses with a hard bounce (whether it still counts depends on the key and the day). */
  readonly addresses: number;
  /** Over every import: rows read, hard bounces, soft bounces and other rows (both ignored), rejected rows. */
  readonly rows: number;
  readonly hard: number;
  readonly soft: number;
  readonly other: number;
  readonly rejected: number;
  readonly imports: readonly BounceImportRow[];
}

export function bounceStatus(db: Database.Database): BounceStatus {
  const imports = db.prepare('SELECT * FROM ref_bounce_imports ORDER BY id').all() as BounceImportRow[];
  const sum = (pick: (row: BounceImportRow) => number) => imports.reduce((n, row) => n + pick(row), 0);
  return {
    addresses: db.prepare('SELECT count(*) FROM ref_bounces').pluck().get() as number,
    rows: sum((row) => row.rows_read),
    hard: sum((row) => row.hard),
    soft: sum((row) => row.soft),
    other: sum((row) => row.other),
    rejected: sum((row) => row.rows_rejected),
    imports,
  };
}

/** Deletes every stored bounce and bounces import. */
export function clearBounces(db: Database.Database): void {
  db.transaction(() => {
    db.exec('DELETE FROM ref_bounces');
    db.exec('DELETE FROM ref_bounce_imports');
  })();
}
