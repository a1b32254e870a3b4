// .xlsx lists: one sheet read with exceljs's streaming sheet reader and turned into CSV text (UTF-8, comma, \n)
// on the user's machine, so the column mapper, the pre-check and the upload read it as any CSV list.
// The first visible sheet unless one is named (`--sheet NAME`, or the mapper's sheet picker).
import { formatBytes } from '../../../shared/bytes.js';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  createWriteStream,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname, posix } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type ExcelJS from 'exceljs';
import yauzl from 'yauzl';
import { quoteField } from '../../../service/lists/read/scan.js';

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
  _parseWorksheet(
    iterator: AsyncIterable<unknown>,
    sheetNo: string,
  ): Generator<{ value: AsyncIterable<ExcelJS.Row> }>;
}

/** A workbook part's declared size beyond this is refused (a sheet of 1,048,576 rows is far below it). */
const MAX_PART_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * A Microsoft compound file (its magic number D0 CF 11 E0): what Excel writes for an .xlsx saved with a
 * password (the workbook is encrypted inside it) and for the older .xls format, either renamed .xlsx.
 */
function isCompoundFile(path: string): boolean {
  const head = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  return head.readUInt32BE(0) === 0xd0cf11e0;
}

/** A workbook's archive, opened: its sheets in tab order, and its parts to read. */
interface OpenWorkbook {
  readonly reader: ReaderParts;
  /** The worksheets in the workbook's order (its tabs; hidden ones last), each with the part that holds it. */
  readonly sheets: readonly { name: string; part: string }[];
  /** A part as text, or undefined when the archive has no such part. */
  readonly read: (part: string) => Promise<Readable | undefined>;
  readonly close: () => void;
}

/**
 * Opens a workbook and reads its relationships and its workbook part, which name its sheets; exceljs is
 * loaded on first use (it takes a good part of a second).
 *
 * The archive is read through its central directory with yauzl, each part when it is wanted. exceljs's own
 * reader makes a single streaming pass (unzipper) that loses parts at random: it pauses an entry stream that
 * keeps going, and the workbook part, which exceljs writes last, goes missing, so a sound file reads as
 * "Cannot read properties of undefined (reading 'sheets')" now and then (exceljs issue 3064).
 */
async function openWorkbook(path: string): Promise<OpenWorkbook> {
  if (isCompoundFile(path))
    throw new Error(
      'it is protected by a password, or an older .xls workbook: save it from Excel as an .xlsx workbook without a password',
    );
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
  const opened: Readable[] = [];
  const close = () => {
    for (const stream of opened) stream.destroy();
    zip.close();
  };
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
    const read = async (part: string): Promise<Readable | undefined> => {
      const entry = parts.get(part);
      if (!entry) return undefined;
      if (entry.uncompressedSize > MAX_PART_BYTES)
        throw new Error(`its part ${part} expands to more than ${formatBytes(MAX_PART_BYTES)}`);
      const stream = await zip.openReadStreamPromise(entry);
      opened.push(stream);
      // Text, decoded across chunk boundaries: exceljs decodes each chunk alone, which turns a character
      // split between two chunks into two U+FFFD.
      return stream.setEncoding('utf8');
    };
    const rels = await read('xl/_rels/workbook.xml.rels');
    if (rels) await reader._parseRels(rels);
    const book = await read('xl/workbook.xml');
    if (!book) throw new Error('it has no xl/workbook.xml part');
    await reader._parseWorkbook(book);
    // Each sheet at the part its relationship names; chart sheets, which hold no rows, are left out. Hidden
    // sheets come after the visible ones, so the first sheet is the first tab a user sees.
    const targets = new Map((reader.workbookRels ?? []).map((rel) => [rel.Id, rel.Target]));
    const sheets = (reader.model?.sheets ?? []).flatMap(({ name, rId, state }) => {
      const target = targets.get(rId) ?? '';
      const part = posix.normalize(target.startsWith('/') ? target.slice(1) : `xl/${target}`);
      return part.startsWith('xl/worksheets/')
        ? [{ name, part, isHidden: (state ?? 'visible') !== 'visible' }]
        : [];
    });
    sheets.sort((a, b) => Number(a.isHidden) - Number(b.isHidden));
    return { reader, sheets, read, close };
  } catch (error) {
    close();
    throw error;
  }
}

