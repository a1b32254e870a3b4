// The exports of a list's results, defined once for the CLI (`clean --export`), the desktop (the Results
// screen) and the exporter that writes them (electron/core/jobs/exports.ts). A row's export is decided by its
// `Validation Status`, in either vocabulary (list results use the legacy one; safe_to_send keys the other):
//
//   safe     rows safe to mail: valid and corrected (their `Valid Email` holds the address to mail)
//   clean    every row but invalid and risky (trap in the safe_to_send vocabulary): what offline cleaning,
//            where a good address reads unknown (code 10), leaves to mail
//   invalid  rows with status invalid: for a suppression list
//   all      every row, with the appended columns (the only one for results without validation)
//   custom   (the desktop) a set of statuses the user picks
//   zip      one file per status the results hold, in one .zip (the desktop's dialog; `clean --export zip`,
//            which electron/cli/exportOptions.ts handles beside the kinds): written by exports/statusZip.ts

/** The kinds, in the order `clean --export` lists them. */
export const EXPORT_KINDS = ['safe', 'invalid', 'clean', 'all'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/** The zip of every status: one file per status, each shaped alike, in one archive. */
export const STATUS_ZIP = 'zip';

/** What the Results screen offers, in its order: the kinds, and a custom set of statuses. */
export const EXPORT_CHOICES = [
  'safe',
  'clean',
  'invalid',
  'all',
  'custom',
  'zip',
] as const satisfies readonly (ExportKind | 'custom' | typeof STATUS_ZIP)[];
export type ExportChoice = (typeof EXPORT_CHOICES)[number];

export function isExportKind(value: string): value is ExportKind {
  return (EXPORT_KINDS as readonly string[]).includes(value);
}

export const EXPORT_LABELS: Readonly<Record<ExportChoice, string>> = {
  safe: 'Safe to send only',
  clean: 'Clean (all but invalid and risky)',
  invalid: 'Invalid (for suppression)',
  all: 'All rows with results',
  custom: 'Custom set of statuses',
  zip: 'Zip of every status (one file per status)',
};

/**
 * What a job's saved files are (the `exports` the history keeps): an export of rows, or one of the spec's
 * report CSVs (shared/reportCsv.ts: the match report, the chart data), or the rows whose status changed since
 * the last run of the same addresses (`changed`, issue 37).
 */
export const EXPORT_RECORD_KINDS = [...EXPORT_CHOICES, 'match-report', 'chart-data', 'changed'] as const;
export type ExportRecordKind = (typeof EXPORT_RECORD_KINDS)[number];

/** Statuses of both vocabularies safe to mail. */
const SAFE_STATUSES: ReadonlySet<string> = new Set(['valid', 'corrected', 'safetosend']);
/** Statuses `clean` leaves out. */
const NOT_CLEAN_STATUSES: ReadonlySet<string> = new Set(['invalid', 'risky', 'trap']);

/**
 * Whether an export keeps a row whose `Validation Status` is `status` (lower case). `custom` keeps the
 * statuses in `custom`.
 */
export function exportKeepsStatus(
  kind: ExportChoice,
  status: string,
  custom: readonly string[] = [],
): boolean {
  switch (kind) {
    case 'safe':
      return SAFE_STATUSES.has(status);
    case 'clean':
      return !NOT_CLEAN_STATUSES.has(status);
    case 'invalid':
      return status === 'invalid';
    case 'all':
      return true;
    case 'custom':
      return custom.includes(status);
    case 'zip':
      // Every row is in the zip, in its own status's file (statusZip.ts writes one `custom` export each).
      return true;
  }
}

/** Whether an export reads the rows' status (every kind but `all`, which results without validation allow). */
export const exportNeedsStatus = (kind: ExportChoice): boolean => kind !== 'all';
