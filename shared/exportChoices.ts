// What an export may leave out and how it is written: the choices the desktop Export dialog and
// `mailsieve clean --export` share (issue #12: "exports for import"). Pure data, for the renderer too.
import { formatCount } from './count.js';

export const EXPORT_FORMATS = ['csv', 'csv-excel', 'tsv', 'xlsx'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}

export const EXPORT_FORMAT_LABELS: Readonly<Record<ExportFormat, string>> = {
  csv: 'CSV (UTF-8)',
  'csv-excel': 'Excel-friendly CSV (UTF-8 with BOM, CRLF)',
  tsv: 'Tab-separated text',
  xlsx: 'Excel workbook (.xlsx)',
};

export const EXPORT_FORMAT_EXTENSIONS: Readonly<Record<ExportFormat, string>> = {
  csv: '.csv',
  'csv-excel': '.csv',
  tsv: '.tsv',
  xlsx: '.xlsx',
};

export interface ExportChoices {
  /** Remove duplicates (keep the first): same address to mail, ignoring case, after NFC and correction. */
  readonly dedupe: boolean;
  /** Leave out role addresses (`Role Account` true). */
  readonly dropRole: boolean;
  /** Leave out disposable addresses (`Domain Type` disposable). */
  readonly dropDisposable: boolean;
  readonly format: ExportFormat;
}

/** Export kinds that mean "addresses to mail": duplicates are removed from them by default. */
const MAILING_KINDS = new Set(['safe', 'clean']);

/** The choices an export starts with: Remove duplicates checked for clean and safe, the rest unchecked. */
export function defaultExportChoices(kind: string): ExportChoices {
  return { dedupe: MAILING_KINDS.has(kind), dropRole: false, dropDisposable: false, format: 'csv' };
}

/** The column an export adds: the address as the list had it, for rows whose address was corrected. */
export const ORIGINAL_EMAIL_COLUMN = 'Original Email';

/** The key two addresses are the same by: case ignored, after Unicode NFC, white space trimmed. */
export function addressKey(address: string): string {
  return address.trim().normalize('NFC').toLowerCase();
}

/** What an export left out, by reason (a row is counted under the first reason that applies). */
export interface LeftOut {
  readonly duplicates: number;
  readonly role: number;
  readonly disposable: number;
}

/** The choices in words, for the dialog's summary and `clean`'s output: "duplicates removed, role …". */
export function describeLeftOut(leftOut: LeftOut): string {
  const parts: string[] = [];
  if (leftOut.duplicates > 0)
    parts.push(`${formatCount(leftOut.duplicates)} duplicate${leftOut.duplicates === 1 ? '' : 's'}`);
  if (leftOut.role > 0)
    parts.push(`${formatCount(leftOut.role)} role address${leftOut.role === 1 ? '' : 'es'}`);
  if (leftOut.disposable > 0)
    parts.push(
      `${formatCount(leftOut.disposable)} disposable address${leftOut.disposable === 1 ? '' : 'es'}`,
    );
  return parts.length === 0 ? 'nothing left out' : `left out ${parts.join(', ')}`;
}
