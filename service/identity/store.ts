// Read access to the reference data (tables of migration 0040): named prepared statements, one call per
// lookup, synchronous. Built once per database connection; the HTTP routes share one, a list worker opens
// its own connection and builds its own.
import type { Database, Statement } from 'better-sqlite3';
import {
  INTELLIGENCE_FIELD_SCHEMAS,
  INTEREST_NAMES,
  type InterestName,
  type Interests,
  type ScalarIntelligenceField,
} from '../../shared/api/intelligence.js';
import { INTEREST_BITS } from '../store/migrations/0040-identity.js';
import { DAY_SECONDS, HALF_YEAR_DAYS, YEAR_DAYS, type ActivitySummary } from './eam.js';

/** A row of `ref_emails`. */
export interface EmailRow {
  readonly id: number;
  readonly email: string;
  readonly person_id: number | null;
}

/** The attribute columns of `ref_people`: every scalar intelligence field but `zip` (the person's zip5). */
export const ATTRIBUTE_FIELDS = (Object.keys(INTELLIGENCE_FIELD_SCHEMAS) as ScalarIntelligenceField[]).filter(
  (field): field is AttributeField => field !== 'zip',
);
export type AttributeField = Exclude<ScalarIntelligenceField, 'zip'>;

/** A person's columns but the attributes (which follow them in PERSON_COLUMNS). */
const PERSON_BASICS = [
  'id',
  'first_name',
  'last_name',
  'street',
  'city',
  'state',
  'zip5',
  'zip4',
  'household',
  'interests',
  'answer_json',
  'postal_json',
].map((column) => `p.${column}`);
const ATTRIBUTE_COLUMNS = ATTRIBUTE_FIELDS.map((column) => `p.${column}`);
const PERSON_COLUMNS = [...PERSON_BASICS, ...ATTRIBUTE_COLUMNS].join(', ');
/** People read without their attributes, which are read when first asked for (PersonRow). */
const PERSON_BASICS_SELECT = `SELECT ${PERSON_BASICS.join(', ')} FROM ref_people p`;
const PERSON_SELECT = `SELECT ${PERSON_COLUMNS} FROM ref_people p`;
/** An address's columns, then its person's (NULL when none; with PERSON_JOIN). */
const ADDRESS_COLUMNS = `e.id, e.email, e.person_id, ${PERSON_COLUMNS}`;
const PERSON_JOIN = 'LEFT JOIN ref_people p ON p.id = e.person_id';
const ADDRESS_SELECT = `SELECT ${ADDRESS_COLUMNS} FROM ref_emails e ${PERSON_JOIN}`;
/**
 * An address with its person's rendered answer: the address's id, its person (NULL when none), the person's
 * `answer_json` and `postal_json` (NULL when not rendered), and the address's packed activity (packActivity;
 * NULL when not packed). Two text columns decode far faster than thirty, and one blob than a row per event.
 */
const RENDERED_COLUMNS = 'e.id, e.person_id, p.answer_json, p.postal_json, e.activity_packed';
const PERSON_AT = 3;
const ATTRIBUTES_AT = PERSON_BASICS.length;

type RawRow = (string | number | null)[];

type Attributes = readonly (string | number | null)[];

/**
 * A person of `ref_people`, read from a row (better-sqlite3 `raw()`: building a 30-member object per row
 * cost more than the lookup itself). Read without its attributes (PERSON_BASICS_SELECT), it reads them when
 * first asked for: a postal match reads every person at an address, and a rendered answer needs none of them.
 */
export class PersonRow {
  readonly id: number;
  readonly first_name: string | null;
  readonly last_name: string | null;
  readonly street: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zip5: string | null;
  readonly zip4: string | null;
  readonly household: string | null;
  /** Bit i set: INTEREST_BITS[i] was seen. */
  readonly interests: number;
  /** The person's rendered answer (`answer_json`, `postal_json`); undefined when not rendered yet. */
  readonly rendered: RenderedPerson | undefined;
  private read: Attributes | undefined;

