// The one exporter of results files, for `mailsieve clean` and the desktop: each export is computed in one
// streamed pass over the results' bytes, either as they are downloaded (the export worker) or from a stored
// results file (the desktop's Results screen and History re-export, `exportResultsFile`).
//
// The seam: an export is a target with a rule (`ExportRule`). For each row the rule gets a `ResultRow` — the
// row's `Validation Status` and `Duplicate`, and on demand its appended columns by name or all its fields — and
// answers what the export does with it: leave it out (false), copy it as it was (true: its bytes are copied
// untouched, consecutive rows in one copy), or write these fields instead (a reshaped row). Rows are decoded
// only when a rule asks. The kinds of shared/exports.ts are rules of the first two sorts (`kindRule`).
//
// Every export is written under a temporary name (outputs.ts) and renamed when complete; `abort` removes them.
import { renameSync, rmSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { outputNameFor } from '../../../shared/fileName.js';
import type { Readable } from 'node:stream';
import {
  CR,
  LF,
  QUOTE,
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
  detectLineBreak,
  quoteField,
  type LineBreakMode,
} from '../../../service/lists/scan.js';
import { exportKeepsStatus, exportNeedsStatus, type ExportChoice } from '../../../shared/exports.js';
import {
  defaultExportChoices,
  type ExportChoices,
  type ExportFormat,
  type LeftOut,
} from '../../../shared/exportChoices.js';
import { rowMatches, type RowFilter } from '../../../shared/rowFilter.js';
import { openRowWriter, type RowWriter } from '../exports/formats.js';
import { keyHashOf, RowShaper, resultsLayout, type ShapeRow } from '../exports/shape.js';
import { hashAsciiLowerInto } from '../../../service/lists/dupTable.js';
import { openListSource } from '../files/source.js';
import { BufferedFile, temporaryPathOf } from './outputs.js';
import { ResultsCounter, type CountsRequest, type ResultsCounts } from './counts.js';

export { EXPORT_KINDS, isExportKind, type ExportKind } from '../../../shared/exports.js';

/** The column of the status exports go by, and the one that flags a repeated address. */
export const STATUS_COLUMN = 'Validation Status';
export const DUPLICATE_COLUMN = 'Duplicate';

/** A row of the results, as a rule sees it. Valid only during the rule's call. */
export interface ResultRow extends ShapeRow {
  /** The row's `Validation Status`, lower case ('' when the results have no such column). */
  readonly status: string;
  /** Whether its `Duplicate` reads true (the address appeared earlier in the list). */
  readonly isDuplicate: boolean;
  /** The value of a column by its header name (the last column of that name: appended ones come last). */
  column(name: string): string | undefined;
  /** Every field of the row, decoded. */
  fields(): readonly string[];
  /** Field `index` of the row, decoded ('' past its last field). */
  field(index: number): string;
  /** How many fields the row has. */
  readonly fieldCount: number;
}

/** The row as it was, followed by these fields. */
export interface AppendedRow {
  readonly append: readonly string[];
}

/**
 * What an export does with a row: leave it out, copy it as it was, write these fields in its place, or write
 * it with fields appended (copied as its bytes when the writer can: no field decoded or quoted again).
 */
export type RowOutcome = boolean | readonly string[] | AppendedRow;

export interface ExportRule {
  /** The rule reads the status: results without a `Validation Status` column are refused. */
  readonly needsStatus: boolean;
  /**
   * The file format (exports for import, ../exports/formats.ts): rows are then written as fields in that
   * format rather than as the results' delimited text. Undefined: the results' own text.
   */
  readonly format?: ExportFormat;
  /** What the rule left out, by reason (exports for import). */
  leftOut?(): LeftOut;
  /** The header to write, given the results' columns; undefined writes the results' header as it was. */
  header?(columns: readonly string[]): readonly string[] | undefined;
  row(row: ResultRow): RowOutcome;
}

export interface ExportTarget {
  /** The export's name in the summary (its kind, for the kinds). */
  readonly name: string;
  /** The final path (written under a temporary name until complete). */
  readonly path: string;
  readonly rule: ExportRule;
}

/**
 * An export as data (it crosses to the export worker): a kind of shared/exports.ts and what shapes it. The
 * options an export may have go here, and `ruleOf` turns them into its rule.
 */
export interface ExportSpec {
  readonly kind: ExportChoice;
  /** The statuses of `custom`. */
  readonly statuses?: readonly string[];
  /** The user's own column names, in front of the results' (the file sent renamed some): the header. */
  readonly columnNames?: readonly string[] | null;
  /**
   * Exports for import (issue #12): the address to mail in the address column, duplicates, role and
   * disposable rows left out as chosen, written in the chosen format. Needs `emailIndex`.
   */
  readonly choices?: ExportChoices;
  /** The list's email column, 0-based (for `choices`). */
  readonly emailIndex?: number;
  /** Only rows matching this (a drill-down's "Export these rows", shared/rowFilter.ts), before the kind's rule. */
  readonly filter?: RowFilter;
}

/** An export to write: its name in the summary, its final path, and what it holds. */
export interface ExportRequest {
  readonly name: string;
  readonly path: string;
  readonly spec: ExportSpec;
}

/** The rule of an export: rows kept by their status, copied as they were; a filter narrows the rows first. */
export function ruleOf(spec: ExportSpec): ExportRule {
  const rule = kindRuleOf(spec);
  const { filter } = spec;
  if (!filter) return rule;
  const matches = (row: ResultRow) => rowMatches(filter, (name) => row.column(name));
  const by = filter.leftOutBy;
  if (by === undefined)
    return { ...rule, needsStatus: true, row: (row) => (matches(row) ? rule.row(row) : false) };
  // Rows that export of `by` (with its default choices) leaves out as duplicates: run it alongside.
  const inner = kindRuleOf({
    kind: by,
    columnNames: spec.columnNames ?? null,
    choices: defaultExportChoices(by),
    ...(spec.emailIndex !== undefined ? { emailIndex: spec.emailIndex } : {}),
  });
  const duplicatesLeftOut = () => inner.leftOut?.().duplicates ?? 0;
  return {
    ...rule,
    needsStatus: true,
    header(columns) {
      inner.header?.(columns);
      return rule.header?.(columns);
    },
    row(row) {
      const before = duplicatesLeftOut();
      inner.row(row);
      return duplicatesLeftOut() > before && matches(row) ? rule.row(row) : false;
    },
  };
}

function kindRuleOf(spec: ExportSpec): ExportRule {
  const { kind } = spec;
  const statuses = spec.statuses ?? [];
  const names = spec.columnNames;
  if (spec.choices) return shapedRule(spec, spec.choices);
  return {
    needsStatus: exportNeedsStatus(kind),
    ...(names ? { header: (columns) => columns.map((column, i) => names[i] ?? column) } : {}),
    row: kind === 'all' ? () => true : (row) => exportKeepsStatus(kind, row.status, statuses),
  };
}

/** The rule of an export for import: rows kept by status, then shaped (../exports/shape.ts). */
function shapedRule(spec: ExportSpec, choices: ExportChoices): ExportRule {
  const statuses = spec.statuses ?? [];
  let shaper: RowShaper | undefined;
  return {
    needsStatus: true,
    format: choices.format,
    header(columns) {
      const own = spec.columnNames ? columns.map((column, i) => spec.columnNames![i] ?? column) : columns;
      shaper = new RowShaper(own, resultsLayout(columns, spec.emailIndex ?? -1), choices);
      return shaper.header;
    },
    row(row) {
      if (!exportKeepsStatus(spec.kind, row.status, statuses)) return false;
      const shaped = shaper!.decide(row);
      if (shaped === false) return false;
      // Nearly every row: its own address mailed, so the row as it was with an empty `Original Email`.
      if (shaped === true && row.fieldCount === shaper!.width) return NOTHING_CORRECTED;
      return shaper!.build(row.fields(), shaped);
    },
    leftOut: () => shaper?.leftOut ?? { duplicates: 0, role: 0, disposable: 0 },
  };
}

const NOTHING_CORRECTED: AppendedRow = { append: [''] };

/** The counter of the Results screen's numbers, with the default export's rule (counts.ts). */
export const counterOf = (request: CountsRequest): ResultsCounter =>
  new ResultsCounter(ruleOf(request.spec), request.spec.kind, request.isOffline);

export const targetOf = (request: ExportRequest): ExportTarget => ({
  name: request.name,
  path: request.path,
  rule: ruleOf(request.spec),
});

export interface ResultsSummary {
  /** Rows below the header. */
  readonly rows: number;
  /** Rows whose `Duplicate` is true. */
  readonly duplicates: number;
  /** Rows written to each export, by target name. */
  readonly exported: Readonly<Record<string, number>>;
  /** What each export for import left out, by target name. */
  readonly leftOut?: Readonly<Record<string, LeftOut>>;
  /** The Results screen's numbers, when asked for (`ResultsExporter.open`'s counter). */
  readonly counts?: ResultsCounts;
}

const WINDOW_BYTES = 4 * 1024 * 1024;
const MAX_ROW_BYTES = 4 * 1024 * 1024;

export class ResultsFormatError extends Error {
  readonly code = 'results-unreadable';
}

// Status words read from the field's bytes without a string per row: the known words, interned.
const STATUS_WORDS = [
  'valid',
  'invalid',
  'unknown',
  'corrected',
  'risky',
  'unverifiable',
  'safetosend',
  'trap',
  'catchall',
].map((word) => [word, Buffer.from(word)] as const);

/** The status in `buf[start, end)`, lower case. */
function statusAt(buf: Buffer, start: number, end: number): string {
  const length = end - start;
  for (const [word, bytes] of STATUS_WORDS) {
    if (bytes.length !== length) continue;
    let i = 0;
    while (i < length && (buf[start + i] | 0x20) === bytes[i]) i++;
    if (i === length) return word;
  }
  return buf.toString('utf8', start, end).toLowerCase();
}

function isTrueAt(buf: Buffer, start: number, end: number): boolean {
  return (
    end - start === 4 &&
    (buf[start] | 0x20) === 0x74 &&
    (buf[start + 1] | 0x20) === 0x72 &&
    (buf[start + 2] | 0x20) === 0x75 &&
    (buf[start + 3] | 0x20) === 0x65
  );
}

/** The row handed to rules: its bytes, and its fields found and decoded on demand. */
class RowView implements ResultRow {
  status = '';
  isDuplicate = false;
  /** The row holds no quote: its fields are split at every delimiter byte. */
  private isQuoteFree = false;
  /** Whether the row's text is as a writer would write its fields (1), is not (0), or not known yet (-1). */
  private canonical = -1;
  private buf: Buffer = EMPTY;
  private start = 0;
  private end = 0;
  private count = -1;
  /** The fields of a quote-free row, split here. */
  private plainStarts = new Int32Array(64);
  private plainEnds = new Int32Array(64);
  private unquoted = new Uint8Array(64);
  /** The fields found: the plain split's arrays, or the scanner's. */
  private starts: Int32Array = this.plainStarts;
  private ends: Int32Array = this.plainEnds;
  private quoted: Uint8Array = this.unquoted;
  private decoded: string[] | undefined;

  constructor(
    private readonly scanner: RowScanner,
    private readonly columns: ReadonlyMap<string, number>,
    /** The one-byte delimiter of quote-free rows (-1: none, every row goes through the scanner). */
    private readonly d0: number,
  ) {}

  /** `isQuoteFree`: the caller saw no quote in the row (false: not known). */
  set(
    buf: Buffer,
    start: number,
    end: number,
    status: string,
    isDuplicate: boolean,
    isQuoteFree: boolean,
  ): void {
    this.buf = buf;
    this.start = start;
    this.end = end;
    this.status = status;
    this.isDuplicate = isDuplicate;
    this.isQuoteFree = isQuoteFree && this.d0 >= 0;
    this.canonical = -1;
    this.count = -1;
    this.decoded = undefined;
  }

  /** Finds the row's fields: a quote-free row split at every delimiter byte, any other by the scanner. */
  private scan(): number {
    if (this.count >= 0) return this.count;
    const { buf, d0 } = this;
    if (this.isQuoteFree) {
      this.starts = this.plainStarts;
      this.ends = this.plainEnds;
      this.quoted = this.unquoted;
      let f = 0;
      let from = this.start;
      for (let i = this.start; i < this.end; i++) {
        const c = buf[i];
        if (c === CR) this.canonical = 0;
        if (c !== d0) continue;
        f = this.push(f, from, i);
        from = i + 1;
      }
      // Without quotes, a row is as a writer would write it unless a lone \r is in it.
      if (this.canonical < 0) this.canonical = 1;
      return (this.count = this.push(f, from, this.end));
    }
    const scanner = this.scanner;
    scanner.windowChanged();
    const isRow = scanner.scan(buf, this.start, this.end, true) === 1;
    this.starts = scanner.fieldStart;
    this.ends = scanner.fieldEnd;
    this.quoted = scanner.fieldQuoted;
    return (this.count = isRow ? scanner.fields : 0);
  }

  /** Field `f` of the plain split; answers the count. */
  private push(f: number, start: number, end: number): number {
    if (f === this.plainStarts.length) {
      const grow = (array: Int32Array) => {
        const grown = new Int32Array(array.length * 2);
        grown.set(array);
        return grown;
      };
      this.starts = this.plainStarts = grow(this.plainStarts);
      this.ends = this.plainEnds = grow(this.plainEnds);
      this.quoted = this.unquoted = new Uint8Array(this.plainStarts.length);
    }
    this.plainStarts[f] = start;
    this.plainEnds[f] = end;
    return f + 1;
  }

  get fieldCount(): number {
    return this.scan();
  }

  /**
   * Whether the row's bytes are what a writer of its delimiter gives for its fields (scan.ts
   * `quoteField`): a field quoted exactly when it holds the delimiter, a quote or a line break. Nearly
   * every row is, and is then copied as it was instead of being decoded and written again.
   */
  get isCanonical(): boolean {
    if (this.d0 < 0 || this.scan() === 0) return false;
    if (this.canonical < 0) this.canonical = this.isEachFieldCanonical() ? 1 : 0;
    return this.canonical === 1;
  }

  private isEachFieldCanonical(): boolean {
    const { buf, d0, starts, ends, quoted } = this;
    for (let f = 0; f < this.count; f++) {
      let needsQuotes = false;
      for (let i = starts[f]; i < ends[f] && !needsQuotes; i++) {
        const c = buf[i];
        needsQuotes = c === d0 || c === QUOTE || c === LF || c === CR;
      }
      if (needsQuotes !== (quoted[f] === 1)) return false;
    }
    return true;
  }

  field(index: number): string {
    if (this.decoded) return this.decoded[index] ?? '';
    if (index < 0 || index >= this.scan()) return '';
    const text = this.buf.toString('utf8', this.starts[index], this.ends[index]);
    return this.quoted[index] ? text.replaceAll('""', '"') : text;
  }

  fieldKeyHash(index: number, out: Uint32Array): boolean {
    // An unquoted ASCII address without white space at its ends is its own key once in lower case.
    if (!this.decoded && index >= 0 && index < this.scan() && this.quoted[index] === 0) {
      const { buf } = this;
      const start = this.starts[index];
      const end = this.ends[index];
      if (
        end > start &&
        buf[start] > 0x20 &&
        buf[end - 1] > 0x20 &&
        hashAsciiLowerInto(buf, start, end, out, 0)
      )
        return true;
    }
    return keyHashOf(this.field(index), out);
  }

  fields(): readonly string[] {
    if (this.decoded) return this.decoded;
    const count = this.scan();
    const fields: string[] = [];
    for (let f = 0; f < count; f++) fields.push(this.field(f));
    return (this.decoded = fields);
  }

  column(name: string): string | undefined {
    const index = this.columns.get(name);
    return index === undefined ? undefined : this.field(index);
  }
}

interface ExportState {
  readonly target: ExportTarget;
  readonly temporary: string;
  readonly file: BufferedFile;
  /** For a rule with a format: the rows go here as fields (`file` stays empty and is removed). */
  readonly writer?: RowWriter;
  rows: number;
  /** A run of consecutive rows to copy in one go: `[runStart, runEnd)` of the window (-1: none). */
  runStart: number;
  runEnd: number;
}

/**
 * Reads a results file pushed chunk by chunk and writes the exports. `delimiter`: the results' delimiter
 * (the list's). Call `push` for every chunk in order, then `finish` (or `abort`).
 *
 * A row whose quotes are balanced on its line (nearly all) ends at its line break, and its status and
 * duplicate fields are read backwards from there; other rows go through the row scanner.
 */
export class ResultsExporter {
  private readonly window = Buffer.allocUnsafe(WINDOW_BYTES + MAX_ROW_BYTES);
  private end = 0;
  private scanner: RowScanner | undefined;
  private view: RowView | undefined;
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
  private isLineQuoteFree = false;

  /** Counts the rows as they pass (the Results screen's numbers); none when the results have no status. */
  private counter: ResultsCounter | undefined;

  private constructor(private readonly delimiter: string) {}

  static async open(
    delimiter: string,
    targets: readonly ExportTarget[],
    counter?: ResultsCounter,
  ): Promise<ResultsExporter> {
    const exporter = new ResultsExporter(delimiter);
    exporter.counter = counter;
    try {
      for (const target of targets) {
        const temporary = temporaryPathOf(target.path);
        const format = target.rule.format;
        exporter.files.push({
          target,
          temporary,
          ...(format
            ? {
                writer: await openRowWriter(temporary, format, basename(target.path).replace(/\.[^.]+$/, '')),
              }
            : {}),
          file: await BufferedFile.create(format ? `${temporary}.unused` : temporary),
          rows: 0,
          runStart: -1,
          runEnd: -1,
        });
      }
    } catch (error) {
      await exporter.abort();
      throw error;
    }
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

  /** Every byte is in: completes the exports and gives them their final names. */
  async finish(): Promise<ResultsSummary> {
    try {
      await this.drain(true);
      if (!this.isHeaderDone) throw new ResultsFormatError('The results file is empty.');
      for (const { file, writer, temporary } of this.files) {
        await file.close();
        if (writer) {
          rmSync(`${temporary}.unused`, { force: true });
          await writer.close();
        }
      }
    } catch (error) {
      await this.abort();
      throw error;
    }
    const exported: Record<string, number> = {};
    const leftOut: Record<string, LeftOut> = {};
    for (const { target, temporary, rows } of this.files) {
      renameSync(temporary, target.path);
      exported[target.name] = rows;
      const left = target.rule.leftOut?.();
      if (left) leftOut[target.name] = left;
    }
    return {
      rows: this.rows,
      duplicates: this.duplicates,
      exported,
      ...(Object.keys(leftOut).length > 0 ? { leftOut } : {}),
      ...(this.counter ? { counts: this.counter.result() } : {}),
    };
  }

  /** Abandons the exports: their temporary files are removed, final names untouched. */
  async abort(): Promise<void> {
    for (const { file, temporary, writer } of this.files) {
      await file.close().catch(() => undefined);
      await writer?.abort();
      rmSync(temporary, { force: true });
      rmSync(`${temporary}.unused`, { force: true });
    }
  }

  /**
   * The \n ending the row at `pos` when the row's quotes are balanced on its line, else -1; whether the line
   * holds no quote at all goes to `isLineQuoteFree`.
   */
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
    this.isLineQuoteFree = quotes === 0;
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
      if (this.end === this.bom) return;
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
            let status = '';
            if (fromEnd.status >= 0) {
              const statusEnd = fromEnd.status === 0 ? contentEnd : delimiters[fromEnd.status - 1];
              status = statusAt(buf, delimiters[fromEnd.status] + 1, statusEnd);
            }
            let isDuplicate = false;
            if (fromEnd.duplicate >= 0) {
              const dupEnd = fromEnd.duplicate === 0 ? contentEnd : delimiters[fromEnd.duplicate - 1];
              isDuplicate = isTrueAt(buf, delimiters[fromEnd.duplicate] + 1, dupEnd);
            }
            const waiting = this.take(
              buf,
              start,
              contentEnd,
              next,
              status,
              isDuplicate,
              this.isLineQuoteFree,
            );
            if (waiting) await waiting;
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
        await this.readHeader(scanner, buf, contentEnd);
        continue;
      }
      if (scanner.fields === 1 && contentEnd === start) continue;
      const status = this.fieldAt(scanner, this.statusIndex, statusAt, '');
      const isDuplicate = this.fieldAt(scanner, this.duplicateIndex, isTrueAt, false);
      const waiting = this.take(buf, start, contentEnd, pos, status, isDuplicate, false);
      if (waiting) await waiting;
    }
    await this.flushRuns(buf);
    // Keep the unread tail at the front.
    if (pos > 0) {
      buf.copyWithin(0, pos, this.end);
      this.end -= pos;
    }
  }

  private fieldAt<T>(
    scanner: RowScanner,
    index: number,
    read: (buf: Buffer, start: number, end: number) => T,
    absent: T,
  ): T {
    if (index < 0 || index >= scanner.fields) return absent;
    return read(this.window, scanner.fieldStart[index], scanner.fieldEnd[index]);
  }

  /**
   * A row: `buf[start, contentEnd)`, its line break up to `next` (none for the last row of a file without
   * one); `isQuoteFree` when the caller saw no quote in it. Each export's rule decides; copied rows join the
   * export's run of consecutive rows. Answers a promise only when a write must be waited for: nearly every
   * row is placed in a buffer at once, and a million awaits cost more than the rows' own work.
   */
  private take(
    buf: Buffer,
    start: number,
    contentEnd: number,
    next: number,
    status: string,
    isDuplicate: boolean,
    isQuoteFree: boolean,
  ): Promise<void> | undefined {
    this.rows++;
    if (isDuplicate) this.duplicates++;
    const view = this.view!;
    view.set(buf, start, contentEnd, status, isDuplicate, isQuoteFree);
    this.counter?.row(view);
    return this.takeFrom(0, buf, start, contentEnd, next);
  }

  /** `take` for the exports from the k-th on; after a write to wait for, the rest follow it. */
  private takeFrom(
    k: number,
    buf: Buffer,
    start: number,
    contentEnd: number,
    next: number,
  ): Promise<void> | undefined {
    for (; k < this.files.length; k++) {
      const state = this.files[k];
      const outcome = state.target.rule.row(this.view!);
      if (outcome === false) continue;
      state.rows++;
      const waiting = this.place(state, outcome, buf, start, contentEnd, next);
      const after = k + 1;
      if (waiting) return waiting.then(() => this.takeFrom(after, buf, start, contentEnd, next));
    }
    return undefined;
  }

  /** Writes a row an export keeps, as its outcome says; a promise only when a write must be waited for. */
  private place(
    state: ExportState,
    outcome: Exclude<RowOutcome, false>,
    buf: Buffer,
    start: number,
    contentEnd: number,
    next: number,
  ): Promise<void> | undefined {
    const view = this.view!;
    const writer = state.writer;
    if (writer) {
      if (outcome !== true && !isAppended(outcome)) return writer.writeRow(outcome);
      const append = outcome === true ? NO_FIELDS : outcome.append;
      const fields = () => (append.length > 0 ? [...view.fields(), ...append] : view.fields());
      // A row goes as its bytes when they are what the writer would write (same delimiter, same quoting).
      if (writer.copyRow && view.isCanonical) {
        const copied = writer.copyRow(buf, start, contentEnd, this.delimiter, append);
        if (copied === true) return undefined;
        if (copied !== false)
          return copied.then((isCopied) => (isCopied ? undefined : writer.writeRow(fields())));
      }
      return writer.writeRow(fields());
    }
    if (isAppended(outcome)) {
      const row = this.encode([...view.fields(), ...outcome.append]);
      return this.flushRun(state, buf).then(() => state.file.write(row));
    }
    if (outcome === true && next > contentEnd) {
      if (state.runEnd === start) {
        state.runEnd = next;
        return undefined;
      }
      const runStart = state.runStart;
      const runEnd = state.runEnd;
      state.runStart = start;
      state.runEnd = next;
      if (runStart < 0 || state.file.tryAppend(buf, runStart, runEnd, EMPTY)) return undefined;
      return state.file.append(buf, runStart, runEnd, EMPTY);
    }
    const row = outcome === true ? undefined : this.encode(outcome);
    return this.flushRun(state, buf).then(() =>
      row === undefined ? state.file.append(buf, start, contentEnd, this.newline) : state.file.write(row),
    );
  }

  /** Fields as a row of the results' delimiter and line break, quoted where needed. */
  private encode(fields: readonly string[]): Buffer {
    return Buffer.from(
      fields.map((field) => quoteField(field, this.delimiter)).join(this.delimiter) +
        this.newline.toString('latin1'),
    );
  }

  private async flushRun(state: ExportState, buf: Buffer): Promise<void> {
    if (state.runStart >= 0) await state.file.append(buf, state.runStart, state.runEnd, EMPTY);
    state.runStart = -1;
    state.runEnd = -1;
  }

  private async flushRuns(buf: Buffer): Promise<void> {
    for (const state of this.files) await this.flushRun(state, buf);
  }

  private async readHeader(scanner: RowScanner, buf: Buffer, contentEnd: number): Promise<void> {
    const names: string[] = [];
    for (let f = 0; f < scanner.fields; f++)
      names.push(buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]));
    // The appended columns are the last ones: search from the end, in case an input column has the same name.
    this.statusIndex = names.lastIndexOf(STATUS_COLUMN);
    this.duplicateIndex = names.lastIndexOf(DUPLICATE_COLUMN);
    if (this.statusIndex < 0 && this.files.some(({ target }) => target.rule.needsStatus))
      throw new ResultsFormatError(
        `The results file has no “${STATUS_COLUMN}” column (the list ran no validation): export all rows.`,
      );
    const columns = new Map<string, number>();
    names.forEach((name, i) => columns.set(name, i));
    if (this.counter && !this.counter.header(names)) this.counter = undefined;
    const mode: LineBreakMode = this.isCrMode ? 'cr' : 'lf';
    const delimiterBytes = Buffer.from(this.delimiter, 'utf8');
    this.view = new RowView(
      new RowScanner(delimiterBytes, mode),
      columns,
      delimiterBytes.length === 1 && !this.isCrMode ? delimiterBytes[0] : -1,
    );
    for (const state of this.files) {
      const header = state.target.rule.header?.(names);
      if (state.writer) {
        await state.writer.writeRow(header ?? names);
        continue;
      }
      if (header) {
        if (this.bom > 0) await state.file.write(buf.subarray(0, this.bom));
        await state.file.write(this.encode(header));
      } else await state.file.append(buf, 0, contentEnd, this.newline);
    }
    this.isHeaderDone = true;
    // The fast path reads fields back from the line break: only with a one-byte delimiter and \n breaks.
    const delimiter = Buffer.from(this.delimiter, 'utf8');
    if (delimiter.length === 1 && !this.isCrMode) {
      const last = names.length - 1;
      this.d0 = delimiter[0];
      this.fromEnd = {
        status: this.statusIndex < 0 ? -1 : last - this.statusIndex,
        duplicate: this.duplicateIndex < 0 ? -1 : last - this.duplicateIndex,
      };
      this.delimiters = new Int32Array(Math.max(this.fromEnd.status, this.fromEnd.duplicate) + 1);
    }
  }
}

