// `mailsieve clean`'s export choices (issue #12): --dedupe/--no-dedupe, --drop-role, --drop-disposable,
// --export-format, and --sheet for an .xlsx list (converted to CSV beside the results before upload).
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { EXPORT_FORMATS, isExportFormat, type ExportFormat } from '../../shared/exportChoices.js';
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