/**
 * The rows of one sheet (the first when `sheet` is undefined), read one by one by exceljs's streaming sheet
 * reader after the shared strings and styles; the other sheets are not read at all.
 */
async function* sheetRows(
  path: string,
  sheet: string | undefined,
  name: string,
): AsyncGenerator<ExcelJS.Row> {
  const workbook = await openWorkbook(path);
  const { reader, read, sheets } = workbook;
  try {
    const index = sheet === undefined ? 0 : sheets.findIndex((s) => s.name === sheet);
    const chosen = sheets[index];
    if (!chosen)
      throw new SheetProblem(
        sheet === undefined
          ? `“${name}” has no sheet.`
          : `“${name}” has no sheet named “${sheet}”${sheets.length ? ` (its sheets: ${sheets.map((s) => `“${s.name}”`).join(', ')})` : ''}.`,
      );
    const strings = await read('xl/sharedStrings.xml');
    if (strings) for await (const event of reader._parseSharedStrings(strings)) void event;
    const styles = await read('xl/styles.xml');
    if (styles) await reader._parseStyles(styles);
    const stream = await read(chosen.part);
    if (!stream) throw new Error(`its sheet “${chosen.name}” has no part ${chosen.part}`);
    for (const { value } of reader._parseWorksheet(stream, String(index + 1))) yield* value;
  } finally {
    workbook.close();
  }
}

function wrap(error: unknown, name: string): SheetProblem {
  if (error instanceof SheetProblem) return error;
  return new SheetProblem(`“${name}” is not a readable .xlsx workbook (${(error as Error).message}).`);
}

/** The names of a workbook's sheets, in tab order (read from the workbook part alone, not the sheets). */
export async function sheetNames(path: string, name = path): Promise<string[]> {
  try {
    const workbook = await openWorkbook(path);
    workbook.close();
    return workbook.sheets.map((sheet) => sheet.name);
  } catch (error) {
    throw wrap(error, name);
  }
}

/**
 * CSV text of one sheet (the first when `sheet` is undefined), chunk by chunk. Rows keep their place: an
 * empty row inside the sheet becomes an empty line (the mapper skips blank rows as in any CSV); columns run
 * to the widest row seen so far.
 */
export async function* sheetCsv(path: string, sheet?: string, name = path): AsyncGenerator<string> {
  let text = '';
  let rowsInChunk = 0;
  let lastRow = 0;
  let width = 0;
  try {
    for await (const row of sheetRows(path, sheet, name)) {
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
  } catch (error) {
    throw wrap(error, name);
  }
  if (text) yield text;
}

/**
 * The CSV of a sheet as a byte stream (UTF-8). `copyTo`: where to keep the CSV once the stream has been read
 * to its end (written under a temporary name meanwhile; a read stopped early, or a copy that cannot be
 * written, leaves none and costs the reader nothing).
 */
export function sheetCsvStream(path: string, sheet?: string, name = path, copyTo?: string): Readable {
  return Readable.from(
    (async function* () {
      const temporary = copyTo && `${copyTo}.${process.pid}-${randomUUID()}.tmp`;
      let copy: FileHandle | undefined;
      if (temporary) {
        try {
          mkdirSync(dirname(temporary), { recursive: true, mode: 0o700 });
          copy = await open(temporary, 'w', 0o600);
        } catch {
          copy = undefined;
        }
      }
      let isWhole = false;
      try {
        for await (const text of sheetCsv(path, sheet, name)) {
          const bytes = Buffer.from(text, 'utf8');
          if (copy)
            await copy.write(bytes).catch(async () => {
              await copy?.close().catch(() => undefined);
              copy = undefined;
            });
          yield bytes;
        }
        isWhole = true;
      } finally {
        if (copy && temporary) {
          const closed = await copy.close().then(
            () => true,
            () => false,
          );
          try {
            if (isWhole && closed) renameSync(temporary, copyTo);
          } catch {
            // No copy: the next read converts the sheet again.
          }
        }
        if (temporary) rmSync(temporary, { force: true });
      }
    })(),
    // Convert no further ahead than a chunk: a sample reads the start only.
    { highWaterMark: 1 },
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
