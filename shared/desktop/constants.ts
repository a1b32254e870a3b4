// Constants of the desktop contract, without zod, so the renderer can use them without bundling schemas.
import { COLUMN_KINDS } from '../columnKinds.js';
import { LIST_RECORD_LIMIT } from '../api/limits.js';
import { INTELLIGENCE_FIELDS } from '../api/intelligenceNames.js';

/** Rows per part when a file is split: the service's limit per list. */
export const PART_LIMIT = LIST_RECORD_LIMIT;

export const FILE_FORMATS = ['csv', 'txt', 'zip', 'xlsx'] as const;
/** The file pickers' `accept`: the list formats above, by extension and media type. */
export const LIST_FILE_ACCEPT =
  '.csv,.txt,.xlsx,.zip,text/csv,text/plain,application/zip,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const ENCODINGS = ['utf-8', 'utf-16le', 'utf-16be', 'windows-1252'] as const;
export const HISTORY_SORTS = ['created', 'name', 'rows', 'status', 'ready', 'invalid', 'connection'] as const;
export type HistorySort = (typeof HISTORY_SORTS)[number];

export const WARNING_CODES = [
  'no-email-column',
  'several-email-columns',
  'too-many-rows',
  'not-utf8',
  'ragged-rows',
  'empty-file',
  'header-guess',
] as const;

export const COLUMN_ROLES = [...COLUMN_KINDS, 'ignore'] as const;
export type ColumnRole = (typeof COLUMN_ROLES)[number];

export const COLUMN_ROLE_LABELS: Readonly<Record<ColumnRole, string>> = {
  email: 'Email',
  first_name: 'First name',
  last_name: 'Last name',
  full_name: 'Full name',
  street: 'Street',
  street2: 'Street 2',
  city: 'City',
  state: 'State',
  zip: 'ZIP',
  country: 'Country',
  md5: 'MD5',
  sha1: 'SHA1',
  ignore: 'Ignore',
};

/** The header name a role is sent under when the file's own header does not already name it. */
export const COLUMN_ROLE_HEADERS: Readonly<Record<Exclude<ColumnRole, 'ignore'>, string>> = {
  email: 'Email',
  first_name: 'First Name',
  last_name: 'Last Name',
  full_name: 'Full Name',
  street: 'Street',
  street2: 'Street 2',
  city: 'City',
  state: 'State',
  zip: 'Zip',
  country: 'Country',
  md5: 'MD5',
  sha1: 'SHA1',
};

export const JOB_STATUSES = [
  'queued',
  'uploading',
  'processing',
  'downloading',
  'completed',
  'failed',
  'cancelled',
  /** A report-only job whose match reports are in: it waits for the user to buy its results (E9). */
  'awaiting-purchase',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['queued', 'uploading', 'processing', 'downloading'];

/** The legacy vocabulary of list results (DESIGN.md: list statuses). */
export const RESULT_STATUSES = ['valid', 'corrected', 'unknown', 'unverifiable', 'risky', 'invalid'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];

// The exports: one definition, shared with the CLI and the exporter.
export {
  EXPORT_CHOICES,
  EXPORT_KINDS,
  EXPORT_LABELS,
  exportKeepsStatus,
  type ExportChoice,
  type ExportKind,
} from '../exports.js';

// ---------------------------------------------------------------------------------------------------------
// List services (docs/list-services.md)

/**
 * What E7's `fields` may name for email intelligence, as the mapper offers them: the intelligence fields in
 * the spec's table order, then the activity metrics and the postal address (sections of the answer).
 */
export const INTELLIGENCE_CHOICES = [...INTELLIGENCE_FIELDS, 'eam', 'postal_address'] as const;

/** Words for an intelligence field or section, as reports and the mapper name them. */
export const INTELLIGENCE_FIELD_LABELS: Readonly<Record<string, string>> = {
  age: 'Age',
  gender: 'Gender',
  zip: 'ZIP code',
  household_income: 'Household income',
  net_worth: 'Net worth',
  home_market_value: 'Home market value',
  home_owner_status: 'Home owner status',
  length_of_residence: 'Length of residence',
  marital_status: 'Marital status',
  presence_of_children: 'Children in the household',
  education: 'Education',
  occupation: 'Occupation',
  rfm_offline_avg_days: 'Days between offline orders',
  rfm_online_avg_days: 'Days between online orders',
  rfm_avg_dollars: 'Average order value',
  rfm_last_order: 'Last order',
  life_stage_segment: 'Life stage segment',
  life_stage_group: 'Life stage group',
  financial_segment: 'Financial segment',
  financial_group: 'Financial group',
  interests: 'Interests',
  eam: 'Email activity metrics',
  postal_address: 'Postal address',
  month_last_open: 'Month of the last open',
};

/** Words for a field of E7/E9 (an intelligence field, a section, or a service bought whole). */
export function fieldLabel(name: string): string {
  return INTELLIGENCE_FIELD_LABELS[name] ?? name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
}

/** E9's `options.email_append.match_type`: Individual matches only, or Individual and Household matches. */
export const PURCHASE_MATCH_TYPES = ['I', 'H'] as const;
export type PurchaseMatchType = (typeof PURCHASE_MATCH_TYPES)[number];
export const PURCHASE_MATCH_TYPE_LABELS: Readonly<Record<PurchaseMatchType, string>> = {
  I: 'Individual matches only',
  H: 'Individual and household matches',
};
