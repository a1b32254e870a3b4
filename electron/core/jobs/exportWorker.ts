// The results writer of the job engine, in a worker thread: it writes the downloaded results to disk and
// computes the exports from the same bytes, while the thread that runs the HTTP client (and, for the embedded
// service, the service that sends the file) only hands it buffers. On two cores the download and the export
// pass then run side by side instead of one after the other.
import { parentPort } from 'node:worker_threads';
import { BufferedFile } from './outputs.js';
import type { CountsRequest } from './counts.js';
import {
  ResultsExporter,
  counterOf,
  ResultsFormatError,
  targetOf,
  type ExportRequest,
  type ResultsSummary,
} from './exports.js';

export type ExportWorkerRequest =
  | {
      readonly type: 'start';
      /** Where the results are written (a temporary name: the caller renames it). */
      readonly partPath: string;
      readonly delimiter: string;
      readonly exports: readonly ExportRequest[];
      /** Count the Results screen's numbers too (the desktop's jobs). */
      readonly counts?: CountsRequest;
    }
  /** `length` bytes of `buffer`; the buffer is sent back (`free`) once copied. */
  | { readonly type: 'chunk'; readonly buffer: ArrayBuffer; readonly length: number }
  | { readonly type: 'end' }
  | { readonly type: 'abort' };

export type ExportWorkerReply =
  | { readonly type: 'free'; readonly buffer: ArrayBuffer }
  | { readonly type: 'done'; readonly summary: ResultsSummary }
  | { readonly type: 'aborted' }
  | { readonly type: 'error'; readonly message: string; readonly isFormat: boolean };

const port = parentPort;
if (!port) throw new Error('exportWorker.js runs as a worker thread');
const send = (reply: ExportWorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);

let file: BufferedFile | undefined;
let exporter: ResultsExporter | undefined;
let failed = false;
let queue: Promise<void> = Promise.resolve();

async function handle(request: ExportWorkerRequest): Promise<void> {
  if (failed && request.type !== 'abort') {
    if (request.type === 'chunk') send({ type: 'free', buffer: request.buffer }, [request.buffer]);
    return;
  }
  try {
    switch (request.type) {
      case 'start':
        file = await BufferedFile.create(request.partPath);
        exporter = await ResultsExporter.open(
          request.delimiter,
          request.exports.map(targetOf),
          request.counts ? counterOf(request.counts) : undefined,
        );
        return;
      case 'chunk': {
        const bytes = new Uint8Array(request.buffer, 0, request.length);
        await file!.write(bytes);
        await exporter!.push(bytes);
        send({ type: 'free', buffer: request.buffer }, [request.buffer]);
        return;
      }
      case 'end': {
        await file!.close();
        const summary = await exporter!.finish();
        send({ type: 'done', summary });
        return;
      }
      case 'abort':
        await file?.close().catch(() => undefined);
        await exporter?.abort();
        send({ type: 'aborted' });
        return;
    }
  } catch (error) {
    failed = true;
    if (request.type === 'chunk') send({ type: 'free', buffer: request.buffer }, [request.buffer]);
    send({
      type: 'error',
      message: error instanceof Error ? error.message : String(error),
      isFormat: error instanceof ResultsFormatError,
    });
  }
}

port.on('message', (request: ExportWorkerRequest) => {
  queue = queue.then(() => handle(request));
});
