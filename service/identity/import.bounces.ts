// Bounces import (`mailsieve data import bounces FILE`): the bounce or suppression export of an email platform
// (Mailchimp, SendGrid, Mailgun, Amazon SES, Postmark, Klaviyo, Brevo…) or a plain list of addresses. Its
// columns are found by their names (header synonyms, matched as everywhere: shared/columns.ts); each row is a
// hard bounce, a soft bounce or something else (a complaint, an unsubscribe), by its type, its SMTP code or
// its reason. Only hard bounces are stored (bounces.ts answers code 520 from them). docs/identity.md, "Bounces".
import type { Database, Statement } from 'better-sqlite3';
import { HEADER_SYNONYMS, looksLikeEmail, normaliseHeaderName } from '../../shared/columns.js';
import { EARLIEST_EVENT_S, parseEventTime } from './import.activity.js';
import { ImportFileError, shown, type RowResult } from './import.people.js';
import { canonicalEmail } from './normalise.js';

export type BounceKind = 'hard' | 'soft' | 'other';

type Role = 'email' | 'date' | 'type' | 'code' | 'reason';

/**
 * The header names of each role, best first: where a file has several columns of one role, the best-named
 * gives the email and the date; the type, code and reason columns are all read, in this order.
 */
const ROLE_NAMES: Readonly<Record<Role, readonly string[]>> = {
  // Mailgun names the address `address`; a contacts export may have a postal `Address` beside its email.
  email: [...HEADER_SYNONYMS.email, 'recipient', 'recipient email', 'recipient address', 'address'],
  // The bounce's own date first (Mailchimp's CLEAN_TIME, Postmark's BouncedAt), then a row's date.
  date: [
    'clean time',
    'cleaned at',
    'bounced at',
    'bounce date',
    'bounce time',
    'date bounced',
    'suppressed at',
    'suppression date',
    'date suppressed',
    'blocked at',
    'created',
    'created at',
    'last update time',
    'timestamp',
    'date',
    'time',
    'event time',
    'occurred at',
    'datetime',
  ],
  type: [
    'type',
    'bounce type',
    'event',
    'event type',
    'suppression reason',
    'reason code',
    'bounce category',
  ],
  // SendGrid's `status` holds the enhanced status code (5.1.1).
  code: [
    'status',
    'code',
    'smtp code',
    'status code',
    'smtp status',
    'error code',
    'bounce code',
    'diagnostic code',
    'enhanced status code',
  ],
  reason: [
    'reason',
    'bounce reason',
    'error',
    'error message',
    'description',
    'details',
    'diagnostic',
    'message',
    'response',
    'smtp response',
  ],
};

/** The date names that say the rows are bounces (a file with one of these is a list of bounces). */
const BOUNCE_DATE_NAMES = new Set(ROLE_NAMES.date.slice(0, 10).map(normaliseHeaderName));

const RANK = new Map<string, { role: Role; rank: number }>();
for (const role of Object.keys(ROLE_NAMES) as Role[])
  ROLE_NAMES[role].forEach((name, rank) => {
    const key = normaliseHeaderName(name);
    if (!RANK.has(key)) RANK.set(key, { role, rank });
  });

/**
 * The best-named email column of a header, found as a bounces file's is (`email` before `recipient` before
 * `address`: a contacts export may have a postal Address beside its email); undefined when none is named.
 * The outcomes of a job read a platform's sent list by it too.
 */
export function emailColumnOf(header: readonly string[]): number | undefined {
  let best: { index: number; rank: number } | undefined;
  header.forEach((name, index) => {
    const at = RANK.get(normaliseHeaderName(name));
    if (at?.role === 'email' && (!best || at.rank < best.rank)) best = { index, rank: at.rank };
  });
  return best?.index;
}

/**
 * The words of platforms' bounce types, statuses and suppression reasons, compared as header names are
 * (`HardBounce`, `hard_bounce`, `Hard bounce` are one word). Hard: the mailbox or domain does not exist or
 * refuses for good. Soft: a temporary failure (mailbox full, greylisting, DNS trouble). Other: not a bounce.
 */
