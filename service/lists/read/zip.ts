// Zip lists, the one helper for "the one list in a zip" that the service, the CLI and the desktop all use:
// checking an archive (exactly one .txt or .csv file beside archiver noise, no unsafe path, no zip bomb),
// streaming its file out, and writing zipped results. yauzl reads (it enforces each entry's declared size
// while inflating, so a size that lies is caught too); fflate writes.
import { createWriteStream, write } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { pipeline as streamPipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import yauzl from 'yauzl';
import { Zip, ZipDeflate } from 'fflate';
import { formatBytes } from './format.js';
import type { ListLimits } from '../types.js';

/** Zip archives start with a local file header, or are an empty archive's end record. */
export function isZipMagic(head: Uint8Array): boolean {
  return (
    head.length >= 4 &&
    head[0] === 0x50 &&
    head[1] === 0x4b &&
    ((head[2] === 0x03 && head[3] === 0x04) ||
      (head[2] === 0x05 && head[3] === 0x06) ||
      (head[2] === 0x07 && head[3] === 0x08))
  );
}

/**
 * Entries an archiver adds beside the user's file, which are not the list: folders and macOS metadata
 * (`__MACOSX/`, `.DS_Store`, `._*`). The one rule: an archive is one list if all its other entries are these.
 */
export function isArchiverNoise(fileName: string): boolean {
  return (
    fileName.endsWith('/') ||
    fileName.startsWith('__MACOSX/') ||
    /(^|\/)\._/.test(fileName) ||
    /(^|\/)\.DS_Store$/.test(fileName)
  );
}

export class ZipProblem extends Error {}

/** What a zip list may expand to: the service's list limits (processor.ts) and what the apps check first. */
export type ZipLimits = Pick<ListLimits, 'maxUncompressedBytes' | 'maxCompressionRatio'>;
export const ZIP_LIMITS: ZipLimits = { maxUncompressedBytes: 1024 * 1024 * 1024, maxCompressionRatio: 200 };

/**
 * A zip reader's error in words: an entry whose path climbs out of the archive (`../x`), is absolute or holds
 * backslashes is "an unsafe path inside the zip"; anything else a damaged archive.
 */
export function zipErrorWords(error: Error): string {
  const unsafe = /^(?:invalid relative path|absolute path|invalid characters in fileName): (.*)$/.exec(
    error.message,
  );
  if (unsafe)
    return `The zip archive is refused: '${unsafe[1]}' is an unsafe path inside the zip (a list's zip may hold only a file name, not a path that leaves its folder).`;
  return `The zip archive is damaged (${error.message}).`;
}

export interface ZipEntryInfo {
  readonly fileName: string;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  /** The file's modification time as the archive keeps it (MS-DOS date and time fields). */
  readonly modified: DosTime;
}

/** A time in a zip archive: its MS-DOS date and time fields, as stored (no time zone). */
export interface DosTime {
  readonly date: number;
  readonly time: number;
}

/** The local Date whose fields are those of a DOS time (fflate writes an entry's time from local fields). */
function dateOfDosTime({ date, time }: DosTime): Date {
  return new Date(
    1980 + (date >> 9),
    ((date >> 5) & 0xf) - 1,
    date & 0x1f,
    time >> 11,
    (time >> 5) & 0x3f,
    (time & 0x1f) * 2,
  );
}

/** Zip entries larger than this are judged by their compression ratio as well as by their size. */
const RATIO_CHECK_FLOOR = 16 * 1024 * 1024;

/**
 * Checks an archive from its central directory and answers its one list file. Throws a ZipProblem with a
 * message for a person: not a zip, no file or several, not .txt/.csv, encrypted, an unsupported compression
 * method, or a file that would expand beyond the limits (a zip bomb).
 */
export async function inspectZip(path: string, limits: ZipLimits = ZIP_LIMITS): Promise<ZipEntryInfo> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(path, { autoClose: false });
  } catch (error) {
    throw new ZipProblem(`The file is not a readable zip archive (${(error as Error).message}).`);
  }
  try {
    const files: yauzl.Entry[] = [];
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!isArchiverNoise(entry.fileName)) files.push(entry);
        if (files.length > 20) resolve();
        else zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', (error: Error) => reject(new ZipProblem(zipErrorWords(error))));
      zip.readEntry();
    });
    if (files.length === 0)
      throw new ZipProblem('The zip archive holds no file: it must hold exactly one .txt or .csv file.');
    if (files.length > 1) {
      const names = files.slice(0, 3).map((f) => `'${f.fileName}'`);
      throw new ZipProblem(
        `The zip archive holds ${files.length > 20 ? 'more than 20' : files.length} files (${names.join(', ')}${files.length > 3 ? ', …' : ''}): ` +
          'it must hold exactly one .txt or .csv file.',
      );
    }
    const entry = files[0];
    if (!/\.(txt|csv)$/i.test(entry.fileName))
      throw new ZipProblem(
        `The file inside the zip archive, '${entry.fileName}', is not a .txt or .csv file.`,
      );
    if (entry.isEncrypted())
      throw new ZipProblem('The file inside the zip archive is encrypted: zip it without a password.');
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8)
      throw new ZipProblem(
        `The file inside the zip archive uses compression method ${entry.compressionMethod}; only deflate (8) and stored (0) are supported.`,
      );
    if (entry.uncompressedSize > limits.maxUncompressedBytes)
      throw new ZipProblem(
        `The file inside the zip archive expands to ${formatBytes(entry.uncompressedSize)}, more than the ${formatBytes(limits.maxUncompressedBytes)} a list may have.`,
      );
    const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
    if (entry.uncompressedSize > RATIO_CHECK_FLOOR && ratio > limits.maxCompressionRatio)
      throw new ZipProblem(
        `The file inside the zip archive expands ${Math.round(ratio)} times (${formatBytes(entry.compressedSize)} to ` +
          `${formatBytes(entry.uncompressedSize)}); text lists do not compress that well, so it is refused as a zip bomb.`,
      );
    return {
      fileName: entry.fileName,
      compressedSize: entry.compressedSize,
      uncompressedSize: entry.uncompressedSize,
      modified: { date: entry.lastModFileDate, time: entry.lastModFileTime },
    };
  } finally {
    zip.close();
  }
}

