// The list services beyond validation, as our service runs them and as the CLI and the desktop ask for
// them: which list service a key's services give, which columns of a file each needs, the names of the
// columns each appends to a results file, and what E9's `fields` may name. docs/list-services.md tells the
// rules in words; this module is the one place their names live, so the service, the CLI and the desktop
// agree.
import { z } from 'zod';
import { VERIFICATION_MODES } from './codes.js';
import { INTELLIGENCE_FIELDS, INTEREST_NAMES, type IntelligenceField } from './intelligence.js';
import { LIST_SERVICE_KEYS, LIST_SERVICE_NEEDS, type ListServiceKey } from './listServiceNames.js';

export { parseListServices } from './list.js';
export { LIST_SERVICE_INPUTS, LIST_SERVICE_NEEDS, LIST_SERVICE_TITLES } from './listServiceNames.js';

/** The list services a key with these services may run, in the spec's order. */
export function listServicesOfKey(services: Iterable<string>): ListServiceKey[] {
  const has = new Set(services);
  return LIST_SERVICE_KEYS.filter((key) => LIST_SERVICE_NEEDS[key].some((name) => has.has(name)));
}

// ---------------------------------------------------------------------------------------------------------
// Results columns

/** The columns the validation service appends, in order (spec: "Results file"). */
export const VALIDATION_COLUMNS = [
  'Validation Status',
  'Validation Code',
  'Domain Type',
  'Role Account',
  'Duplicate',
  'Valid Email',
] as const;

/** `eam` members as columns, `eam.` before each. */
export const EAM_COLUMNS = [
  'eam.date_first_seen',
  'eam.longevity',
  'eam.velocity',
  'eam.popularity',
] as const;
export const EAM_MONTH_LAST_OPEN_COLUMN = 'eam.month_last_open';
export const POSTAL_ADDRESS_COLUMNS = [
  'postal_address.first_name',
  'postal_address.last_name',
  'postal_address.address',
  'postal_address.city',
  'postal_address.state',
  'postal_address.zip',
] as const;

/** The columns email append adds: the best match's address and its match type (`Individual`/`Household`). */
export const EMAIL_APPEND_COLUMNS = ['Appended Email', 'Email Match Type'] as const;

/** The columns alternate email append adds: an address and a match type per match, up to the key's maximum. */
export function alternateEmailColumns(max: number): string[] {
  const columns: string[] = [];
  for (let n = 1; n <= max; n++) {
    const suffix = n === 1 ? '' : ` ${n}`;
    columns.push(`Alternate Email${suffix}`, `Alternate Match Type${suffix}`);
  }
  return columns;
}

/** What the intelligence columns of a results file are made of. */
export interface IntelligenceColumnsOf {
  /** Intelligence fields, in any order (columns follow the spec's table order). */
  readonly fields: Iterable<IntelligenceField>;
  readonly eam: boolean;
  readonly monthLastOpen: boolean;
  readonly postalAddress: boolean;
}

/**
 * The intelligence columns: each scalar field by its response name (`age`, `household_income`, …), `interests`
 * as one column per member (`interests.travel`, value `true` or empty), then `eam.*` and `postal_address.*`.
 * Every record gets every column, empty when no data was found.
 */
export function intelligenceColumns(of: IntelligenceColumnsOf): string[] {
  const wanted = new Set(of.fields);
  const columns: string[] = [];
  for (const field of INTELLIGENCE_FIELDS) {
    if (!wanted.has(field)) continue;
    if (field === 'interests') columns.push(...INTEREST_NAMES.map((name) => `interests.${name}`));
    else columns.push(field);
  }
  if (of.eam) {
    columns.push(...EAM_COLUMNS);
    if (of.monthLastOpen) columns.push(EAM_MONTH_LAST_OPEN_COLUMN);
  }
  if (of.postalAddress) columns.push(...POSTAL_ADDRESS_COLUMNS);
  return columns;
}

// ---------------------------------------------------------------------------------------------------------
// Which columns of a file each service reads (by the spec's header synonyms: shared/columns.ts)

// ---------------------------------------------------------------------------------------------------------
// E9 purchase

/**
 * Names E9's `fields` may hold for our service: intelligence fields (also `financial_segement`), the sections
 * `eam`, `postal_address` and `month_last_open`, and the list service keys, a service key buying that
 * service's columns whole (`email_intelligence`: every matched intelligence field). Without `fields`,
 * everything matched is bought.
 */
export const PURCHASE_SECTION_NAMES = ['eam', 'postal_address', 'month_last_open'] as const;

// ---------------------------------------------------------------------------------------------------------
// GET /v5/key (a Mailsieve extension): what the calling key may have

/** The periods of a key's quota: a UTC day, a UTC calendar month, or all time. */
export const QUOTA_PERIODS = ['day', 'month', 'total'] as const;
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number];

/**
 * A key's quota of billable queries (E1 calls, list records, E2–E6 records answered) as `GET /v5/key` tells it:
 * the limit, what is used and left in the current period, the period, and when it renews (the next period's
 * start, ISO 8601 in UTC; null for a quota in all, which never renews). `trial`: a trial key (100 in all).
 */
export const keyQuotaSchema = z.object({
  limit: z.number().int().min(0),
  used: z.number().int().min(0),
  left: z.number().int().min(0),
  period: z.enum(QUOTA_PERIODS),
  renews_at: z.string().nullable(),
  trial: z.boolean(),
});
export type KeyQuotaInfo = z.infer<typeof keyQuotaSchema>;

/**
 * What our service tells a key about itself (`GET /v5/key`, key in the `api_key` header): its services, the
 * list services they give, its fields (`month_last_open` among them when enabled), its alternate email
 * maximum, the verification mode it answers in, and its quota (absent for a key without one). Asking is not
 * billable, so the desktop's connection test uses it. The provider has no such endpoint (404): the desktop
 * then asks the user what their account has, and tests the connection with an E1 call.
 */
export const keyInfoSchema = z.looseObject({
  services: z.array(z.string()),
  list_services: z.array(z.string()),
  fields: z.array(z.string()),
  alternate_max: z.number().int().min(1),
  // Optional for a service of ours from before they were told.
  mode: z.enum(VERIFICATION_MODES).optional(),
  quota: keyQuotaSchema.optional(),
});
export type KeyInfo = z.infer<typeof keyInfoSchema>;