const WORDS: Readonly<Record<BounceKind, readonly string[]>> = {
  hard: [
    'hard',
    'hard bounce',
    'hard bounced',
    'permanent', // Amazon SES bounceType
    'bounce', // Amazon SES suppression reason BOUNCE (hard bounces only)
    'bounced',
    'cleaned', // Mailchimp
    'bad email address', // Postmark
    'invalid email', // Klaviyo INVALID_EMAIL
  ],
  soft: [
    'soft',
    'soft bounce',
    'soft bounced',
    'transient', // Postmark, Amazon SES
    'undetermined', // Amazon SES: no reason given
    'temporary',
    'deferred',
    'dns error', // Postmark
  ],
  other: [
    'complaint',
    'spam complaint',
    'spam',
    'contact flagged as spam', // Brevo
    'unsubscribe',
    'unsubscribed',
    'unsubscribed via email', // Brevo
    'unsubscribed via api',
    'unsubscribed via ma',
    'user suppressed', // Klaviyo
    'manual suppression', // Postmark suppressions
    'manually deactivated',
    'admin blocked', // Brevo
    'blocked',
    'subscribed', // Mailchimp statuses of members that are not cleaned
    'pending',
    'archived',
    'transactional',
    'auto responder', // Postmark's other message types
    'address change',
    'spam notification',
    'open relay test',
    'virus notification',
    'challenge verification',
    'unconfirmed',
    'smtp api error',
    'inbound error',
    'dmarc policy',
    'template rendering failed',
    'unknown',
    'delivered',
  ],
};

const KIND_OF_WORD = new Map<string, BounceKind>();
for (const kind of Object.keys(WORDS) as BounceKind[])
  for (const word of WORDS[kind]) KIND_OF_WORD.set(normaliseHeaderName(word), kind);

const KIND_OF_CLASS: Readonly<Record<string, BounceKind>> = { '5': 'hard', '4': 'soft', '2': 'other' };
/** An enhanced status code (RFC 3463) anywhere in the text: `5.1.1`, `smtp; 550 5.1.1 user unknown`. */
const ENHANCED_CODE = /(?:^|[^\d.])([245])\.\d{1,3}\.\d{1,3}(?![\d.])/;
/** A reply code (RFC 5321) opening the text: `550`, `550 No such user`, `smtp; 421-…`. */
const REPLY_CODE = /^(?:smtp;\s*)?([245])\d\d(?![\d.])/i;

/**
 * What one type, code or reason cell says: hard (5.x.x, 5xx, a hard word), soft (4.x.x, 4xx, a soft word),
 * other, or undefined when it says nothing Mailsieve knows.
 */
