// Every row of a list's bytes, in order, through the list row scanner (scan.ts): the one walk of a list's rows
// outside the pipeline's own passes — the desktop's exact count and upload preparation
// (electron/core/files/), and the record count a key with a quota is charged at submission (records.ts).
// Streams in 1 MiB windows; a quoted line break is part of its row.
//
// A row may hold at most the list's row limit (the plan's 1 MiB, ListLimits.maxRowBytes): the walk stops with
// the plan's words as soon as a row passes it, so that a file of one endless line (8 MiB of one byte zip to
// 8 KB) costs its first MiB, not its whole length. And each byte is scanned about once: a row cut by a window's
// end is scanned again only once a window of new bytes is in, and not while no line break has come.
import { formatBytes, formatCount } from './format.js';
import {
  CR,
  LF,
  QUOTE,
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
  countByte,
  detectLineBreak,
} from './scan.js';

/** New bytes a window takes before its rows are read. */
const WINDOW = 1 << 20;

/** The most a list's row may hold, its line break excluded: the service's limit (ListLimits.maxRowBytes). */
export const MAX_ROW_BYTES = 1024 * 1024;

/**
 * Words for a row longer than the limit, as the plan gives them (and E7, which refuses such a file when it
 * counts its records). `buf[start, end)` holds the row's first bytes, at least `maxRowBytes + 1` of them (all
 * of a shorter row): a quote among the bytes that passed the limit may be one never closed. A first line that
 * long is most likely no list at all.
 */
export function rowTooLongMessage(
  line: number,
  maxRowBytes: number,
  buf: Buffer,
  start: number,
  end: number,
): string {
  if (line === 1) return `Line 1 is longer than ${formatBytes(maxRowBytes)}: is this a list file?`;
  const quote = buf.indexOf(QUOTE, start);
  const hasQuote = quote >= 0 && quote < Math.min(end, start + maxRowBytes + 1);
  return (
    `Line ${formatCount(line)} is longer than ${formatBytes(maxRowBytes)}, the most a row may hold` +
    (hasQuote ? ': is a closing quote (") missing?' : '.')
  );
}