  constructor(
    raw: RawRow,
    at: number,
    private readonly readAttributes: (id: number) => Attributes,
  ) {
    this.id = raw[at] as number;
    this.first_name = raw[at + 1] as string | null;
    this.last_name = raw[at + 2] as string | null;
    this.street = raw[at + 3] as string | null;
    this.city = raw[at + 4] as string | null;
    this.state = raw[at + 5] as string | null;
    this.zip5 = raw[at + 6] as string | null;
    this.zip4 = raw[at + 7] as string | null;
    this.household = raw[at + 8] as string | null;
    this.interests = raw[at + 9] as number;
    this.rendered =
      raw[at + 10] === null ? undefined : { members: raw[at + 10] as string, postal: raw[at + 11] as string };
    if (raw.length > at + ATTRIBUTES_AT) this.read = raw.slice(at + ATTRIBUTES_AT);
  }

  /** One value per ATTRIBUTE_FIELDS entry, null when unknown. */
  get attributes(): Attributes {
    return (this.read ??= this.readAttributes(this.id));
  }
}

/** Attributes are read with the person's row everywhere but PERSON_BASICS_SELECT. */
const READ_WITH_ROW = (): Attributes => {
  throw new Error('a person read with its row has its attributes');
};

function personFromRaw(raw: RawRow, at = 0): PersonRow {
  return new PersonRow(raw, at, READ_WITH_ROW);
}

/** People whose answer is not rendered yet (`answer_json` NULL), at most `limit`, by id. */
export function unrenderedPeople(db: Database, limit: number): PersonRow[] {
  return db
    .prepare<[number], RawRow>(`${PERSON_SELECT} WHERE p.answer_json IS NULL ORDER BY p.id LIMIT ?`)
    .raw()
    .all(limit)
    .map((raw) => personFromRaw(raw));
}

/**
 * A person's intelligence answer rendered as JSON text (`ref_people.answer_json` and `postal_json`, written by
 * prepared.ts `renderPeople`): what an E6 answer for the whole field set is put together from.
 */
export interface RenderedPerson {
  /** The person's intelligence members as JSON text without braces (`"age":"35-44",…`); '' for none. */
  readonly members: string;
  /** The person's `postal_address` as JSON text; '' when the person has no complete postal address. */
  readonly postal: string;
}

/** A stored address whose person's answer is rendered, as a rendered read-ahead reads it. */
export interface RenderedAddress extends RenderedPerson {
  /** The address's id, for its activity. */
  readonly emailId: number;
}

/** A stored address and its person, if it has one. */
export interface AddressMatch {
  readonly email: EmailRow;
  readonly person: PersonRow | undefined;
}

/** An address row (ADDRESS_SELECT's columns from `at`: a batch query reads its key column first). */
function addressFromRaw(raw: RawRow | null | undefined, at = 0): AddressMatch | undefined {
  if (!raw) return undefined;
  const email: EmailRow = {
    id: raw[at] as number,
    email: raw[at + 1] as string,
    person_id: raw[at + 2] as number | null,
  };
  return { email, person: email.person_id === null ? undefined : personFromRaw(raw, at + PERSON_AT) };
}

const BIT_OF = new Map<string, number>(INTEREST_BITS.map((name, bit) => [name, bit]));

/** The bit of an interest in `ref_people.interests`. */
export function interestBit(name: InterestName): number {
  return 1 << BIT_OF.get(name)!;
}

/** Each interest in the spec's order, with its bit. */
const INTEREST_MASKS = INTEREST_NAMES.map((name) => [name, interestBit(name)] as const);

/**
 * `interests` objects by bit set: a bulk answer names the same combinations many times. A store holds tens of
 * thousands of combinations (44,000 in the 200,000-person demo store), so a cache of a few thousand was
 * cleared every request or two and built most objects again; one of MAX_INTEREST_SETS is at most a few MB.
 */
