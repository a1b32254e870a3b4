// The log's writer thread (service/ops/logRing.ts): makes the lines of the ring's records and writes them to
// the node's standard output, until the process exits.
import { workerData } from 'node:worker_threads';
import {
  CLOSING,
  DONE,
  FLUSH_MS,
  NO_READER,
  READER,
  RingReader,
  SIGNAL,
  THREAD,
  WRITER_STEPS_BELOW,
  type RingBuffers,
} from './logRing.js';
import { writeAll } from '../fdWrite.js';
import { lowerThisThread } from '../threadPriority.js';

const { buffers, fd } = workerData as { buffers: RingBuffers; fd: number };
lowerThisThread(WRITER_STEPS_BELOW);
const control = new Int32Array(buffers.control);
// The logging thread reads the ring itself when this thread did not start in time (the ring filled up first,
// or the process was exiting).
if (Atomics.compareExchange(control, READER, NO_READER, THREAD) === NO_READER) {
  try {
    write();
  } finally {
    Atomics.store(control, DONE, 1);
    Atomics.notify(control, DONE);
  }
}

function write(): void {
  const reader = new RingReader(buffers);
  let writable = true;
  for (;;) {
    // Woken every FLUSH_MS, or by a signal (a quarter of the ring used, the ring full, the process exiting);
    // never at once when records came while it wrote: the node would then wake it for every few requests.
    const signal = Atomics.load(control, SIGNAL);
    const closing = Atomics.load(control, CLOSING) === 1;
    const lines = reader.take();
    if (lines.length > 0 && writable)
      try {
        writeAll(fd, lines);
      } catch {
        // Standard output is closed (EPIPE): the lines cannot go anywhere; the ring is still emptied, so that
        // the node never waits for room.
        writable = false;
      }
    if (closing) return;
    Atomics.wait(control, SIGNAL, signal, FLUSH_MS);
  }
}
