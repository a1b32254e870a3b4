// `mailsieve clean`'s export choices (issue #12): --dedupe/--no-dedupe, --drop-role, --drop-disposable,
// --export-format, and --sheet for an .xlsx list (converted to CSV beside the results before upload); and
// --max-bounce-rate (issue 37), the safe and clean exports planned against a bounce budget.
import { mkdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { isBudgetExportKind, type BudgetOutcome } from '../../shared/outcomes.js';
import { homeHistory } from './outcomes.js';
import { measuredRisks } from '../core/outcomes/store.js';
import { exportWithBudget, type MeasuredRisks } from '../core/jobs/budget.js';
import { openListSource } from '../core/files/source.js';
import {
  EXPORT_FORMATS,
  defaultExportChoices,
  isExportFormat,
  type ExportFormat,
  type LeftOut,
} from '../../shared/exportChoices.js';
import { STATUS_ZIP, type ExportKind } from '../../shared/exports.js';
import { outputNameFor } from '../../shared/fileName.js';
import type { ListResource } from '../../shared/api/list.js';
import { matchReportsOf } from '../../shared/desktop/listServices.js';
import { REPORT_CSVS, REPORT_CSV_OF, type ReportCsv } from '../../shared/reportCsv.js';
import { writeStatusZip } from '../core/exports/statusZip.js';
import { writeFileWhole } from '../core/jobs/outputs.js';
import { exportFileName } from '../core/jobs/exports.js';
import { exportsOf, type ExportShape } from '../core/jobs/runner.js';
import { convertSheetToCsv, SheetProblem } from '../core/files/xlsx.js';
import { CliError } from './errors.js';

export interface ExportCliOptions {
  /** Commander's --dedupe / --no-dedupe: undefined when neither was given (each kind's default). */
  dedupe?: boolean;
  dropRole?: boolean;
  dropDisposable?: boolean;
  exportFormat?: string;
  sheet?: string;
  /** --report-csv: the spec's match report and chart data CSVs beside the results. */
  reportCsv?: boolean;
  /** --max-bounce-rate: keep the safe and clean exports' expected bounce rate under this percent. */
  maxBounceRate?: string;
}

export function exportFormatOption(raw: string | undefined): ExportFormat {
  if (raw === undefined) return 'csv';
  if (!isExportFormat(raw))
    throw new CliError(`--export-format takes ${EXPORT_FORMATS.join(', ')}; got '${raw}'.`);
  return raw;
}

/** Whether any export choice was given on the command line. */
export function hasExportChoices(options: ExportCliOptions): boolean {
  return (
    options.dedupe !== undefined ||
    options.dropRole === true ||
    options.dropDisposable === true ||
    options.exportFormat !== undefined
  );
}

/** The shape of `clean`'s exports, given the list's email column (1-based). */
export function exportShapeOf(options: ExportCliOptions, emailColumn: number): ExportShape {
  return {
    isAllShaped: hasExportChoices(options),
    ...(options.dedupe !== undefined ? { dedupe: options.dedupe } : {}),
    dropRole: options.dropRole === true,
    dropDisposable: options.dropDisposable === true,
    format: exportFormatOption(options.exportFormat),
    emailIndex: emailColumn - 1,
  };
}

/**
 * An .xlsx list as the CSV `clean` uploads: the sheet (the first, or --sheet) converted into `outDir` as
 * `<name>.csv`. Answers the CSV's path.
 */
export async function xlsxAsCsv(path: string, outDir: string, sheet: string | undefined): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  const csv = join(outDir, basename(path).replace(/\.xlsx$/i, '.csv'));
  try {
    await convertSheetToCsv(path, csv, sheet, basename(path));
  } catch (error) {
    if (error instanceof SheetProblem) throw new CliError(error.message);
    throw error;
  }
  return csv;
}

/** `--export` split: the kinds (runner.ts writes them as the results arrive) and whether `zip` was asked. */
export function statusZipOption(raw: readonly string[] = []): { kinds: string[]; isZip: boolean } {
  return { kinds: raw.filter((kind) => kind !== STATUS_ZIP), isZip: raw.includes(STATUS_ZIP) };
}

/**
 * `clean --export zip`: the zip of every status (exports/statusZip.ts, the exporter the desktop's dialog
 * uses), `<out>/<list>-statuses.zip`, each file shaped with the command's choices (Remove duplicates off
 * unless --dedupe). Answers it as `clean` lists its exports, with what the choices left out.
 */