export function bounceKindOf(value: string): BounceKind | undefined {
  const text = value.trim();
  if (text === '') return undefined;
  const word = KIND_OF_WORD.get(normaliseHeaderName(text));
  if (word) return word;
  const code = ENHANCED_CODE.exec(text)?.[1] ?? REPLY_CODE.exec(text)?.[1];
  return code === undefined ? undefined : KIND_OF_CLASS[code];
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/** RFC 2822 dates, as Mailgun writes them: `Fri, 21 Oct 2011 11:02:55 GMT`. */
const RFC_2822 =
  /^(?:[a-z]{3},\s*)?(\d{1,2})\s+([a-z]{3})\s+(\d{4})\s+(\d{2}):(\d{2})(?::(\d{2}))?\s*(gmt|utc|ut|z|[+-]\d{4})?$/i;

/**
 * A bounce's time in Unix seconds: the activity import's forms (`YYYY-MM-DD`, ISO 8601, Unix seconds), Unix
 * milliseconds, and RFC 2822 dates. Undefined when it is none of those or not a real date.
 */
export function parseBounceTime(raw: string): number | undefined {
  if (/^\d{12,13}$/.test(raw)) return Math.floor(Number(raw) / 1000);
  const iso = parseEventTime(raw);
  if (iso !== undefined) return iso;
  const match = RFC_2822.exec(raw);
  if (!match) return undefined;
  const [, d, mon, y, h, mi, s = '00', zone = 'gmt'] = match;
  const month = MONTHS.indexOf(mon.toLowerCase());
  if (month < 0) return undefined;
  const pad = (n: string) => n.padStart(2, '0');
  const offset = /^[+-]/.test(zone) ? `${zone.slice(0, 3)}:${zone.slice(3)}` : 'Z';
  return parseEventTime(`${y}-${pad(String(month + 1))}-${pad(d)}T${h}:${mi}:${s}${offset}`);
}

export interface BounceLayout {
  /** False for a one-column file without a header: its first row is an address too. */
  readonly hasHeader: boolean;
  readonly email: number;
  readonly date: number | undefined;
  /** The type, code and reason columns, in the order they are read. */
  readonly classifiers: readonly number[];
  /** Rows that no column classifies are hard bounces: a list of bounced or cleaned addresses. */
  readonly isAllHard: boolean;
  /** What was read from which column, in words. */
  readonly description: string;
}

/**
 * Reads the first row of a bounces file (its header, or its first address); throws ImportFileError when the
 * file gives no addresses, or when nothing says its rows are bounces.
 */
export function bounceLayout(first: readonly string[]): BounceLayout {
  if (first.length === 1 && looksLikeEmail(first[0]))
    return {
      hasHeader: false,
      email: 0,
      date: undefined,
      classifiers: [],
      isAllHard: true,
      description: 'Read a list of addresses without a header: every address a hard bounce, with no date.',
    };
  const found: { index: number; role: Role; rank: number }[] = [];
  first.forEach((name, index) => {
    const at = RANK.get(normaliseHeaderName(name));
    if (at) found.push({ index, ...at });
  });
  const best = (role: Role) =>
    found.filter((column) => column.role === role).sort((a, b) => a.rank - b.rank || a.index - b.index)[0];
  // A one-column file is a list of addresses, whatever its header says.
  const email = first.length === 1 ? { index: 0, rank: 0 } : best('email');
  if (!email)
    throw new ImportFileError(
      `The header names no email column (${describeColumns(first)}): a bounces file needs one, named email, email address, recipient or address.`,
    );
  const date = best('date');
  const classifiers = found
    .filter((column) => column.role === 'type' || column.role === 'code' || column.role === 'reason')
    .sort(
      (a, b) =>
        ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role) || a.rank - b.rank || a.index - b.index,
    );
  const named = (index: number) => shown(first[index].trim());
  const isBounceDated = date !== undefined && BOUNCE_DATE_NAMES.has(normaliseHeaderName(first[date.index]));
  const isOnlyAddresses = first.every(
    (name, index) => index === email.index || index === date?.index || name.trim() === '',
  );
  if (classifiers.length === 0 && !isBounceDated && !isOnlyAddresses)
    throw new ImportFileError(
      `No column says which rows are bounces (${describeColumns(first)}): a bounces file has a bounce type, an SMTP code or a reason column (type, status, code, reason…), a bounce date (CLEAN_TIME, BouncedAt…), or the addresses alone. Is this a bounce or suppression export?`,
    );
  const parts = [`addresses from ${named(email.index)}`];
  if (date) parts.push(`dates from ${named(date.index)}`);
  if (classifiers.length > 0)
    parts.push(`hard or soft from ${classifiers.map((column) => named(column.index)).join(', then ')}`);
  else parts.push('every row a hard bounce');
  return {
    hasHeader: true,
    email: email.index,
    date: date?.index,
    classifiers: classifiers.map((column) => column.index),
    isAllHard: classifiers.length === 0,
    description: `Read ${parts.join('; ')}.`,
  };
}

const ROLE_ORDER: readonly Role[] = ['type', 'code', 'reason'];

function describeColumns(header: readonly string[]): string {
  const names = header.map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) return 'it has no column names';
  const listed = names.slice(0, 8).map(shown).join(', ');
  return `its columns: ${listed}${names.length > 8 ? ` and ${names.length - 8} more` : ''}`;
}

export interface BounceRecord {
  readonly kind: BounceKind;
  readonly email: string;
  /** Unix seconds; undefined when the row gives no date (it then counts from its import). */
  readonly bouncedAt: number | undefined;
}