/** Counts bytes through a stream and fails it past a limit (declared sizes are checked by yauzl as well). */
class ByteLimit extends Transform {
  private seen = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit)
      done(new ZipProblem(`The file inside the zip archive expands beyond ${formatBytes(this.limit)}.`));
    else done(null, chunk);
  }
}

/**
 * A stream of the list file of an archive (checked by {@link inspectZip}), failing past the size limit.
 * The archive closes when the stream does (read to the end or destroyed early, e.g. after a sample).
 */
export async function openZipEntry(
  path: string,
  entryName: string,
  limits: ZipLimits = ZIP_LIMITS,
): Promise<Readable> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(path, { autoClose: false, validateEntrySizes: true });
  } catch (error) {
    throw new ZipProblem(`The file is not a readable zip archive (${(error as Error).message}).`);
  }
  try {
    const entry = await new Promise<yauzl.Entry>((resolve, reject) => {
      zip.on('entry', (e: yauzl.Entry) => (e.fileName === entryName ? resolve(e) : zip.readEntry()));
      zip.once('end', () => reject(new ZipProblem(`The zip archive no longer holds '${entryName}'.`)));
      zip.once('error', (error: Error) => reject(new ZipProblem(zipErrorWords(error))));
      zip.readEntry();
    });
    const limited = new ByteLimit(limits.maxUncompressedBytes);
    // stream.pipeline: an inflate error reaches the reader; destroying the reader stops the inflating.
    streamPipeline(await zip.openReadStreamPromise(entry), limited, () => zip.close());
    return limited;
  } catch (error) {
    zip.close();
    throw error;
  }
}

/** Streams the list file of an archive (checked by {@link inspectZip}) to `destination`. */
export async function extractZipEntry(
  path: string,
  entryName: string,
  destination: string,
  limits: ZipLimits = ZIP_LIMITS,
): Promise<void> {
  try {
    await pipeline(
      await openZipEntry(path, entryName, limits),
      createWriteStream(destination, { highWaterMark: 1 << 20 }),
    );
  } catch (error) {
    if (error instanceof ZipProblem) throw error;
    throw new ZipProblem(`The file inside the zip archive cannot be read (${(error as Error).message}).`);
  }
}

/**
 * Where the pipeline writes results, in order. `write` starts writing `bytes[0, length)` and resolves once the
 * write before it has finished: the caller may then reuse that earlier buffer, but not this one until its own
 * next `write` (or `finish`) resolves. Writes go through the thread pool, so the caller keeps computing.
 */
export interface ByteSink {
  write(bytes: Uint8Array, length: number): Promise<void>;
  finish(): Promise<void>;
}

function writeAt(
  fd: number,
  bytes: Uint8Array,
  offset: number,
  length: number,
  position: number,
): Promise<number> {
  return new Promise((resolve, reject) =>
    write(fd, bytes, offset, length, position, (error, written) =>
      error ? reject(error) : resolve(written),
    ),
  );
}

/** Sequential positioned writes, at most one in flight. */
class FileWriter {
  private position = 0;
  private inFlight: Promise<void> = Promise.resolve();
  constructor(private readonly fd: number) {}

  async write(bytes: Uint8Array, length: number): Promise<void> {
    await this.inFlight;
    const at = this.position;
    this.position += length;
    this.inFlight = (async () => {
      let done = 0;
      while (done < length) done += await writeAt(this.fd, bytes, done, length - done, at + done);
    })();
    // A failure is seen by the next write or by finish; until then it must not count as unhandled.
    this.inFlight.catch(() => undefined);
  }

  finish(): Promise<void> {
    return this.inFlight;
  }
}

/** Writes straight to a file descriptor. */
export function fileSink(fd: number): ByteSink {
  const writer = new FileWriter(fd);
  return { write: (bytes, length) => writer.write(bytes, length), finish: () => writer.finish() };
}

/**
 * Deflates into a zip archive of one file, written to a file descriptor as it goes. The file's time is
 * `modified` (a list's results take the time of its input's file, so the same list gives the same bytes),
 * else now.
 */
export function zipSink(fd: number, entryName: string, modified?: DosTime): ByteSink {
  const writer = new FileWriter(fd);
  const ready: Uint8Array[] = [];
  let failure: Error | undefined;
  const zip = new Zip((error, data) => {
    if (error) failure = error;
    else ready.push(data);
  });
  const entry = new ZipDeflate(entryName, { level: 6 });
  // The time is an attribute of the entry, not a compression option.
  if (modified) entry.mtime = dateOfDosTime(modified);
  zip.add(entry);
  const drain = async () => {
    if (failure) throw failure;
    for (const chunk of ready.splice(0)) await writer.write(chunk, chunk.length);
  };
  return {
    async write(bytes, length) {
      // fflate may keep a reference to a chunk it has not finished with: hand it a copy.
      entry.push(bytes.slice(0, length), false);
      await drain();
    },
    async finish() {
      entry.push(new Uint8Array(0), true);
      zip.end();
      await drain();
      await writer.finish();
    },
  };
}