export async function writeCleanStatusZip(
  results: { readonly path: string; readonly delimiter: string },
  list: { readonly file: string; readonly outDir: string; readonly emailColumn: number },
  options: ExportCliOptions,
): Promise<{ kind: string; path: string; rows: number; leftOut: LeftOut }> {
  const name = outputNameFor(basename(list.file));
  const stem = basename(name, extname(name));
  const path = join(list.outDir, exportFileName(stem, 'statuses', '.zip'));
  const zip = await writeStatusZip(
    { path: results.path, name: basename(results.path), delimiter: results.delimiter },
    {
      destination: path,
      choices: {
        ...defaultExportChoices(STATUS_ZIP),
        ...(options.dedupe !== undefined ? { dedupe: options.dedupe } : {}),
        dropRole: options.dropRole === true,
        dropDisposable: options.dropDisposable === true,
        format: exportFormatOption(options.exportFormat),
      },
      emailIndex: list.emailColumn - 1,
      stem,
    },
  );
  const leftOut = { duplicates: 0, role: 0, disposable: 0 };
  for (const file of zip.files) {
    leftOut.duplicates += file.leftOut.duplicates;
    leftOut.role += file.leftOut.role;
    leftOut.disposable += file.leftOut.disposable;
  }
  return { kind: STATUS_ZIP, path, rows: zip.files.reduce((n, file) => n + file.rows, 0), leftOut };
}

/**
 * `clean --report-csv`: the spec's match report and chart data CSVs (shared/reportCsv.ts, as the desktop's
 * Summary saves them), `<out>/<list>-match-report.csv` and `<out>/<list>-chart-data.csv`, each written whole.
 */
export function writeReportCsvs(
  list: ListResource,
  duplicates: number | null,
  where: { readonly file: string; readonly outDir: string },
): { kind: ReportCsv; path: string; rows: number }[] {
  const name = outputNameFor(basename(where.file));
  const stem = basename(name, extname(name));
  const counts = {
    records: list.records,
    validation: list.services.email_validation?.reporting ?? null,
    duplicates,
    matchReports: matchReportsOf(list),
  };
  return REPORT_CSVS.map((kind) => {
    const path = join(where.outDir, exportFileName(stem, kind, '.csv'));
    const text = REPORT_CSV_OF[kind](counts);
    writeFileWhole(path, text);
    return { kind, path, rows: text.split('\n').length - 2 };
  });
}

/**
 * `--max-bounce-rate`: a percent from 0 to 100, given with `--export safe` or `--export clean` (the exports
 * that start from the rows judged safe). Undefined when not given.
 */
export function maxBounceRateOption(raw: string | undefined, kinds: readonly string[]): number | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || value > 100)
    throw new CliError(`--max-bounce-rate takes a percent from 0 to 100; got '${raw}'.`);
  if (!kinds.some(isBudgetExportKind))
    throw new CliError(
      '--max-bounce-rate goes with --export safe or --export clean: it plans those exports.',
    );
  return value;
}

/**
 * This user's measured bounce risks: the campaign outcomes kept in the app home's history (`mailsieve
 * outcomes import`, the app's Campaign results). No history yet: none, and the stated defaults apply.
 */
export function homeMeasuredRisks(): MeasuredRisks {
  const history = homeHistory();
  if (!history) return new Map();
  try {
    return measuredRisks(history.db);
  } finally {
    history.db.close();
  }
}

/** An export `clean` wrote against a bounce budget, as it lists its exports. */
export interface BudgetExportFile {
  readonly kind: string;
  readonly path: string;
  readonly rows: number;
  readonly leftOut?: LeftOut;
  readonly budget: BudgetOutcome;
}

/**
 * `clean --export safe --max-bounce-rate X`: the kinds planned against the budget, from the results file
 * (jobs/budget.ts: two passes, the one exporter), named and shaped as the other exports of the command.
 */
export async function writeCleanBudgetExports(
  results: { readonly path: string; readonly name: string; readonly delimiter: string },
  list: { readonly file: string; readonly outDir: string; readonly shape: ExportShape | undefined },
  kinds: readonly ExportKind[],
  maxRatePercent: number,
): Promise<BudgetExportFile[]> {
  const measured = homeMeasuredRisks();
  // The results' text extension, as the exports written during the download take it (a zip's: its text's).
  const source = await openListSource(results.path, results.name, statSync(results.path).size);
  const requests = exportsOf(list.outDir, list.file, kinds, list.shape)(extname(source.textName) || '.csv');
  const written: BudgetExportFile[] = [];
  for (const request of requests) {
    const { summary, budget } = await exportWithBudget(results, request, maxRatePercent, measured);
    const leftOut = summary.leftOut?.[request.name];
    written.push({
      kind: request.name,
      path: request.path,
      rows: summary.exported[request.name] ?? 0,
      ...(leftOut ? { leftOut } : {}),
      budget,
    });
  }
  return written;
}
