// A job's downloaded results file, read offline: the Results screen's numbers (counted once, stored with the
// job: history/counts.ts) and its drill-down (the rows of a status, code, domain type, role accounts or
// duplicates, a page at a time). Exports are the exporter's (jobs/exports.ts); the headline's Ready to mail is
// counted by the exporter's own rule for the default export, so the two cannot disagree.
//
// Rows are found by the list row scanner (service/lists/read/scan.ts: quoted line breaks included) over a
// stream of the results' text, so a 1,000,000-row file is read with bounded memory. A drill-down keeps an
// index of the matching rows' byte offsets (8 bytes a row) and reads a page by seeking to them; a zipped
// results file cannot seek, so its pages are read by scanning again.
import { formatBytes } from '../../../shared/bytes.js';
import { closeSync, createReadStream, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import {
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
  SCAN_ROW,
  detectLineBreak,
} from '../../../service/lists/read/scan.js';
import {
  DUPLICATE_COLUMN,
  STATUS_COLUMN,
  columnIndex,
  counterOf,
  ruleOf,
  type ExportSpec,
  type ResultRow,
} from '../jobs/exports.js';
import type { ResultsCounts } from '../jobs/counts.js';
import { MAX_ROW_BYTES, ResultsProblem } from '../jobs/rowFramer.js';
import { formatOf, openListSource } from '../files/source.js';
import { keyHashOf } from '../exports/shape.js';
import {
  blocksOfRow,
  isGzipAt,
  leadingNumber,
  readBlock,
  readBlocks,
  RowSplitter,
  type EvidenceBlocks,
} from './evidenceFile.js';

/** A data row as the scan hands it: valid only during the visit. */
export interface ScannedRow {
  /** 1-based, blank lines not counted (the service's row numbers: explain.csv's `Row`). */
  readonly number: number;
  /** Byte offset of the row in the results' text. */
  readonly offset: number;
  readonly fieldCount: number;
  field(index: number): string;
  fields(): string[];
  /** The row's bytes as in the text, without its line break. */
  bytes(): Buffer;
}

function decode(scanner: RowScanner, buf: Buffer, f: number): string {
  const text = buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]);
  return scanner.fieldQuoted[f] ? text.replaceAll('""', '"') : text;
}

class ScannedRowView implements ScannedRow {
  number = 0;
  offset = 0;
  start = 0;
  end = 0;
  buf: Buffer = Buffer.alloc(0);
  constructor(private readonly scanner: RowScanner) {}
  get fieldCount(): number {
    return this.scanner.fields;
  }
  field(index: number): string {
    return index >= 0 && index < this.scanner.fields ? decode(this.scanner, this.buf, index) : '';
  }
  fields(): string[] {
    const out: string[] = [];
    for (let f = 0; f < this.scanner.fields; f++) out.push(decode(this.scanner, this.buf, f));
    return out;
  }
  bytes(): Buffer {
    return this.buf.subarray(this.start, this.end);
  }
}

function scanFailure(): ResultsProblem {
  return new ResultsProblem('The results file is not well-formed delimited text.');
}

/**
 * Finds the rows of delimited text handed in pieces (`take`): the header to `onHeader` (unless the text has
 * none), then each data row to `visit` (return false to stop early). Shared by files, streams and a kept
 * evidence file's blocks.
 */
class TextScan {
  private scanner: RowScanner | undefined;
  private view: ScannedRowView | undefined;
  private isHeaderDone: boolean;
  private number = 0;
  /** Text offset of the next buffer handed in (the caller's). */
  base = 0;
  isStopped = false;

  constructor(
    private readonly delimiter: string,
    private readonly onHeader: ((names: string[]) => void) | undefined,
    private readonly visit: (row: ScannedRow) => boolean | void,
    /** The line breaks, when known; else told from the first piece. */
    private readonly lineBreak?: ReturnType<typeof detectLineBreak>['mode'],
  ) {
    this.isHeaderDone = onHeader === undefined;
  }

  get isStarted(): boolean {
    return this.scanner !== undefined;
  }

