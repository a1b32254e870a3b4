// Reading a list's text file in large windows, checking as it goes that it is text: UTF-8 (simdutf through
// buffer.isUtf8), and no NUL bytes (binary files and UTF-16/32 text have them).
import { closeSync, openSync, readSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { CR, LF } from './scan.js';

/** Bytes read per refill. Large reads keep the file system calls few. */
export const WINDOW_BYTES = 4 * 1024 * 1024;

export class NotTextError extends Error {
  constructor(
    message: string,
    /** Offset in the file of the offending byte. */
    readonly offset: number,
  ) {
    super(message);
  }
}

/** The first position in `bytes[start, end)` where UTF-8 decoding fails; `end` if none. */
function firstInvalidUtf8(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  while (i < end) {
    const c = bytes[i];
    let need: number;
    let min: number;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) [need, min] = [1, 0x80];
    else if (c >= 0xe0 && c <= 0xef) [need, min] = [2, 0x800];
    else if (c >= 0xf0 && c <= 0xf4) [need, min] = [3, 0x10000];
    else return i;
    if (i + need >= end) return i;
    let cp = c & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const b = bytes[i + k];
      if (b === undefined || (b & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return end;
}

/**
 * A sliding window over a file. `buf[0, end)` holds the file's bytes from `offset`; `consume(pos)` marks
 * bytes before `pos` as done, and `fill()` slides the rest to the front and reads more behind it.
 */
export class InputWindow {
  readonly buf: Buffer;
  /**
   * The whole memory of the window and, after it, `extraBytes` for the caller (from `extraStart`): copies
   * between the two are `arena.copyWithin`, which allocates nothing (Buffer#copy allocates a view per call).
   */
  readonly arena: Uint8Array;
  readonly extraStart: number;
  /** File offset of buf[0]. */
  offset = 0;
  /** End of the valid bytes in buf. */
  end = 0;
  /** Whether the file has been read to its end. */
  isEof = false;
  private fd: number;
  private checkedTo = 0;

  constructor(
    path: string,
    /** The longest row a caller needs whole in the window. */
    maxRowBytes: number,
    private readonly check: boolean,
    extraBytes = 0,
  ) {
    const windowBytes = WINDOW_BYTES + maxRowBytes + 8;
    const memory = new ArrayBuffer(windowBytes + extraBytes);
    this.arena = new Uint8Array(memory);
    this.buf = Buffer.from(memory, 0, windowBytes);
    this.extraStart = windowBytes;
    this.fd = openSync(path, 'r');
  }

  /**
   * Drops the bytes before `keepFrom` (an index into buf), slides the rest to the front and reads more.
   * Throws NotTextError when the new bytes are not UTF-8 text.
   */
  fill(keepFrom: number): void {
    if (this.isEof) return;
    const kept = this.end - keepFrom;
    if (keepFrom > 0) {
      this.buf.copyWithin(0, keepFrom, this.end);
      this.offset += keepFrom;
      this.checkedTo = Math.max(0, this.checkedTo - keepFrom);
    }
    this.end = kept;
    while (this.end < this.buf.length) {
      const read = readSync(this.fd, this.buf, this.end, this.buf.length - this.end, this.offset + this.end);
      if (read === 0) {
        this.isEof = true;
        break;
      }
      this.end += read;
    }
    if (this.check) this.checkText();
  }

  /** Moves the window so that it starts at file offset `at`, and fills it. */
  seek(at: number): void {
    this.offset = at;
    this.end = 0;
    this.isEof = false;
    this.checkedTo = 0;
    this.fill(0);
  }

  private checkText(): void {
    const { buf } = this;
    const nul = buf.indexOf(0, this.checkedTo);
    if (nul >= 0 && nul < this.end)
      throw new NotTextError(
        'it holds NUL bytes, so it is binary or UTF-16/UTF-32 text rather than UTF-8 text',
        this.offset + nul,
      );
    // Check up to the last ASCII byte (never inside a multi-byte character), or everything at the end of file.
    let upTo = this.end;
    if (!this.isEof) {
      while (upTo > this.checkedTo && buf[upTo - 1] >= 0x80) upTo--;
    }
    if (upTo > this.checkedTo && !isUtf8(buf.subarray(this.checkedTo, upTo))) {
      const at = firstInvalidUtf8(buf, this.checkedTo, upTo);
      throw new NotTextError('it is not UTF-8 text', this.offset + at);
    }
    this.checkedTo = upTo;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

/** The 1-based line of a file offset: line breaks before it, plus one (for messages, so read again on demand). */
export function lineAt(path: string, offset: number, breakByte: number = LF): number {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    let line = 1;
    let position = 0;
    while (position < offset) {
      const read = readSync(fd, chunk, 0, Math.min(chunk.length, offset - position), position);
      if (read === 0) break;
      for (let at = chunk.indexOf(breakByte, 0); at >= 0 && at < read; at = chunk.indexOf(breakByte, at + 1))
        line++;
      position += read;
    }
    return line;
  } finally {
    closeSync(fd);
  }
}

export { CR, LF };