const interestsOfBits = new Map<number, Readonly<Interests>>();
const MAX_INTEREST_SETS = 65_536;

/**
 * The `interests` object of a bit set, members in the spec's order; undefined when none is set. The object
 * is shared between answers: read only.
 */
export function interestsFromBits(bits: number): Readonly<Interests> | undefined {
  if (bits === 0) return undefined;
  let interests = interestsOfBits.get(bits);
  if (!interests) {
    const made: Interests = {};
    for (const [name, mask] of INTEREST_MASKS) if (bits & mask) made[name] = true;
    interests = Object.freeze(made);
    if (interestsOfBits.size >= MAX_INTEREST_SETS) interestsOfBits.clear();
    interestsOfBits.set(bits, interests);
  }
  return interests;
}

/** An event: its time, its source, and its kind as ACTIVITY_KIND_CODE gives it (an integer decodes faster). */
type ActivityRow = [occurredAt: number, sourceId: number, kind: number];
/** `ref_activity.kind` as 1 (open), 2 (click) or 0 (seen). */
const ACTIVITY_KIND_CODE = "(kind = 'open') + 2 * (kind = 'click')";
const OPEN = 1;
const CLICK = 2;

/**
 * Lookups read ahead for the records of one bulk request (IdentityStore.readAhead): the rows the one-row
 * statements would give, keyed as they are asked for; null for a key read ahead and not found.
 */
interface ReadAhead {
  /** The rows are RENDERED_COLUMNS's (rendered answers), not ADDRESS_COLUMNS's. */
  readonly isRendered: boolean;
  readonly byEmail: Map<string, RawRow | null>;
  readonly byMd5: Map<string, RawRow | null>;
  readonly bySha1: Map<string, RawRow | null>;
  /** The moment `activity` was read as of; undefined: not read (E4 reads no activity). */
  readonly nowS: number | undefined;
  readonly activity: Map<number, ActivitySummary>;
}

/** What IdentityStore.readAhead reads: canonical addresses, MD5 and SHA-1 digests. */
export interface ReadAheadKeys {
  readonly emails: Iterable<string>;
  /** Digests as `digestHex` gives them. */
  readonly md5: Iterable<string>;
  readonly sha1: Iterable<string>;
}

/** The activity summary of one address's events (at or before `nowS`). */
function summarise(rows: Iterable<ActivityRow>, nowS: number): ActivitySummary {
  const halfYear = nowS - HALF_YEAR_DAYS * DAY_SECONDS;
  const year = nowS - YEAR_DAYS * DAY_SECONDS;
  let events = 0;
  let firstAt: number | null = null;
  let lastOpenAt: number | null = null;
  let recentEvents = 0;
  let recentOpens = 0;
  let recentClicks = 0;
  const sources = new Set<number>();
  for (const [at, source, kind] of rows) {
    events++;
    if (firstAt === null || at < firstAt) firstAt = at;
    if (kind !== 0 && (lastOpenAt === null || at > lastOpenAt)) lastOpenAt = at;
    if (at >= year) sources.add(source);
    if (at >= halfYear) {
      recentEvents++;
      if (kind === OPEN) recentOpens++;
      else if (kind === CLICK) recentClicks++;
    }
  }
  return {
    events,
    firstAt,
    recentEvents,
    recentSources: sources.size,
    recentOpens,
    recentClicks,
    lastOpenAt,
  };
}

const NO_ACTIVITY: ActivitySummary = summarise([], 0);

/** Bytes per event of a packed activity: its time, source and kind code, each a little-endian double. */
const PACKED_EVENT_BYTES = 24;

/**
 * An address's events as one blob (`ref_emails.activity_packed`, written after each import): a bulk answer
 * reads it with the address instead of a row per event. The events in the order given (the table's).
 */