const EMPTY = Buffer.alloc(0);
const NO_FIELDS: readonly string[] = [];

const isAppended = (outcome: RowOutcome): outcome is AppendedRow =>
  typeof outcome === 'object' && !Array.isArray(outcome);

/**
 * Writes exports of a stored results file (a text file or a zip holding one): History's re-export and the
 * Results screen. `name` is the results file's name (whether it is a zip).
 */
export async function exportResultsFile(
  path: string,
  name: string,
  delimiter: string,
  exports: readonly ExportRequest[],
  counts?: CountsRequest,
): Promise<ResultsSummary> {
  const source = await openListSource(path, name, statSync(path).size);
  const stream: Readable = await source.open();
  const exporter = await ResultsExporter.open(
    delimiter,
    exports.map(targetOf),
    counts ? counterOf(counts) : undefined,
  );
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) await exporter.push(chunk);
  } catch (error) {
    stream.destroy();
    await exporter.abort();
    throw error;
  }
  return exporter.finish();
}

/**
 * An export's file name, the one rule of `mailsieve clean` and the desktop: `<list stem>-<suffix><extension>`
 * — the stem of the list's file name (shortened so that the name fits, outputNameFor), the export's kind (or
 * its statuses), the extension of the results' text (`.csv` or `.txt`; a zipped list's exports are its
 * text) or of the export format. `big.csv`'s clean export is `big-clean.csv`.
 */
export function exportFileName(listName: string, suffix: string, extension: string): string {
  const name = outputNameFor(basename(listName));
  return `${basename(name, extname(name))}-${suffix}${extension}`;
}
