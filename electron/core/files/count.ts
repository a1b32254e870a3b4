// Exact row counts of a list, by the service's own row walk (service/lists/read/rowWalk.ts): a quoted line
// break is part of its row, blank rows are not rows, as the service counts them. Files in other encodings are
// read as UTF-8 through a decoder; reports the bytes read so far and stops on an AbortSignal. The column
// mapper shows "about N" from the sample while this runs, then the exact figure.
import type { Readable } from 'node:stream';
import {
  fieldText,
  RowTooLongError,
  walkRows as walkUtf8Rows,
  type RowWalkOptions as Utf8RowWalkOptions,
} from '../../../service/lists/read/rowWalk.js';
import type { RowScanner } from '../../../service/lists/read/scan.js';
import { FileProblem, type Encoding } from './source.js';

export { fieldText };

export interface CountOptions {
  readonly delimiter: string;
  /** Whether the first row is a header (not counted). */
  readonly header: boolean;
  readonly encoding?: Encoding;
  readonly signal?: AbortSignal;
  /** Called after each window with the bytes read so far. */
  readonly onProgress?: (bytesRead: number) => void;
}

/** UTF-8 bytes of a stream in another encoding (the scanner reads UTF-8 bytes). */
async function* asScannable(
  stream: AsyncIterable<Uint8Array>,
  encoding: Encoding | undefined,
): AsyncGenerator<Buffer> {
  if (encoding === undefined || encoding === 'utf-8') {
    for await (const chunk of stream) yield chunk as Buffer;
    return;
  }
  const decoder = new TextDecoder(encoding);
  for await (const chunk of stream) yield Buffer.from(decoder.decode(chunk, { stream: true }), 'utf8');
  yield Buffer.from(decoder.decode(), 'utf8');
}

export interface RowWalkOptions extends Utf8RowWalkOptions {
  readonly encoding?: Encoding;
}

/**
 * Every row of a list in any encoding (service/lists/read/rowWalk.ts reads UTF-8: other encodings are
 * converted). A row longer than the service takes (1 MiB) stops it: a file problem, in the service's words.
 */
export async function walkRows(
  stream: AsyncIterable<Uint8Array>,
  options: RowWalkOptions,
  visit: (buf: Buffer, scanner: RowScanner, isBlank: boolean) => void,
): Promise<void> {
  try {
    await walkUtf8Rows(asScannable(stream, options.encoding), options, visit);
  } catch (error) {
    if (error instanceof RowTooLongError) throw new FileProblem(error.message);
    throw error;
  }
}

/**
 * The data rows of a list: rows that are not blank (every field empty or white space), the header not
 * counted. A file the scanner cannot read to its end (an unterminated quote) counts the rows before it and
 * the rest as one row, as the service would reject it anyway.
 */
export async function countRows(stream: Readable, options: CountOptions): Promise<number> {
  let rows = 0;
  let isHeaderPending = options.header;
  await walkRows(stream as AsyncIterable<Uint8Array>, options, (_buf, _scanner, isBlank) => {
    if (isHeaderPending) {
      isHeaderPending = false;
      return;
    }
    if (!isBlank) rows++;
  });
  return rows;
}
