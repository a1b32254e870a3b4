// Export files in the format asked for: CSV (UTF-8, comma, \n), Excel-friendly CSV (a byte-order mark and
// CRLF, so Excel reads accents right), tab-separated text, or .xlsx (exceljs's streaming writer). The
// exporter (jobs/exports.ts) hands each writer its temporary name and renames it when whole. The same rows
// and choices give the same bytes, whichever front end asked (CLI or desktop).
import { createWriteStream, rmSync, statSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { basename } from 'node:path';
import ExcelJS from 'exceljs';
import type { ExportFormat } from '../../../shared/exportChoices.js';

export interface RowWriter {
  writeRow(fields: readonly string[]): Promise<void>;
  /** Finishes the file; answers its size. */
  close(): Promise<{ bytes: number }>;
  /** Removes what was written. */
  abort(): Promise<void>;
}

/** A field quoted for delimited text when it holds the delimiter, a quote or a line break. */
export function delimitedField(value: string, delimiter: string): string {
  return value.includes(delimiter) || value.includes('"') || value.includes('\n') || value.includes('\r')
    ? `"${value.replaceAll('"', '""')}"`
    : value;
}

const TEXT_FORMATS: Record<
  Exclude<ExportFormat, 'xlsx'>,
  { delimiter: string; newline: string; bom: string }
> = {
  csv: { delimiter: ',', newline: '\n', bom: '' },
  'csv-excel': { delimiter: ',', newline: '\r\n', bom: '\uFEFF' },
  tsv: { delimiter: '\t', newline: '\n', bom: '' },
};

/** Text chunks written at about this size. */
const CHUNK_CHARS = 256 * 1024;

class TextRowWriter implements RowWriter {
  private pending: string;
  constructor(
    private readonly out: WriteStream,
    private readonly path: string,
    private readonly style: { delimiter: string; newline: string; bom: string },
  ) {
    this.pending = style.bom;
  }

  async writeRow(fields: readonly string[]): Promise<void> {
    const { delimiter, newline } = this.style;
    let line = '';
    for (let i = 0; i < fields.length; i++)
      line += (i ? delimiter : '') + delimitedField(fields[i], delimiter);
    this.pending += line + newline;
    if (this.pending.length >= CHUNK_CHARS) {
      const chunk = this.pending;
      this.pending = '';
      if (!this.out.write(chunk)) await once(this.out, 'drain');
    }
  }

  async close(): Promise<{ bytes: number }> {
    if (this.pending) this.out.write(this.pending);
    this.pending = '';
    this.out.end();
    await once(this.out, 'finish');
    return { bytes: statSync(this.path).size };
  }

  abort(): Promise<void> {
    this.out.destroy();
    rmSync(this.path, { force: true });
    return Promise.resolve();
  }
}

/** A fixed date for the workbook's properties, so the same export gives the same file. */
const WORKBOOK_DATE = new Date(Date.UTC(2000, 0, 1));

class XlsxRowWriter implements RowWriter {
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private readonly sheet: ExcelJS.Worksheet;
  constructor(
    private readonly path: string,
    sheetName: string,
  ) {
    this.workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
      filename: path,
      useSharedStrings: false,
      useStyles: false,
    });
    this.workbook.creator = 'Mailsieve';
    this.workbook.created = WORKBOOK_DATE;
    this.workbook.modified = WORKBOOK_DATE;
    this.sheet = this.workbook.addWorksheet(sheetName);
  }

  writeRow(fields: readonly string[]): Promise<void> {
    // Every value as text: a ZIP code or a phone number keeps its leading zeros. A line break inside a cell
    // is \n, as Excel keeps it (XML reads a bare \r as \n anyway).
    this.sheet.addRow(fields.map((field) => field.replace(/\r\n?/g, '\n'))).commit();
    return Promise.resolve();
  }

  async close(): Promise<{ bytes: number }> {
    this.sheet.commit();
    await this.workbook.commit();
    return { bytes: statSync(this.path).size };
  }

  abort(): Promise<void> {
    rmSync(this.path, { force: true });
    return Promise.resolve();
  }
}

/** Excel limits a sheet's name to 31 characters without []:*?/\ . */
function sheetNameOf(name: string): string {
  return name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31) || 'Sheet1';
}

/** Opens a file at `path` for rows. `sheetName`: the .xlsx sheet's name (default: the file's stem). */
export function openRowWriter(path: string, format: ExportFormat, sheetName?: string): RowWriter {
  if (format === 'xlsx')
    return new XlsxRowWriter(path, sheetNameOf(sheetName ?? basename(path).replace(/\.[^.]+$/, '')));
  return new TextRowWriter(createWriteStream(path, { mode: 0o600 }), path, TEXT_FORMATS[format]);
}
