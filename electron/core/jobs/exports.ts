// Exports of a results file, computed in one streamed pass as its bytes arrive: each row is read (quotes and
// all, by the service's own row scanner) only as far as its `Validation Status` and `Duplicate` fields, and
// copied as it was into the exports that want it. Rows are never decoded or re-serialised.
//
//   safe     rows safe to mail: valid and corrected (their `Valid Email` holds the address to mail)
//   invalid  rows with status invalid: for a suppression list
//   clean    every row but invalid and risky (trap in the safe_to_send vocabulary): what offline cleaning,
//            where a good address reads unknown (code 10), leaves to mail
//   all      every row, with the appended columns
import { open, type FileHandle } from 'node:fs/promises';
import {
  CR,
  LF,
  QUOTE,
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
  detectLineBreak,
} from '../../../service/lists/scan.js';

export const EXPORT_KINDS = ['safe', 'invalid', 'clean', 'all'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export function isExportKind(value: string): value is ExportKind {
  return (EXPORT_KINDS as readonly string[]).includes(value);
}

/** Status words of both vocabularies, by export. */
const SAFE = new Set(['valid', 'corrected', 'safetosend']);
const NOT_CLEAN = new Set(['invalid', 'risky', 'trap']);

export function isExported(kind: ExportKind, status: string): boolean {
  switch (kind) {
    case 'safe':
      return SAFE.has(status);
    case 'invalid':
      return status === 'invalid';
    case 'clean':
      return !NOT_CLEAN.has(status);
    case 'all':
      return true;
  }
}

export interface ExportTarget {
  readonly kind: ExportKind;
  readonly path: string;
}

export interface ResultsSummary {
  /** Rows below the header. */
  readonly rows: number;
  /** Rows whose `Duplicate` is true. */
  readonly duplicates: number;
  /** Rows written to each export. */
  readonly exported: Partial<Record<ExportKind, number>>;
}

const OUT_BYTES = 2 * 1024 * 1024;
const WINDOW_BYTES = 4 * 1024 * 1024;
const MAX_ROW_BYTES = 4 * 1024 * 1024;

/** A file written through a buffer, one write in flight at a time while the next buffer fills. */
export class BufferedFile {
  private buf = Buffer.allocUnsafe(OUT_BYTES);
  private spare = Buffer.allocUnsafe(OUT_BYTES);
  private at = 0;
  private inFlight: Promise<unknown> = Promise.resolve();
  constructor(private readonly file: FileHandle) {}

  static async create(path: string): Promise<BufferedFile> {
    return new BufferedFile(await open(path, 'w'));
  }

  /** Appends a chunk (copied: the caller may reuse it). */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.at + chunk.length > this.buf.length) await this.flush();
    if (chunk.length > this.buf.length) {
      await this.inFlight;
      await this.file.write(chunk);
      return;
    }
    this.buf.set(chunk, this.at);
    this.at += chunk.length;
  }

  /** Copies a row and its line break when they fit (no await on the common path); false when they do not. */
  tryAppend(source: Buffer, start: number, end: number, newline: Buffer): boolean {
    const length = end - start;
    if (this.at + length + newline.length > this.buf.length) return false;
    source.copy(this.buf, this.at, start, end);
    this.at += length;
    for (let i = 0; i < newline.length; i++) this.buf[this.at++] = newline[i]!;
    return true;
  }

  async append(source: Buffer, start: number, end: number, newline: Buffer): Promise<void> {
    if (this.tryAppend(source, start, end, newline)) return;
    await this.flush();
    if (this.tryAppend(source, start, end, newline)) return;
    await this.inFlight;
    await this.file.write(source.subarray(start, end));
    await this.file.write(newline);
  }

  async flush(): Promise<void> {
    if (this.at === 0) return;
    await this.inFlight;
    const full = this.buf;
    const length = this.at;
    this.inFlight = this.file.write(full, 0, length);
    this.buf = this.spare;
    this.spare = full;
    this.at = 0;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.inFlight;
    await this.file.close();
  }
}