export function packActivity(rows: readonly ActivityRow[]): Buffer {
  const packed = Buffer.alloc(rows.length * PACKED_EVENT_BYTES);
  rows.forEach(([at, source, kind], i) => {
    packed.writeDoubleLE(at, i * PACKED_EVENT_BYTES);
    packed.writeDoubleLE(source, i * PACKED_EVENT_BYTES + 8);
    packed.writeDoubleLE(kind, i * PACKED_EVENT_BYTES + 16);
  });
  return packed;
}

/** The activity summary of a packed activity as of `nowS`. */
export function summarisePacked(packed: Buffer, nowS: number): ActivitySummary {
  return summarise(unpackActivity(packed, nowS), nowS);
}

/** The events of a packed activity at or before `nowS`, as the activity statements read them. */
function unpackActivity(packed: Buffer, nowS: number): ActivityRow[] {
  const rows: ActivityRow[] = [];
  for (let at = 0; at + PACKED_EVENT_BYTES <= packed.length; at += PACKED_EVENT_BYTES) {
    const occurredAt = packed.readDoubleLE(at);
    if (occurredAt <= nowS)
      rows.push([occurredAt, packed.readDoubleLE(at + 8), packed.readDoubleLE(at + 16)] as ActivityRow);
  }
  return rows;
}

/** Addresses whose activity is not packed yet, at most `limit`, by id, with all their events. */
export function unpackedActivity(
  db: Database,
  limit: number,
): { readonly emailId: number; readonly rows: ActivityRow[] }[] {
  const ids = db
    .prepare<[number], number>('SELECT id FROM ref_emails WHERE activity_packed IS NULL ORDER BY id LIMIT ?')
    .pluck()
    .all(limit);
  const rowsOf = new Map<number, ActivityRow[]>(ids.map((id) => [id, []]));
  const events = db
    .prepare<[string], RawRow>(
      `SELECT a.email_id, a.occurred_at, a.source_id, ${ACTIVITY_KIND_CODE}
         FROM json_each(?) j JOIN ref_activity a ON a.email_id = j.value`,
    )
    .raw();
  for (const raw of events.all(JSON.stringify(ids)))
    rowsOf.get(raw[0] as number)!.push([raw[1], raw[2], raw[3]] as ActivityRow);
  return ids.map((emailId) => ({ emailId, rows: rowsOf.get(emailId)! }));
}

export class IdentityStore {
  private readonly byEmail: Statement<[string], RawRow>;
  private readonly byMd5: Statement<[string], RawRow>;
  private readonly bySha1: Statement<[string], RawRow>;
  private readonly personById: Statement<[number], RawRow>;
  private readonly peopleAtZip: Statement<[string, string], RawRow>;
  private readonly peopleInCity: Statement<[string, string, string], RawRow>;
  private readonly attributesById: Statement<[number], RawRow>;
  /** A person's attributes, for people read without them. */
  private readonly readAttributes = (id: number): Attributes =>
    this.attributesById.get(id) ?? ATTRIBUTE_FIELDS.map(() => null);
  private readonly emailsOfPerson: Statement<[number], EmailRow>;
  private readonly firstEmailOfPerson: Statement<[number], RawRow>;
  private readonly householdEmails: Statement<[string, number], EmailRow>;
  private readonly activity: Statement<[number, number], ActivityRow>;
  private readonly packedByEmail: Statement<[string], RawRow>;
  private readonly anyActivity: Statement<[], number>;
  private readonly eachStatements = new Map<string, Statement<unknown[], RawRow>>();
  private ahead: ReadAhead | undefined;

