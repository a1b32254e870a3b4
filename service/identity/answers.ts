// The answers of identity matching and email intelligence for one record: what E2–E6 return per record,
// and what a list run calls per row. Synchronous, a few indexed lookups each (docs/identity.md, "API").
import type { PersonQuery } from '../../shared/api/bulk.js';
import {
  INVALID_IDENTIFIER,
  INVALID_POSTAL_ADDRESS,
  recordError,
  type RecordError,
} from '../../shared/api/errors.js';
import {
  INTELLIGENCE_FIELDS,
  type Eam,
  type EmailMatch,
  type IntelligenceResult,
  type PostalAddress,
} from '../../shared/api/intelligence.js';
import type {
  AlternateEmailResult,
  EmailAppendResult,
  PostalAppendResult,
} from '../../shared/api/identity.js';
import { eamFrom } from './eam.js';
import { canonicalEmail, cityKey, digestHex, nameKey, parseZip, stateCode, streetKey } from './normalise.js';
import type { IdentityPolicy, IntelligencePolicy } from './policy.js';
import {
  ATTRIBUTE_FIELDS,
  interestsFromBits,
  type AddressMatch,
  type AttributeField,
  type IdentityStore,
  type EmailRow,
  type PersonRow,
  type RenderedPerson,
} from './store.js';

const ATTRIBUTE_INDEX = Object.fromEntries(ATTRIBUTE_FIELDS.map((field, index) => [field, index])) as Record<
  AttributeField,
  number
>;

/** Per-record text for a record that names no person by any route. */
export const NO_PERSON_NAMED =
  'Give an email (email, md5_email or sha1_email), or first, last, street and zip (or city and state).';
/** Per-record text for an email-append record without the whole name and postal address. */
export const INCOMPLETE_POSTAL_QUERY = 'Email append needs first, last, street and zip (or city and state).';

/** Most addresses one email append answer lists (Individual matches first). */
export const EMAIL_APPEND_MAX = 5;

export type Answer<T> = T | RecordError;

