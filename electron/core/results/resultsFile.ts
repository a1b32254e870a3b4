// A job's downloaded results file, read offline: the Results screen's numbers (counted once, stored with the
// job: history/counts.ts) and its drill-down (the rows of a status, code, domain type, role accounts or
// duplicates, a page at a time). Exports are the exporter's (jobs/exports.ts); the headline's Ready to mail is
// counted by the exporter's own rule for the default export, so the two cannot disagree.
//
// Rows are found by the list row scanner (service/lists/read/scan.ts: quoted line breaks included) over a
// stream of the results' text, so a 1,000,000-row file is read with bounded memory. A drill-down keeps an
// index of the matching rows' byte offsets (8 bytes a row) and reads a page by seeking to them; a zipped
// results file cannot seek, so its pages are read by scanning again.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
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
  counterOf,
  ruleOf,
  type ExportSpec,
  type ResultRow,
} from '../jobs/exports.js';
import type { ResultsCounts } from '../jobs/counts.js';
import { formatOf, openListSource } from '../files/source.js';
import { keyHashOf } from '../exports/shape.js';

export class ResultsProblem extends Error {
  readonly code = 'results-unreadable';
}

const MAX_ROW_BYTES = 4 * 1024 * 1024;

/** A data row as the scan hands it: valid only during the visit. */
export interface ScannedRow {
  /** 1-based, blank lines not counted (the service's row numbers: explain.csv's `Row`). */
  readonly number: number;
  /** Byte offset of the row in the results' text. */
  readonly offset: number;
  readonly fieldCount: number;
  field(index: number): string;
  fields(): string[];
}

function decode(scanner: RowScanner, buf: Buffer, f: number): string {
  const text = buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]);
  return scanner.fieldQuoted[f] ? text.replaceAll('""', '"') : text;
}

class ScannedRowView implements ScannedRow {
  number = 0;
  offset = 0;
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
}

function scanFailure(): ResultsProblem {
  return new ResultsProblem('The results file is not well-formed delimited text.');
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
  const stream = await source.open();
  let scanner: RowScanner | undefined;
  let view: ScannedRowView | undefined;
  let rest: Buffer = Buffer.alloc(0);
  let base = 0; // text offset of rest[0]
  let isHeaderDone = false;
  let number = 0;
  let isStopped = false;
  const take = (buf: Buffer, isLast: boolean): number => {
    let pos = 0;
    if (!scanner) {
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) pos = 3;
      scanner = new RowScanner(Buffer.from(delimiter, 'utf8'), detectLineBreak(buf.subarray(pos)).mode);
      view = new ScannedRowView(scanner);
    }
    scanner.windowChanged();
    view!.buf = buf;
    for (;;) {
      const result = scanner.scan(buf, pos, buf.length, isLast);
      if (result === SCAN_END || result === SCAN_NEED_MORE) break;
      if (result === SCAN_ERROR) throw scanFailure();
      const start = scanner.start;
      const isBlank = scanner.fields === 1 && scanner.contentEnd === start;
      pos = scanner.next;
      if (isBlank) continue;
      if (!isHeaderDone) {
        isHeaderDone = true;
        const names: string[] = [];
        for (let f = 0; f < scanner.fields; f++) names.push(decode(scanner, buf, f));
        onHeader(names);
        continue;
      }
      view!.number = ++number;
      view!.offset = base + start;
      if (visit(view!) === false) {
        isStopped = true;
        return pos;
      }
    }
    return pos;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const buf = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      // The first chunk waits for enough bytes to tell the line breaks.
      if (!scanner && buf.length < 64 * 1024) {
        rest = buf;
        continue;
      }
      const used = take(buf, false);
      if (isStopped) return;
      if (buf.length - used > MAX_ROW_BYTES)
        throw new ResultsProblem('The results file has a row longer than 4 MiB.');
      rest = buf.subarray(used);
      base += used;
    }
    take(rest, true);
  } finally {
    (stream as { destroy?: () => void }).destroy?.();
  }
}

/** Index of a column by header name: the last one of that name (the appended columns come last). */
function columnIndex(header: readonly string[]): Map<string, number> {
  const columns = new Map<string, number>();
  header.forEach((name, i) => columns.set(name, i));
  return columns;
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

/**
 * Reads rows of a plain results (or explain) file by their byte offsets (an index's): the header, and a row at
 * an offset, each as its fields.
 */
export function rowReader(fd: number, size: number, delimiter: string) {
  const scanner = new RowScanner(Buffer.from(delimiter, 'utf8'), lineBreakOf(fd));
  return {
    headerAt(): string[] {
      const head = Buffer.alloc(3);
      readSync(fd, head, 0, 3, 0);
      const isBom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
      return size === 0 ? [] : readRowAt(fd, size, isBom ? 3 : 0, scanner);
    },
    rowAt: (offset: number): string[] => readRowAt(fd, size, offset, scanner),
  };
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
// Why, per row: the list's explain.csv (Row, Email, Status Code, Checked, Why), saved with the job

export interface ExplainIndex {
  /** Byte offset of each row's line by row number - 1 (-1: none). */
  readonly offsets: Float64Array;
}

/** Indexes an explain file by row number. */
export async function indexExplain(path: string): Promise<ExplainIndex> {
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

/**
 * The why of each address of a re-check's explain.csv (its list is the distinct addresses re-checked, one row
 * each): address (trimmed) → why. Held in memory: a re-check sends only the rows that could not be checked.
 */
export async function readWhysByAddress(path: string): Promise<ReadonlyMap<string, string>> {
  const whys = new Map<string, string>();
  let emailAt = -1;
  let whyAt = -1;
  await scanResults(
    path,
    'explain.csv',
    ',',
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
