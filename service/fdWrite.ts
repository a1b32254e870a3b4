// Writing a whole buffer to a file descriptor, synchronously: for the node's log on standard output (a
// non-blocking pipe may take part of it, or none for a while) and for the single node's part files, written
// by its pipeline worker straight from the part's arena.
import { writeSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `text` to `fd`, waiting while the descriptor is full (a non-blocking pipe). */
export function writeAll(fd: number, text: string | Uint8Array): void {
  const buffer = typeof text === 'string' ? Buffer.from(text) : text;
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += writeSync(fd, buffer, offset, buffer.length - offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
