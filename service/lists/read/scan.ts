// The row scanner of list files: finds rows and fields in the bytes of a delimited UTF-8 text file, the way
// RFC 4180 and papaparse read it (a field that starts with a quote runs to its closing quote, `""` is a quote
// inside it, a quote elsewhere in a field is a plain character), without decoding or copying anything.
//
// Why not papaparse here: results files must keep the bytes of every input column as they were, so the
// pipeline needs each row's byte offsets, which papaparse does not give (it yields decoded field strings),
// and it allocates a string per field — seven million of them for a 1,000,000-row, 7-column list, of which
// one per row is needed. docs/lists.md has the measurements behind this choice.
//
// The scanner works on a window of bytes that the caller refills: a row cut off by the end of the window is
// reported as NEED_MORE and scanned again, from its start, once more bytes are in. So that each byte is read
// about once, a caller scans such a row again only once a window of new bytes is in (rowWalk.ts: and a line
// break has come), and holds a row of at most the list's row limit (ListLimits.maxRowBytes): a longer one is
// refused, never scanned again as it grows.

export const QUOTE = 0x22;
export const LF = 0x0a;
export const CR = 0x0d;

/**
 * A value as a field of delimited text, the one quoting rule of what is written (results, exports, upload
 * copies): quoted only when it holds the delimiter, a quote or a line break, a quote inside doubled. The
 * scanner reads it back as it was.
 */
export function quoteField(value: string, delimiter: string): string {
  if (!value.includes(delimiter) && !value.includes('"') && !value.includes('\n') && !value.includes('\r'))
    return value;
  return `"${value.replaceAll('"', '""')}"`;
}

/** What one call of {@link RowScanner.scan} found. */
export const SCAN_ROW = 1;
export const SCAN_NEED_MORE = 0;
export const SCAN_END = 2;
export const SCAN_ERROR = 3;

/** closingQuote's answers other than an index. */
const QUOTE_NEEDS_MORE = -1;
const QUOTE_UNTERMINATED = -2;
export type ScanResult = typeof SCAN_ROW | typeof SCAN_NEED_MORE | typeof SCAN_END | typeof SCAN_ERROR;

export type ScanErrorKind =
  /** A quoted field whose closing quote never comes. */
  | 'unterminated-quote'
  /** Something other than a delimiter or a line break right after a closing quote. */
  | 'text-after-quote';

/** Line breaks: `lf` ends rows at \n (a \r before it is part of the break), `cr` at a lone \r (old Mac files). */
export type LineBreakMode = 'lf' | 'cr';

/** How many times `byte` occurs in `buf[start, end)`. */
export function countByte(buf: Buffer, byte: number, start: number, end: number): number {
  let count = 0;
  for (let at = buf.indexOf(byte, start); at >= 0 && at < end; at = buf.indexOf(byte, at + 1)) count++;
  return count;
}

/**
 * The line-break mode of a file from its first bytes: the first \r or \n outside quotes decides. A file with
 * neither (one row) reads as `lf`. Quotes and breaks are found by indexOf (memchr), not byte by byte: a
 * hostile first line may run for the whole sample.
 */
export function detectLineBreak(bytes: Uint8Array, start = 0): { mode: LineBreakMode; sequence: string } {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = buf.length;
  // The next \n and \r at or after `i` (-1: none left), looked for again only once passed.
  let lf = -2;
  let cr = -2;
  let inQuotes = false;
  for (let i = start; i < end;) {
    const quote = buf.indexOf(QUOTE, i);
    const quoteAt = quote < 0 ? end : quote;
    if (!inQuotes) {
      if (lf !== -1 && lf < i) lf = buf.indexOf(LF, i);
      if (cr !== -1 && cr < i) cr = buf.indexOf(CR, i);
      const lfAt = lf < 0 ? end : lf;
      const crAt = cr < 0 ? end : cr;
      if (lfAt < quoteAt && lfAt < crAt) return { mode: 'lf', sequence: '\n' };
      if (crAt < quoteAt) {
        if (crAt + 1 < end && buf[crAt + 1] !== LF) return { mode: 'cr', sequence: '\r' };
        return { mode: 'lf', sequence: '\r\n' };
      }
    }
    if (quote < 0) break;
    inQuotes = !inQuotes;
    i = quote + 1;
  }
  return { mode: 'lf', sequence: '\n' };
}