  constructor(readonly db: Database) {
    this.byEmail = db.prepare<[string], RawRow>(`${ADDRESS_SELECT} WHERE e.email = ?`).raw();
    this.byMd5 = db.prepare<[string], RawRow>(`${ADDRESS_SELECT} WHERE e.md5 = unhex(?)`).raw();
    this.bySha1 = db.prepare<[string], RawRow>(`${ADDRESS_SELECT} WHERE e.sha1 = unhex(?)`).raw();
    this.personById = db.prepare<[number], RawRow>(`${PERSON_SELECT} WHERE p.id = ?`).raw();
    this.peopleAtZip = db
      .prepare<[string, string], RawRow>(
        `${PERSON_BASICS_SELECT} WHERE p.zip5 = ? AND p.street_key = ? ORDER BY p.id`,
      )
      .raw();
    this.peopleInCity = db
      .prepare<[string, string, string], RawRow>(
        `${PERSON_BASICS_SELECT} WHERE p.state = ? AND p.city_key = ? AND p.street_key = ? ORDER BY p.id`,
      )
      .raw();
    this.attributesById = db
      .prepare<[number], RawRow>(`SELECT ${ATTRIBUTE_COLUMNS.join(', ')} FROM ref_people p WHERE p.id = ?`)
      .raw();
    this.emailsOfPerson = db.prepare(
      'SELECT id, email, person_id FROM ref_emails WHERE person_id = ? ORDER BY id',
    );
    this.firstEmailOfPerson = db
      .prepare<[number], RawRow>(
        'SELECT id, email, person_id, activity_packed FROM ref_emails WHERE person_id = ? ORDER BY id LIMIT 1',
      )
      .raw();
    // Addresses of the other people of a household, person by person, each person's in import order.
    this.householdEmails = db.prepare(`
      SELECT e.id, e.email, e.person_id
        FROM ref_people p JOIN ref_emails e ON e.person_id = p.id
       WHERE p.household = ? AND p.id <> ?
       ORDER BY p.id, e.id`);
    // The address's events, read as arrays in one pass over the clustered primary key and summed up here:
    // cheaper than an aggregate query, whose count(DISTINCT …) builds a table on every call.
    this.activity = db
      .prepare<[number, number], ActivityRow>(
        `SELECT occurred_at, source_id, ${ACTIVITY_KIND_CODE} FROM ref_activity WHERE email_id = ? AND occurred_at <= ?`,
      )
      .raw();
    // E1's engagement score reads an address's activity alone: its id and packed events, not its person.
    this.packedByEmail = db
      .prepare<[string], RawRow>('SELECT id, activity_packed FROM ref_emails WHERE email = ?')
      .raw();
    this.anyActivity = db.prepare<[], number>('SELECT EXISTS (SELECT 1 FROM ref_activity)').pluck();
  }

  /** An address by its canonical form (normalise.ts `canonicalEmail`), with its person. */
  findByEmail(canonical: string): AddressMatch | undefined {
    const ahead = this.ahead?.byEmail.get(canonical);
    if (ahead === null) return undefined;
    if (ahead !== undefined && !this.ahead!.isRendered) return addressFromRaw(ahead, 1);
    return addressFromRaw(this.byEmail.get(canonical));
  }

  /**
   * An address by the MD5 or SHA-1 of its canonical form (`hex`: as normalise.ts `digestHex` gives it), with
   * its person.
   */
  findByDigest(kind: 'md5' | 'sha1', hex: string): AddressMatch | undefined {
    const ahead = this.aheadByDigest(kind, hex);
    if (ahead === null) return undefined;
    if (ahead !== undefined && !this.ahead!.isRendered) return addressFromRaw(ahead, 1);
    return addressFromRaw((kind === 'md5' ? this.byMd5 : this.bySha1).get(hex));
  }

  private aheadByDigest(kind: 'md5' | 'sha1', hex: string): RawRow | null | undefined {
    return this.ahead && (kind === 'md5' ? this.ahead.byMd5 : this.ahead.bySha1).get(hex);
  }

  /**
   * Rendered answers, from a rendered read-ahead only (`readAhead(…, { rendered: true })`): an address read
   * ahead whose person's answer is rendered; undefined otherwise (not read ahead, not found, no person, or
   * not rendered yet), and the answer is then built from the person's columns.
   */
  readonly rendered = {
    findByEmail: (canonical: string): RenderedAddress | undefined =>
      this.renderedFrom(this.ahead?.byEmail.get(canonical)),
    findByDigest: (kind: 'md5' | 'sha1', hex: string): RenderedAddress | undefined =>
      this.renderedFrom(this.aheadByDigest(kind, hex)),
  };