export class ResultsFormatError extends Error {}

// Status categories, read from the status field's bytes (no string per row).
const OTHER = 0;
const SAFE_STATUS = 1; // valid, corrected, safetosend
const INVALID_STATUS = 2;
const RISKY_STATUS = 3; // risky, trap
const STATUS_WORDS: readonly [string, number][] = [
  ['valid', SAFE_STATUS],
  ['corrected', SAFE_STATUS],
  ['safetosend', SAFE_STATUS],
  ['invalid', INVALID_STATUS],
  ['risky', RISKY_STATUS],
  ['trap', RISKY_STATUS],
];
const WORD_BYTES = STATUS_WORDS.map(([word, category]) => [Buffer.from(word), category] as const);

/** The category of the status in `buf[start, end)`, compared case-insensitively. */
function classifyStatus(buf: Uint8Array, start: number, end: number): number {
  const length = end - start;
  for (const [word, category] of WORD_BYTES) {
    if (word.length !== length) continue;
    let i = 0;
    while (i < length && (buf[start + i] | 0x20) === word[i]) i++;
    if (i === length) return category;
  }
  return OTHER;
}

/** Which categories each export takes, as bits. */
const EXPORT_MASKS: Record<ExportKind, number> = {
  safe: 1 << SAFE_STATUS,
  invalid: 1 << INVALID_STATUS,
  clean: (1 << OTHER) | (1 << SAFE_STATUS),
  all: (1 << OTHER) | (1 << SAFE_STATUS) | (1 << INVALID_STATUS) | (1 << RISKY_STATUS),
};

interface ExportState {
  readonly kind: ExportKind;
  readonly mask: number;
  readonly file: BufferedFile;
  rows: number;
  /** A run of consecutive rows to copy in one go: `[runStart, runEnd)` of the window (-1: none). */
  runStart: number;
  runEnd: number;
}

/**
 * Reads a results file pushed chunk by chunk and writes the exports. `delimiter`: the results' delimiter
 * (the list's). Call `push` for every chunk in order, then `finish`.
 *
 * Rows go to an export as runs of the window's bytes, line breaks and all: consecutive rows that an export
 * takes are copied with one copy. A row whose quotes are balanced on its line (nearly all) ends at its line
 * break, and its appended columns are read backwards from there; other rows go through the row scanner.
 */
export class ResultsExporter {
  private readonly window = Buffer.allocUnsafe(WINDOW_BYTES + MAX_ROW_BYTES);
  private end = 0;
  private scanner: RowScanner | undefined;
  private files: ExportState[] = [];
  private statusIndex = -1;
  private duplicateIndex = -1;
  private isHeaderDone = false;
  private bom = 0;
  private newline: Buffer = Buffer.from('\n');
  private rows = 0;
  private duplicates = 0;
  private isCrMode = false;
  private d0 = -1;
  /** Fields after the status and duplicate columns, for reading rows backwards; undefined: no fast path. */
  private fromEnd: { status: number; duplicate: number } | undefined;
  private delimiters = new Int32Array(0);
  private nextQuote = -1;

  private constructor(private readonly delimiter: string) {}

  static async open(delimiter: string, targets: readonly ExportTarget[]): Promise<ResultsExporter> {
    const exporter = new ResultsExporter(delimiter);
    for (const target of targets)
      exporter.files.push({
        kind: target.kind,
        mask: EXPORT_MASKS[target.kind],
        file: await BufferedFile.create(target.path),
        rows: 0,
        runStart: -1,
        runEnd: -1,
      });
    return exporter;
  }

