// Activity import: `email,source,event,occurred_at` rows (DESIGN.md "Conventions"), each an open, click or
// seen event of an address at a source (docs/identity.md, "Import").
import type { Database, Statement } from 'better-sqlite3';
import { normaliseHeaderName } from '../../shared/columns.js';
import { ImportFileError, shown, type RowResult } from './import.people.js';
import { canonicalEmail, md5Of, sha1Of } from './normalise.js';

export const ACTIVITY_KINDS = ['open', 'click', 'seen'] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

type ActivityColumn = 'email' | 'source' | 'event' | 'occurred_at';
const ACTIVITY_COLUMNS: readonly ActivityColumn[] = ['email', 'source', 'event', 'occurred_at'];

const NAMES: Readonly<Record<string, ActivityColumn>> = {
  email: 'email',
  emailaddress: 'email',
  source: 'source',
  event: 'event',
  kind: 'event',
  eventtype: 'event',
  occurredat: 'occurred_at',
  timestamp: 'occurred_at',
  time: 'occurred_at',
  date: 'occurred_at',
};

export interface ActivityLayout {
  readonly index: Readonly<Record<ActivityColumn, number>>;
  readonly warnings: readonly string[];
}

/** Reads the header row of an activity file; throws ImportFileError when a column is missing. */
export function activityLayout(header: readonly string[]): ActivityLayout {
  const index: Partial<Record<ActivityColumn, number>> = {};
  const ignored: string[] = [];
  header.forEach((name, i) => {
    const column = NAMES[normaliseHeaderName(name)];
    if (!column) {
      if (name.trim() !== '') ignored.push(name.trim());
      return;
    }
    if (index[column] !== undefined)
      throw new ImportFileError(
        `Two columns hold ${column} (${shown(header[index[column]].trim())}, ${shown(name.trim())}).`,
      );
    index[column] = i;
  });
  const missing = ACTIVITY_COLUMNS.filter((column) => index[column] === undefined);
  if (missing.length > 0)
    throw new ImportFileError(
      `The header lacks ${missing.join(', ')}: an activity file has the columns email,source,event,occurred_at.`,
    );
  return {
    index: index as Record<ActivityColumn, number>,
    warnings: ignored.length > 0 ? [`Ignored columns: ${ignored.join(', ')}.`] : [],
  };
}

export interface ActivityRecord {
  readonly email: string;
  readonly source: string;
  readonly kind: ActivityKind;
  /** Unix seconds. */
  readonly occurredAt: number;
}

/** The earliest event time taken: anything older is a typo, not email activity. */
export const EARLIEST_EVENT_S = Date.UTC(1990, 0, 1) / 1000;
export const SOURCE_MAX_LENGTH = 200;

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An event time: `YYYY-MM-DD` (midnight UTC), an ISO 8601 date-time (UTC unless it gives an offset), or
 * Unix seconds. Undefined when it is none of those or not a real date.
 */
export function parseEventTime(raw: string): number | undefined {
  if (/^\d{9,10}$/.test(raw)) return Number(raw);
  const match = DATE_TIME.exec(raw);
  if (!match) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', zone] = match;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(utc);
  // Date.UTC rolls 2024-02-30 over to March: a date that does not round-trip does not exist.
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  )
    return undefined;
  let offsetMinutes = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMinutes = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
  }
  return Math.floor(utc / 1000) - offsetMinutes * 60;
}