/**
 * Scans rows one at a time. After SCAN_ROW the public fields describe the row: its bytes are
 * `[start, contentEnd)`, the line break runs to `next`, and field `f` is `[fieldStart[f], fieldEnd[f])`
 * (inside the quotes for a quoted field, `""` escapes still in). NOTE: the field arrays are reused by the
 * next call.
 */
export class RowScanner {
  /** Row start, end of its content, and the offset after its line break (where the next row starts). */
  start = 0;
  contentEnd = 0;
  next = 0;
  /** Number of fields of the row. */
  fields = 0;
  fieldStart: Int32Array;
  fieldEnd: Int32Array;
  /** 1 for a quoted field. */
  fieldQuoted: Uint8Array;
  /** After SCAN_ERROR: what, and the offset where it was seen. */
  errorKind: ScanErrorKind = 'unterminated-quote';
  errorAt = 0;

  private readonly d0: number;
  private readonly delimiter: Uint8Array;
  private readonly isCrMode: boolean;
  /** A one-byte delimiter and \n line breaks: the fast path of scan. */
  private readonly isFast: boolean;
  /** The fast path's first \n at or after the row's start (see breaksWithin). */
  private lineFeedAt = -1;

  constructor(delimiter: Uint8Array, mode: LineBreakMode, maxFields = 64) {
    if (delimiter.length === 0) throw new RangeError('empty delimiter');
    this.delimiter = delimiter;
    this.d0 = delimiter[0]!;
    this.isCrMode = mode === 'cr';
    this.isFast = delimiter.length === 1 && !this.isCrMode;
    this.fieldStart = new Int32Array(maxFields);
    this.fieldEnd = new Int32Array(maxFields);
    this.fieldQuoted = new Uint8Array(maxFields);
  }

  /** Whether the delimiter starts at `i` (the caller has seen its first byte there). */
  private isDelimiterAt(buf: Uint8Array, i: number, end: number): boolean {
    const d = this.delimiter;
    if (d.length === 1) return true;
    if (i + d.length > end) return false;
    for (let k = 1; k < d.length; k++) if (buf[i + k] !== d[k]) return false;
    return true;
  }

  private pushField(start: number, end: number, quoted: number): void {
    const f = this.fields;
    if (f >= this.fieldStart.length) this.growFields();
    this.fieldStart[f] = start;
    this.fieldEnd[f] = end;
    this.fieldQuoted[f] = quoted;
    this.fields = f + 1;
  }

  /**
   * Scans the row that starts at `pos`. `end` is the end of the valid bytes of `buf`; `isLast` says whether
   * they run to the end of the file. Returns SCAN_NEED_MORE when the row (or a multi-byte delimiter, or a
   * \r\n pair) is cut off by `end` and more bytes may come.
   */
  scan(buf: Buffer, pos: number, end: number, isLast: boolean): ScanResult {
    if (pos >= end) return isLast ? SCAN_END : SCAN_NEED_MORE;
    if (this.isFast) {
      const lineEnd = this.quoteFreeLineEnd(buf, pos, end);
      if (lineEnd >= 0) return this.scanPlainLine(buf, pos, lineEnd);
      return this.scanSimple(buf, pos, end, isLast);
    }
    return this.scanGeneral(buf, pos, end, isLast);
  }

  /** Where the next quote is in the window (or -1 for none before `quoteSearchEnd`); see windowChanged. */
  private nextQuote = -1;
  private quoteSearchEnd = -1;

  /** Tells the scanner that the bytes of its window moved or changed (a refill): its quote search restarts. */
  windowChanged(): void {
    this.quoteSearchEnd = -1;
  }

  /**
   * The offset of the \n ending the row at `pos` when that row holds no quote at all (so its line break is
   * its end, and its fields are split by every delimiter byte), or -1. Both searches are memchr (indexOf);
   * the next quote's position is kept until the scan passes it.
   */
  quoteFreeLineEnd(buf: Buffer, pos: number, end: number): number {
    const lineEnd = buf.indexOf(LF, pos);
    this.lineFeedAt = lineEnd;
    if (lineEnd < 0 || lineEnd >= end) return -1;
    if (this.quoteSearchEnd !== end || (this.nextQuote >= 0 && this.nextQuote < pos)) {
      const q = buf.indexOf(QUOTE, pos);
      this.nextQuote = q >= 0 && q < end ? q : -1;
      this.quoteSearchEnd = end;
    }
    return this.nextQuote >= 0 && this.nextQuote < lineEnd ? -1 : lineEnd;
  }

