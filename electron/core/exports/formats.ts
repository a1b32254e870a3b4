// Export files in the format asked for: CSV (UTF-8, comma, \n), Excel-friendly CSV (a byte-order mark and
// CRLF, so Excel reads accents right), tab-separated text, or .xlsx (exceljs's streaming writer). The
// exporter (jobs/exports.ts) hands each writer its temporary name and renames it when whole. The same rows
// and choices give the same bytes, whichever front end asked (CLI or desktop).
import { rmSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type ExcelJS from 'exceljs';
import type { ExportFormat } from '../../../shared/exportChoices.js';
import { quoteField } from '../../../service/lists/read/scan.js';
import { BufferedFile } from '../jobs/outputs.js';

export interface RowWriter {
  /** Writes a row of fields; answers a promise only when the write must be waited for. */
  writeRow(fields: readonly string[]): Promise<void> | undefined;
  /**
   * Writes a row of results text as its bytes, `buf[start, end)`, then the fields of `append`, when that
   * gives the bytes `writeRow` would give for its fields; answers false, writing nothing, when it would not.
   * The caller gives only a row of `delimiter` whose fields are quoted exactly where `quoteField`
   * would quote them.
   */
  copyRow?(
    buf: Buffer,
    start: number,
    end: number,
    delimiter: string,
    append: readonly string[],
  ): Promise<boolean> | boolean;
  /**
   * `copyRow`'s rows will come from `buf[0, length)` until `unstage`: the writer may copy those bytes once
   * now and each row from its copy (BufferedFile.stage). NOTE: `buf` must not change until `unstage`.
   */
  stage?(buf: Buffer, length: number): void;
  unstage?(): void;
  /** Finishes the file; answers its size. */
  close(): Promise<{ bytes: number }>;
  /** Removes what was written. */
  abort(): Promise<void>;
}

const TEXT_FORMATS: Record<
  Exclude<ExportFormat, 'xlsx'>,
  { delimiter: string; newline: string; bom: string }
> = {
  csv: { delimiter: ',', newline: '\n', bom: '' },
  'csv-excel': { delimiter: ',', newline: '\r\n', bom: '\uFEFF' },
  tsv: { delimiter: '\t', newline: '\n', bom: '' },
};

class TextRowWriter implements RowWriter {
  private isStarted = false;
  private readonly newline: Buffer;
  constructor(
    private readonly file: BufferedFile,
    private readonly path: string,
    private readonly style: { delimiter: string; newline: string; bom: string },
  ) {
    this.newline = Buffer.from(style.newline);
  }

  private async start(): Promise<void> {
    this.isStarted = true;
    if (this.style.bom) await this.file.writeText(this.style.bom);
  }

  writeRow(fields: readonly string[]): Promise<void> | undefined {
    if (!this.isStarted) return this.start().then(() => this.writeRow(fields));
    const { delimiter, newline } = this.style;
    let line = '';
    for (let i = 0; i < fields.length; i++) line += (i ? delimiter : '') + quoteField(fields[i], delimiter);
    line += newline;
    // (Nearly always room in the buffer: no promise, no await, for each of a list's corrected rows.)
    if (this.file.tryWriteText(line)) return undefined;
    return this.file.writeText(line);
  }

  stage(buf: Buffer, length: number): void {
    this.file.stage(buf, length);
  }

  unstage(): void {
    this.file.unstage();
  }

  copyRow(
    buf: Buffer,
    start: number,
    end: number,
    delimiter: string,
    append: readonly string[],
  ): Promise<boolean> | boolean {
    const own = this.style.delimiter;
    if (!this.isStarted || delimiter !== own) return false;
    let tail = '';
    for (let i = 0; i < append.length; i++) tail += own + quoteField(append[i], own);
    if (tail === own && this.file.tryAppend(buf, start, end, this.withDelimiter)) return true;
    return this.file.append(buf, start, end, EMPTY).then(async () => {
      await this.file.writeText(tail + this.style.newline);
      return true;
    });
  }

  /** The delimiter then the line break: what follows a copied row whose one appended field is empty. */
  private get withDelimiter(): Buffer {
    return (this.delimiterNewline ??= Buffer.concat([Buffer.from(this.style.delimiter), this.newline]));
  }
  private delimiterNewline: Buffer | undefined;

  async close(): Promise<{ bytes: number }> {
    if (!this.isStarted) await this.start();
    await this.file.close();
    return { bytes: statSync(this.path).size };
  }

  async abort(): Promise<void> {
    await this.file.close().catch(() => undefined);
    rmSync(this.path, { force: true });
  }
}

const EMPTY = Buffer.alloc(0);

/** A fixed date for the workbook's properties, so the same export gives the same file. */
const WORKBOOK_DATE = new Date(Date.UTC(2000, 0, 1));

/** Excel's rows per sheet: an .xlsx export longer than that goes on in a next sheet. */
export const XLSX_SHEET_ROWS = 1_048_576;

/**
 * How much of a sheet's XML may wait for the zip's deflate before rows wait for it. exceljs's sheet stream
 * hands its bytes on without asking: a 1,000,000-row export held 300 MB of it.
 */
const MAX_PENDING_XML = 4 * 1024 * 1024;

/** What we read of exceljs's sheet stream: the stream of the zip entry it writes to, once the zip took it. */
interface SheetStream {
  pipes: { _writableState?: { length: number }; once(event: 'drain', listener: () => void): unknown }[];
}

const RESOLVED = Promise.resolve();

class XlsxRowWriter implements RowWriter {
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private sheet: ExcelJS.Worksheet;
  private sheetRows = 0;
  private sheets = 1;
  private header: readonly string[] | undefined;
  constructor(
    excel: typeof ExcelJS,
    private readonly path: string,
    private readonly sheetName: string,
    private readonly rowsPerSheet: number,
  ) {
    this.workbook = new excel.stream.xlsx.WorkbookWriter({
      filename: path,
      useSharedStrings: false,
      useStyles: false,
    });
    this.workbook.creator = 'Mailsieve';
    this.workbook.created = WORKBOOK_DATE;
    this.workbook.modified = WORKBOOK_DATE;
    this.sheet = this.workbook.addWorksheet(sheetNameOf(sheetName));
  }

  writeRow(fields: readonly string[]): Promise<void> {
    // The first row is the header (results always have one); each next sheet starts with it again, as "Name
    // (2)", "Name (3)", …, so every sheet imports on its own.
    if (this.header === undefined) this.header = fields;
    else if (this.sheetRows === this.rowsPerSheet) {
      this.sheet.commit();
      const suffix = ` (${++this.sheets})`;
      this.sheet = this.workbook.addWorksheet(sheetNameOf(this.sheetName, suffix));
      this.sheetRows = 0;
      this.add(this.header);
    }
    this.add(fields);
    // The rows wait while the zip is behind.
    const entry = (this.sheet as unknown as { stream: SheetStream }).stream.pipes[0];
    if ((entry?._writableState?.length ?? 0) <= MAX_PENDING_XML) return RESOLVED;
    return new Promise((resolve) => entry.once('drain', resolve));
  }

  private add(fields: readonly string[]): void {
    // Every value as text: a ZIP code or a phone number keeps its leading zeros. A line break inside a cell
    // is \n, as Excel keeps it (XML reads a bare \r as \n anyway).
    this.sheet.addRow(fields.map((field) => field.replace(/\r\n?/g, '\n'))).commit();
    this.sheetRows++;
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

/** Excel limits a sheet's name to 31 characters without []:*?/\ ; `suffix` is kept whole. */
function sheetNameOf(name: string, suffix = ''): string {
  return (name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31 - suffix.length) || 'Sheet1') + suffix;
}

/**
 * Opens a file at `path` for rows. `sheetName`: the .xlsx sheet's name (default: the file's stem). exceljs is
 * loaded only for an .xlsx export (it takes a good part of a second to load).
 */
export async function openRowWriter(
  path: string,
  format: ExportFormat,
  sheetName?: string,
  rowsPerSheet = XLSX_SHEET_ROWS,
): Promise<RowWriter> {
  if (format === 'xlsx') {
    const excel = (await import('exceljs')).default;
    return new XlsxRowWriter(excel, path, sheetName ?? basename(path).replace(/\.[^.]+$/, ''), rowsPerSheet);
  }
  return new TextRowWriter(await BufferedFile.create(path, 0o600), path, TEXT_FORMATS[format]);
}
