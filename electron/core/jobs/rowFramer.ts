// The first half of the exporter's pass over a results file (exports.ts): it finds the rows in the bytes and
// every row's fields, its status and whether it is a duplicate, and hands them on in batches — a window of
// the file's bytes with the rows' positions in typed arrays. The second half (the rules, dedupe and the
// writing) takes the batches in order. For a download the two halves run in two threads (resultsSink.ts), so
// that finding the rows of one window overlaps writing the exports of the one before; for a stored file they
// run one after the other in the calling thread (exportResultsFile).
//
// A batch's bytes are the file's bytes in order: the bytes of consecutive batches, joined, are the file.
import { formatBytes } from '../../../shared/bytes.js';
import {
  CR,
  LF,
  QUOTE,
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
  detectLineBreak,
  type LineBreakMode,
} from '../../../service/lists/read/scan.js';

/** The column of the status exports go by, and the one that flags a repeated address. */
export const STATUS_COLUMN = 'Validation Status';
export const DUPLICATE_COLUMN = 'Duplicate';

/** A results file that cannot be read (every reader's: the job's download, a stored file, an export's shape). */
export class ResultsProblem extends Error {
  readonly code = 'results-unreadable';
}

/** The framer emits a batch once this many bytes are in its window. */
const WINDOW_BYTES = 1024 * 1024;
/** The longest row a results file may hold (the framer's and resultsFile.ts's reads of one). */
export const MAX_ROW_BYTES = 4 * 1024 * 1024;
/** Capacity of a batch's row and field arrays (a batch ends early when they are full). */
const BATCH_ROWS = 16 * 1024;
const BATCH_FIELDS = 256 * 1024;

/** A row's record in `FramedBatch.rows`: these offsets, ROW_STRIDE ints a row. */
export const ROW_STRIDE = 7;
/** Where the row's bytes start, where its content ends, and where its line break ends (the next row). */
export const R_START = 0;
export const R_CONTENT_END = 1;
export const R_NEXT = 2;
/** Its first field in the field arrays, and its number of fields (0: not a well-formed row). */
export const R_BASE = 3;
export const R_FIELDS = 4;
/** Its `Validation Status`: an index of STATUS_WORDS, or STATUS_NONE, or STATUS_OTHER (`otherStatuses`). */
export const R_STATUS = 5;
/** F_DUPLICATE, F_CANONICAL. */
export const R_FLAGS = 6;
export const F_DUPLICATE = 1;
/** The row's bytes are what a writer of its delimiter gives for its fields (see RowView.isCanonical). */
export const F_CANONICAL = 2;

// Status words read from the field's bytes without a string per row: the known words, interned.
export const STATUS_WORDS = [
  'valid',
  'invalid',
  'unknown',
  'corrected',
  'risky',
  'unverifiable',
  'safetosend',
  'trap',
  'catchall',
] as const;
const STATUS_BYTES = STATUS_WORDS.map((word) => Buffer.from(word));
export const STATUS_NONE = 254;
export const STATUS_OTHER = 255;

/** What the framer read from the header row, sent with the first batch. */
export interface FrameHeader {
  readonly names: readonly string[];
  /** The end of the header row's content; a byte-order mark (`bom` bytes) comes before it. */
  readonly contentEnd: number;
  readonly bom: number;
  /** The results' line break. */
  readonly newline: string;
  readonly isCrMode: boolean;
}

/**
 * The buffers of one batch; a set goes back and forth between the framer and the exporter. Between threads
 * they are SharedArrayBuffers: each side keeps the set by its `id`, and only the batch's numbers cross.
 */
export interface BatchBuffers {
  /** The set's number in its pool. */
  readonly id: number;
  /** Counts the replacements of the field arrays (a row of many fields): the other side needs them again. */
  version: number;
  readonly window: Buffer;
  readonly rows: Int32Array;
  /** Field bounds (a batch whose rows have more fields gets longer arrays). */
  starts: Int32Array;
  ends: Int32Array;
  /** 1 for a quoted field (its bounds are inside the quotes, `""` still in). */
  quoted: Uint8Array;
}

export interface FramedBatch {
  readonly set: BatchBuffers;
  /** The batch's bytes are `set.window[0, length)`. */
  readonly length: number;
  readonly rowCount: number;
  /** The header row, in the first batch that holds it. */
  readonly header?: FrameHeader;
  /** The statuses other than STATUS_WORDS (rare), in the order of their rows (those marked STATUS_OTHER). */
  readonly otherStatuses?: readonly string[];
}