  /** Scans `buf` (from its offset `this.base`); answers how many bytes were used (a row cut short waits). */
  take(buf: Buffer, isLast: boolean): number {
    let pos = 0;
    if (!this.scanner) {
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) pos = 3;
      this.scanner = new RowScanner(
        Buffer.from(this.delimiter, 'utf8'),
        this.lineBreak ?? detectLineBreak(buf.subarray(pos)).mode,
      );
      this.view = new ScannedRowView(this.scanner);
    }
    const scanner = this.scanner;
    const view = this.view!;
    scanner.windowChanged();
    view.buf = buf;
    for (;;) {
      const result = scanner.scan(buf, pos, buf.length, isLast);
      if (result === SCAN_END || result === SCAN_NEED_MORE) break;
      if (result === SCAN_ERROR) throw scanFailure();
      const start = scanner.start;
      const isBlank = scanner.fields === 1 && scanner.contentEnd === start;
      pos = scanner.next;
      if (isBlank) continue;
      if (!this.isHeaderDone) {
        this.isHeaderDone = true;
        const names: string[] = [];
        for (let f = 0; f < scanner.fields; f++) names.push(decode(scanner, buf, f));
        this.onHeader!(names);
        continue;
      }
      view.number = ++this.number;
      view.offset = this.base + start;
      view.start = start;
      view.end = scanner.contentEnd;
      if (this.visit(view) === false) {
        this.isStopped = true;
        return pos;
      }
    }
    return pos;
  }
}

/**
 * Streams the rows of delimited text: `onHeader` with its header, then `visit` for each data row (return false
 * to stop early). The stream is destroyed at the end.
 */
export async function scanText(
  stream: AsyncIterable<Buffer> & { destroy?: () => void },
  delimiter: string,
  onHeader: (names: string[]) => void,
  visit: (row: ScannedRow) => boolean | void,
): Promise<void> {
  const scan = new TextScan(delimiter, onHeader, visit);
  let rest: Buffer = Buffer.alloc(0);
  try {
    for await (const chunk of stream) {
      const buf = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      // The first chunk waits for enough bytes to tell the line breaks.
      if (!scan.isStarted && buf.length < 64 * 1024) {
        rest = buf;
        continue;
      }
      const used = scan.take(buf, false);
      if (scan.isStopped) return;
      if (buf.length - used > MAX_ROW_BYTES)
        throw new ResultsProblem(`The results file has a row longer than ${formatBytes(MAX_ROW_BYTES)}.`);
      rest = buf.subarray(used);
      scan.base += used;
    }
    scan.take(rest, true);
  } finally {
    stream.destroy?.();
  }
}

/**
 * The data rows of a piece of text that holds whole rows and no header (a block of a kept evidence file),
 * at once: `visit` for each (return false to stop).
 */
export function scanRowsOf(
  text: Buffer,
  delimiter: string,
  visit: (row: ScannedRow) => boolean | void,
): void {
  new TextScan(delimiter, undefined, visit, 'lf').take(text, true);
}

/**
 * Streams the rows of a results file: `onHeader` with its header, then `visit` for each data row (return
 * false to stop early).
 */
export async function scanResults(
  path: string,
  name: string,
  delimiter: string,
  onHeader: (names: string[]) => void,
  visit: (row: ScannedRow) => boolean | void,
): Promise<void> {
  const source = await openListSource(path, name, statSync(path).size);
  const stream = (await source.open()) as AsyncIterable<Buffer> & { destroy?: () => void };
  await scanText(stream, delimiter, onHeader, visit);
}

// ---------------------------------------------------------------------------------------------------------
// Counts: the Results screen's numbers

export type { CodeCount, ResultsCounts } from '../jobs/counts.js';

/**
 * Counts a results file: statuses, (code, final status) pairs, domain types, role and duplicate rows, and
 * what the default export (`spec`: the desktop's default, jobs/desktopExport.ts) writes and leaves out — by
 * the exporter's own rule, row by row. `isOffline`: the job ran offline checks (unknown rows are mailable).
 */
