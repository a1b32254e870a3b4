// Every file the jobs write (a results file, each export, the CLI's state file) appears whole: it is written
// under a temporary name in the same folder and renamed to its final name once complete, so a crash or a kill
// leaves either the old file or the new one under the final name, never a torn one. A temporary name carries
// the writing process's id; outputFolder.ts tells when its writer has stopped and removes it then.
import { renameSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fitBytes, MAX_FILE_NAME_BYTES } from '../../../shared/fileName.js';

/** The one suffix of temporary files: `<final name>.<pid>.mailsieve-part`. */
export const TEMPORARY_SUFFIX = '.mailsieve-part';
// A format writer's exporter keeps an idle `<temporary>.unused` beside its temporary: stale the same way.
const TEMPORARY = /\.(\d+)\.mailsieve-part(\.unused)?$/;

/**
 * Where `path` is written before it is complete. The final name is cut as needed so that the temporary name
 * still fits a file name (255 bytes), with room for `.unused`.
 */
export function temporaryPathOf(path: string): string {
  const suffix = `.${process.pid}${TEMPORARY_SUFFIX}`;
  const name = fitBytes(basename(path), MAX_FILE_NAME_BYTES - suffix.length - '.unused'.length);
  return join(dirname(path), `${name}${suffix}`);
}

/** The id of the process that wrote the temporary file named `name`; undefined for any other name. */
export function writerOfTemporary(name: string): number | undefined {
  const match = TEMPORARY.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** Writes a small file whole: the text under a temporary name, then renamed over `path`. */
export function writeFileWhole(path: string, text: string): void {
  const temporary = temporaryPathOf(path);
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}

const OUT_BYTES = 2 * 1024 * 1024;
/** Up to this many bytes, a copy is a loop (see tryAppend). */
const SHORT_COPY = 256;
/**
 * Room for a staged source (`stage`) behind the two buffers: a download's batch (rowFramer.ts: windows of
 * about 1 MiB). A longer batch is not staged, and its rows are copied as before.
 */
const STAGE_BYTES = 2 * 1024 * 1024;
const STAGE_AT = 2 * OUT_BYTES;

/** A file written through a buffer, one write in flight at a time while the next buffer fills. */
export class BufferedFile {
  /**
   * The two buffers and the stage, in one memory, so that a staged row is copied by `copyWithin` (native,
   * nothing allocated). Not zeroed, so pages are touched only as used: the stage costs nothing to a file that
   * stages none.
   */
  private readonly arena = Buffer.allocUnsafeSlow(STAGE_AT + STAGE_BYTES);
  private buf = Buffer.from(this.arena.buffer, this.arena.byteOffset, OUT_BYTES);
  private spare = Buffer.from(this.arena.buffer, this.arena.byteOffset + OUT_BYTES, OUT_BYTES);
  private at = 0;
  private inFlight: Promise<unknown> = Promise.resolve();
  /** The source whose bytes are in the stage (`stage`), and how many. */
  private staged: Uint8Array | undefined;
  private stagedLength = 0;
  constructor(private readonly file: FileHandle) {}

  /** Creates (or truncates) `path`; `mode` for a new file (default 0o666, less the umask). */
  static async create(path: string, mode?: number): Promise<BufferedFile> {
    return new BufferedFile(await open(path, 'w', mode));
  }

  /** Appends a chunk (copied: the caller may reuse it). */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.at + chunk.length > this.buf.length) await this.flush();
    if (chunk.length > this.buf.length) {
      await this.inFlight;
      await this.file.write(chunk);
      return;
    }
    this.buf.set(chunk, this.at);
    this.at += chunk.length;
  }

  /**
   * Appends a chunk without copying it: the promise resolves once it is written, and until then the caller
   * must leave the chunk as it is.
   */
  async writeUncopied(chunk: Uint8Array): Promise<void> {
    await this.flush();
    await this.inFlight;
    const written = this.file.write(chunk);
    this.inFlight = written;
    await written;
  }

  /**
   * Copies `source[0, length)` into the stage: until `unstage`, the rows `tryAppend` takes from `source` are
   * copied from there by `copyWithin`, three times as fast as a loop over a short row's bytes (a download's
   * exports copy a million of them). NOTE: `source` must not change while staged.
   */
  stage(source: Uint8Array, length: number): void {
    this.staged = undefined;
    if (length > STAGE_BYTES) return;
    this.arena.set(length === source.length ? source : source.subarray(0, length), STAGE_AT);
    this.staged = source;
    this.stagedLength = length;
  }

  /** Forgets the staged source (its memory may change from now on). */
  unstage(): void {
    this.staged = undefined;
  }

  /** Copies a row and its line break when they fit (no await on the common path); false when they do not. */
  tryAppend(source: Buffer, start: number, end: number, newline: Buffer): boolean {
    const length = end - start;
    if (this.at + length + newline.length > this.buf.length) return false;
    const out = this.buf;
    let at = this.at;
    if (source === this.staged && end <= this.stagedLength) {
      this.arena.copyWithin(out.byteOffset - this.arena.byteOffset + at, STAGE_AT + start, STAGE_AT + end);
      at += length;
    }
    // A short row byte by byte: Buffer#copy allocates a view of the source on every call.
    else if (length <= SHORT_COPY) for (let i = start; i < end; i++) out[at++] = source[i]!;
    else at += source.copy(out, at, start, end);
    this.at = at;
    for (let i = 0; i < newline.length; i++) this.buf[this.at++] = newline[i]!;
    return true;
  }

  async append(source: Buffer, start: number, end: number, newline: Buffer): Promise<void> {
    if (this.tryAppend(source, start, end, newline)) return;
    await this.flush();
    if (this.tryAppend(source, start, end, newline)) return;
    await this.inFlight;
    await this.file.write(source.subarray(start, end));
    await this.file.write(newline);
  }

  /** Appends text as UTF-8 when it surely fits (no await on the common path); false, writing nothing, if not. */
  tryWriteText(text: string): boolean {
    // A UTF-16 code unit takes at most three bytes of UTF-8.
    if (this.at + text.length * 3 > this.buf.length) return false;
    this.at += this.buf.write(text, this.at, 'utf8');
    return true;
  }

  /** Appends text as UTF-8. */
  async writeText(text: string): Promise<void> {
    if (this.tryWriteText(text)) return;
    await this.flush();
    // Longer than a whole buffer could surely hold: written as its own chunk.
    if (!this.tryWriteText(text)) await this.write(Buffer.from(text, 'utf8'));
  }

  async flush(): Promise<void> {
    if (this.at === 0) return;
    await this.inFlight;
    const full = this.buf;
    const length = this.at;
    this.inFlight = this.file.write(full, 0, length);
    this.buf = this.spare;
    this.spare = full;
    this.at = 0;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.inFlight;
    await this.file.close();
  }
}
