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

/** A person of `ref_people`. */
export interface PersonRow {
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
  /** One value per ATTRIBUTE_FIELDS entry, null when unknown. */
  readonly attributes: readonly (string | number | null)[];
}

const PERSON_COLUMNS = [
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
  ...ATTRIBUTE_FIELDS,
]
  .map((column) => `p.${column}`)
  .join(', ');
const PERSON_SELECT = `SELECT ${PERSON_COLUMNS} FROM ref_people p`;
/** An address joined with its person: the address's columns, then the person's (NULL when none). */
const ADDRESS_SELECT = `SELECT e.id, e.email, e.person_id, ${PERSON_COLUMNS} FROM ref_emails e LEFT JOIN ref_people p ON p.id = e.person_id`;
const PERSON_AT = 3;
const ATTRIBUTES_AT = 10;

type RawRow = (string | number | null)[];

// Rows are read as arrays (better-sqlite3 `raw()`): building a 30-member object per row cost more than
// the lookup itself.
function personFromRaw(raw: RawRow, at = 0): PersonRow {
  return {
    id: raw[at] as number,
    first_name: raw[at + 1] as string | null,
    last_name: raw[at + 2] as string | null,
    street: raw[at + 3] as string | null,
    city: raw[at + 4] as string | null,
    state: raw[at + 5] as string | null,
    zip5: raw[at + 6] as string | null,
    zip4: raw[at + 7] as string | null,
    household: raw[at + 8] as string | null,
    interests: raw[at + 9] as number,
    attributes: raw.slice(at + ATTRIBUTES_AT),
  };
}

/** A stored address and its person, if it has one. */
export interface AddressMatch {
  readonly email: EmailRow;
  readonly person: PersonRow | undefined;
}

function addressFromRaw(raw: RawRow | undefined): AddressMatch | undefined {
  if (!raw) return undefined;
  const email: EmailRow = {
    id: raw[0] as number,
    email: raw[1] as string,
    person_id: raw[2] as number | null,
  };
  return { email, person: email.person_id === null ? undefined : personFromRaw(raw, PERSON_AT) };
}

const BIT_OF = new Map<string, number>(INTEREST_BITS.map((name, bit) => [name, bit]));

/** The bit of an interest in `ref_people.interests`. */
export function interestBit(name: InterestName): number {
  return 1 << BIT_OF.get(name)!;
}

/** The `interests` object of a bit set, members in the spec's order; undefined when none is set. */
export function interestsFromBits(bits: number): Interests | undefined {
  if (bits === 0) return undefined;
  const interests: Interests = {};
  for (const name of INTEREST_NAMES) if (bits & interestBit(name)) interests[name] = true;
  return interests;
}

type ActivityRow = [occurredAt: number, sourceId: number, kind: string];

export class IdentityStore {
  private readonly byEmail: Statement<[string], RawRow>;
  private readonly byMd5: Statement<[Buffer], RawRow>;
  private readonly bySha1: Statement<[Buffer], RawRow>;
  private readonly personById: Statement<[number], RawRow>;
  private readonly peopleAtZip: Statement<[string, string], RawRow>;
  private readonly peopleInCity: Statement<[string, string, string], RawRow>;
  private readonly emailsOfPerson: Statement<[number], EmailRow>;
  private readonly householdEmails: Statement<[string, number], EmailRow>;
  private readonly activity: Statement<[number, number], ActivityRow>;

  constructor(readonly db: Database) {
    this.byEmail = db.prepare<[string], RawRow>(`${ADDRESS_SELECT} WHERE e.email = ?`).raw();
    this.byMd5 = db.prepare<[Buffer], RawRow>(`${ADDRESS_SELECT} WHERE e.md5 = ?`).raw();
    this.bySha1 = db.prepare<[Buffer], RawRow>(`${ADDRESS_SELECT} WHERE e.sha1 = ?`).raw();
    this.personById = db.prepare<[number], RawRow>(`${PERSON_SELECT} WHERE p.id = ?`).raw();
    this.peopleAtZip = db
      .prepare<[string, string], RawRow>(
        `${PERSON_SELECT} WHERE p.zip5 = ? AND p.street_key = ? ORDER BY p.id`,
      )
      .raw();
    this.peopleInCity = db
      .prepare<[string, string, string], RawRow>(
        `${PERSON_SELECT} WHERE p.state = ? AND p.city_key = ? AND p.street_key = ? ORDER BY p.id`,
      )
      .raw();
    this.emailsOfPerson = db.prepare(
      'SELECT id, email, person_id FROM ref_emails WHERE person_id = ? ORDER BY id',
    );
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
        'SELECT occurred_at, source_id, kind FROM ref_activity WHERE email_id = ? AND occurred_at <= ?',
      )
      .raw();
  }

  /** An address by its canonical form (normalise.ts `canonicalEmail`), with its person. */
  findByEmail(canonical: string): AddressMatch | undefined {
    return addressFromRaw(this.byEmail.get(canonical));
  }

  /** An address by the MD5 or SHA-1 of its canonical form, with its person. */
  findByDigest(kind: 'md5' | 'sha1', digest: Buffer): AddressMatch | undefined {
    return addressFromRaw((kind === 'md5' ? this.byMd5 : this.bySha1).get(digest));
  }

  person(id: number): PersonRow | undefined {
    const raw = this.personById.get(id);
    return raw && personFromRaw(raw);
  }

  /** People at a street in a ZIP code (5 digits), in import order. */
  peopleAtZipStreet(zip5: string, streetKey: string): PersonRow[] {
    return this.peopleAtZip.all(zip5, streetKey).map((raw) => personFromRaw(raw));
  }

  /** People at a street in a city and state, in import order. */
  peopleAtCityStreet(state: string, cityKey: string, streetKey: string): PersonRow[] {
    return this.peopleInCity.all(state, cityKey, streetKey).map((raw) => personFromRaw(raw));
  }

  /** A person's addresses, in import order (the first is the person's primary address). */
  emailsOf(personId: number): EmailRow[] {
    return this.emailsOfPerson.all(personId);
  }

  /** The addresses of the household's other people, by person, then import order. */
  householdEmailsOf(household: string, exceptPersonId: number): EmailRow[] {
    return this.householdEmails.all(household, exceptPersonId);
  }

  /** The activity of one address as of `nowS` (Unix seconds); events after `nowS` are not counted. */
  activityOf(emailId: number, nowS: number): ActivitySummary {
    const halfYear = nowS - HALF_YEAR_DAYS * DAY_SECONDS;
    const year = nowS - YEAR_DAYS * DAY_SECONDS;
    let events = 0;
    let firstAt: number | null = null;
    let lastOpenAt: number | null = null;
    let recentEvents = 0;
    let recentOpens = 0;
    let recentClicks = 0;
    const sources = new Set<number>();
    for (const [at, source, kind] of this.activity.all(emailId, nowS)) {
      events++;
      if (firstAt === null || at < firstAt) firstAt = at;
      const isOpen = kind === 'open';
      if ((isOpen || kind === 'click') && (lastOpenAt === null || at > lastOpenAt)) lastOpenAt = at;
      if (at >= year) sources.add(source);
      if (at >= halfYear) {
        recentEvents++;
        if (isOpen) recentOpens++;
        else if (kind === 'click') recentClicks++;
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
}