export async function countResults(
  path: string,
  name: string,
  delimiter: string,
  spec: ExportSpec,
  isOffline: boolean,
): Promise<ResultsCounts> {
  const counter = counterOf({ spec, isOffline });
  let columns = new Map<string, number>();
  let statusIndex = -1;
  let duplicateIndex = -1;
  let current: ScannedRow | undefined;
  const row: ResultRow = {
    status: '',
    isDuplicate: false,
    column: (name) => {
      const index = columns.get(name);
      return index === undefined ? undefined : current!.field(index);
    },
    fields: () => current!.fields(),
    field: (index) => current!.field(index),
    get fieldCount() {
      return current!.fieldCount;
    },
    fieldKeyHash: (index, out) => keyHashOf(current!.field(index), out),
  };
  const mutable = row as { status: string; isDuplicate: boolean };
  await scanResults(
    path,
    name,
    delimiter,
    (header) => {
      columns = columnIndex(header);
      statusIndex = columns.get(STATUS_COLUMN) ?? -1;
      duplicateIndex = columns.get(DUPLICATE_COLUMN) ?? -1;
      if (!counter.header(header))
        throw new ResultsProblem(
          `The results file has no “${STATUS_COLUMN}” column (the job ran no validation).`,
        );
    },
    (scanned) => {
      current = scanned;
      mutable.status = scanned.field(statusIndex).trim().toLowerCase();
      mutable.isDuplicate =
        duplicateIndex >= 0 && scanned.field(duplicateIndex).trim().toLowerCase() === 'true';
      counter.row(row);
    },
  );
  return counter.result();
}

// ---------------------------------------------------------------------------------------------------------
// The drill-down: the rows matching a filter, a page at a time

/** The matching rows of a results file: their row numbers and byte offsets, in order. */
export interface RowIndex {
  readonly header: readonly string[];
  readonly length: number;
  readonly numbers: Int32Array;
  readonly offsets: Float64Array;
}

/** A data row as the exporter's rules see it (jobs/exports.ts `ResultRow`), over a scanned row. */
class ScannedResultRow implements ResultRow {
  status = '';
  isDuplicate = false;
  row: ScannedRow | undefined;
  constructor(
    private readonly columns: ReadonlyMap<string, number>,
    private readonly at: { readonly status: number; readonly duplicate: number },
  ) {}
  set(row: ScannedRow): void {
    this.row = row;
    this.status = this.at.status < 0 ? '' : row.field(this.at.status).trim().toLowerCase();
    this.isDuplicate = this.at.duplicate >= 0 && row.field(this.at.duplicate).trim().toLowerCase() === 'true';
  }
  column(name: string): string | undefined {
    const index = this.columns.get(name);
    return index === undefined ? undefined : this.row!.field(index);
  }
  fields(): readonly string[] {
    return this.row!.fields();
  }
  field(index: number): string {
    return this.row!.field(index);
  }
  get fieldCount(): number {
    return this.row!.fieldCount;
  }
  fieldKeyHash(index: number, out: Uint32Array): boolean {
    return keyHashOf(this.row!.field(index), out);
  }
}

/**
 * Streams the rows of a results file as the exporter's rules see them (jobs/exports.ts `ResultRow`), each with
 * its row number (1-based, blank lines not counted: explain.csv's `Row`). `onHeader` gets the columns by name
 * (the last of a name: appended columns come last).
 */
export async function scanResultRows(
  path: string,
  name: string,
  delimiter: string,
  onHeader: (columns: ReadonlyMap<string, number>, header: readonly string[]) => void,
  visit: (row: ResultRow, number: number) => boolean | void,
): Promise<void> {
  let view: ScannedResultRow | undefined;
  await scanResults(
    path,
    name,
    delimiter,
    (header) => {
      const columns = columnIndex(header);
      view = new ScannedResultRow(columns, {
        status: columns.get(STATUS_COLUMN) ?? -1,
        duplicate: columns.get(DUPLICATE_COLUMN) ?? -1,
      });
      onHeader(columns, header);
    },
    (scanned) => {
      view!.set(scanned);
      return visit(view!, scanned.number);
    },
  );
}

/**
 * Indexes the rows an export takes (one pass; 12 bytes per row taken): a drill-down's rows are those its
 * "Export these rows" writes — the exporter's own rule for `spec` (kind `all` with the drill-down's filter)
 * decides each row, so the two cannot differ.
 */