/** Memory for typed arrays: shared between threads, or not. */
type Memory = (bytes: number) => ArrayBuffer | SharedArrayBuffer;
const memoryOf = (isShared: boolean): Memory =>
  isShared ? (bytes) => new SharedArrayBuffer(bytes) : (bytes) => new ArrayBuffer(bytes);

function allocateBatchBuffers(id: number, windowBytes: number, memory: Memory): BatchBuffers {
  return {
    id,
    version: 0,
    window: Buffer.from(memory(Math.max(windowBytes, 2 * WINDOW_BYTES))),
    rows: new Int32Array(memory(BATCH_ROWS * ROW_STRIDE * 4)),
    starts: new Int32Array(memory(BATCH_FIELDS * 4)),
    ends: new Int32Array(memory(BATCH_FIELDS * 4)),
    quoted: new Uint8Array(memory(BATCH_FIELDS)),
  };
}

/** Where the framer's batches go, and where its buffers come from. */
export interface BatchOut {
  /** A set of buffers not in use, with a window of at least `minBytes`. */
  take(minBytes: number): Promise<BatchBuffers>;
  /** A set the framer no longer uses. */
  give(set: BatchBuffers): void;
  /** Takes a batch; its buffers are the receiver's until it hands them back (`give`). */
  emit(batch: FramedBatch): Promise<void> | void;
}

/**
 * The sets of buffers of a framer: at most `limit` at once (the one being filled, the others with the
 * exporter); `take` waits for one to come back.
 */
export class BatchPool {
  private readonly free: BatchBuffers[] = [];
  private readonly waiting: (() => void)[] = [];
  private allocated = 0;
  private ids = 0;
  private readonly memory: Memory;
  /** `isShared`: the sets are SharedArrayBuffers, for a framer and an exporter in two threads. */
  constructor(
    private readonly limit: number,
    isShared = false,
  ) {
    this.memory = memoryOf(isShared);
  }