  private renderedFrom(raw: RawRow | null | undefined): RenderedAddress | undefined {
    // RENDERED_COLUMNS after the key: e.id, e.person_id, answer_json, postal_json, activity_packed.
    if (!raw || !this.ahead?.isRendered || raw[3] === null) return undefined;
    return { emailId: raw[1] as number, members: raw[3] as string, postal: raw[4] as string };
  }

  /**
   * Reads the addresses of a bulk request's records, and the activity of those found as of `nowS`, in a few
   * statements (all keys of a kind in one) instead of one per record: findByEmail, findByDigest and
   * activityOf answer them from memory, the same rows, until `forgetReadAhead`. Keys not read ahead are
   * looked up one by one as always.
   *
   * With `rendered`, the rows read are the persons' rendered answers (`rendered.findByEmail`, …) instead of
   * their columns, and the activity comes packed with them: findByEmail and findByDigest then answer an
   * address not found from memory, and read the others one by one.
   */
  readAhead(keys: ReadAheadKeys, nowS: number | undefined, options: { rendered?: boolean } = {}): void {
    const isRendered = options.rendered === true;
    const columns = isRendered ? RENDERED_COLUMNS : ADDRESS_COLUMNS;
    const byEmail = new Map<string, RawRow | null>();
    const byMd5 = new Map<string, RawRow | null>();
    const bySha1 = new Map<string, RawRow | null>();
    const emailIds: number[] = [];
    const activity = new Map<number, ActivitySummary>();
    const read = (column: 'email' | 'md5' | 'sha1', values: string[], found: Map<string, RawRow | null>) => {
      for (const value of values) found.set(value, null);
      // Digests are given and keyed as hex text: a BLOB column would make a Buffer per row.
      const match = column === 'email' ? 'j.value' : 'unhex(j.value)';
      // Each row says which value it is by its place in the array (j.key): no string made per row.
      for (const raw of this.readEach(
        `SELECT j.key, ${columns} FROM json_each(?) j JOIN ref_emails e ON e.${column} = ${match} ${PERSON_JOIN}`,
        values,
      )) {
        const k = values[raw[0] as number];
        const earlier = found.get(k);
        // As the one-row statement: the first row by id when a digest names several addresses.
        if (earlier && (earlier[1] as number) < (raw[1] as number)) continue;
        if (!earlier) {
          const packed = isRendered ? (raw[5] as unknown as Buffer | null) : null;
          if (packed !== null && nowS !== undefined)
            activity.set(raw[1] as number, summarisePacked(packed, nowS));
          else emailIds.push(raw[1] as number);
        }
        found.set(k, raw);
      }
    };
    read('email', [...new Set(keys.emails)], byEmail);
    read('md5', [...new Set(keys.md5)], byMd5);
    read('sha1', [...new Set(keys.sha1)], bySha1);
    // The activity of addresses read without a packed one (all, unless rendered) as rows.
    if (nowS !== undefined) this.readActivity(emailIds, nowS, activity);
    this.ahead = { isRendered, byEmail, byMd5, bySha1, nowS, activity };
  }

  /** The activity summaries of `emailIds` as of `nowS`, into `activity`. */
  private readActivity(
    emailIds: readonly number[],
    nowS: number,
    activity: Map<number, ActivitySummary>,
  ): void {
    const rowsOf = new Map<number, ActivityRow[]>();
    for (const raw of this.readEach(
      `SELECT email_id, occurred_at, source_id, ${ACTIVITY_KIND_CODE}
         FROM json_each(?) j JOIN ref_activity a ON a.email_id = j.value WHERE a.occurred_at <= ?`,
      [...new Set(emailIds)],
      nowS,
    )) {
      const id = raw[0] as number;
      let rows = rowsOf.get(id);
      if (!rows) rowsOf.set(id, (rows = []));
      rows.push([raw[1], raw[2], raw[3]] as ActivityRow);
    }
    for (const id of emailIds) {
      const rows = rowsOf.get(id);
      activity.set(id, rows ? summarise(rows, nowS) : NO_ACTIVITY);
    }
  }

