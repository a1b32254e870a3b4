// `mailsieve clean`'s export choices (issue #12): --dedupe/--no-dedupe, --drop-role, --drop-disposable,
// --export-format, and --sheet for an .xlsx list (converted to CSV beside the results before upload).
import { mkdirSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import {
  EXPORT_FORMATS,
  defaultExportChoices,
  isExportFormat,
  type ExportFormat,
  type LeftOut,
} from '../../shared/exportChoices.js';
import { STATUS_ZIP } from '../../shared/exports.js';
import { outputNameFor } from '../../shared/fileName.js';
import type { ListResource } from '../../shared/api/list.js';
import { matchReportsOf } from '../../shared/desktop/listServices.js';
import { REPORT_CSVS, REPORT_CSV_OF, type ReportCsv } from '../../shared/reportCsv.js';
import { writeStatusZip } from '../core/exports/statusZip.js';
import { writeFileWhole } from '../core/jobs/outputs.js';
import { exportFileName } from '../core/jobs/exports.js';
import type { ExportShape } from '../core/jobs/runner.js';
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
