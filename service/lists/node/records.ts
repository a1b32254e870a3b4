// The records of an uploaded list, counted before it is accepted, for a key with a quota: a list larger than
// what the key has left is refused at submission (403), never cut in the middle. Counted as the pipeline
// counts them: rows that are not blank, the header row (with `header=true`) not counted, the delimiter given
// or read from the first rows as pass 1 reads it. A zip is counted from the file inside it. A row longer than
// the plan's limit stops the count at once (RowTooLongError, in the plan's words), reading and inflating no
// further: E7 refuses the file with those words.
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { detectDelimiter } from '../../../shared/columns.js';
import { effectiveDelimiter, listFileExtension, type SubmitListParams } from '../../../shared/api/list.js';
import { walkRows } from '../read/rowWalk.js';
import type { ListLimits } from '../types.js';
import { inspectZip, openZipEntry } from '../read/zip.js';

/** How much of the file the delimiter is read from (as pass 1's sample). */
const SAMPLE_BYTES = 1024 * 1024;

/**
 * The file's first SAMPLE_BYTES (cut at its last line break, as pass 1 cuts its sample), and the file's bytes
 * from the start for the count: the sample's chunks again, then the rest of the same stream (a zip's entry is
 * inflated once).
 */
async function sampleThen(stream: Readable): Promise<{ sample: string; bytes: AsyncIterable<Uint8Array> }> {
  const read = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let size = 0;
  while (size < SAMPLE_BYTES) {
    const next = await read.next();
    if (next.done) break;
    chunks.push(next.value);
    size += next.value.length;
  }
  const bytes = (async function* () {
    yield* chunks;
    // (Short of the sample's size: the stream has ended.)
    if (size < SAMPLE_BYTES) return;
    for (let next = await read.next(); !next.done; next = await read.next()) yield next.value;
  })();
  const head = Buffer.concat(chunks).subarray(0, SAMPLE_BYTES);
  if (size < SAMPLE_BYTES) return { sample: head.toString('utf8'), bytes };
  // Up to the last line break: a row cut by the sample's end would mislead the delimiter's detection. With
  // none, there is no row to read it from (pass 1 finds the same, and refuses such a first line).
  const cut = Math.max(head.lastIndexOf(0x0a), head.lastIndexOf(0x0d));
  return { sample: head.toString('utf8', 0, cut + 1), bytes };
}

/**
 * Counts the records of the list at `path` named `name`. `zipEntry`: for a zip, the name of its list file as
 * checkUpload found it (else the archive is inspected here).
 */
export async function countRecords(
  path: string,
  name: string,
  params: Pick<SubmitListParams, 'delimiter' | 'header'>,
  limits: ListLimits,
  zipEntry?: string,
): Promise<number> {
  let fileName = name;
  let stream: Readable;
  if (listFileExtension(name) === '.zip') {
    const entryName = zipEntry ?? (await inspectZip(path, limits)).fileName;
    fileName = entryName.split('/').pop() ?? entryName;
    stream = await openZipEntry(path, entryName, limits);
  } else stream = createReadStream(path, { highWaterMark: 1 << 20 });
  let delimiter = effectiveDelimiter(params, fileName);
  let bytes: AsyncIterable<Uint8Array> = stream;
  try {
    if (params.delimiter === undefined) {
      const sampled = await sampleThen(stream);
      bytes = sampled.bytes;
      if (sampled.sample.trim() !== '') delimiter = detectDelimiter(sampled.sample, fileName).delimiter;
    }
    let records = 0;
    let isHeaderPending = params.header === true;
    await walkRows(bytes, { delimiter, maxRowBytes: limits.maxRowBytes }, (buf, scanner, isBlank) => {
      // A blank line is no row; the first row that is not one is the header, when there is one.
      if (isBlank && scanner.fields <= 1) return;
      if (isHeaderPending) {
        isHeaderPending = false;
        return;
      }
      if (!isBlank) records++;
    });
    return records;
  } finally {
    // (A walk stopped early, by a row past the limit, leaves the stream unread: it stops inflating.)
    stream.destroy();
  }
}

/**
 * Whether a list is charged its lines at submission (estimateRecords), which receiveUpload then counts as the
 * bytes arrive: a list of a key without a quota, not a zip. A key with a quota is charged the exact count
 * (countRecords: it decides the 403), and a zip's file has to be read out to be counted.
 */
export function isChargedByLines(hasQuota: boolean, name: string): boolean {
  return !hasQuota && listFileExtension(name) !== '.zip';
}

/**
 * The records of a list charged by its lines (isChargedByLines), as counted at submission (its usage): its
 * lines, less the header, without reading the rows as the pipeline does (a count in passing, about 20 times
 * faster than countRecords, so that E7 costs the same as before). Blank lines and line breaks inside quotes
 * are counted too: the count is settled when the list ends, with the records the pipeline found.
 */
export async function estimateRecords(
  path: string,
  params: Pick<SubmitListParams, 'header'>,
  /** The file's lines when they were counted as it arrived (receiveUpload): it is not read again. */
  counted?: LineCount,
): Promise<number> {
  let lines = counted;
  if (!lines) {
    lines = new LineCount();
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>)
      lines.add(chunk);
  }
  return Math.max(0, lines.lines - (params.header === true ? 1 : 0));
}

/** The lines of bytes given in turn (estimateRecords' count): their line breaks, and a last line without one. */
export class LineCount {
  private breaks = 0;
  private last = 0x0a;

  add(chunk: Buffer): void {
    for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) this.breaks++;
    if (chunk.length > 0) this.last = chunk[chunk.length - 1];
  }

  get lines(): number {
    return this.breaks + (this.last !== 0x0a ? 1 : 0);
  }
}