  async push(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const room = this.window.length - this.end;
      const take = Math.min(room, chunk.length - offset);
      this.window.set(chunk.subarray(offset, offset + take), this.end);
      this.end += take;
      offset += take;
      if (this.end >= WINDOW_BYTES) await this.drain(false);
    }
  }

  async finish(): Promise<ResultsSummary> {
    await this.drain(true);
    for (const { file } of this.files) await file.close();
    const exported: Partial<Record<ExportKind, number>> = {};
    for (const { kind, rows } of this.files) exported[kind] = rows;
    return { rows: this.rows, duplicates: this.duplicates, exported };
  }

  /** Abandons the exports (their files are left for the caller to remove). */
  async abort(): Promise<void> {
    for (const { file } of this.files) await file.close().catch(() => undefined);
  }

  /** The \n ending the row at `pos` when the row's quotes are balanced on its line, else -1. */
  private balancedLineEnd(buf: Buffer, pos: number, end: number): number {
    const lineEnd = buf.indexOf(LF, pos);
    if (lineEnd < 0 || lineEnd >= end) return -1;
    if (this.nextQuote < pos) {
      const q = buf.indexOf(QUOTE, pos);
      this.nextQuote = q >= 0 && q < end ? q : end;
    }
    let quotes = 0;
    let q = this.nextQuote;
    while (q < lineEnd) {
      quotes++;
      const next = buf.indexOf(QUOTE, q + 1);
      q = next >= 0 && next < end ? next : end;
    }
    this.nextQuote = q;
    return quotes % 2 === 0 ? lineEnd : -1;
  }

  private async drain(isLast: boolean): Promise<void> {
    const buf = this.window;
    let pos = 0;
    if (!this.scanner) {
      if (!isLast && this.end < 64 * 1024) return;
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) this.bom = 3;
      const lineBreak = detectLineBreak(buf.subarray(this.bom, Math.min(this.end, this.bom + WINDOW_BYTES)));
      this.newline = Buffer.from(lineBreak.sequence);
      this.isCrMode = lineBreak.mode === 'cr';
      this.scanner = new RowScanner(Buffer.from(this.delimiter, 'utf8'), lineBreak.mode);
      pos = this.bom;
    }
    const scanner = this.scanner;
    scanner.windowChanged();
    this.nextQuote = -1;
    const d0 = this.d0;
    const fromEnd = this.fromEnd;
    const delimiters = this.delimiters;
    for (;;) {
      if (this.isHeaderDone && fromEnd !== undefined) {
        const lineEnd = this.balancedLineEnd(buf, pos, this.end);
        if (lineEnd >= 0) {
          const start = pos;
          const next = lineEnd + 1;
          const contentEnd = lineEnd > pos && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
          if (contentEnd === start) {
            pos = next;
            continue;
          }
          // Delimiters from the end: delimiters[k] is the one before the k-th field from the end. A quote
          // among them (a quoted Valid Email) sends the row to the scanner.
          let found = 0;
          let i = contentEnd - 1;
          for (; i >= start && found < delimiters.length; i--) {
            const c = buf[i];
            if (c === d0) delimiters[found++] = i;
            else if (c === QUOTE) break;
          }
          if (found === delimiters.length) {
            pos = next;
            const statusEnd = fromEnd.status === 0 ? contentEnd : delimiters[fromEnd.status - 1];
            const category = classifyStatus(buf, delimiters[fromEnd.status] + 1, statusEnd);
            if (fromEnd.duplicate >= 0) {
              const dupEnd = fromEnd.duplicate === 0 ? contentEnd : delimiters[fromEnd.duplicate - 1];
              const dupStart = delimiters[fromEnd.duplicate] + 1;
              if (dupEnd - dupStart === 4 && (buf[dupStart] | 0x20) === 0x74 /* t */) this.duplicates++;
            }
            await this.take(buf, start, next, category);
            continue;
          }
          if (i >= start && buf[i] !== QUOTE)
            throw new ResultsFormatError('A row of the results file has fewer fields than its header.');
        }
      }
      const result = scanner.scan(buf, pos, this.end, isLast);
      if (result === SCAN_END) break;
      if (result === SCAN_NEED_MORE) {
        if (this.end - pos >= MAX_ROW_BYTES)
          throw new ResultsFormatError('The results file has a row longer than 4 MiB.');
        break;
      }
      if (result === SCAN_ERROR)
        throw new ResultsFormatError('The results file is not well-formed delimited text.');
      const start = scanner.start;
      const contentEnd = scanner.contentEnd;
      pos = scanner.next;
      if (!this.isHeaderDone) {
        this.readHeader(scanner, buf);
        for (const { file } of this.files) await file.append(buf, 0, contentEnd, this.newline);
        this.isHeaderDone = true;
        continue;
      }
      if (scanner.fields === 1 && contentEnd === start) continue;
      const category = this.fieldCategory(scanner, buf, this.statusIndex);
      if (this.duplicateIndex >= 0 && this.fieldIs(scanner, buf, this.duplicateIndex, 'true'))
        this.duplicates++;
      // The row's own line break, or (the last row of a file without one) the file's.
      if (pos > contentEnd) await this.take(buf, start, pos, category);
      else {
        await this.take(buf, start, contentEnd, category);
        await this.flushRuns(buf);
        for (const target of this.files)
          if (target.mask & (1 << category)) await target.file.append(this.newline, 0, 0, this.newline);
      }
    }
    await this.flushRuns(buf);
    // Keep the unread tail at the front.
    if (pos > 0) {
      buf.copyWithin(0, pos, this.end);
      this.end -= pos;
    }
  }

  /** Counts a row (`buf[start, next)`, line break included) and adds it to the runs of its exports. */
  private async take(buf: Buffer, start: number, next: number, category: number): Promise<void> {
    this.rows++;
    const bit = 1 << category;
    for (const target of this.files) {
      if (!(target.mask & bit)) continue;
      target.rows++;
      if (target.runEnd === start) {
        target.runEnd = next;
        continue;
      }
      if (target.runStart >= 0) await target.file.append(buf, target.runStart, target.runEnd, EMPTY);
      target.runStart = start;
      target.runEnd = next;
    }
  }

  private async flushRuns(buf: Buffer): Promise<void> {
    for (const target of this.files) {
      if (target.runStart >= 0) await target.file.append(buf, target.runStart, target.runEnd, EMPTY);
      target.runStart = -1;
      target.runEnd = -1;
    }
  }

  private fieldCategory(scanner: RowScanner, buf: Buffer, index: number): number {
    if (index < 0 || index >= scanner.fields) return OTHER;
    return classifyStatus(buf, scanner.fieldStart[index], scanner.fieldEnd[index]);
  }

  private fieldIs(scanner: RowScanner, buf: Buffer, index: number, word: string): boolean {
    if (index >= scanner.fields) return false;
    return buf.toString('latin1', scanner.fieldStart[index], scanner.fieldEnd[index]).toLowerCase() === word;
  }

  private readHeader(scanner: RowScanner, buf: Buffer): void {
    const names: string[] = [];
    for (let f = 0; f < scanner.fields; f++)
      names.push(buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]));
    // The appended columns are the last ones: search from the end, in case an input column has the same name.
    this.statusIndex = names.lastIndexOf('Validation Status');
    this.duplicateIndex = names.lastIndexOf('Duplicate');
    if (this.statusIndex < 0)
      throw new ResultsFormatError("The results file has no 'Validation Status' column.");
    // The fast path reads fields back from the line break: only with a one-byte delimiter and \n breaks.
    const delimiter = Buffer.from(this.delimiter, 'utf8');
    if (delimiter.length === 1 && !this.isCrMode) {
      const last = names.length - 1;
      this.d0 = delimiter[0];
      this.fromEnd = {
        status: last - this.statusIndex,
        duplicate: this.duplicateIndex < 0 ? -1 : last - this.duplicateIndex,
      };
      this.delimiters = new Int32Array(Math.max(this.fromEnd.status, this.fromEnd.duplicate) + 1);
    }
  }
}

const EMPTY = Buffer.alloc(0);