export async function indexRows(
  path: string,
  name: string,
  delimiter: string,
  spec: ExportSpec,
): Promise<RowIndex> {
  const rule = ruleOf(spec);
  let header: string[] = [];
  let view: ScannedResultRow | undefined;
  let numbers = new Int32Array(1024);
  let offsets = new Float64Array(1024);
  let length = 0;
  await scanResults(
    path,
    name,
    delimiter,
    (names) => {
      header = names;
      const columns = columnIndex(names);
      if (rule.needsStatus && !columns.has(STATUS_COLUMN))
        throw new ResultsProblem(
          `The results file has no “${STATUS_COLUMN}” column (the job ran no validation): show all rows.`,
        );
      view = new ScannedResultRow(columns, {
        status: columns.get(STATUS_COLUMN) ?? -1,
        duplicate: columns.get('Duplicate') ?? -1,
      });
      rule.header?.(names);
    },
    (row) => {
      view!.set(row);
      if (rule.row(view!) === false) return;
      if (length === numbers.length) {
        const grownNumbers = new Int32Array(length * 2);
        grownNumbers.set(numbers);
        numbers = grownNumbers;
        const grownOffsets = new Float64Array(length * 2);
        grownOffsets.set(offsets);
        offsets = grownOffsets;
      }
      numbers[length] = row.number;
      offsets[length] = row.offset;
      length++;
    },
  );
  return { header, length, numbers: numbers.subarray(0, length), offsets: offsets.subarray(0, length) };
}

/** Reads one row at a byte offset of a plain text file. */
function readRowAt(fd: number, size: number, offset: number, scanner: RowScanner): string[] {
  let length = Math.min(16 * 1024, size - offset);
  for (;;) {
    const buf = Buffer.allocUnsafe(length);
    const read = readSync(fd, buf, 0, length, offset);
    const isLast = offset + read >= size;
    scanner.windowChanged();
    const result = scanner.scan(buf, 0, read, isLast);
    if (result === SCAN_ROW) {
      const fields: string[] = [];
      for (let f = 0; f < scanner.fields; f++) fields.push(decode(scanner, buf, f));
      return fields;
    }
    if (result !== SCAN_NEED_MORE || length >= MAX_ROW_BYTES || isLast) throw scanFailure();
    length = Math.min(length * 4, MAX_ROW_BYTES, size - offset);
  }
}

/** The line-break mode of a plain file, from its first bytes. */
function lineBreakOf(fd: number): ReturnType<typeof detectLineBreak>['mode'] {
  const head = Buffer.allocUnsafe(64 * 1024);
  const read = readSync(fd, head, 0, head.length, 0);
  return detectLineBreak(head.subarray(0, read)).mode;
}