  /** A row without quotes, ending at the \n at `lineEnd`: each byte compared with the delimiter only. */
  private scanPlainLine(buf: Buffer, pos: number, lineEnd: number): ScanResult {
    const d0 = this.d0;
    const contentEnd = lineEnd > pos && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
    let starts = this.fieldStart;
    let ends = this.fieldEnd;
    const quoted = this.fieldQuoted;
    let f = 0;
    let fieldStart = pos;
    for (let i = pos; i < contentEnd; i++) {
      if (buf[i] !== d0) continue;
      if (f + 1 >= starts.length) {
        this.fields = f;
        this.growFields();
        starts = this.fieldStart;
        ends = this.fieldEnd;
      }
      starts[f] = fieldStart;
      ends[f] = i;
      f++;
      fieldStart = i + 1;
    }
    if (f >= starts.length) {
      this.fields = f;
      this.growFields();
      starts = this.fieldStart;
      ends = this.fieldEnd;
    }
    starts[f] = fieldStart;
    ends[f] = contentEnd;
    f++;
    const q = this.fieldQuoted === quoted ? quoted : this.fieldQuoted;
    q.fill(0, 0, f);
    this.start = pos;
    this.contentEnd = contentEnd;
    this.next = lineEnd + 1;
    this.fields = f;
    return SCAN_ROW;
  }

  /**
   * The fast path: a one-byte delimiter and \n line breaks (with or without \r), which is nearly every list.
   * Everything lives in locals; the inner loop compares each byte of an unquoted field with three values.
   */
  private scanSimple(buf: Buffer, pos: number, end: number, isLast: boolean): ScanResult {
    const d0 = this.d0;
    let starts = this.fieldStart;
    let ends = this.fieldEnd;
    let quoted = this.fieldQuoted;
    let f = 0;
    let i = pos;
    this.start = pos;
    for (;;) {
      if (f === starts.length) {
        this.fields = f;
        this.growFields();
        starts = this.fieldStart;
        ends = this.fieldEnd;
        quoted = this.fieldQuoted;
      }
      if (i < end && buf[i] === QUOTE) {
        const open = i;
        const close = this.closingQuote(buf, open, end, isLast);
        if (close < 0) return close === QUOTE_NEEDS_MORE ? SCAN_NEED_MORE : SCAN_ERROR;
        starts[f] = open + 1;
        ends[f] = close;
        quoted[f] = 1;
        f++;
        i = close + 1;
        if (i < end) {
          const c = buf[i];
          if (c !== d0 && c !== LF) {
            if (c !== CR) return this.error('text-after-quote', i);
            if (i + 1 >= end) {
              if (!isLast) return SCAN_NEED_MORE;
            } else if (buf[i + 1] !== LF) return this.error('text-after-quote', i);
          }
        }
      } else {
        const fieldStart = i;
        while (i < end) {
          const c = buf[i];
          if (c === d0 || c === LF) break;
          if (c === CR) {
            if (i + 1 < end) {
              if (buf[i + 1] === LF) break;
            } else if (!isLast) return SCAN_NEED_MORE;
          }
          i++;
        }
        if (i >= end && !isLast) return SCAN_NEED_MORE;
        starts[f] = fieldStart;
        ends[f] = i;
        quoted[f] = 0;
        f++;
      }
      if (i >= end) {
        this.fields = f;
        this.contentEnd = i;
        this.next = i;
        return SCAN_ROW;
      }
      const c = buf[i];
      if (c === d0) {
        i++;
        if (i >= end && isLast) {
          // A trailing delimiter at the very end of the file: one more, empty field.
          if (f === starts.length) {
            this.fields = f;
            this.growFields();
          }
          this.fieldStart[f] = i;
          this.fieldEnd[f] = i;
          this.fieldQuoted[f] = 0;
          this.fields = f + 1;
          this.contentEnd = i;
          this.next = i;
          return SCAN_ROW;
        }
        continue;
      }
      // A line break: \n, or \r\n.
      this.fields = f;
      this.contentEnd = i;
      this.next = c === CR ? i + 2 : i + 1;
      return SCAN_ROW;
    }
  }