  async take(minBytes: number): Promise<BatchBuffers> {
    for (;;) {
      const i = this.free.findIndex((set) => set.window.length >= minBytes);
      if (i >= 0) return this.free.splice(i, 1)[0];
      // Free sets too small for a long row: one is let go for a bigger one.
      if (this.allocated >= this.limit && this.free.pop()) this.allocated--;
      if (this.allocated < this.limit) {
        this.allocated++;
        return allocateBatchBuffers(this.ids++, minBytes, this.memory);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  give(set: BatchBuffers): void {
    this.free.push(set);
    this.waiting.shift()?.();
  }
}

/** The status in `buf[start, end)`: an index of STATUS_WORDS, or STATUS_OTHER. */
function statusIdAt(buf: Buffer, start: number, end: number): number {
  const length = end - start;
  for (let w = 0; w < STATUS_BYTES.length; w++) {
    const bytes = STATUS_BYTES[w];
    if (bytes.length !== length) continue;
    let i = 0;
    while (i < length && (buf[start + i] | 0x20) === bytes[i]) i++;
    if (i === length) return w;
  }
  return STATUS_OTHER;
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

/**
 * Finds the rows of a results file pushed chunk by chunk (`push`, then `finish`) and emits them in batches.
 * `delimiter`: the results' delimiter (the list's).
 *
 * A row whose quotes are balanced on its line (nearly all) ends at its line break, and its status and
 * duplicate fields are read backwards from there; other rows go through the row scanner.
 */
export class RowFramer {
  private set: BatchBuffers | undefined;
  private end = 0;
  /** The next byte to frame. */
  private pos = 0;
  private rowCount = 0;
  private fieldCount = 0;
  private otherStatuses: string[] = [];
  private header: FrameHeader | undefined;
  private scanner: RowScanner | undefined;
  /** Scans the fields of a row with quotes found by its line break (the row scanner keeps its own place). */
  private fieldScanner: RowScanner | undefined;
  private statusIndex = -1;
  private duplicateIndex = -1;
  private isHeaderDone = false;
  private bom = 0;
  private isCrMode = false;
  /** The one-byte delimiter of the fast path (-1: none, every row goes through the scanner). */
  private d0 = -1;
  /** Fields after the status and duplicate columns, for reading rows backwards; undefined: no fast path. */
  private fromEnd: { status: number; duplicate: number } | undefined;
  private delimiters = new Int32Array(0);
  private nextQuote = -1;
  /** The next \r at or after the row being framed (the window's end: none); found by indexOf, not per byte. */
  private nextCr = -1;
  private isLineQuoteFree = false;
  private newline = '\n';

  constructor(
    private readonly delimiter: string,
    private readonly out: BatchOut,
  ) {}

  async push(chunk: Uint8Array): Promise<void> {
    this.set ??= await this.out.take(0);
    let offset = 0;
    while (offset < chunk.length) {
      const window = this.set.window;
      const take = Math.min(window.length - this.end, chunk.length - offset);
      window.set(chunk.subarray(offset, offset + take), this.end);
      this.end += take;
      offset += take;
      if (this.end >= WINDOW_BYTES || this.end === window.length) await this.frame(false);
    }
  }

  /** Every byte is in: frames the rest and emits the last batch. */
  async finish(): Promise<void> {
    this.set ??= await this.out.take(0);
    await this.frame(true);
    if (!this.isHeaderDone) throw new ResultsProblem('The results file is empty.');
    await this.cut();
  }

  /** Frames what the window holds; a full window is emitted, and its unframed tail goes to the next one. */
  private async frame(isLast: boolean): Promise<void> {
    await this.frameRows(isLast);
    if (isLast) return;
    if (this.end - this.pos >= MAX_ROW_BYTES)
      throw new ResultsProblem(`The results file has a row longer than ${formatBytes(MAX_ROW_BYTES)}.`);
    if (this.end < WINDOW_BYTES) return;
    if (this.pos > 0) await this.cut();
    else if (this.end === this.set!.window.length) await this.grow();
  }

  /** Emits the rows framed so far, with the bytes before `pos`; the rest moves to a fresh window. */
  private async cut(): Promise<void> {
    const set = this.set!;
    const tail = this.end - this.pos;
    const fresh = await this.out.take(tail);
    set.window.copy(fresh.window, 0, this.pos, this.end);
    // Every batch has the same properties in the same order (one hidden class for the code that reads them).
    const batch: FramedBatch = {
      set,
      length: this.pos,
      rowCount: this.rowCount,
      header: this.header,
      otherStatuses: this.otherStatuses.length > 0 ? this.otherStatuses : undefined,
    };
    this.set = fresh;
    this.end = tail;
    this.pos = 0;
    this.rowCount = 0;
    this.fieldCount = 0;
    this.otherStatuses = [];
    this.header = undefined;
    await this.out.emit(batch);
  }

  /** A window too small for the one row it holds: a bigger one, the bytes copied. */
  private async grow(): Promise<void> {
    const set = this.set!;
    const bigger = await this.out.take(set.window.length * 2);
    set.window.copy(bigger.window, 0, 0, this.end);
    this.set = bigger;
    this.out.give(set);
  }

  /** The \n ending the row at `pos` when its quotes are balanced on its line, else -1 (see isLineQuoteFree). */
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

  private async frameRows(isLast: boolean): Promise<void> {
    const buf = this.set!.window;
    let pos = this.pos;
    if (!this.scanner) {
      if (!isLast && this.end < 64 * 1024) return;
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) this.bom = 3;
      const lineBreak = detectLineBreak(buf.subarray(this.bom, Math.min(this.end, this.bom + WINDOW_BYTES)));
      this.newline = lineBreak.sequence;
      this.isCrMode = lineBreak.mode === 'cr';
      this.scanner = new RowScanner(Buffer.from(this.delimiter, 'utf8'), lineBreak.mode);
      pos = this.bom;
      if (this.end === this.bom) {
        this.pos = pos;
        return;
      }
    }
    const scanner = this.scanner;
    scanner.windowChanged();
    this.nextQuote = -1;
    this.nextCr = -1;
    const fromEnd = this.fromEnd;
    const delimiters = this.delimiters;
    const d0 = this.d0;
    for (;;) {
      if (this.rowCount === BATCH_ROWS || this.fieldCount + 256 > this.set!.starts.length) {
        // The batch is full: emit it, and go on in the next window (which starts at `pos`).
        this.pos = pos;
        await this.cut();
        return this.frameRows(isLast);
      }
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
          // among them (a quoted Valid Email) sends the row to the scanner. The fields behind them are then
          // known, and only the bytes before them are split (addPlainRow, addQuotedRow).
          let found = 0;
          for (let i = contentEnd - 1; i >= start && found < delimiters.length; i--) {
            const c = buf[i];
            if (c === d0) delimiters[found++] = i;
            else if (c === QUOTE) break;
          }
          if (found === delimiters.length) {
            pos = next;
            let status = STATUS_NONE;
            if (fromEnd.status >= 0) {
              const statusEnd = fromEnd.status === 0 ? contentEnd : delimiters[fromEnd.status - 1];
              status = this.statusOf(buf, delimiters[fromEnd.status] + 1, statusEnd);
            }
            let isDuplicate = false;
            if (fromEnd.duplicate >= 0) {
              const dupEnd = fromEnd.duplicate === 0 ? contentEnd : delimiters[fromEnd.duplicate - 1];
              isDuplicate = isTrueAt(buf, delimiters[fromEnd.duplicate] + 1, dupEnd);
            }
            // A \r before the content's end (a \r\n break's is after it) is a lone one.
            if (this.nextCr < start) {
              const cr = buf.indexOf(CR, start);
              this.nextCr = cr >= 0 && cr < this.end ? cr : this.end;
            }
            const hasCr = this.nextCr < contentEnd;
            if (this.isLineQuoteFree)
              this.addPlainRow(buf, start, contentEnd, next, status, isDuplicate, hasCr);
            else if (!this.addQuotedRow(buf, start, contentEnd, next, status, isDuplicate, hasCr))
              this.addRowByScanner(buf, start, contentEnd, next, status, isDuplicate);
            continue;
          }
        }
      }
      const result = scanner.scan(buf, pos, this.end, isLast);
      if (result === SCAN_END || result === SCAN_NEED_MORE) break;
      if (result === SCAN_ERROR)
        throw new ResultsProblem('The results file is not well-formed delimited text.');
      const start = scanner.start;
      const contentEnd = scanner.contentEnd;
      pos = scanner.next;
      if (!this.isHeaderDone) {
        this.readHeader(scanner, buf, contentEnd);
        // On with the header's fast path.
        this.pos = pos;
        return this.frameRows(isLast);
      }
      if (scanner.fields === 1 && contentEnd === start) continue;
      const status =
        this.statusIndex >= 0 && this.statusIndex < scanner.fields
          ? this.statusOf(buf, scanner.fieldStart[this.statusIndex], scanner.fieldEnd[this.statusIndex])
          : STATUS_NONE;
      const isDuplicate =
        this.duplicateIndex >= 0 &&
        this.duplicateIndex < scanner.fields &&
        isTrueAt(buf, scanner.fieldStart[this.duplicateIndex], scanner.fieldEnd[this.duplicateIndex]);
      this.addScannedRow(scanner, true, start, contentEnd, pos, status, isDuplicate);
    }
    this.pos = pos;
  }

  /** The status id of `buf[start, end)`; another word is kept as text. */
  private statusOf(buf: Buffer, start: number, end: number): number {
    const id = statusIdAt(buf, start, end);
    if (id === STATUS_OTHER) this.otherStatuses.push(buf.toString('utf8', start, end).toLowerCase());
    return id;
  }

  private addRecord(
    start: number,
    contentEnd: number,
    next: number,
    fields: number,
    status: number,
    flags: number,
  ): void {
    const rows = this.set!.rows;
    const r = this.rowCount * ROW_STRIDE;
    rows[r + R_START] = start;
    rows[r + R_CONTENT_END] = contentEnd;
    rows[r + R_NEXT] = next;
    rows[r + R_BASE] = this.fieldCount;
    rows[r + R_FIELDS] = fields;
    rows[r + R_STATUS] = status;
    rows[r + R_FLAGS] = flags;
    this.rowCount++;
    this.fieldCount += fields;
  }

  /**
   * The fields behind the delimiters found from the end of the row (`this.delimiters[0, found)`, last first:
   * none holds a quote) into the field arrays from `f`; answers the field after them.
   */
  private addTailFields(f: number, contentEnd: number): number {
    const { starts, ends, quoted } = this.set!;
    const delimiters = this.delimiters;
    for (let k = delimiters.length - 1; k >= 0; k--) {
      starts[f] = delimiters[k] + 1;
      ends[f] = k === 0 ? contentEnd : delimiters[k - 1];
      quoted[f] = 0;
      f++;
    }
    return f;
  }

  /**
   * A row without quotes: split at every delimiter byte up to the ones found from its end (frameRows), whose
   * fields are known; as a writer would write it unless a lone \r is in it (`hasCr`).
   */
  private addPlainRow(
    buf: Buffer,
    start: number,
    contentEnd: number,
    next: number,
    status: number,
    isDuplicate: boolean,
    hasCr: boolean,
  ): void {
    const { starts, ends, quoted } = this.set!;
    const d0 = this.d0;
    const base = this.fieldCount;
    const tail = this.delimiters.length;
    // (A 256th delimiter, head and tail counted: the row is the scanner's, as when it was split whole here.)
    const most = 255 - tail;
    const headEnd = tail > 0 ? this.delimiters[tail - 1] : contentEnd;
    let f = base;
    let from = start;
    for (let i = start; i < headEnd; i++) {
      if (buf[i] !== d0) continue;
      if (f - base === most) return this.addRowByScanner(buf, start, contentEnd, next, status, isDuplicate);
      starts[f] = from;
      ends[f] = i;
      quoted[f] = 0;
      f++;
      from = i + 1;
    }
    starts[f] = from;
    ends[f] = headEnd;
    quoted[f] = 0;
    f = this.addTailFields(f + 1, contentEnd);
    const canonical = hasCr ? 0 : F_CANONICAL;
    this.addRecord(start, contentEnd, next, f - base, status, canonical | (isDuplicate ? F_DUPLICATE : 0));
  }

  /**
   * A row with quotes, balanced on its line: its fields found and checked in one pass, as the row scanner
   * would read them (the bytes before the delimiters found from its end: the fields behind them are known).
   * Answers false, adding nothing, for a row it leaves to the scanner: a quoted field not closed on the
   * line, text after a closing quote, more than 255 fields, or a \r in the row (`hasCr`).
   */
  private addQuotedRow(
    buf: Buffer,
    start: number,
    contentEnd: number,
    next: number,
    status: number,
    isDuplicate: boolean,
    hasCr: boolean,
  ): boolean {
    // (A \r in the row: the scanner's, whose check of each field sees it.)
    if (hasCr) return false;
    const { starts, ends, quoted } = this.set!;
    const d0 = this.d0;
    const base = this.fieldCount;
    const tail = this.delimiters.length;
    // The fields before the delimiters found from the end (which hold no quote); 256 fields at most in all.
    const headEnd = tail > 0 ? this.delimiters[tail - 1] : contentEnd;
    const last = base + 255 - tail;
    let f = base;
    let canonical = F_CANONICAL;
    let i = start;
    for (;;) {
      if (f === last) return false;
      if (i < headEnd && buf[i] === QUOTE) {
        // A quoted field: to its closing quote ("" inside is a quote). It is as a writer would write it
        // only when it needs its quotes.
        let j = i + 1;
        let needsQuotes = false;
        for (;;) {
          if (j >= headEnd) return false;
          const c = buf[j];
          if (c === QUOTE) {
            if (j + 1 < headEnd && buf[j + 1] === QUOTE) {
              needsQuotes = true;
              j += 2;
              continue;
            }
            break;
          }
          if (c === d0) needsQuotes = true;
          j++;
        }
        if (!needsQuotes) canonical = 0;
        starts[f] = i + 1;
        ends[f] = j;
        quoted[f] = 1;
        f++;
        i = j + 1;
        if (i === headEnd) break;
        if (buf[i] !== d0) return false;
        i++;
        continue;
      }
      // An unquoted field, to the next delimiter; a quote in it would need quotes.
      const from = i;
      for (; i < headEnd; i++) {
        const c = buf[i];
        if (c === d0) break;
        if (c === QUOTE) canonical = 0;
      }
      starts[f] = from;
      ends[f] = i;
      quoted[f] = 0;
      f++;
      if (i === headEnd) break;
      i++;
    }
    f = this.addTailFields(f, contentEnd);
    this.addRecord(start, contentEnd, next, f - base, status, canonical | (isDuplicate ? F_DUPLICATE : 0));
    return true;
  }

  /** A row left to the field scanner (it grows for any number of fields), then added to the batch. */
  private addRowByScanner(
    buf: Buffer,
    start: number,
    contentEnd: number,
    next: number,
    status: number,
    isDuplicate: boolean,
  ): void {
    const fields = this.fieldScanner!;
    fields.windowChanged();
    const isRow = fields.scan(buf, start, contentEnd, true) === 1;
    this.addScannedRow(fields, isRow, start, contentEnd, next, status, isDuplicate);
  }

  /** A row the scanner read (`isRow` false: not a well-formed row, no fields). */
  private addScannedRow(
    scanner: RowScanner,
    isRow: boolean,
    start: number,
    contentEnd: number,
    next: number,
    status: number,
    isDuplicate: boolean,
  ): void {
    const count = isRow ? scanner.fields : 0;
    const base = this.fieldCount;
    const set = this.set!;
    if (base + count > set.starts.length) {
      // A row wider than what is left of the field arrays (hundreds of fields): longer arrays, of the same
      // kind of memory.
      const length = 2 * (base + count);
      const isShared = set.starts.buffer instanceof SharedArrayBuffer;
      const memory = memoryOf(isShared);
      const longer = <T extends Int32Array | Uint8Array>(array: T, grown: T): T => {
        grown.set(array.subarray(0, base));
        return grown;
      };
      set.starts = longer(set.starts, new Int32Array(memory(length * 4)));
      set.ends = longer(set.ends, new Int32Array(memory(length * 4)));
      set.quoted = longer(set.quoted, new Uint8Array(memory(length)));
      set.version++;
    }
    const { starts, ends, quoted } = set;
    const { fieldStart, fieldEnd, fieldQuoted } = scanner;
    for (let f = 0; f < count; f++) {
      starts[base + f] = fieldStart[f]!;
      ends[base + f] = fieldEnd[f]!;
      quoted[base + f] = fieldQuoted[f]!;
    }
    let flags = isDuplicate ? F_DUPLICATE : 0;
    if (count > 0 && this.d0 >= 0 && this.isEachFieldCanonical(set.window, base, count)) flags |= F_CANONICAL;
    this.addRecord(start, contentEnd, next, count, status, flags);
  }

  /** Whether every field is quoted exactly when it holds the delimiter, a quote or a line break. */
  private isEachFieldCanonical(buf: Buffer, base: number, count: number): boolean {
    const { starts, ends, quoted } = this.set!;
    const d0 = this.d0;
    for (let f = base; f < base + count; f++) {
      let needsQuotes = false;
      for (let i = starts[f]; i < ends[f] && !needsQuotes; i++) {
        const c = buf[i];
        needsQuotes = c === d0 || c === QUOTE || c === LF || c === CR;
      }
      if (needsQuotes !== (quoted[f] === 1)) return false;
    }
    return true;
  }

  private readHeader(scanner: RowScanner, buf: Buffer, contentEnd: number): void {
    const names: string[] = [];
    for (let f = 0; f < scanner.fields; f++)
      names.push(buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]));
    // The appended columns are the last ones: search from the end, in case an input column has the same name.
    this.statusIndex = names.lastIndexOf(STATUS_COLUMN);
    this.duplicateIndex = names.lastIndexOf(DUPLICATE_COLUMN);
    this.header = {
      names,
      contentEnd,
      bom: this.bom,
      newline: this.newline,
      isCrMode: this.isCrMode,
    };
    this.isHeaderDone = true;
    const mode: LineBreakMode = this.isCrMode ? 'cr' : 'lf';
    const delimiter = Buffer.from(this.delimiter, 'utf8');
    this.fieldScanner = new RowScanner(delimiter, mode);
    // The fast path reads fields back from the line break: only with a one-byte delimiter and \n breaks.
    if (delimiter.length === 1 && !this.isCrMode) {
      const last = names.length - 1;
      this.d0 = delimiter[0]!;
      this.fromEnd = {
        status: this.statusIndex < 0 ? -1 : last - this.statusIndex,
        duplicate: this.duplicateIndex < 0 ? -1 : last - this.duplicateIndex,
      };
      this.delimiters = new Int32Array(Math.max(this.fromEnd.status, this.fromEnd.duplicate) + 1);
    }
  }
}
