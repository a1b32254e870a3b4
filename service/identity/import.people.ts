// People import: which CSV column is what (header names), each row checked against the spec's enumerations
// and formats, and rows written as people, their addresses and attributes (docs/identity.md, "Import").
import type { Database, Statement } from 'better-sqlite3';
import { hash } from 'node:crypto';
import { columnKindOf, normaliseHeaderName } from '../../shared/columns.js';
import {
  FINANCIAL_SEGMENT_MISSPELLING,
  INTELLIGENCE_ENUMERATIONS,
  INTELLIGENCE_FIELD_SCHEMAS,
  INTEREST_NAMES,
  type InterestName,
} from '../../shared/api/intelligence.js';
import {
  canonicalEmail,
  cityKey,
  md5Of,
  nameKey,
  parseZip,
  sha1Of,
  stateFromImport,
  streetKey,
} from './normalise.js';
import { ATTRIBUTE_FIELDS, interestBit, type AttributeField } from './store.js';

/** A file-level problem: the file cannot be imported at all (unreadable, no usable header). */
export class ImportFileError extends Error {}

// ---------------------------------------------------------------------------------------------------------
// Columns

type PeopleColumn =
  | { readonly kind: 'email' }
  | { readonly kind: 'first' | 'last' | 'full_name' | 'street' | 'street2' | 'city' | 'state' }
  | { readonly kind: 'zip' | 'zip4' | 'country' | 'household' | 'person_id' | 'hash' }
  | { readonly kind: 'attribute'; readonly field: AttributeField }
  | { readonly kind: 'interest'; readonly name: InterestName }
  | { readonly kind: 'interests' };

/** Our names beside the spec's header synonyms (shared/columns.ts), compared the same way. */
const EXTRA_NAMES: Readonly<Record<string, PeopleColumn['kind']>> = {
  zip4: 'zip4',
  household: 'household',
  householdid: 'household',
  personid: 'person_id',
  person: 'person_id',
  customerid: 'person_id',
  contactid: 'person_id',
  id: 'person_id',
  interests: 'interests',
};

const ATTRIBUTE_BY_NAME = new Map<string, AttributeField>(
  ATTRIBUTE_FIELDS.map((field) => [normaliseHeaderName(field), field]),
);
ATTRIBUTE_BY_NAME.set(normaliseHeaderName(FINANCIAL_SEGMENT_MISSPELLING), 'financial_segment');
const INTEREST_BY_NAME = new Map<string, InterestName>(
  INTEREST_NAMES.map((name) => [normaliseHeaderName(`interests.${name}`), name]),
);

function peopleColumnOf(header: string): PeopleColumn | undefined {
  const normal = normaliseHeaderName(header);
  // email2, e-mail 3, Email Address 2: further addresses of the same person.
  if (/^(e?mail)(address)?\d+$/.test(normal)) return { kind: 'email' };
  const attribute = ATTRIBUTE_BY_NAME.get(normal);
  if (attribute) return { kind: 'attribute', field: attribute };
  const interest = INTEREST_BY_NAME.get(normal);
  if (interest) return { kind: 'interest', name: interest };
  const extra = EXTRA_NAMES[normal];
  if (extra) return { kind: extra } as PeopleColumn;
  switch (columnKindOf(header)) {
    case 'email':
      return { kind: 'email' };
    case 'first_name':
      return { kind: 'first' };
    case 'last_name':
      return { kind: 'last' };
    case 'full_name':
      return { kind: 'full_name' };
    case 'street':
      return { kind: 'street' };
    case 'street2':
      return { kind: 'street2' };
    case 'city':
      return { kind: 'city' };
    case 'state':
      return { kind: 'state' };
    case 'zip':
      return { kind: 'zip' };
    case 'country':
      return { kind: 'country' };
    case 'md5':
    case 'sha1':
      return { kind: 'hash' };
    default:
      return undefined;
  }
}

const columnLabel = (column: PeopleColumn): string =>
  column.kind === 'attribute'
    ? column.field
    : column.kind === 'interest'
      ? `interests.${column.name}`
      : column.kind;

export interface PeopleLayout {
  /** Per CSV column, what it holds (undefined: ignored). */
  readonly columns: readonly (PeopleColumn | undefined)[];
  readonly warnings: readonly string[];
}