/** Checks one data row of an activity file. `nowS` bounds event times (a day of clock skew allowed). */
export function readActivityRow(
  layout: ActivityLayout,
  row: readonly string[],
  nowS: number,
): RowResult<ActivityRecord> {
  const cell = (column: ActivityColumn) => (row[layout.index[column]] ?? '').trim();
  const rawEmail = cell('email');
  const email = canonicalEmail(rawEmail);
  if (email === undefined)
    return {
      ok: false,
      message: rawEmail === '' ? 'email is empty' : `email ${shown(rawEmail)} is not a valid address`,
    };
  const source = cell('source');
  if (source === '') return { ok: false, message: 'source is empty' };
  if (source.length > SOURCE_MAX_LENGTH)
    return { ok: false, message: `source is longer than ${SOURCE_MAX_LENGTH} characters` };
  const rawEvent = cell('event');
  const kind = rawEvent.toLowerCase() as ActivityKind;
  if (!ACTIVITY_KINDS.includes(kind))
    return { ok: false, message: `event ${shown(rawEvent)} is not one of ${ACTIVITY_KINDS.join(', ')}` };
  const rawTime = cell('occurred_at');
  const occurredAt = parseEventTime(rawTime);
  if (occurredAt === undefined)
    return {
      ok: false,
      message: `occurred_at ${shown(rawTime)} is not a date (YYYY-MM-DD), an ISO 8601 date-time or Unix seconds`,
    };
  if (occurredAt < EARLIEST_EVENT_S)
    return { ok: false, message: `occurred_at ${shown(rawTime)} is before 1990` };
  if (occurredAt > nowS + 86_400)
    return { ok: false, message: `occurred_at ${shown(rawTime)} is in the future` };
  return { ok: true, record: { email, source, kind, occurredAt } };
}

/** Writes checked activity rows; an address not yet known is added (with no person). */
export class ActivityWriter {
  private readonly emailId: Statement<[string], { id: number }>;
  private readonly insertEmail: Statement<[string, Buffer, Buffer]>;
  private readonly sourceId: Statement<[string], { id: number }>;
  private readonly insertSource: Statement<[string]>;
  private readonly insertEvent: Statement<[number, number, number, string]>;
  private readonly unpack: Statement<[number]>;
  private readonly sources = new Map<string, number>();
  private lastEmail = '';
  private lastEmailId = 0;
  /** Events stored, and events already stored before (the same row imported again). */
  added = 0;
  duplicates = 0;
  addressesAdded = 0;

  constructor(readonly db: Database) {
    this.emailId = db.prepare('SELECT id FROM ref_emails WHERE email = ?');
    this.insertEmail = db.prepare('INSERT INTO ref_emails (email, md5, sha1) VALUES (?, ?, ?)');
    this.sourceId = db.prepare('SELECT id FROM ref_sources WHERE name = ?');
    this.insertSource = db.prepare('INSERT INTO ref_sources (name) VALUES (?)');
    this.unpack = db.prepare(
      'UPDATE ref_emails SET activity_packed = NULL WHERE id = ? AND activity_packed IS NOT NULL',
    );
    this.insertEvent = db.prepare(
      'INSERT OR IGNORE INTO ref_activity (email_id, occurred_at, source_id, kind) VALUES (?, ?, ?, ?)',
    );
  }

  private source(name: string): number {
    let id = this.sources.get(name);
    if (id === undefined) {
      id = this.sourceId.get(name)?.id ?? Number(this.insertSource.run(name).lastInsertRowid);
      this.sources.set(name, id);
    }
    return id;
  }

  private email(email: string): number {
    // Activity exports come grouped by address more often than not.
    if (email === this.lastEmail) return this.lastEmailId;
    let id = this.emailId.get(email)?.id;
    if (id === undefined) {
      id = Number(this.insertEmail.run(email, md5Of(email), sha1Of(email)).lastInsertRowid);
      this.addressesAdded++;
    }
    this.lastEmail = email;
    this.lastEmailId = id;
    return id;
  }

  /** Writes records in one transaction; answers how many (all of them, stored before or not). */
  write(records: readonly ActivityRecord[]): number {
    this.db.transaction(() => {
      // The addresses whose events change lose their packed activity in the same transaction, so that a
      // store never answers from a stale one; the service packs them again (prepared.ts).
      const emailIds = records.map((record) => this.email(record.email));
      for (const emailId of new Set(emailIds)) this.unpack.run(emailId);
      records.forEach((record, i) => {
        const changes = this.insertEvent.run(
          emailIds[i],
          record.occurredAt,
          this.source(record.source),
          record.kind,
        ).changes;
        if (changes > 0) this.added++;
        else this.duplicates++;
      });
    })();
    return records.length;
  }
}
