// .xlsx lists: one sheet read with exceljs's streaming sheet reader and turned into CSV text (UTF-8, comma, \n)
// on the user's machine, so the column mapper, the pre-check and the upload read it as any CSV list.
// The first sheet unless one is named (`--sheet NAME`, or the mapper's sheet picker).
import { createWriteStream, renameSync, rmSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type ExcelJS from 'exceljs';
import yauzl from 'yauzl';
import { quoteField } from '../../../service/lists/scan.js';

export class SheetProblem extends Error {
  readonly code = 'file-unreadable';
}

/** Rows of CSV produced per chunk of text. */
const ROWS_PER_CHUNK = 2000;

type CellValue = ExcelJS.CellValue;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A cell's value as the text a CSV export of the sheet would hold. */
export function cellText(value: CellValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) {
    // Spreadsheet dates carry no zone: exceljs reads them as UTC.
    const date = `${value.getUTCFullYear()}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())}`;
    const seconds = value.getUTCHours() * 3600 + value.getUTCMinutes() * 60 + value.getUTCSeconds();
    return seconds === 0
      ? date
      : `${date} ${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())}`;
  }
  if (typeof value === 'object') {
    if ('richText' in value) return value.richText.map((part) => part.text).join('');
    if ('hyperlink' in value) return cellText(value.text);
    if ('formula' in value || 'sharedFormula' in value)
      return cellText((value as { result?: CellValue }).result ?? null);
    if ('error' in value) return String(value.error);
  }
  return '';
}

/** What of exceljs's streaming WorkbookReader we drive ourselves (its parts, fed by our own zip reading). */
interface ReaderParts {
  workbookRels?: { Id: string; Target: string }[];
  model?: { sheets?: { id: number; name: string; rId: string; state?: string }[] };
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncGenerator<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(iterator: AsyncIterable<unknown>, sheetNo: string): Generator<{ value: Worksheet }>;
}

/** One sheet as exceljs's streaming WorksheetReader: its name, and its rows as they are read. */
type Worksheet = AsyncIterable<ExcelJS.Row> & { name: string };

/** A workbook part's declared size beyond this is refused (a sheet of 1,048,576 rows is far below it). */
const MAX_PART_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * The worksheets of a workbook in the workbook's own order (its tabs), each read row by row by exceljs's
 * streaming WorksheetReader; exceljs is loaded on first use (it takes a good part of a second).
 *
 * The archive is read through its central directory with yauzl, the workbook's parts (relationships,
 * workbook, shared strings, styles) before any sheet. exceljs's own single streaming pass (unzipper) loses
 * entries at random: it pauses an entry stream that keeps going, and the workbook part, which exceljs
 * writes last, goes missing, so a sound file reads as "Cannot read properties of undefined (reading
 * 'sheets')" now and then (exceljs issue 3064).
 */
async function* worksheets(path: string): AsyncGenerator<Worksheet> {
  const excel = (await import('exceljs')).default;
  const reader = new excel.stream.xlsx.WorkbookReader(path, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    // Styles tell dates from numbers.
    styles: 'cache',
    hyperlinks: 'ignore',
    entries: 'ignore',
  }) as unknown as ReaderParts;
  const zip = await yauzl.openPromise(path, { autoClose: false, validateEntrySizes: true });
  let open: Readable | undefined;
  try {
    const parts = new Map<string, yauzl.Entry>();
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        parts.set(entry.fileName, entry);
        zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', reject);
      zip.readEntry();
    });
    const read = async (name: string): Promise<Readable | undefined> => {
      const entry = parts.get(name);
      if (!entry) return undefined;
      if (entry.uncompressedSize > MAX_PART_BYTES)
        throw new Error(`its part ${name} expands to more than ${MAX_PART_BYTES / 2 ** 30} GiB`);
      open = await zip.openReadStreamPromise(entry);
      // Text, decoded across chunk boundaries: exceljs decodes each chunk alone, which turns a character
      // split between two chunks into two U+FFFD.
      return open.setEncoding('utf8');
    };
    const rels = await read('xl/_rels/workbook.xml.rels');
    if (rels) await reader._parseRels(rels);
    const book = await read('xl/workbook.xml');
    if (!book) throw new Error('it has no xl/workbook.xml part');
    await reader._parseWorkbook(book);
    const strings = await read('xl/sharedStrings.xml');
    if (strings) for await (const event of reader._parseSharedStrings(strings)) void event;
    const styles = await read('xl/styles.xml');
    if (styles) await reader._parseStyles(styles);

    // The workbook's sheets in its order, each at the part its relationship names.
    const targets = new Map((reader.workbookRels ?? []).map((rel) => [rel.Id, rel.Target]));
    for (const sheet of reader.model?.sheets ?? []) {
      const target = targets.get(sheet.rId) ?? '';
      const part = target.startsWith('/') ? target.slice(1) : `xl/${target}`;
      const number = /^xl\/worksheets\/sheet(\d+)\.xml$/.exec(part)?.[1];
      // Chart sheets hold no rows.
      if (number === undefined) continue;
      const stream = await read(part);
      if (!stream) throw new Error(`its sheet “${sheet.name}” has no part ${part}`);
      for (const { value } of reader._parseWorksheet(stream, number)) {
        value.name = sheet.name;
        yield value;
      }
      // The caller moved on without reading the whole sheet.
      stream.destroy();
    }
  } finally {
    open?.destroy();
    zip.close();
  }
}

