// Exact row counts of a list, by the service's own row scanner (service/lists/scan.ts): a quoted line break
// is part of its row, blank rows are not rows, as the service counts them. Streams the file in 1 MiB
// windows; reports the bytes read so far and stops on an AbortSignal. The column mapper shows "about N"
// from the sample while this runs, then the exact figure.
import type { Readable } from 'node:stream';
import {
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
  detectLineBreak,
} from '../../../service/lists/scan.js';
import type { Encoding } from './source.js';

const WINDOW = 1 << 20;

export interface CountOptions {
  readonly delimiter: string;
  /** Whether the first row is a header (not counted). */
  readonly header: boolean;
  readonly encoding?: Encoding;
  readonly signal?: AbortSignal;
  /** Called after each window with the bytes read so far. */
  readonly onProgress?: (bytesRead: number) => void;
}

function isBlankField(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}

/** UTF-8 bytes of a stream in another encoding (the scanner reads UTF-8 or any ASCII-compatible bytes). */
async function* asScannable(stream: Readable, encoding: Encoding | undefined): AsyncGenerator<Buffer> {
  if (encoding !== 'utf-16le' && encoding !== 'utf-16be') {
    for await (const chunk of stream) yield chunk as Buffer;
    return;
  }
  const decoder = new TextDecoder(encoding);
  for await (const chunk of stream)
    yield Buffer.from(decoder.decode(chunk as Buffer, { stream: true }), 'utf8');
  yield Buffer.from(decoder.decode(), 'utf8');
}

/**
 * The data rows of a list: rows that are not blank (every field empty or white space), the header not
 * counted. A file the scanner cannot read to its end (an unterminated quote) counts the rows before it and
 * the rest as one row, as the service would reject it anyway.
 */
export async function countRows(stream: Readable, options: CountOptions): Promise<number> {
  let window = Buffer.allocUnsafe(WINDOW * 2);
  let end = 0;
  let bytesRead = 0;
  let scanner: RowScanner | undefined;
  let rows = 0;
  let isHeaderPending = options.header;
  let isFirst = true;
  const delimiter = Buffer.from(options.delimiter, 'utf8');

  const drain = (isLast: boolean): void => {
    let pos = 0;
    if (!scanner) {
      if (isFirst && window[0] === 0xef && window[1] === 0xbb && window[2] === 0xbf) pos = 3;
      scanner = new RowScanner(delimiter, detectLineBreak(window.subarray(pos, end)).mode);
    }
    isFirst = false;
    scanner.windowChanged();
    for (;;) {
      const result = scanner.scan(window, pos, end, isLast);
      if (result === SCAN_END || result === SCAN_NEED_MORE) break;
      if (result === SCAN_ERROR) {
        // An unterminated quote: the rest is one malformed row.
        if (end > pos) rows++;
        pos = end;
        break;
      }
      pos = scanner.next;
      let isBlank = true;
      for (let f = 0; f < scanner.fields && isBlank; f++)
        isBlank = isBlankField(window, scanner.fieldStart[f], scanner.fieldEnd[f]);
      if (isBlank && !isHeaderPending) continue;
      if (isHeaderPending) {
        isHeaderPending = false;
        continue;
      }
      rows++;
    }
    if (pos > 0) {
      window.copyWithin(0, pos, end);
      end -= pos;
    }
  };

  for await (const chunk of asScannable(stream, options.encoding)) {
    options.signal?.throwIfAborted();
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(window.length - end, chunk.length - offset);
      chunk.copy(window, end, offset, offset + take);
      end += take;
      offset += take;
      if (end >= WINDOW) {
        drain(false);
        // A row longer than the window: grow it.
        if (end >= window.length - 1) {
          const bigger = Buffer.allocUnsafe(window.length * 2);
          window.copy(bigger, 0, 0, end);
          window = bigger;
        }
      }
    }
    bytesRead += chunk.length;
    options.onProgress?.(bytesRead);
  }
  drain(true);
  return rows;
}
