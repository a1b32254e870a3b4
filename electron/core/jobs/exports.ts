// The one exporter of results files, for `mailsieve clean` and the desktop: each export is computed in one
// streamed pass over the results' bytes, either as they are downloaded (the export workers, exportWorker.ts)
// or from a stored results file (the desktop's Results screen and History re-export, `exportResultsFile`).
// The pass has two halves: rowFramer.ts finds the rows and their fields, this module writes them.
//
// The seam: an export is a target with a rule (`ExportRule`). For each row the rule gets a `ResultRow` — the
// row's `Validation Status` and `Duplicate`, and on demand its appended columns by name or all its fields — and
// answers what the export does with it: leave it out (false), copy it as it was (true: its bytes are copied
// untouched, consecutive rows in one copy), or write these fields instead (a reshaped row). Fields are decoded
// only when a rule asks. The kinds of shared/exports.ts are rules of the first two sorts (`kindRule`).
//
// Every export is written under a temporary name (outputs.ts) and renamed when complete; `abort` removes them.
import { renameSync, rmSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { outputNameFor } from '../../../shared/fileName.js';
import type { Readable } from 'node:stream';
import { quoteField } from '../../../service/lists/read/scan.js';
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
import { hashAsciiLowerInto, hashTupleInto } from '../../../service/lists/read/dupTable.js';
import { openListSource } from '../files/source.js';
import { BufferedFile, temporaryPathOf } from './outputs.js';
import {
  BatchPool,
  F_CANONICAL,
  F_DUPLICATE,
  R_BASE,
  R_CONTENT_END,
  R_FIELDS,
  R_FLAGS,
  R_NEXT,
  R_START,
  R_STATUS,
  ROW_STRIDE,
  RowFramer,
  STATUS_COLUMN,
  STATUS_NONE,
  STATUS_OTHER,
  STATUS_WORDS,
  ResultsProblem,
  type BatchBuffers,
  type FrameHeader,
  type FramedBatch,
} from './rowFramer.js';
import { ResultsCounter, type CountsRequest, type ResultsCounts } from './counts.js';
import { ResultsSink } from './resultsSink.js';
import { BudgetGate, type BudgetTake, type BudgetTally } from './budgetGate.js';

export { EXPORT_KINDS, isExportKind, type ExportKind } from '../../../shared/exports.js';

export { DUPLICATE_COLUMN, ResultsProblem, STATUS_COLUMN } from './rowFramer.js';

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
  /**
   * Writes a 64-bit key of the row's status, the bytes of fields `indices` as the file has them (-1: none)
   * and `tag` to `out[0]`, `out[1]`: rows of one key read alike. Absent for a row read as strings.
   */
  tupleKeyHash?(indices: readonly number[], tag: number, out: Uint32Array): void;
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
  /** An export planned against a bounce budget: the rows it met after its choices (budgetGate.ts). */
  budget?(): BudgetTally;
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
  /**
   * An export planned against a bounce budget (issue 37, budget.ts): the rows judged safe, and of the
   * accept-all and unknown rows as many of each code as the plan takes (budgetGate.ts).
   */
  readonly budget?: BudgetTake;
}

/** An export to write: its name in the summary, its final path, and what it holds. */
export interface ExportRequest {
  readonly name: string;
  readonly path: string;
  readonly spec: ExportSpec;
  /**
   * The rows of the results, when known (the list's records): an export that removes duplicates makes its
   * set of addresses with room for them at once (HashSet64), where growing it as it filled copied it and left
   * the old tables as garbage (issue 38: ~18 MB of the 1,000,000-row clean's export stage). A size, not part
   * of what the export is (its spec): two exports of one spec write the same rows whatever it says.
   */
  readonly rows?: number;
}

/**
 * The rule of an export: rows kept by their status, copied as they were; a filter narrows the rows first.
 * `rows`: the rows of the results, when known (ExportRequest.rows).
 */