function wrap(error: unknown, name: string): SheetProblem {
  if (error instanceof SheetProblem) return error;
  return new SheetProblem(`“${name}” is not a readable .xlsx workbook (${(error as Error).message}).`);
}

/** The names of a workbook's sheets, in order. */
export async function sheetNames(path: string, name = path): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const sheet of worksheets(path)) {
      names.push(sheet.name);
      // Drain the sheet: the reader moves on only when it is read.
      for await (const row of sheet) void row;
    }
  } catch (error) {
    throw wrap(error, name);
  }
  return names;
}

/**
 * CSV text of one sheet (the first when `sheet` is undefined), chunk by chunk. Rows keep their place: an
 * empty row inside the sheet becomes an empty line (the mapper skips blank rows as in any CSV); columns run
 * to the widest row seen so far.
 */
export async function* sheetCsv(path: string, sheet?: string, name = path): AsyncGenerator<string> {
  let found = false;
  const seen: string[] = [];
  try {
    for await (const worksheet of worksheets(path)) {
      const sheetName = worksheet.name;
      seen.push(sheetName);
      const isChosen = !found && (sheet === undefined || sheetName === sheet);
      if (!isChosen) {
        for await (const row of worksheet) void row;
        continue;
      }
      found = true;
      let text = '';
      let rowsInChunk = 0;
      let lastRow = 0;
      let width = 0;
      for await (const row of worksheet) {
        // Rows missing from the sheet's XML are empty rows.
        for (let gap = lastRow + 1; gap < row.number; gap++) text += '\n';
        lastRow = row.number;
        const values = row.values as CellValue[];
        const cells: string[] = [];
        width = Math.max(width, values.length - 1);
        for (let c = 1; c <= width; c++) cells.push(quoteField(cellText(values[c]), ','));
        text += cells.join(',') + '\n';
        if (++rowsInChunk >= ROWS_PER_CHUNK) {
          yield text;
          text = '';
          rowsInChunk = 0;
        }
      }
      if (text) yield text;
    }
  } catch (error) {
    throw wrap(error, name);
  }
  if (!found)
    throw new SheetProblem(
      sheet === undefined
        ? `“${name}” has no sheet.`
        : `“${name}” has no sheet named “${sheet}”${seen.length ? ` (its sheets: ${seen.map((s) => `“${s}”`).join(', ')})` : ''}.`,
    );
}

/** The CSV of a sheet as a byte stream (UTF-8). */
export function sheetCsvStream(path: string, sheet?: string, name = path): Readable {
  return Readable.from(
    (async function* () {
      for await (const text of sheetCsv(path, sheet, name)) yield Buffer.from(text, 'utf8');
    })(),
  );
}

/** Writes a sheet as a CSV file (via a temporary name; the file appears whole). Answers its size in bytes. */
export async function convertSheetToCsv(
  path: string,
  destination: string,
  sheet?: string,
  name = path,
): Promise<number> {
  const temporary = `${destination}.${process.pid}.tmp`;
  try {
    await pipeline(sheetCsvStream(path, sheet, name), createWriteStream(temporary, { mode: 0o600 }));
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  renameSync(temporary, destination);
  return statSync(destination).size;
}
