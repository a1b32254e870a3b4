// The spec's two report CSVs of a list (email-data-service.md, "Results file": "a match report (rows
// `field,records matched,percent`), chart data CSV (rows `field,value,count`)"), which the service offers
// only in its web interface. Written from a list's reporting, once, for the desktop (the Summary screen's
// Save match report CSV / Save chart data CSV) and `mailsieve clean --report-csv`. Pure: the renderer may
// use it too.
//
//   match report  per field the results add (or a service matched): how many records have it, and their share
//                 of the list: Validation Status, Valid Email (an address to mail), Role Account, Duplicate,
//                 each matched email intelligence field, email append and alternate email append matches
//   chart data    the counts the charts draw: per status, status code, domain type, role accounts,
//                 duplicates, intelligence field, email append and alternate match type
import Papa from 'papaparse';
import { REPORT_DOMAIN_TYPE_KEYS, REPORT_STATUS_KEYS, type EmailValidationReporting } from './api/list.js';
import type { MatchReports } from './desktop/listServices.js';

/** What the reports are made of: a job's (or a list's) counts. */
export interface ReportCounts {
  /** Records of the list. */
  readonly records: number;
  /** The email_validation reporting, when validation ran. */
  readonly validation?: EmailValidationReporting | null;
  /** Rows whose address appears more than once (the results' `Duplicate`), when they were counted. */
  readonly duplicates?: number | null;
  readonly matchReports: MatchReports;
}

export const MATCH_REPORT_HEADER = ['field', 'records matched', 'percent'] as const;
export const CHART_DATA_HEADER = ['field', 'value', 'count'] as const;

/** A share of the list, in percent with two decimals ("12.50"); empty for an empty list. */
function percent(count: number, total: number): string {
  return total > 0 ? ((100 * count) / total).toFixed(2) : '';
}

const csv = (header: readonly string[], rows: readonly (readonly (string | number)[])[]) =>
  `${Papa.unparse({ fields: [...header], data: rows.map((row) => row.map(String)) }, { newline: '\n' })}\n`;

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** `field,records matched,percent`. */
export function matchReportCsv(counts: ReportCounts): string {
  const rows: (string | number)[][] = [];
  const total = counts.records;
  const add = (field: string, matched: number) => rows.push([field, matched, percent(matched, total)]);
  const validation = counts.validation;
  if (validation) {
    const statuses = validation.statuses ?? {};
    const checked = REPORT_STATUS_KEYS.reduce((sum, key) => sum + count(statuses[key]), 0);
    add('Validation Status', checked);
    add('Valid Email', count(statuses.Valid) + count(statuses.Corrected));
    add('Role Account', count(validation.role_accounts));
    if (counts.duplicates !== undefined && counts.duplicates !== null) add('Duplicate', counts.duplicates);
  }
  const reports = counts.matchReports;
  for (const [field, matched] of Object.entries(reports.email_intelligence ?? {})) add(field, matched);
  if (reports.email_append) {
    add('Email Append: Individual match', reports.email_append.individual);
    add('Email Append: Household match', reports.email_append.household);
  }
  for (const [key, matched] of Object.entries(reports.alternate_email_append ?? {}))
    add(`Alternate Email Append: ${key}`, matched);
  return csv(MATCH_REPORT_HEADER, rows);
}

/** `field,value,count`: the counts behind the charts (statuses and domain types in the spec's order). */
export function chartDataCsv(counts: ReportCounts): string {
  const rows: (string | number)[][] = [];
  const validation = counts.validation;
  if (validation) {
    for (const key of REPORT_STATUS_KEYS)
      rows.push(['Validation Status', key, count(validation.statuses?.[key])]);
    const codes = Object.entries(validation.status_codes ?? {}).sort(([a], [b]) => Number(a) - Number(b));
    for (const [code, n] of codes) rows.push(['Validation Code', code, n]);
    for (const key of REPORT_DOMAIN_TYPE_KEYS) {
      const n = count(validation.domain_type?.[key]);
      if (n > 0) rows.push(['Domain Type', key, n]);
    }
    rows.push(['Role Account', 'true', count(validation.role_accounts)]);
    if (counts.duplicates !== undefined && counts.duplicates !== null)
      rows.push(['Duplicate', 'true', counts.duplicates]);
  }
  const reports = counts.matchReports;
  for (const [field, n] of Object.entries(reports.email_intelligence ?? {}))
    rows.push(['Email Intelligence', field, n]);
  if (reports.email_append) {
    rows.push(['Email Append', 'Individual match', reports.email_append.individual]);
    rows.push(['Email Append', 'Household match', reports.email_append.household]);
  }
  for (const [key, n] of Object.entries(reports.alternate_email_append ?? {}))
    rows.push(['Alternate Email Append', key, n]);
  return csv(CHART_DATA_HEADER, rows);
}

/** The two reports, by the names the desktop and `clean --report-csv` give their files. */
export const REPORT_CSVS = ['match-report', 'chart-data'] as const;
export type ReportCsv = (typeof REPORT_CSVS)[number];

export const REPORT_CSV_OF: Readonly<Record<ReportCsv, (counts: ReportCounts) => string>> = {
  'match-report': matchReportCsv,
  'chart-data': chartDataCsv,
};
