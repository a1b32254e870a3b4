// The list services as the desktop offers them (docs/list-services.md): which columns of a mapping each one
// can read, and the match reports of a status document. Pure TypeScript, used by the mapper (to say what is
// missing), by the core (to refuse a job that cannot run) and by the screens that show reports.
import { hasInputsFor as serviceHasInputs, type ListServiceKey } from '../api/listServiceNames.js';
import type { ColumnRole } from './constants.js';

/** Whether the columns of a mapping give a service what it reads (LIST_SERVICE_INPUTS says it in words). */
export function hasInputsFor(service: ListServiceKey, roles: readonly ColumnRole[]): boolean {
  const present = new Set<string>(roles);
  return serviceHasInputs(service, (kind) => present.has(kind));
}

/** The chosen services whose columns the mapping lacks, in the order given. */
export function servicesLackingInputs(
  services: readonly ListServiceKey[],
  roles: readonly ColumnRole[],
): ListServiceKey[] {
  return services.filter((service) => !hasInputsFor(service, roles));
}

/** Services that read no name or postal column: a job with only these needs no header row renamed. */
const EMAIL_ONLY_SERVICES: readonly ListServiceKey[] = ['email_validation', 'alternate_email_append'];

/** Whether a job running these services reads columns by their header names (name, postal, hashes). */
export function readsNamedColumns(services: readonly ListServiceKey[]): boolean {
  return services.some((service) => !EMAIL_ONLY_SERVICES.includes(service));
}

// ---------------------------------------------------------------------------------------------------------
// Match reports

/** The `reporting` of the services beyond validation, as the status document (E8) has them. */
export interface MatchReports {
  /** Matched records per field (`{"Total Count": n}` in the document). */
  readonly email_intelligence?: Readonly<Record<string, number>>;
  /** Records whose first match is an individual's / a household's. */
  readonly email_append?: { readonly individual: number; readonly household: number };
  /** Counts keyed as the document has them: `Individual match`, `2nd Household match`, … */
  readonly alternate_email_append?: Readonly<Record<string, number>>;
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The numeric members of a reporting counts object (a provider may add members of other kinds). */
export function countsOf(value: unknown): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [key, n] of Object.entries(objectOf(value) ?? {}))
    if (typeof n === 'number' && Number.isFinite(n)) counts[key] = n;
  return counts;
}

/**
 * The match reports of a status document: each service beyond validation that is complete and has its
 * `reporting`. Shapes a provider may vary are read tolerantly; what cannot be read is left out.
 */
export function matchReportsOf(document: unknown): MatchReports {
  const services = objectOf(objectOf(document)?.services) ?? {};
  const reportingOf = (key: ListServiceKey) => objectOf(objectOf(services[key])?.reporting);
  const reports: {
    -readonly [K in keyof MatchReports]: MatchReports[K];
  } = {};
  const intelligence = reportingOf('email_intelligence');
  if (intelligence) {
    const fields: Record<string, number> = {};
    for (const [field, value] of Object.entries(intelligence)) {
      const total = typeof value === 'number' ? value : objectOf(value)?.['Total Count'];
      if (typeof total === 'number') fields[field] = total;
    }
    reports.email_intelligence = fields;
  }
  const append = reportingOf('email_append');
  if (append) {
    const counts = countsOf(append.email_match_type);
    reports.email_append = {
      individual: counts['Individual match'] ?? 0,
      household: counts['Household match'] ?? 0,
    };
  }
  const alternate = reportingOf('alternate_email_append');
  if (alternate) reports.alternate_email_append = countsOf(alternate.alternate_match_type);
  return reports;
}

/** Whether a document holds any match report (then it is worth keeping beside the job). */
export function hasMatchReports(reports: MatchReports): boolean {
  return Object.keys(reports).length > 0;
}

/** Rank words of the alternate email report: `Individual match` is the 1st, then `2nd …` to `5th …`. */
export const ALTERNATE_RANKS = ['', '2nd ', '3rd ', '4th ', '5th '] as const;

/** The alternate report as rows: rank (1–5), individual and household counts; ranks without any left out. */
export function alternateRows(
  counts: Readonly<Record<string, number>>,
): { rank: number; individual: number; household: number }[] {
  return ALTERNATE_RANKS.map((prefix, i) => ({
    rank: i + 1,
    individual: counts[`${prefix}Individual match`] ?? 0,
    household: counts[`${prefix}Household match`] ?? 0,
  })).filter((row) => row.rank === 1 || row.individual + row.household > 0);
}