/** The rows `[from, from + limit)` of an index, with their row numbers. */
export async function readIndexedRows(
  path: string,
  name: string,
  delimiter: string,
  index: RowIndex,
  from: number,
  limit: number,
): Promise<{ number: number; fields: string[] }[]> {
  const end = Math.min(index.length, from + limit);
  if (from >= end) return [];
  if (formatOf(name) !== 'zip') {
    const fd = openSync(path, 'r');
    try {
      const size = statSync(path).size;
      const scanner = new RowScanner(Buffer.from(delimiter, 'utf8'), lineBreakOf(fd));
      const rows: { number: number; fields: string[] }[] = [];
      for (let k = from; k < end; k++)
        rows.push({ number: index.numbers[k], fields: readRowAt(fd, size, index.offsets[k], scanner) });
      return rows;
    } finally {
      closeSync(fd);
    }
  }
  // A zip cannot seek: scan again to the page's rows.
  const wanted = new Set<number>();
  for (let k = from; k < end; k++) wanted.add(index.numbers[k]);
  const last = index.numbers[end - 1];
  const rows: { number: number; fields: string[] }[] = [];
  await scanResults(
    path,
    name,
    delimiter,
    () => undefined,
    (row) => {
      if (wanted.has(row.number)) rows.push({ number: row.number, fields: row.fields() });
      return row.number < last;
    },
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------------------
// Why, per row: the list's explain.csv (Row, Email, Status Code, Checked, Why, then the evidence columns),
// saved with the job as a kept evidence file (evidenceFile.ts: blocked gzip), or plain by older versions

/**
 * Streams the rows of an explain file, plain or kept (gzip): `onHeader` with its columns, then `visit` for each
 * data row (return false to stop early).
 */
export async function scanExplain(
  path: string,
  onHeader: (names: string[]) => void,
  visit: (row: ScannedRow) => boolean | void,
): Promise<void> {
  const fd = openSync(path, 'r');
  let isGzip: boolean;
  try {
    isGzip = isGzipAt(fd);
  } finally {
    closeSync(fd);
  }
  if (!isGzip) return scanResults(path, 'explain.csv', ',', onHeader, visit);
  return scanText(inflatedText(path), ',', onHeader, visit).catch((error: unknown) => {
    throw error instanceof ResultsProblem
      ? error
      : new ResultsProblem(`The evidence file ${path} is damaged: ${(error as Error).message}.`);
  });
}

/** The text of a gzip file, inflated as it is read (a multi-member file whole); its streams end with it. */
async function* inflatedText(path: string): AsyncGenerator<Buffer> {
  const file = createReadStream(path);
  const gunzip = createGunzip();
  // (An error of either ends both: the loop below then throws it.)
  pipeline(file, gunzip, () => undefined);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } finally {
    file.destroy();
    gunzip.destroy();
  }
}

export interface ExplainIndex {
  /** Byte offset of each row's line by row number - 1 (-1: none), in a plain file. */
  readonly offsets: Float64Array;
  /** A kept (blocked gzip) file's blocks, and its Row and Why columns. */
  readonly blocks?: KeptIndex;
}

interface KeptIndex {
  readonly blocks: EvidenceBlocks;
  readonly rowAt: number;
  readonly whyAt: number;
  /** The blocks read lately (least recently read first). */
  readonly cache: Map<number, KeptBlock>;
}

/** Indexes an explain file by row number (a kept one by its blocks' headers, without inflating them). */
export async function indexExplain(path: string): Promise<ExplainIndex> {
  const fd = openSync(path, 'r');
  try {
    if (isGzipAt(fd)) {
      const blocks = readBlocks(fd, fstatSync(fd).size);
      if (!blocks || blocks.offsets.length === 0)
        throw new ResultsProblem(`The evidence file ${path} is not one this app keeps.`);
      let names: string[] = [];
      const header = readBlock(fd, blocks, 0);
      const line = header.subarray(0, header.indexOf(0x0a) < 0 ? header.length : header.indexOf(0x0a));
      scanRowsOf(line, ',', (row) => {
        names = row.fields();
        return false;
      });
      return {
        offsets: new Float64Array(0),
        blocks: { blocks, rowAt: names.indexOf('Row'), whyAt: names.indexOf('Why'), cache: new Map() },
      };
    }
  } finally {
    closeSync(fd);
  }
  let offsets = new Float64Array(1024).fill(-1);
  let rowAt = -1;
  await scanResults(
    path,
    'explain.csv',
    ',',
    (names) => {
      rowAt = names.indexOf('Row');
    },
    (row) => {
      const number = Number(row.field(rowAt));
      if (!Number.isInteger(number) || number < 1) return;
      while (number > offsets.length) {
        const grown = new Float64Array(offsets.length * 2).fill(-1);
        grown.set(offsets);
        offsets = grown;
      }
      offsets[number - 1] = row.offset;
    },
  );
  return { offsets };
}

/** The why of each row number (what was checked and what answered), or '' where the file has none. */
export function readWhys(path: string, index: ExplainIndex, numbers: readonly number[]): string[] {
  const fd = openSync(path, 'r');
  try {
    if (index.blocks) return readKeptWhys(fd, index.blocks, numbers);
    const size = statSync(path).size;
    const scanner = new RowScanner(Buffer.from(',', 'utf8'), lineBreakOf(fd));
    return numbers.map((number) => {
      const offset = number >= 1 && number <= index.offsets.length ? index.offsets[number - 1] : -1;
      if (offset < 0) return '';
      const fields = readRowAt(fd, size, offset, scanner);
      return fields[4] ?? '';
    });
  } finally {
    closeSync(fd);
  }
}

/** Blocks of a kept file read lately, with where each row of theirs starts (a page reads a few). */
const KEPT_BLOCKS_CACHED = 8;

/** A block's text and its rows: row number → [start, end) in the text. */
interface KeptBlock {
  readonly text: Buffer;
  readonly rows: Map<number, number>;
  readonly ends: number[];
}

function keptBlock(fd: number, kept: KeptIndex, index: number): KeptBlock {
  const cached = kept.cache.get(index);
  if (cached) {
    kept.cache.delete(index);
    kept.cache.set(index, cached);
    return cached;
  }
  const text = readBlock(fd, kept.blocks, index);
  const rows = new Map<number, number>();
  const ends: number[] = [];
  const splitter = new RowSplitter(text);
  for (let at = 0; at < text.length;) {
    const lineEnd = splitter.rowEnd(at);
    const end = lineEnd < 0 ? text.length : lineEnd;
    const number =
      kept.rowAt === 0 ? leadingNumber(text, at, end) : Number(fieldOf(text.subarray(at, end), kept.rowAt));
    if (end > at && number >= 0) {
      rows.set(number, ends.length);
      ends.push(at, end);
    }
    at = end + 1;
  }
  const block = { text, rows, ends };
  kept.cache.set(index, block);
  while (kept.cache.size > KEPT_BLOCKS_CACHED) kept.cache.delete(kept.cache.keys().next().value!);
  return block;
}

/** One field of one row's bytes. */
function fieldOf(row: Buffer, index: number): string {
  let value = '';
  scanRowsOf(row, ',', (scanned) => {
    value = scanned.field(index);
    return false;
  });
  return value;
}

/** The whys of some rows of a kept file: each block they are in inflated once (a page: one or a few). */
function readKeptWhys(fd: number, kept: KeptIndex, numbers: readonly number[]): string[] {
  return numbers.map((number) => {
    if (kept.rowAt < 0 || kept.whyAt < 0) return '';
    for (const index of blocksOfRow(kept.blocks, number)) {
      const block = keptBlock(fd, kept, index);
      const at = block.rows.get(number);
      if (at !== undefined)
        return fieldOf(block.text.subarray(block.ends[at], block.ends[at + 1]), kept.whyAt);
    }
    return '';
  });
}

/**
 * The why of each address of a re-check's explain file (its list is the distinct addresses re-checked, one row
 * each): address (trimmed) → why. Held in memory: a re-check sends only the rows that could not be checked.
 */
export async function readWhysByAddress(path: string): Promise<ReadonlyMap<string, string>> {
  const whys = new Map<string, string>();
  let emailAt = -1;
  let whyAt = -1;
  await scanExplain(
    path,
    (names) => {
      emailAt = names.indexOf('Email');
      whyAt = names.indexOf('Why');
    },
    (row) => {
      if (emailAt >= 0 && whyAt >= 0) whys.set(row.field(emailAt).trim(), row.field(whyAt));
    },
  );
  return whys;
}

// ---------------------------------------------------------------------------------------------------------
// Caches of the core: indexes are kept for the last few drill-downs (bounded memory)

/** A small least-recently-used cache of promises (an index is built once however many pages ask). */
export class PromiseCache<T> {
  private readonly entries = new Map<string, Promise<T>>();
  constructor(private readonly capacity: number) {}

  get(key: string, make: () => Promise<T>): Promise<T> {
    const found = this.entries.get(key);
    if (found) {
      this.entries.delete(key);
      this.entries.set(key, found);
      return found;
    }
    const made = make();
    this.entries.set(key, made);
    made.catch(() => this.entries.delete(key));
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return made;
  }

  /** Forgets the entries whose key starts with `prefix` (a deleted job). */
  forget(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

/** The cache key of a file's version: a rewritten results file (a re-check) gets new indexes. */
export function fileKey(path: string): string {
  const stats = statSync(path);
  return `${path}|${stats.size}|${stats.mtimeMs}`;
}