export function ruleOf(spec: ExportSpec, rows?: number): ExportRule {
  const rule = kindRuleOf(spec, rows);
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

function kindRuleOf(spec: ExportSpec, rows?: number): ExportRule {
  const { kind } = spec;
  const statuses = spec.statuses ?? [];
  const names = spec.columnNames;
  if (spec.choices) return shapedRule(spec, spec.choices, rows);
  if (spec.budget) {
    const gate = new BudgetGate(kind, spec.budget);
    return {
      needsStatus: true,
      ...(names ? { header: (columns) => columns.map((column, i) => names[i] ?? column) } : {}),
      row: (row) => gate.keeps(row) && gate.admit(),
      budget: () => gate.tally,
    };
  }
  return {
    needsStatus: exportNeedsStatus(kind),
    ...(names ? { header: (columns) => columns.map((column, i) => names[i] ?? column) } : {}),
    row: kind === 'all' ? () => true : (row) => exportKeepsStatus(kind, row.status, statuses),
  };
}

/** The rule of an export for import: rows kept by status, then shaped (../exports/shape.ts). */
function shapedRule(spec: ExportSpec, choices: ExportChoices, rows?: number): ExportRule {
  const statuses = spec.statuses ?? [];
  let shaper: RowShaper | undefined;
  const gate = spec.budget ? new BudgetGate(spec.kind, spec.budget) : undefined;
  return {
    needsStatus: true,
    format: choices.format,
    header(columns) {
      const own = spec.columnNames ? columns.map((column, i) => spec.columnNames![i] ?? column) : columns;
      shaper = new RowShaper(own, resultsLayout(columns, spec.emailIndex ?? -1), choices, rows);
      return shaper.header;
    },
    row(row) {
      if (gate ? !gate.keeps(row) : !exportKeepsStatus(spec.kind, row.status, statuses)) return false;
      const shaped = shaper!.decide(row);
      if (shaped === false) return false;
      // A budget export's choices run over every row it may hold, so that both of its passes meet the same.
      if (gate && !gate.admit()) return false;
      // Nearly every row: its own address mailed, so the row as it was with an empty `Original Email`.
      if (shaped === true && row.fieldCount === shaper!.width) return NOTHING_CORRECTED;
      return shaper!.build(row.fields(), shaped);
    },
    leftOut: () => shaper?.leftOut ?? { duplicates: 0, role: 0, disposable: 0 },
    ...(gate ? { budget: () => gate.tally } : {}),
  };
}

const NOTHING_CORRECTED: AppendedRow = { append: [''] };

/** The counter of the Results screen's numbers, with the default export's rule (counts.ts). */
export const counterOf = (request: CountsRequest): ResultsCounter =>
  new ResultsCounter(ruleOf(request.spec), request.spec.kind, request.isOffline);

/**
 * The targets of `exports`, and the counter of `counts`. When the first export is the default export itself
 * (the desktop's download writes it in the same pass, preparedExport.ts), the counter takes that export's
 * decision for each row rather than running the same rule a second time: half the rule's work (its
 * duplicate table, its choices) for every row of the download.
 */
export function targetsAndCounter(
  exports: readonly ExportRequest[],
  counts: CountsRequest | undefined,
): { targets: ExportTarget[]; counter?: ResultsCounter; isCounterShared: boolean } {
  const targets = exports.map(targetOf);
  if (!counts) return { targets, isCounterShared: false };
  const first = targets[0];
  if (first && isCountShared(exports, counts))
    return {
      targets,
      counter: new ResultsCounter(first.rule, counts.spec.kind, counts.isOffline, true),
      isCounterShared: true,
    };
  return { targets, counter: counterOf(counts), isCounterShared: false };
}

/** Whether the first export is the default export of `counts`: its written rows are then Ready to mail. */
export const isCountShared = (exports: readonly ExportRequest[], counts: CountsRequest): boolean =>
  exports.length > 0 && JSON.stringify(exports[0].spec) === JSON.stringify(counts.spec);

export const targetOf = (request: ExportRequest): ExportTarget => ({
  name: request.name,
  path: request.path,
  rule: ruleOf(request.spec, request.rows),
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

/** The byte ranges of RowView.tupleKeyHash's fields. */
let tupleBounds = new Int32Array(8);

/** The row handed to rules: its bytes, and its fields (found by the framer) decoded on demand. */
class RowView implements ResultRow {
  status = '';
  isDuplicate = false;
  private canonical = false;
  private buf: Buffer = EMPTY;
  private base = 0;
  private count = 0;
  private starts: Int32Array = NO_BOUNDS;
  private ends: Int32Array = NO_BOUNDS;
  private quoted: Uint8Array = EMPTY;
  private decoded: string[] | undefined;

  constructor(private readonly columns: ReadonlyMap<string, number>) {}

  /** The row of a batch's buffers whose record starts at `at` (row r's at `r * ROW_STRIDE`). */
  set(buffers: BatchBuffers, at: number, status: string): void {
    const { rows, window, starts, ends, quoted } = buffers;
    this.buf = window;
    this.starts = starts;
    this.ends = ends;
    this.quoted = quoted;
    this.base = rows[at + R_BASE];
    this.count = rows[at + R_FIELDS];
    const flags = rows[at + R_FLAGS];
    this.isDuplicate = (flags & F_DUPLICATE) !== 0;
    this.canonical = (flags & F_CANONICAL) !== 0;
    this.status = status;
    this.decoded = undefined;
  }

  get fieldCount(): number {
    return this.count;
  }

  /**
   * Whether the row's bytes are what a writer of its delimiter gives for its fields (scan.ts
   * `quoteField`): a field quoted exactly when it holds the delimiter, a quote or a line break. Nearly
   * every row is, and is then copied as it was instead of being decoded and written again.
   */
  get isCanonical(): boolean {
    return this.canonical;
  }

  field(index: number): string {
    if (this.decoded) return this.decoded[index] ?? '';
    if (index < 0 || index >= this.count) return '';
    const f = this.base + index;
    if (this.quoted[f] === 0) {
      const short = shortFieldOf(this.buf, this.starts[f], this.ends[f]);
      if (short !== undefined) return short;
    }
    const text = this.buf.toString('utf8', this.starts[f], this.ends[f]);
    return this.quoted[f] ? text.replaceAll('""', '"') : text;
  }

  fieldKeyHash(index: number, out: Uint32Array): boolean {
    // An unquoted ASCII address without white space at its ends is its own key once in lower case.
    if (!this.decoded && index >= 0 && index < this.count && this.quoted[this.base + index] === 0) {
      const { buf } = this;
      const start = this.starts[this.base + index];
      const end = this.ends[this.base + index];
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

  tupleKeyHash(indices: readonly number[], tag: number, out: Uint32Array): void {
    if (tupleBounds.length < 2 * indices.length) tupleBounds = new Int32Array(2 * indices.length);
    const bounds = tupleBounds;
    for (let k = 0; k < indices.length; k++) {
      const index = indices[k];
      const isField = index >= 0 && index < this.count;
      bounds[2 * k] = isField ? this.starts[this.base + index] : 0;
      bounds[2 * k + 1] = isField ? this.ends[this.base + index] : 0;
    }
    hashTupleInto(this.status, this.buf, bounds, indices.length, tag, out, 0);
  }

  fields(): readonly string[] {
    if (this.decoded) return this.decoded;
    const fields: string[] = [];
    for (let f = 0; f < this.count; f++) fields.push(this.field(f));
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

/** The status of a row's record: its STATUS_WORDS id, or the next of `others` (STATUS_OTHER), or none. */
function statusOf(id: number, others: readonly string[] | undefined, other: { at: number }): string {
  if (id === STATUS_OTHER) return others![other.at++];
  return id === STATUS_NONE ? '' : STATUS_WORDS[id];
}

/** Each column's index by its name: a name given twice, its last column (the appended columns come last). */
export function columnIndex(names: readonly string[]): Map<string, number> {
  const columns = new Map<string, number>();
  names.forEach((name, i) => columns.set(name, i));
  return columns;
}

/**
 * The Results screen's numbers of framed batches, but Ready to mail and the duplicates left out, counted
 * where the batches are framed: for a download in two threads (exportWorker.ts), on the framer's, which waits
 * for the exporter's (the stage's bottleneck: the counter's keys and tallies cost it about 0.2 s a million
 * rows). Only when the first export is the default export (isCountShared): the exporter then adds those two
 * numbers, its own first export's (`ResultsExporter.finish`). `add` each batch before it is handed on.
 */
export class FramedCounts {
  private view: RowView | undefined;
  private readonly counter: ResultsCounter;
  private isCounting = true;
  private readonly other = { at: 0 };

  constructor(request: CountsRequest) {
    // The default export's decision is not known here: every row counts as not written (`row(view, false)`).
    this.counter = new ResultsCounter(ruleOf(request.spec), request.spec.kind, request.isOffline, true);
  }

  add(batch: FramedBatch): void {
    if (batch.header) {
      this.isCounting = this.counter.header(batch.header.names);
      this.view = new RowView(columnIndex(batch.header.names));
    }
    const view = this.view;
    if (!view || !this.isCounting) return;
    const buffers = batch.set;
    const rows = buffers.rows;
    const others = batch.otherStatuses;
    const other = this.other;
    other.at = 0;
    for (let r = 0, at = 0; r < batch.rowCount; r++, at += ROW_STRIDE) {
      view.set(buffers, at, statusOf(rows[at + R_STATUS], others, other));
      this.counter.row(view, false);
    }
  }

  /** The counts but `ready` and `duplicatesLeftOut` (0 here); none when the results have no status column. */
  result(): ResultsCounts | undefined {
    return this.view && this.isCounting ? this.counter.result() : undefined;
  }
}

/**
 * Writes the exports of a results file. `delimiter`: the results' delimiter (the list's). Either push the
 * file chunk by chunk (`push`, then `finish`): the rows are found in this thread; or hand it batches of rows
 * already found by a RowFramer in another thread (`consume` for each, in order, then `finish(true)`).
 * `abort` instead of `finish` abandons the exports.
 */
export class ResultsExporter {
  private view: RowView | undefined;
  private files: ExportState[] = [];
  private isHeaderDone = false;
  private newline: Buffer = Buffer.from('\n');
  private rows = 0;
  private duplicates = 0;
  /** The framer of `push` (in this thread): its batches come straight back to `consume`. */
  private framer: RowFramer | undefined;

  /** Counts the rows as they pass (the Results screen's numbers); none when the results have no status. */
  private counter: ResultsCounter | undefined;
  /** The counter's rule is the first export's (targetsAndCounter): it is told that export's decision. */
  private isCounterShared = false;
  /** The rows are counted by the framer (FramedCounts), and `finish` is given its counts. */
  private isCountedByFramer = false;
  /** Whether the first export wrote the row `takeFrom` decided last. */
  private isFirstWritten = false;

  private constructor(private readonly delimiter: string) {}

  /**
   * `isCounterShared`: `counter` counts with the first target's own rule (targetsAndCounter), which decides
   * each row once for both.
   */
  static async open(
    delimiter: string,
    targets: readonly ExportTarget[],
    counter?: ResultsCounter,
    isCounterShared = false,
    isCountedByFramer = false,
  ): Promise<ResultsExporter> {
    const exporter = new ResultsExporter(delimiter);
    exporter.counter = counter;
    exporter.isCounterShared = counter !== undefined && isCounterShared && targets.length > 0;
    exporter.isCountedByFramer = isCountedByFramer && targets.length > 0;
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
    if (!this.framer) {
      const pool = new BatchPool(2);
      this.framer = new RowFramer(this.delimiter, {
        take: (minBytes) => pool.take(minBytes),
        give: (set) => pool.give(set),
        emit: async (batch) => {
          await this.consume(batch);
          pool.give(batch.set);
        },
      });
    }
    await this.framer.push(chunk);
  }

  /** Writes the rows of a batch; its buffers may be reused once this resolves. */
  async consume(batch: FramedBatch): Promise<void> {
    const buf = batch.set.window;
    if (batch.header) await this.readHeader(batch.header, buf);
    const view = this.view;
    if (!view) return;
    // The rows an export writes as their bytes are copied from one copy of the batch (formats.ts `stage`).
    for (const { writer } of this.files) writer?.stage?.(buf, batch.length);
    try {
      await this.consumeRows(batch, view, batch.set.rows, batch.otherStatuses);
    } finally {
      for (const { writer } of this.files) writer?.unstage?.();
    }
  }

  private async consumeRows(
    batch: FramedBatch,
    view: RowView,
    rows: Int32Array,
    others: readonly string[] | undefined,
  ): Promise<void> {
    const buffers = batch.set;
    const buf = buffers.window;
    const rowCount = batch.rowCount;
    const other = { at: 0 };
    for (let r = 0, at = 0; r < rowCount; r++, at += ROW_STRIDE) {
      view.set(buffers, at, statusOf(rows[at + R_STATUS], others, other));
      this.rows++;
      if (view.isDuplicate) this.duplicates++;
      if (!this.isCounterShared) this.counter?.row(view);
      const waiting = this.takeFrom(0, buf, rows[at + R_START], rows[at + R_CONTENT_END], rows[at + R_NEXT]);
      // The first export decided the row before any wait (takeFrom starts with it), and the view is still
      // this row's until the next `set`.
      if (this.isCounterShared) this.counter?.row(view, this.isFirstWritten);
      if (waiting) await waiting;
    }
    await this.flushRuns(buf);
  }

  /**
   * Every byte is in: completes the exports and gives them their final names. `isFramed`: the batches came
   * from a framer elsewhere (`consume`), which saw the whole file; `framed`: its counts (FramedCounts), when
   * it counted them.
   */
  async finish(isFramed = false, framed?: ResultsCounts): Promise<ResultsSummary> {
    try {
      if (!isFramed) {
        if (!this.framer) await this.push(EMPTY);
        await this.framer!.finish();
      }
      if (!this.isHeaderDone) throw new ResultsProblem('The results file is empty.');
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
      ...(this.isCountedByFramer && framed ? { counts: this.withReady(framed) } : {}),
    };
  }

  /** The framer's counts with Ready to mail: the rows the first export (the default export) wrote. */
  private withReady(framed: ResultsCounts): ResultsCounts {
    const first = this.files[0];
    return {
      ...framed,
      ready: first.rows,
      duplicatesLeftOut: first.target.rule.leftOut?.().duplicates ?? 0,
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
   * The row in `view`: `buf[start, contentEnd)`, its line break up to `next` (none for the last row of a file
   * without one), for the exports from the k-th on. Each export's rule decides; copied rows join the
   * export's run of consecutive rows. Answers a promise only when a write must be waited for (then the rest
   * follow it): nearly every row is placed in a buffer at once, and a million awaits cost more than the
   * rows' own work.
   */
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
      if (k === 0) this.isFirstWritten = outcome !== false;
      if (outcome === false) continue;
      state.rows++;
      const waiting = this.place(state, outcome, buf, start, contentEnd, next);
      if (waiting) return this.takeAfter(waiting, k + 1, buf, start, contentEnd, next);
    }
    return undefined;
  }

  // The closures of the slow paths live in their own methods: a closure in `takeFrom` or `place` would have
  // every row allocate its context, and garbage by the hundred megabytes.
  private takeAfter(
    waiting: Promise<void>,
    k: number,
    buf: Buffer,
    start: number,
    contentEnd: number,
    next: number,
  ): Promise<void> {
    return waiting.then(() => this.takeFrom(k, buf, start, contentEnd, next));
  }

  /** The row's fields, then `append`. */
  private fieldsWith(append: readonly string[]): readonly string[] {
    const fields = this.view!.fields();
    return append.length > 0 ? [...fields, ...append] : fields;
  }

  private writeIfNotCopied(writer: RowWriter, copied: Promise<boolean>, append: readonly string[]) {
    return copied.then((isCopied) => (isCopied ? undefined : writer.writeRow(this.fieldsWith(append))));
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
      // A row goes as its bytes when they are what the writer would write (same delimiter, same quoting).
      if (writer.copyRow && view.isCanonical) {
        const copied = writer.copyRow(buf, start, contentEnd, this.delimiter, append);
        if (copied === true) return undefined;
        if (copied !== false) return this.writeIfNotCopied(writer, copied, append);
      }
      return writer.writeRow(this.fieldsWith(append));
    }
    if (isAppended(outcome))
      return this.flushRunThenWrite(state, buf, this.encode(this.fieldsWith(outcome.append)));
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
    if (outcome !== true) return this.flushRunThenWrite(state, buf, this.encode(outcome));
    return this.flushRunThenAppend(state, buf, start, contentEnd);
  }

  private async flushRunThenWrite(state: ExportState, buf: Buffer, row: Buffer): Promise<void> {
    await this.flushRun(state, buf);
    await state.file.write(row);
  }

  /** A row without its line break (the last of a file without one) gets the results' own. */
  private async flushRunThenAppend(
    state: ExportState,
    buf: Buffer,
    start: number,
    contentEnd: number,
  ): Promise<void> {
    await this.flushRun(state, buf);
    await state.file.append(buf, start, contentEnd, this.newline);
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

  private async readHeader(header: FrameHeader, buf: Buffer): Promise<void> {
    const { names, contentEnd, bom } = header;
    this.newline = Buffer.from(header.newline);
    if (names.lastIndexOf(STATUS_COLUMN) < 0 && this.files.some(({ target }) => target.rule.needsStatus))
      throw new ResultsProblem(
        `The results file has no “${STATUS_COLUMN}” column (the list ran no validation): export all rows.`,
      );
    if (this.counter && !this.counter.header(names)) this.counter = undefined;
    this.view = new RowView(columnIndex(names));
    for (const state of this.files) {
      const written = state.target.rule.header?.(names);
      if (state.writer) {
        await state.writer.writeRow(written ?? names);
        continue;
      }
      if (written) {
        if (bom > 0) await state.file.write(buf.subarray(0, bom));
        await state.file.write(this.encode(written));
      } else await state.file.append(buf, 0, contentEnd, this.newline);
    }
    this.isHeaderDone = true;
  }
}

const EMPTY = Buffer.alloc(0);
const NO_BOUNDS = new Int32Array(0);

/**
 * Short ASCII fields read again and again (a code, `free`, `false`): one string each, found by the bytes'
 * hash, instead of a new string for every row. The counter of the Results numbers reads three such fields a
 * row, a million rows a download. Bounded: past SHORT_FIELDS_MAX distinct values, the rest are decoded as
 * any field is.
 */
const SHORT_FIELD_BYTES = 12;
const SHORT_FIELDS_MAX = 4096;
const shortFields = new Map<number, string>();

/** The string of the unquoted field `buf[start, end)` when it is short ASCII and met before; else undefined. */
function shortFieldOf(buf: Buffer, start: number, end: number): string | undefined {
  const length = end - start;
  if (length > SHORT_FIELD_BYTES) return undefined;
  let hash = length;
  for (let i = start; i < end; i++) {
    const byte = buf[i];
    if (byte >= 0x80) return undefined;
    hash = Math.imul(hash ^ byte, 0x01000193);
  }
  const known = shortFields.get(hash);
  if (known !== undefined) {
    if (known.length === length) {
      let i = 0;
      while (i < length && known.charCodeAt(i) === buf[start + i]) i++;
      if (i === length) return known;
    }
    return undefined;
  }
  if (shortFields.size >= SHORT_FIELDS_MAX) return undefined;
  const text = buf.toString('latin1', start, end);
  shortFields.set(hash, text);
  return text;
}
const NO_FIELDS: readonly string[] = [];

const isAppended = (outcome: RowOutcome): outcome is AppendedRow =>
  typeof outcome === 'object' && !Array.isArray(outcome);

/** An exporter of `exports` counting `counts` as they pass (one decision a row for the default export). */
export function openExporter(
  delimiter: string,
  exports: readonly ExportRequest[],
  counts: CountsRequest | undefined,
  isCountedByFramer = false,
): Promise<ResultsExporter> {
  // Counted by the framer: no counter here, only the first export's rows at the end (`finish`).
  const { targets, counter, isCounterShared } = targetsAndCounter(
    exports,
    isCountedByFramer ? undefined : counts,
  );
  return ResultsExporter.open(delimiter, targets, counter, isCounterShared, isCountedByFramer);
}

/**
 * Stored results files up to this size are exported in the calling thread: the two workers' start-up would
 * cost more than they save.
 */
const IN_THREAD_EXPORT_BYTES = 8 * 1024 * 1024;

/**
 * Writes exports of a stored results file (a text file or a zip holding one): History's re-export and the
 * Results screen. `name` is the results file's name (whether it is a zip). `inThreadUpTo`: the size up to
 * which the calling thread does the work (tests set it to try both ways).
 */
export async function exportResultsFile(
  path: string,
  name: string,
  delimiter: string,
  exports: readonly ExportRequest[],
  counts?: CountsRequest,
  inThreadUpTo = IN_THREAD_EXPORT_BYTES,
): Promise<ResultsSummary> {
  const size = statSync(path).size;
  const source = await openListSource(path, name, size);
  const stream: Readable = await source.open();
  // A big file's rows are found in one worker and written in another (resultsSink.ts), as for a download.
  const exporter =
    size > inThreadUpTo
      ? ResultsSink.spawn().begin(undefined, delimiter, exports, counts)
      : await openExporter(delimiter, exports, counts);
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