/** Reads the header row of a people file; throws ImportFileError when no column names a person. */
export function peopleLayout(header: readonly string[]): PeopleLayout {
  const columns = header.map(peopleColumnOf);
  const seen = new Map<string, string>();
  const ignored: string[] = [];
  header.forEach((name, index) => {
    const column = columns[index];
    if (!column) {
      if (name.trim() !== '') ignored.push(name.trim());
      return;
    }
    if (column.kind === 'email' || column.kind === 'hash') return;
    const label = columnLabel(column);
    const other = seen.get(label);
    if (other !== undefined)
      throw new ImportFileError(
        `Columns ${shown(other)} and ${shown(name.trim())} both hold ${label}; keep one.`,
      );
    seen.set(label, name.trim());
  });
  const kinds = new Set(columns.map((column) => column?.kind));
  const hasName = (kinds.has('first') && kinds.has('last')) || kinds.has('full_name');
  const hasAddress = kinds.has('street') && (kinds.has('zip') || (kinds.has('city') && kinds.has('state')));
  if (!kinds.has('email') && !(hasName && hasAddress))
    throw new ImportFileError(
      'The header names no email column and no name + postal address columns (first, last, street, and zip or city + state); see docs/identity.md for the column names.',
    );
  const warnings: string[] = [];
  if (ignored.length > 0) warnings.push(`Ignored columns: ${ignored.join(', ')}.`);
  if (kinds.has('hash')) warnings.push('MD5/SHA1 columns are ignored: hashes are computed from the email.');
  return { columns, warnings };
}

// ---------------------------------------------------------------------------------------------------------
// Rows

export interface PersonRecord {
  readonly personKey: Buffer;
  /** The person key came from the email alone (no id column, no name and postal address). */
  readonly isEmailOnly: boolean;
  readonly emails: readonly string[];
  readonly first: string | null;
  readonly last: string | null;
  readonly street: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zip5: string | null;
  readonly zip4: string | null;
  readonly streetKey: string | null;
  readonly cityKey: string | null;
  readonly household: string | null;
  /** One value per ATTRIBUTE_FIELDS entry, null when not given. */
  readonly attributes: readonly (string | number | null)[];
  /** The interests seen, as bits (store.ts `interestBit`). */
  readonly interests: number;
}

export type RowResult<T> =
  { readonly ok: true; readonly record: T } | { readonly ok: false; readonly message: string };

const ENUM_LOOKUP = new Map<string, ReadonlyMap<string, string>>(
  Object.entries(INTELLIGENCE_ENUMERATIONS).map(([field, values]) => [
    field,
    new Map(values.map((value: string) => [value.toLowerCase(), value])),
  ]),
);

/** `rfm_last_order` checked by the shared strict date schema, remembered per distinct value. */
const dateMemo = new Map<string, boolean>();
function isOrderDate(value: string): boolean {
  let ok = dateMemo.get(value);
  if (ok === undefined) {
    ok = INTELLIGENCE_FIELD_SCHEMAS.rfm_last_order.safeParse(value).success;
    if (dateMemo.size > 100_000) dateMemo.clear();
    dateMemo.set(value, ok);
  }
  return ok;
}

/**
 * A value quoted in a row error: at most 60 characters, control characters (a line break inside a quoted
 * field, say) shown as `?`, so one bad cell cannot flood the report.
 */
export function shown(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must not be echoed
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, '?');
  return `'${clean.length > 60 ? `${clean.slice(0, 60)}…` : clean}'`;
}

function describeValues(field: string, values: readonly string[]): string {
  return values.length <= 14
    ? `one of ${values.join(', ')}`
    : `one of the spec's ${values.length} ${field} values`;
}

/** An attribute value as stored, or an error message. */
function attributeValue(field: AttributeField, raw: string): { value: string | number } | { error: string } {
  const lookup = ENUM_LOOKUP.get(field);
  if (lookup) {
    const value = lookup.get(raw.toLowerCase());
    if (value !== undefined) return { value };
    const values = (INTELLIGENCE_ENUMERATIONS as Record<string, readonly string[]>)[field];
    return { error: `${field} ${shown(raw)} is not ${describeValues(field, values)}` };
  }
  if (field === 'rfm_last_order')
    return isOrderDate(raw)
      ? { value: raw }
      : { error: `rfm_last_order ${shown(raw)} is not a date (YYYY-MM-DD)` };
  // The other formats are the rfm_* counts: whole numbers of 0 or more (the shared schemas' nonNegativeInt).
  return /^\d{1,15}$/.test(raw)
    ? { value: Number(raw) }
    : { error: `${field} ${shown(raw)} is not a whole number of 0 or more` };
}