  /** Forgets what `readAhead` read: later lookups read the database again. */
  forgetReadAhead(): void {
    this.ahead = undefined;
  }

  /**
   * The rows of `sql` for `values`, given as one JSON array (`json_each(?)`): cheaper than binding the values
   * of `IN (?, ?, …)` lists one by one. `then` is bound after the array.
   */
  private readEach(sql: string, values: readonly unknown[], ...then: unknown[]): RawRow[] {
    if (values.length === 0) return [];
    let statement = this.eachStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare<unknown[], RawRow>(sql).raw();
      this.eachStatements.set(sql, statement);
    }
    return statement.all(JSON.stringify(values), ...then);
  }

  person(id: number): PersonRow | undefined {
    const raw = this.personById.get(id);
    return raw && personFromRaw(raw);
  }

  /** People at a street in a ZIP code (5 digits), in import order. */
  peopleAtZipStreet(zip5: string, streetKey: string): PersonRow[] {
    return this.peopleAtZip.all(zip5, streetKey).map((raw) => new PersonRow(raw, 0, this.readAttributes));
  }

  /** People at a street in a city and state, in import order. */
  peopleAtCityStreet(state: string, cityKey: string, streetKey: string): PersonRow[] {
    return this.peopleInCity
      .all(state, cityKey, streetKey)
      .map((raw) => new PersonRow(raw, 0, this.readAttributes));
  }

  /** A person's addresses, in import order (the first is the person's primary address). */
  emailsOf(personId: number): EmailRow[] {
    return this.emailsOfPerson.all(personId);
  }

  /** A person's primary address: the first in import order. */
  primaryEmailOf(personId: number): EmailRow | undefined {
    const raw = this.firstEmailOfPerson.get(personId);
    if (!raw) return undefined;
    const email: EmailRow = { id: raw[0] as number, email: raw[1] as string, person_id: raw[2] as number };
    // During a read-ahead with activity, the address's packed activity comes along (activityOf).
    const packed = raw[3] as unknown as Buffer | null;
    const nowS = this.ahead?.nowS;
    if (packed !== null && nowS !== undefined && !this.ahead!.activity.has(email.id))
      this.ahead!.activity.set(email.id, summarisePacked(packed, nowS));
    return email;
  }

  /** The addresses of the household's other people, by person, then import order. */
  householdEmailsOf(household: string, exceptPersonId: number): EmailRow[] {
    return this.householdEmails.all(household, exceptPersonId);
  }

  /** Whether any address has activity events: without any, no address has an engagement score. */
  hasActivity(): boolean {
    return this.anyActivity.get() === 1;
  }

  /**
   * All the events of an address, by its canonical form, packed (packActivity: its packed column when the
   * preparer has packed it, else packed from its rows); undefined when the address is not stored.
   */
  packedActivityOf(canonical: string): Buffer | undefined {
    const raw = this.packedByEmail.get(canonical);
    if (!raw) return undefined;
    const packed = raw[1] as unknown as Buffer | null;
    return packed ?? packActivity(this.activity.all(raw[0] as number, Number.MAX_SAFE_INTEGER));
  }

  /** The activity of one address as of `nowS` (Unix seconds); events after `nowS` are not counted. */
  activityOf(emailId: number, nowS: number): ActivitySummary {
    const ahead = this.ahead?.nowS === nowS ? this.ahead.activity.get(emailId) : undefined;
    return ahead ?? summarise(this.activity.all(emailId, nowS), nowS);
  }
}