/** Whether an answer is the per-record error object. */
export function isErrorAnswer<T extends object>(answer: Answer<T>): answer is RecordError {
  return typeof (answer as Partial<RecordError>).error_code === 'number';
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const has = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

// ---------------------------------------------------------------------------------------------------------
// Resolving a query

/** The postal part of a query: a name and a U.S. postal address. */
export interface PostalQuery {
  readonly first?: string | undefined;
  readonly last?: string | undefined;
  readonly street?: string | undefined;
  readonly city?: string | undefined;
  readonly state?: string | undefined;
  readonly zip?: string | undefined;
}

/** Whether a query carries a whole name and postal address (street and a ZIP, or a city and state). */
export function hasPostalRoute(query: PostalQuery): boolean {
  return (
    has(query.first) &&
    has(query.last) &&
    has(query.street) &&
    (has(query.zip) || (has(query.city) && has(query.state)))
  );
}

/** Whether a query names an address by email or hash. */
export function hasEmailRoute(query: PersonQuery): boolean {
  return has(query.email) || has(query.sha1_email) || has(query.md5_email);
}

/**
 * The per-record error for a query whose `email` is present but blank or white space, with no other way to
 * name a person: `Invalid identifier.` (400) on E2, E3, E5 and E6 alike; undefined otherwise.
 */
export function blankEmailError(query: PersonQuery): RecordError | undefined {
  if (query.email === undefined || has(query.email)) return undefined;
  if (has(query.sha1_email) || has(query.md5_email) || hasPostalRoute(query)) return undefined;
  return recordError(400, INVALID_IDENTIFIER);
}

/**
 * The people at a postal address, or an error for an address that is not a United States postal address
 * the reference data knows: a state that is no USPS code, a ZIP not of 5 or 9 digits, a street with no
 * letters or digits, or a well-formed address at which no person of the reference data lives
 * (docs/identity.md, "A non-existent postal address").
 */
export function peopleAtAddress(
  store: IdentityStore,
  query: PostalQuery,
): { ok: true; people: PersonRow[] } | { ok: false; error: RecordError } {
  const invalid = { ok: false, error: recordError(400, INVALID_POSTAL_ADDRESS) } as const;
  const street = streetKey(query.street ?? '');
  if (street === '') return invalid;
  const state = has(query.state) ? stateCode(query.state) : undefined;
  if (has(query.state) && state === undefined) return invalid;
  let people: PersonRow[];
  if (has(query.zip)) {
    const zip = parseZip(query.zip);
    if (!zip) return invalid;
    people = store.peopleAtZipStreet(zip.zip5, street);
    // A ZIP in another state than the one given is no address at all.
    if (state !== undefined) people = people.filter((person) => person.state === state);
  } else {
    const city = cityKey(query.city ?? '');
    if (state === undefined || city === '') return invalid;
    people = store.peopleAtCityStreet(state, city, street);
  }
  return people.length === 0 ? invalid : { ok: true, people };
}

function sameName(person: PersonRow, first: string, last: string): boolean {
  return nameKey(person.first_name ?? '') === first && nameKey(person.last_name ?? '') === last;
}

/** Finds stored addresses: the store itself (addresses with their people), or its rendered answers. */
interface AddressFinder<T> {
  findByEmail(canonical: string): T | undefined;
  /** `hex`: as `digestHex` gives it. */
  findByDigest(kind: 'md5' | 'sha1', hex: string): T | undefined;
}

/**
 * The address a query names by email or hash (`email`, else `sha1_email`, else `md5_email`): an error for a
 * malformed one, what `finder` finds, or undefined.
 */
function addressOf<T>(
  finder: AddressFinder<T>,
  query: PersonQuery,
  invalidEmail: string,
): { ok: true; match: T | undefined } | { ok: false; error: RecordError } {
  if (has(query.email)) {
    const canonical = canonicalEmail(query.email);
    if (canonical === undefined) return { ok: false, error: recordError(400, invalidEmail) };
    return { ok: true, match: finder.findByEmail(canonical) };
  }
  for (const kind of ['sha1', 'md5'] as const) {
    const hex = kind === 'sha1' ? query.sha1_email : query.md5_email;
    if (!has(hex)) continue;
    const digest = digestHex(hex, kind);
    if (digest === undefined) return { ok: false, error: recordError(400, INVALID_IDENTIFIER) };
    return { ok: true, match: finder.findByDigest(kind, digest) };
  }
  return { ok: true, match: undefined };
}

// ---------------------------------------------------------------------------------------------------------
// Intelligence (E5, E6)

/** A policy's fields in its order, each with its column in `PersonRow.attributes` (-1: interests, -2: zip). */
const fieldPlans = new WeakMap<IntelligencePolicy, readonly (readonly [string, number])[]>();

function fieldPlanOf(policy: IntelligencePolicy): readonly (readonly [string, number])[] {
  let plan = fieldPlans.get(policy);
  if (!plan) {
    plan = [...policy.fields].map(
      (field) => [field, field === 'interests' ? -1 : field === 'zip' ? -2 : ATTRIBUTE_INDEX[field]] as const,
    );
    fieldPlans.set(policy, plan);
  }
  return plan;
}

/**
 * The object an intelligence answer is built in. A `{}` literal has room for four members and its backing
 * store is copied each time it outgrows it, up to twenty-odd members here; V8 sizes the instances of a class
 * by the most members any of its first few instances received. So that an early small answer (`fields=age`)
 * does not size them, a few are made with every member an answer can have when this module loads. An
 * E6 answer's objects are built about twice as fast so; their members, order and JSON are the same.
 */
class IntelligenceMembers {}
for (let i = 0; i < 16; i++) {
  const primed = new IntelligenceMembers() as Record<string, unknown>;
  for (const member of [...INTELLIGENCE_FIELDS, 'eam', 'postal_address']) primed[member] = true;
}

/** A person's value of a planned field (fieldPlanOf), undefined when the person has none. */
function fieldValue(person: PersonRow, index: number): unknown {
  // Values come from columns the import checked against the spec's enumerations and formats.
  if (index >= 0) return person.attributes[index] ?? undefined;
  if (index === -1) return interestsFromBits(person.interests);
  return person.zip5 ?? undefined;
}

/** The fields of a person that the policy enables and the person has, in the spec's table order. */
function attributesOf(person: PersonRow, policy: IntelligencePolicy): IntelligenceResult {
  const result = new IntelligenceMembers() as Record<string, unknown>;
  for (const [field, index] of fieldPlanOf(policy)) {
    const value = fieldValue(person, index);
    if (value !== undefined) result[field] = value;
  }
  return result;
}

/** `postal_address` of a person, when the record is complete: name, street, city, state and ZIP+4. */
export function postalAddressOf(person: PersonRow): PostalAddress | undefined {
  const { first_name, last_name, street, city, state, zip5, zip4 } = person;
  if (!first_name || !last_name || !street || !city || !state || !zip5 || !zip4) return undefined;
  return { first_name, last_name, address: street, city, state, zip: `${zip5}-${zip4}` };
}

/** Every intelligence field in the spec's order: the fields of a rendered answer (renderPerson). */
const WHOLE_FIELD_SET: IntelligencePolicy = {
  fields: new Set(INTELLIGENCE_FIELDS),
  eam: false,
  monthLastOpen: false,
  postalAddress: false,
};

const wholeFieldSets = new WeakMap<IntelligencePolicy, boolean>();

/** Whether a policy returns every intelligence field, in the spec's order: the fields of a rendered answer. */
export function isWholeFieldSet(policy: IntelligencePolicy): boolean {
  let isWhole = wholeFieldSets.get(policy);
  if (isWhole === undefined) {
    const fields = [...policy.fields];
    isWhole =
      fields.length === INTELLIGENCE_FIELDS.length && fields.every((f, i) => f === INTELLIGENCE_FIELDS[i]);
    wholeFieldSets.set(policy, isWhole);
  }
  return isWhole;
}

/** Each field of the whole field set with its JSON member name (`"age":`), in the spec's order. */
const WHOLE_FIELD_PLAN = fieldPlanOf(WHOLE_FIELD_SET).map(
  ([field, index]) => [`${JSON.stringify(field)}:`, index] as const,
);

/**
 * What `ref_people` keeps of a person's intelligence answer, rendered once after an import (prepared.ts) so
 * that E6 need not read and serialise thirty columns per person: `members`, the JSON members of every field
 * the person has (the whole field set, without braces: `"age":"35-44",…`, '' for none), and `postal`, the
 * JSON of the person's `postal_address` ('' when incomplete). Built from the same field plan and values as
 * the answer objects (attributesOf), as their JSON text (bulkWork.test.ts compares both for every demo
 * person).
 */
export function renderPerson(person: PersonRow): { readonly members: string; readonly postal: string } {
  let members = '';
  for (const [name, index] of WHOLE_FIELD_PLAN) {
    const value = fieldValue(person, index);
    if (value !== undefined) members += `${members === '' ? '' : ','}${name}${JSON.stringify(value)}`;
  }
  const postal = postalAddressOf(person);
  return { members, postal: postal ? JSON.stringify(postal) : '' };
}

export interface IntelligenceOptions {
  /** Unix seconds the activity windows end at; default now. */
  readonly nowS?: number;
  /** Per-record text for a malformed `email`; default `Invalid identifier.` */
  readonly invalidEmailMessage?: string;
}

/**
 * A person's intelligence answer: the enabled fields the person has, `eam` for an EAM policy (always, the
 * spec's defaults for an unknown address), `postal_address` when enabled; `{}` when nothing matched; a
 * per-record error for a malformed identifier, a non-existent postal address or no identity at all.
 *
 * Routes: `email`, else `sha1_email`, else `md5_email`; when that finds no person (or none was given), the
 * name + postal address, matched as an Individual (full name at the address). The `eam` of a postal match
 * is that of the person's first address.
 */
export function intelligenceAnswer(
  store: IdentityStore,
  query: PersonQuery,
  policy: IntelligencePolicy,
  options: IntelligenceOptions = {},
): Answer<IntelligenceResult> {
  const named = namedBy(store, query, policy, options);
  return isErrorAnswer(named) ? named : answerOf(store, named, policy, options);
}

/** The intelligence answer for whom a query names (namedBy). */
function answerOf(
  store: IdentityStore,
  { person, email }: Named,
  policy: IntelligencePolicy,
  options: IntelligenceOptions,
): IntelligenceResult {
  const result: IntelligenceResult = person ? attributesOf(person, policy) : {};
  if (policy.eam) result.eam = eamOf(store, email?.id, policy, options);
  if (policy.postalAddress && person) {
    const postal = postalAddressOf(person);
    if (postal) result.postal_address = postal;
  }
  return result;
}

/** Whom an intelligence query names: the person matched, if any, and the address `eam` is about. */
interface Named {
  readonly person: PersonRow | undefined;
  readonly email: EmailRow | undefined;
}

/** The routes of `intelligenceAnswer`: whom the query names, or the per-record error. */
function namedBy(
  store: IdentityStore,
  query: PersonQuery,
  policy: IntelligencePolicy,
  options: IntelligenceOptions,
): Named | RecordError {
  const byEmail = hasEmailRoute(query);
  const byPostal = hasPostalRoute(query);
  if (!byEmail && !byPostal) return blankEmailError(query) ?? recordError(400, NO_PERSON_NAMED);
  const found = addressOf<AddressMatch>(store, query, options.invalidEmailMessage ?? INVALID_IDENTIFIER);
  if (!found.ok) return found.error;
  let email = found.match?.email;
  let person = found.match?.person;
  if (!person && byPostal) {
    const at = peopleAtAddress(store, query);
    if (!at.ok) return at.error;
    const first = nameKey(query.first ?? '');
    const last = nameKey(query.last ?? '');
    person = at.people.find((candidate) => sameName(candidate, first, last));
    if (person && !email && policy.eam) email = store.primaryEmailOf(person.id);
  }
  return { person, email };
}

/** The `eam` of an address (by id; undefined: none, the spec's defaults for an unknown address). */
function eamOf(
  store: IdentityStore,
  emailId: number | undefined,
  policy: IntelligencePolicy,
  options: IntelligenceOptions,
): Eam {
  const nowS = options.nowS ?? nowSeconds();
  return eamFrom(
    emailId === undefined ? undefined : store.activityOf(emailId, nowS),
    nowS,
    policy.monthLastOpen,
  );
}

/**
 * An intelligence answer as JSON text: the text of `intelligenceAnswer`'s object. For a policy with the whole
 * field set, a person whose answer is rendered (or no person) is put together from the rendered text, `eam`
 * and `postal_address`, in the object's order; an address read ahead rendered (IdentityStore.readAhead) is
 * not even read as a person. Any other answer is `intelligenceAnswer`'s object as JSON.
 */
export function intelligenceAnswerJson(
  store: IdentityStore,
  query: PersonQuery,
  policy: IntelligencePolicy,
  options: IntelligenceOptions = {},
): string {
  if (!isWholeFieldSet(policy)) return JSON.stringify(intelligenceAnswer(store, query, policy, options));
  const address = addressOf(store.rendered, query, INVALID_IDENTIFIER);
  if (address.ok && address.match)
    return renderedAnswer(address.match, address.match.emailId, store, policy, options);
  const named = namedBy(store, query, policy, options);
  if (isErrorAnswer(named)) return JSON.stringify(named);
  const { person, email } = named;
  if (person && !person.rendered) return JSON.stringify(answerOf(store, named, policy, options));
  return renderedAnswer(person?.rendered, email?.id, store, policy, options);
}

/** The JSON of a whole-field-set answer from a person's rendered answer (undefined: no person). */
function renderedAnswer(
  person: RenderedPerson | undefined,
  emailId: number | undefined,
  store: IdentityStore,
  policy: IntelligencePolicy,
  options: IntelligenceOptions,
): string {
  let members = person?.members ?? '';
  const add = (member: string) => (members = members === '' ? member : `${members},${member}`);
  if (policy.eam) add(`"eam":${JSON.stringify(eamOf(store, emailId, policy, options))}`);
  if (policy.postalAddress && person && person.postal !== '') add(`"postal_address":${person.postal}`);
  return `{${members}}`;
}

// ---------------------------------------------------------------------------------------------------------
// Identity matching (E2, E3, E4)

/**
 * Alternate emails of an address (E2): the person's other addresses (Individual), then those of the other
 * people of the household (Household), at most `max`; `{}` when there are none.
 */
export function alternateEmailAnswer(
  store: IdentityStore,
  address: AddressMatch | undefined,
  max: number,
): AlternateEmailResult {
  if (!address?.person) return {};
  const { email, person } = address;
  const matches: EmailMatch[] = [];
  for (const other of store.emailsOf(person.id)) {
    if (matches.length >= max) break;
    if (other.id !== email.id) matches.push({ email: other.email, email_match_type: 'Individual' });
  }
  if (matches.length < max) {
    if (person.household) {
      for (const other of store.householdEmailsOf(person.household, person.id)) {
        if (matches.length >= max) break;
        if (other.id !== email.id) matches.push({ email: other.email, email_match_type: 'Household' });
      }
    }
  }
  return matches.length > 0 ? { alternate_email: matches } : {};
}

/** Postal append (E3 with `email`): the person's complete postal address, `{}` when there is none. */
export function postalAppendAnswer(address: AddressMatch | undefined): PostalAppendResult {
  const postal = address?.person ? postalAddressOf(address.person) : undefined;
  return postal ? { postal_address: postal } : {};
}

/**
 * Email append (E3 with a name and postal address): every address of the people of that name at the address
 * (Individual), then the first address of each other person of that last name there (Household), at most
 * EMAIL_APPEND_MAX; `{}` when no one matches; a per-record error for an incomplete or non-existent address.
 */
export function emailAppendAnswer(store: IdentityStore, query: PostalQuery): Answer<EmailAppendResult> {
  if (!hasPostalRoute(query)) return recordError(400, INCOMPLETE_POSTAL_QUERY);
  const at = peopleAtAddress(store, query);
  if (!at.ok) return at.error;
  const first = nameKey(query.first ?? '');
  const last = nameKey(query.last ?? '');
  const matches: EmailMatch[] = [];
  const individuals = at.people.filter((person) => sameName(person, first, last));
  for (const person of individuals) {
    for (const { email } of store.emailsOf(person.id)) {
      if (matches.length < EMAIL_APPEND_MAX) matches.push({ email, email_match_type: 'Individual' });
    }
  }
  for (const person of at.people) {
    if (matches.length >= EMAIL_APPEND_MAX) break;
    if (individuals.includes(person) || nameKey(person.last_name ?? '') !== last) continue;
    const primary = store.primaryEmailOf(person.id);
    if (primary) matches.push({ email: primary.email, email_match_type: 'Household' });
  }
  return matches.length > 0 ? { email_append: matches } : {};
}

/** Resolves an E2/E3 `email` parameter: a per-record error for a malformed one. */
export function emailForMatching(
  store: IdentityStore,
  email: string,
): { ok: true; match: AddressMatch | undefined } | { ok: false; error: RecordError } {
  const blank = blankEmailError({ email });
  return blank ? { ok: false, error: blank } : addressOf<AddressMatch>(store, { email }, INVALID_IDENTIFIER);
}

/** An E4 element that is not an error: the members the record and the key ask for, `{}` for no match. */
export interface IdentityBulkResult {
  alternate_email?: EmailMatch[];
  email_append?: EmailMatch[];
  postal_address?: PostalAddress;
}

/**
 * An E4 element: a record naming an address (`email`, `sha1_email`, `md5_email`) gets `postal_address`
 * and/or `alternate_email`, a record with a name and postal address gets `email_append` — each as far as
 * the key's services go. A record asking for what the key lacks gets a per-record 403.
 */
export function identityBulkAnswer(
  store: IdentityStore,
  query: PersonQuery,
  policy: IdentityPolicy,
): Answer<IdentityBulkResult> {
  if (hasEmailRoute(query)) {
    if (!policy.postalAppend && !policy.alternateEmail)
      return recordError(
        403,
        'Access denied: this API key is not enabled for postal_append or alternate_email, which a record with an email asks for.',
      );
    const found = addressOf<AddressMatch>(store, query, INVALID_IDENTIFIER);
    if (!found.ok) return found.error;
    const result: IdentityBulkResult = {};
    if (policy.postalAppend) Object.assign(result, postalAppendAnswer(found.match));
    if (policy.alternateEmail)
      Object.assign(result, alternateEmailAnswer(store, found.match, policy.alternateMax));
    return result;
  }
  if (has(query.first) || has(query.last) || has(query.street)) {
    if (!policy.emailAppend)
      return recordError(
        403,
        'Access denied: this API key is not enabled for email_append, which a record with a name and postal address asks for.',
      );
    return emailAppendAnswer(store, query);
  }
  return recordError(400, NO_PERSON_NAMED);
}