const TRUE_WORDS = new Set(['true', 'yes', 'y', '1', 'x', 't']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0', 'f']);
const INTEREST_SET: ReadonlySet<string> = new Set(INTEREST_NAMES);
const US_NAMES = new Set(['us', 'usa', 'unitedstates', 'unitedstatesofamerica']);

const digest = (text: string) => hash('md5', text, 'buffer');

/** Checks one data row of a people file against its layout. */
export function readPersonRow(layout: PeopleLayout, row: readonly string[]): RowResult<PersonRecord> {
  const emails: string[] = [];
  let first = '';
  let last = '';
  let fullName = '';
  let street = '';
  let street2 = '';
  let city = '';
  let state: string | null = null;
  let zip5: string | null = null;
  let zip4: string | null = null;
  let household = '';
  let personId = '';
  const attributes: (string | number | null)[] = ATTRIBUTE_FIELDS.map(() => null);
  let interests = 0;
  const { columns } = layout;
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i];
    if (!column) continue;
    const raw = (row[i] ?? '').trim();
    if (raw === '') continue;
    switch (column.kind) {
      case 'email': {
        const email = canonicalEmail(raw);
        if (email === undefined) return { ok: false, message: `email ${shown(raw)} is not a valid address` };
        if (!emails.includes(email)) emails.push(email);
        break;
      }
      case 'first':
        first = raw;
        break;
      case 'last':
        last = raw;
        break;
      case 'full_name':
        fullName = raw;
        break;
      case 'street':
        street = raw;
        break;
      case 'street2':
        street2 = raw;
        break;
      case 'city':
        city = raw;
        break;
      case 'state':
        state = stateFromImport(raw) ?? null;
        if (state === null)
          return { ok: false, message: `state ${shown(raw)} is not a U.S. state or its USPS code` };
        break;
      case 'zip': {
        const zip = parseZip(raw);
        if (!zip) return { ok: false, message: `zip ${shown(raw)} is not a ZIP code (NNNNN or NNNNN-NNNN)` };
        zip5 = zip.zip5;
        if (zip.plus4 !== undefined) zip4 = zip.plus4;
        break;
      }
      case 'zip4':
        if (!/^\d{4}$/.test(raw)) return { ok: false, message: `zip4 ${shown(raw)} is not 4 digits` };
        zip4 ??= raw;
        break;
      case 'country':
        if (!US_NAMES.has(normaliseHeaderName(raw).replace(/[^a-z]/g, '')))
          return {
            ok: false,
            message: `country ${shown(raw)} is not the United States (U.S. addresses only)`,
          };
        break;
      case 'household':
        household = raw;
        break;
      case 'person_id':
        personId = raw;
        break;
      case 'hash':
        break;
      case 'attribute': {
        const checked = attributeValue(column.field, raw);
        if ('error' in checked) return { ok: false, message: checked.error };
        attributes[ATTRIBUTE_FIELDS.indexOf(column.field)] = checked.value;
        break;
      }
      case 'interest': {
        const word = raw.toLowerCase();
        if (TRUE_WORDS.has(word)) interests |= interestBit(column.name);
        else if (!FALSE_WORDS.has(word))
          return {
            ok: false,
            message: `interests.${column.name} ${shown(raw)} is not true/false (or yes/no, 1/0)`,
          };
        break;
      }
      case 'interests':
        for (const word of raw.split(/[;,|]/)) {
          const name = word
            .trim()
            .toLowerCase()
            .replace(/^interests\./, '')
            .replace(/[\s-]+/g, '_');
          if (name === '') continue;
          if (!INTEREST_SET.has(name))
            return {
              ok: false,
              message: `interests: ${shown(word.trim())} is not one of the spec's interests`,
            };
          interests |= interestBit(name as InterestName);
        }
        break;
    }
  }
  if (fullName !== '' && first === '' && last === '') {
    const parts = fullName.split(/\s+/);
    first = parts[0];
    last = parts.length > 1 ? parts[parts.length - 1] : '';
  }
  const fullStreet = street2 === '' ? street : street === '' ? '' : `${street} ${street2}`;
  const sKey = fullStreet === '' ? '' : streetKey(fullStreet);
  const cKey = city === '' ? '' : cityKey(city);
  const firstKey = nameKey(first);
  const lastKey = nameKey(last);
  const place = zip5 ?? (state !== null && cKey !== '' ? `${state}|${cKey}` : '');
  const addressKey = sKey !== '' && place !== '' ? `${sKey}|${place}` : '';
  const hasName = firstKey !== '' && lastKey !== '';
  if (emails.length === 0 && !(hasName && addressKey !== ''))
    return {
      ok: false,
      message: 'the row names no one: give an email, or a first and last name with a postal address',
    };
  let key: string;
  if (personId !== '') key = `i:${personId}`;
  else if (hasName && addressKey !== '') key = `n:${firstKey}|${lastKey}|${addressKey}`;
  else key = `e:${emails[0]}`;
  const orNull = (text: string) => (text === '' ? null : text);
  return {
    ok: true,
    record: {
      personKey: digest(key),
      isEmailOnly: key.startsWith('e:'),
      emails,
      first: orNull(first),
      last: orNull(last),
      street: orNull(fullStreet),
      city: orNull(city),
      state,
      zip5,
      zip4: zip5 === null ? null : zip4,
      streetKey: orNull(sKey),
      cityKey: orNull(cKey),
      household: household !== '' ? `h:${household}` : addressKey !== '' ? `a:${addressKey}` : null,
      attributes,
      interests,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Writing

const PERSON_COLUMNS = [
  'first_name',
  'last_name',
  'street',
  'city',
  'state',
  'zip5',
  'zip4',
  'street_key',
  'city_key',
  'household',
  ...ATTRIBUTE_FIELDS,
  'interests',
] as const;

/**
 * Writes checked person rows. A row that names a known person (same person key; or, for an email-only
 * row, an address already somebody's) updates that person: its non-empty values replace the stored ones,
 * interests seen stay seen. Addresses move to the person of the latest row that names them.
 *
 * Look up, then insert or update: an `INSERT … ON CONFLICT DO UPDATE … RETURNING` was three times slower
 * per row in SQLite, and most rows of a large import are new.
 */
export class PeopleWriter {
  private readonly insertPerson: Statement<unknown[]>;
  private readonly personByKey: Statement<[Buffer], { id: number }>;
  private readonly updatePerson: Statement<unknown[]>;
  private readonly insertEmail: Statement<[string, Buffer, Buffer, number]>;
  private readonly emailByAddress: Statement<[string], { id: number; person_id: number | null }>;
  private readonly moveEmail: Statement<[number, number]>;
  /** People added and people updated by the rows written. */
  added = 0;
  updated = 0;
  /** Rows written whose ZIP has no +4: postal append does not return those people. */
  withoutZip4 = 0;

  constructor(
    readonly db: Database,
    private readonly datasetId: number,
  ) {
    this.insertPerson = db.prepare(`
      INSERT INTO ref_people (person_key, dataset_id, ${PERSON_COLUMNS.join(', ')})
      VALUES (?, ?, ${PERSON_COLUMNS.map(() => '?').join(', ')})
      ON CONFLICT (person_key) DO NOTHING`);
    this.personByKey = db.prepare('SELECT id FROM ref_people WHERE person_key = ?');
    this.updatePerson = db.prepare(`
      UPDATE ref_people SET dataset_id = ?, answer_json = NULL, postal_json = NULL,
        ${PERSON_COLUMNS.map((column) => (column === 'interests' ? 'interests = interests | ?' : `${column} = coalesce(?, ${column})`)).join(',\n        ')}
      WHERE id = ?`);
    this.insertEmail = db.prepare(`
      INSERT INTO ref_emails (email, md5, sha1, person_id, activity_packed) VALUES (?, ?, ?, ?, X'')
      ON CONFLICT (email) DO NOTHING`);
    this.emailByAddress = db.prepare('SELECT id, person_id FROM ref_emails WHERE email = ?');
    this.moveEmail = db.prepare('UPDATE ref_emails SET person_id = ? WHERE id = ?');
  }

  private values(record: PersonRecord): unknown[] {
    return [
      record.first,
      record.last,
      record.street,
      record.city,
      record.state,
      record.zip5,
      record.zip4,
      record.streetKey,
      record.cityKey,
      record.household,
      ...record.attributes,
      record.interests,
    ];
  }

  /** Writes records in one transaction; answers how many (all of them). */
  write(records: readonly PersonRecord[]): number {
    this.db.transaction(() => {
      for (const record of records) this.writeOne(record);
    })();
    return records.length;
  }

  // Insert first, look up only on a conflict: most rows of a large import are new, and an
  // `INSERT … ON CONFLICT DO UPDATE … RETURNING` upsert was three times slower per row in SQLite.
  private writeOne(record: PersonRecord): void {
    const values = this.values(record);
    // An email-only row adds to whoever already has the address.
    let personId = record.isEmailOnly
      ? (this.emailByAddress.get(record.emails[0])?.person_id ?? undefined)
      : undefined;
    let isNew = false;
    if (personId === undefined) {
      const inserted = this.insertPerson.run(record.personKey, this.datasetId, ...values);
      isNew = inserted.changes > 0;
      personId = isNew ? Number(inserted.lastInsertRowid) : this.personByKey.get(record.personKey)!.id;
    }
    if (isNew) this.added++;
    else {
      this.updatePerson.run(this.datasetId, ...values, personId);
      this.updated++;
    }
    if (record.zip5 !== null && record.zip4 === null) this.withoutZip4++;
    for (const email of record.emails) {
      if (this.insertEmail.run(email, md5Of(email), sha1Of(email), personId).changes > 0) continue;
      const known = this.emailByAddress.get(email)!;
      if (known.person_id !== personId) this.moveEmail.run(personId, known.id);
    }
  }
}
