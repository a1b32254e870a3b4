// Receiving a list file: the request body streamed to a temporary file under a byte cap, never held whole in
// memory, then checked against its name (E7: 422 for an improper name or format) before it becomes a list.
import { createWriteStream, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ListFileExtension } from '../../../shared/api/list.js';
import { formatBytes } from '../read/format.js';
import type { ListLimits } from '../types.js';
import { inspectZip, isZipMagic, ZipProblem } from '../read/zip.js';
import { LineCount } from './records.js';

/** An upload refused, with the HTTP status and the words for it. */
export class UploadProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ReceivedUpload {
  readonly path: string;
  readonly size: number;
  /** The first bytes, for format checks. */
  readonly head: Buffer;
  /** Its lines, counted as it arrived (estimateRecords' count), when asked (`countLines`). */
  readonly lines?: LineCount;
}

class Counter extends Transform {
  size = 0;
  head = Buffer.alloc(0);
  constructor(
    private readonly maxBytes: number,
    readonly lines: LineCount | undefined,
  ) {
    super({ highWaterMark: 1 << 20 });
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    this.lines?.add(chunk);
    if (this.head.length < 8) this.head = Buffer.concat([this.head, chunk.subarray(0, 8 - this.head.length)]);
    if (this.size > this.maxBytes) done(tooLarge(this.maxBytes));
    else done(null, chunk);
  }
}

export function tooLarge(maxBytes: number): UploadProblem {
  return new UploadProblem(
    413,
    `The file is larger than ${formatBytes(maxBytes)}, the most a list upload may have: split it into smaller lists.`,
  );
}

/**
 * Streams `source` to a new file in `dir`. The file is removed again when the upload fails. `countLines`: its
 * lines are counted in passing (a list estimated by its lines is then not read a second time for them).
 */
export async function receiveUpload(
  source: Readable,
  dir: string,
  maxBytes: number,
  { countLines = false }: { countLines?: boolean } = {},
): Promise<ReceivedUpload> {
  const path = join(dir, `${randomBytes(12).toString('hex')}.part`);
  const counter = new Counter(maxBytes, countLines ? new LineCount() : undefined);
  try {
    await pipeline(source, counter, createWriteStream(path, { mode: 0o600, highWaterMark: 1 << 20 }));
  } catch (error) {
    rmSync(path, { force: true });
    if (error instanceof UploadProblem) throw error;
    const status = (error as { statusCode?: number }).statusCode;
    if (status === 413) throw tooLarge(maxBytes);
    throw new UploadProblem(
      400,
      `The upload was cut short (${(error as Error).message}); send the file again.`,
    );
  }
  return { path, size: counter.size, head: counter.head, ...(counter.lines ? { lines: counter.lines } : {}) };
}

/**
 * Checks a received file against the extension of the list's name: not empty, a zip archive exactly when
 * the name says .zip, and for a zip one .txt/.csv file inside that is no zip bomb. Throws UploadProblem (422).
 * Answers the bytes of the list's text: a zip's file uncompressed (as the archive declares it; the plan refuses
 * an entry whose bytes differ), else the file's; and for a zip, the name of its list file.
 */
export async function checkUpload(
  upload: ReceivedUpload,
  extension: ListFileExtension,
  limits: ListLimits,
): Promise<{ readonly textBytes: number; readonly zipEntry?: string }> {
  if (upload.size === 0)
    throw new UploadProblem(422, 'The file is empty: send a list with at least one record.');
  const isZip = isZipMagic(upload.head);
  if (extension === '.zip') {
    if (!isZip)
      throw new UploadProblem(422, "The list's name ends in .zip, but the file is not a zip archive.");
    try {
      const entry = await inspectZip(upload.path, limits);
      return { textBytes: entry.uncompressedSize, zipEntry: entry.fileName };
    } catch (error) {
      if (error instanceof ZipProblem) throw new UploadProblem(422, error.message);
      throw error;
    }
  } else if (isZip) {
    throw new UploadProblem(
      422,
      `The file is a zip archive, but the list's name ends in ${extension}: name it .zip.`,
    );
  }
  return { textBytes: upload.size };
}