/** A row longer than the walk's limit: the walk stopped there. */
export class RowTooLongError extends Error {
  constructor(
    /** The line the row starts on (1-based: line breaks before it, plus one). */
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

function isBlankField(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}

export interface RowWalkOptions {
  readonly delimiter: string;
  /** The most a row may hold (default MAX_ROW_BYTES): a longer one stops the walk with RowTooLongError. */
  readonly maxRowBytes?: number;
  readonly signal?: AbortSignal;
  /** Called after each chunk of the file with the bytes of it read so far. */
  readonly onProgress?: (bytesRead: number) => void;
  /** The line break the file uses (`\n`, `\r\n` or `\r`), once known. */
  readonly onLineBreak?: (sequence: string) => void;
  /** At the end of each window's rows, before its bytes move (copy what is kept of them). */
  readonly windowRead?: () => void;
  /** After each window of rows: the place to write what was gathered. */
  readonly afterWindow?: () => Promise<void> | void;
}

/**
 * Every row of a list's bytes, in order, through the service's row scanner: `visit` gets the window and the
 * scanner (the row is `[scanner.start, scanner.contentEnd)`, its fields the scanner's) and whether every field
 * is blank. A tail the scanner cannot read (an unterminated quote) comes as one malformed row
 * (`scanner.fields` 0, `[start, contentEnd)` the rest), as the service would reject the file anyway. The
 * UTF-8 byte-order mark is skipped; the bytes are UTF-8. A row longer than `maxRowBytes` throws
 * RowTooLongError as soon as its bytes pass the limit; the stream is read no further (a `for await` left early
 * destroys it).
 */
export async function walkRows(
  stream: AsyncIterable<Uint8Array>,
  options: RowWalkOptions,
  visit: (buf: Buffer, scanner: RowScanner, isBlank: boolean) => void,
): Promise<void> {
  const maxRowBytes = options.maxRowBytes ?? MAX_ROW_BYTES;
  // The longest row carried from the window before (with a \r of its break), and behind it a window of new
  // bytes, at least as long as that row: a row that a line break reached but did not end (a quoted one) is
  // scanned again only after as many new bytes as it has, so its bytes are scanned about twice at most.
  const longestCarried = maxRowBytes + 2;
  const window = Buffer.allocUnsafe(longestCarried + Math.max(WINDOW, longestCarried));
  let end = 0;
  /** Bytes at the window's start carried from the last drain: the start of a row not ended yet. */
  let carried = 0;
  /** No byte that can end the carried row (its mode's line break) has come since it was scanned. */
  let isUnbroken = false;
  let breakByte = LF;
  /** The line the next row starts on, as the plan counts lines (line breaks before it, plus one). */
  let line = 1;
  let bytesRead = 0;
  let scanner: RowScanner | undefined;
  let isFirst = true;
  const delimiter = Buffer.from(options.delimiter, 'utf8');

  const tooLong = (atLine: number, start: number, stop: number): RowTooLongError =>
    new RowTooLongError(atLine, rowTooLongMessage(atLine, maxRowBytes, window, start, stop));

  const drain = (isLast: boolean): void => {
    let pos = 0;
    if (!scanner) {
      if (isFirst && window[0] === 0xef && window[1] === 0xbb && window[2] === 0xbf) pos = 3;
      const lineBreak = detectLineBreak(window.subarray(pos, end));
      scanner = new RowScanner(delimiter, lineBreak.mode);
      breakByte = lineBreak.mode === 'cr' ? CR : LF;
      options.onLineBreak?.(lineBreak.sequence);
    }
    isFirst = false;
    let rowLine = line;
    // A row that no line break has reached since it was scanned is still cut off: no need to scan it again.
    if (!isUnbroken || isLast) {
      scanner.windowChanged();
      // A row ends at a line break, or at the file's end: one that starts after the window's last break is cut
      // off, and scanned once the next window is in.
      const lastBreak = isLast ? end : window.lastIndexOf(breakByte, end - 1);
      while (pos <= lastBreak) {
        const result = scanner.scan(window, pos, end, isLast);
        if (result === SCAN_END || result === SCAN_NEED_MORE) break;
        if (result === SCAN_ERROR) {
          // A quote never closed runs to the file's end: one row, held to the limit as any.
          if (scanner.errorKind === 'unterminated-quote' && end - pos > maxRowBytes)
            throw tooLong(rowLine, pos, end);
          if (end > pos) {
            scanner.start = pos;
            scanner.contentEnd = end;
            scanner.next = end;
            scanner.fields = 0;
            visit(window, scanner, false);
            rowLine += countByte(window, breakByte, pos, end);
          }
          pos = end;
          break;
        }
        if (scanner.contentEnd - scanner.start > maxRowBytes)
          throw tooLong(rowLine, scanner.start, scanner.contentEnd);
        pos = scanner.next;
        let isBlank = true;
        for (let f = 0; f < scanner.fields && isBlank; f++)
          isBlank = isBlankField(window, scanner.fieldStart[f], scanner.fieldEnd[f]);
        visit(window, scanner, isBlank);
        rowLine += 1 + scanner.breaksWithin(window);
      }
    }
    options.windowRead?.();
    line = rowLine;
    // The row cut off by the window's end (a \r there may be its break's) is already longer than a row may be.
    if (!isLast && end - pos > maxRowBytes + 1) throw tooLong(line, pos, end);
    if (pos > 0) {
      window.copyWithin(0, pos, end);
      end -= pos;
    }
    carried = end;
    isUnbroken = end > 0;
  };

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    options.signal?.throwIfAborted();
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(window.length - end, chunk.length - offset);
      chunk.copy(window, end, offset, offset + take);
      if (isUnbroken) {
        // Whether these bytes may end the carried row; if not, whether it is already too long.
        const at = chunk.indexOf(breakByte, offset);
        if (at >= 0 && at < offset + take) isUnbroken = false;
        else if (end + take > maxRowBytes + 1) throw tooLong(line, 0, end + take);
      }
      end += take;
      offset += take;
      if (end - carried >= Math.max(WINDOW, carried)) {
        drain(false);
        await options.afterWindow?.();
      }
    }
    bytesRead += chunk.length;
    options.onProgress?.(bytesRead);
  }
  drain(true);
  await options.afterWindow?.();
}

/** Field `f` of the scanned row as text (a quoted field's `""` read as `"`); '' past its last field. */
export function fieldText(buf: Buffer, scanner: RowScanner, f: number): string {
  if (f >= scanner.fields) return '';
  const text = buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]);
  return scanner.fieldQuoted[f] ? text.replaceAll('""', '"') : text;
}