/**
 * Checks one data row of a bounces file. `nowS` bounds dates (a day of clock skew allowed). A soft bounce or
 * another event is read (and counted) without checking its address or date: it is not stored.
 */
export function readBounceRow(
  layout: BounceLayout,
  row: readonly string[],
  nowS: number,
): RowResult<BounceRecord> {
  let kind: BounceKind | undefined = layout.isAllHard ? 'hard' : undefined;
  const said: string[] = [];
  for (const index of layout.classifiers) {
    const value = (row[index] ?? '').trim();
    if (value === '') continue;
    kind = bounceKindOf(value);
    if (kind) break;
    said.push(value);
  }
  if (!kind)
    return {
      ok: false,
      message:
        said.length === 0
          ? 'the row gives no bounce type, code or reason: it cannot tell a hard bounce from a soft one'
          : `${shown(said[0])} is no bounce type or SMTP code Mailsieve knows (hard: 5.x.x, 5xx, HardBounce, cleaned…; soft: 4.x.x, 4xx, SoftBounce, Transient…)`,
    };
  const rawEmail = (row[layout.email] ?? '').trim();
  const email = canonicalEmail(rawEmail);
  if (kind !== 'hard') return { ok: true, record: { kind, email: email ?? rawEmail, bouncedAt: undefined } };
  if (email === undefined)
    return {
      ok: false,
      message: rawEmail === '' ? 'email is empty' : `email ${shown(rawEmail)} is not a valid address`,
    };
  const rawDate = layout.date === undefined ? '' : (row[layout.date] ?? '').trim();
  if (rawDate === '') return { ok: true, record: { kind, email, bouncedAt: undefined } };
  const bouncedAt = parseBounceTime(rawDate);
  if (bouncedAt === undefined)
    return {
      ok: false,
      message: `date ${shown(rawDate)} is not a date (YYYY-MM-DD, an ISO 8601 date-time, an RFC 2822 date or Unix seconds)`,
    };
  if (bouncedAt < EARLIEST_EVENT_S) return { ok: false, message: `date ${shown(rawDate)} is before 1990` };
  if (bouncedAt > nowS + 86_400) return { ok: false, message: `date ${shown(rawDate)} is in the future` };
  return { ok: true, record: { kind, email, bouncedAt } };
}

/**
 * Stores the hard bounces of checked rows: per address its latest hard bounce (an undated row counts as of
 * `importedAt`). Counts what it met of each kind.
 */
export class BounceWriter {
  private readonly storedAt: Statement<[string], number>;
  private readonly insert: Statement<[string, number, number]>;
  private readonly update: Statement<[number, number, string]>;
  readonly counts = { hard: 0, soft: 0, other: 0, undated: 0 };
  /** Addresses added, and addresses whose latest hard bounce moved later. */
  added = 0;
  updated = 0;

  constructor(
    readonly db: Database,
    readonly importId: number,
    readonly importedAt: number,
  ) {
    this.storedAt = db
      .prepare<[string], number>('SELECT bounced_at FROM ref_bounces WHERE email = ?')
      .pluck();
    this.insert = db.prepare('INSERT INTO ref_bounces (email, bounced_at, import_id) VALUES (?, ?, ?)');
    this.update = db.prepare('UPDATE ref_bounces SET bounced_at = ?, import_id = ? WHERE email = ?');
  }

  /** Writes the hard bounces of `records` in one transaction; answers how many rows were hard bounces. */
  write(records: readonly BounceRecord[]): number {
    let hard = 0;
    this.db.transaction(() => {
      for (const record of records) {
        this.counts[record.kind]++;
        if (record.kind !== 'hard') continue;
        hard++;
        if (record.bouncedAt === undefined) this.counts.undated++;
        const at = record.bouncedAt ?? this.importedAt;
        const stored = this.storedAt.get(record.email);
        if (stored === undefined) {
          this.insert.run(record.email, at, this.importId);
          this.added++;
        } else if (at > stored) {
          this.update.run(at, this.importId, record.email);
          this.updated++;
        }
      }
    })();
    return hard;
  }
}
