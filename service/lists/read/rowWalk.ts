// Every row of a list's bytes, in order, through the list row scanner (scan.ts): the one walk of a list's rows
// outside the pipeline's own passes — the desktop's exact count and upload preparation
// (electron/core/files/), and the record count a key with a quota is charged at submission (records.ts).
// Streams in 1 MiB windows; a quoted line break is part of its row.
import { RowScanner, SCAN_END, SCAN_ERROR, SCAN_NEED_MORE, detectLineBreak } from './scan.js';

const WINDOW = 1 << 20;

function isBlankField(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0x0a) return false;
  }
  return true;
}

export interface RowWalkOptions {
  readonly delimiter: string;
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
 * UTF-8 byte-order mark is skipped; the bytes are UTF-8.
 */
export async function walkRows(
  stream: AsyncIterable<Uint8Array>,
  options: RowWalkOptions,
  visit: (buf: Buffer, scanner: RowScanner, isBlank: boolean) => void,
): Promise<void> {
  let window = Buffer.allocUnsafe(WINDOW * 2);
  let end = 0;
  let bytesRead = 0;
  let scanner: RowScanner | undefined;
  let isFirst = true;
  const delimiter = Buffer.from(options.delimiter, 'utf8');

  const drain = (isLast: boolean): void => {
    let pos = 0;
    if (!scanner) {
      if (isFirst && window[0] === 0xef && window[1] === 0xbb && window[2] === 0xbf) pos = 3;
      const lineBreak = detectLineBreak(window.subarray(pos, end));
      scanner = new RowScanner(delimiter, lineBreak.mode);
      options.onLineBreak?.(lineBreak.sequence);
    }
    isFirst = false;
    scanner.windowChanged();
    for (;;) {
      const result = scanner.scan(window, pos, end, isLast);
      if (result === SCAN_END || result === SCAN_NEED_MORE) break;
      if (result === SCAN_ERROR) {
        if (end > pos) {
          scanner.start = pos;
          scanner.contentEnd = end;
          scanner.next = end;
          scanner.fields = 0;
          visit(window, scanner, false);
        }
        pos = end;
        break;
      }
      pos = scanner.next;
      let isBlank = true;
      for (let f = 0; f < scanner.fields && isBlank; f++)
        isBlank = isBlankField(window, scanner.fieldStart[f], scanner.fieldEnd[f]);
      visit(window, scanner, isBlank);
    }
    options.windowRead?.();
    if (pos > 0) {
      window.copyWithin(0, pos, end);
      end -= pos;
    }
  };

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    options.signal?.throwIfAborted();
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(window.length - end, chunk.length - offset);
      chunk.copy(window, end, offset, offset + take);
      end += take;
      offset += take;
      if (end >= WINDOW) {
        drain(false);
        await options.afterWindow?.();
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
  await options.afterWindow?.();
}

/** Field `f` of the scanned row as text (a quoted field's `""` read as `"`); '' past its last field. */
export function fieldText(buf: Buffer, scanner: RowScanner, f: number): string {
  if (f >= scanner.fields) return '';
  const text = buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]);
  return scanner.fieldQuoted[f] ? text.replaceAll('""', '"') : text;
}