  /**
   * The index of the quote that closes the field opened at `open` (doubled quotes are skipped), or
   * QUOTE_NEEDS_MORE when the window ends first, or QUOTE_UNTERMINATED (the error recorded) at the file's end.
   */
  private closingQuote(buf: Buffer, open: number, end: number, isLast: boolean): number {
    let j = open + 1;
    for (;;) {
      const q = buf.indexOf(QUOTE, j);
      if (q < 0 || q >= end) {
        if (!isLast) return QUOTE_NEEDS_MORE;
        this.error('unterminated-quote', open);
        return QUOTE_UNTERMINATED;
      }
      // (At the end of the bytes: the file's end closes the field; never look at the window past `end`.)
      if (q + 1 >= end) return isLast ? q : QUOTE_NEEDS_MORE;
      if (buf[q + 1] !== QUOTE) return q;
      j = q + 2;
    }
  }

  /**
   * The line breaks inside the row just scanned (in its quoted fields): the lines it spans, less one. Free for
   * a row of the fast path, whose first \n was found already: that is the row's own break unless it lies
   * before the row's end.
   */
  breaksWithin(buf: Buffer): number {
    let from = this.start;
    if (this.isFast) {
      from = this.lineFeedAt;
      if (from < this.start || from >= this.contentEnd) return 0;
    } else {
      let f = 0;
      while (f < this.fields && this.fieldQuoted[f] === 0) f++;
      if (f === this.fields) return 0;
    }
    return countByte(buf, this.isCrMode ? CR : LF, from, this.contentEnd);
  }

  private error(kind: ScanErrorKind, at: number): ScanResult {
    this.errorKind = kind;
    this.errorAt = at;
    return SCAN_ERROR;
  }

  private growFields(): void {
    const grow = (a: Int32Array) => {
      const b = new Int32Array(a.length * 2);
      b.set(a);
      return b;
    };
    this.fieldStart = grow(this.fieldStart);
    this.fieldEnd = grow(this.fieldEnd);
    const q = new Uint8Array(this.fieldQuoted.length * 2);
    q.set(this.fieldQuoted);
    this.fieldQuoted = q;
  }

  /** Any delimiter (several bytes, for a non-ASCII character) and either line-break mode. */
  private scanGeneral(buf: Buffer, pos: number, end: number, isLast: boolean): ScanResult {
    const d0 = this.d0;
    const isCrMode = this.isCrMode;
    this.start = pos;
    this.fields = 0;
    let i = pos;
    for (;;) {
      // At the start of a field.
      if (i < end && buf[i] === QUOTE) {
        const open = i;
        const close = this.closingQuote(buf, open, end, isLast);
        if (close < 0) return close === QUOTE_NEEDS_MORE ? SCAN_NEED_MORE : SCAN_ERROR;
        this.pushField(open + 1, close, 1);
        i = close + 1;
        if (i < end) {
          const c = buf[i];
          const isBreak = isCrMode
            ? c === CR
            : c === LF || (c === CR && (i + 1 < end ? buf[i + 1] === LF : isLast));
          if (!isBreak && !(c === d0 && this.isDelimiterAt(buf, i, end))) {
            if (c === CR && !isCrMode && i + 1 >= end && !isLast) return SCAN_NEED_MORE;
            if (c === d0 && !isLast && i + this.delimiter.length > end) return SCAN_NEED_MORE;
            return this.error('text-after-quote', i);
          }
        }
      } else {
        const fieldStart = i;
        for (; i < end; i++) {
          const c = buf[i];
          if (c === d0) {
            if (this.isDelimiterAt(buf, i, end)) break;
            if (i + this.delimiter.length > end && !isLast) return SCAN_NEED_MORE;
          } else if (c === LF) {
            if (!isCrMode) break;
          } else if (c === CR) {
            if (isCrMode) break;
            if (i + 1 < end) {
              if (buf[i + 1] === LF) break;
            } else if (!isLast) {
              return SCAN_NEED_MORE;
            }
          }
        }
        if (i >= end && !isLast) return SCAN_NEED_MORE;
        this.pushField(fieldStart, i, 0);
      }
      // After a field: a delimiter, a line break, or the end of the file.
      if (i >= end) {
        this.contentEnd = i;
        this.next = i;
        return SCAN_ROW;
      }
      const c = buf[i];
      if (c === d0 && this.isDelimiterAt(buf, i, end)) {
        i += this.delimiter.length;
        if (i >= end && isLast) {
          this.pushField(i, i, 0);
          this.contentEnd = i;
          this.next = i;
          return SCAN_ROW;
        }
        continue;
      }
      this.contentEnd = i;
      this.next = !isCrMode && c === CR ? i + 2 : i + 1;
      return SCAN_ROW;
    }
  }
}

/** Whether every byte of `[start, end)` is a space or a tab: a blank row. */
export function isBlank(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09) return false;
  }
  return true;
}
