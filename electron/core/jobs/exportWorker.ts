// The results writer of the job engine, in two worker threads that the thread running the HTTP client (and,
// for the embedded service, the service sending the file) only hands buffers to:
// - the framer (`role: 'frame'`) finds the rows of the downloaded bytes and their fields (rowFramer.ts) and
//   passes them on in batches; beside the default export, it counts the Results numbers too, but Ready to
//   mail (exports.ts FramedCounts);
// - the exporter (`role: 'export'`) writes each batch's bytes to the results file and its rows to the exports
//   (exports.ts).
// On two cores, finding the rows of one window overlaps writing the exports of the one before, while the
// download goes on. Batches cross between the two over their own channel: their buffers are shared memory, so
// only a set's number and the batch's counts cross (the set itself once, when first used), and the number
// comes back once the batch is written.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { BufferedFile } from './outputs.js';
import type { CountsRequest, ResultsCounts } from './counts.js';
import { BatchPool, ResultsProblem, RowFramer, type BatchBuffers, type FramedBatch } from './rowFramer.js';
import {
  FramedCounts,
  openExporter,
  type ResultsExporter,
  type ExportRequest,
  type ResultsSummary,
} from './exports.js';

/** What a worker is given at its start: its role, and its end of the channel between the two. */
export interface ExportWorkerData {
  readonly role: 'frame' | 'export';
  readonly port: MessagePort;
}

/** What the downloading thread sends the framer. */
export type FrameWorkerRequest =
  /** `counts`: count the Results screen's numbers here, but Ready to mail (exports.ts FramedCounts). */
  | { readonly type: 'start'; readonly delimiter: string; readonly counts?: CountsRequest }
  /** `length` bytes of `buffer`; the buffer is sent back (`free`) once copied. */
  | { readonly type: 'chunk'; readonly buffer: ArrayBuffer; readonly length: number }
  | { readonly type: 'end' };

/** What the downloading thread sends the exporter. */
export type ExportWorkerRequest =
  | {
      readonly type: 'start';
      /** Where the results are written (a temporary name: the caller renames it); none: only the exports. */
      readonly partPath?: string;
      readonly delimiter: string;
      readonly exports: readonly ExportRequest[];
      /** Count the Results screen's numbers too (the desktop's jobs). */
      readonly counts?: CountsRequest;
      /** The framer counts them, but Ready to mail: its counts come with its end. */
      readonly isCountedByFramer?: boolean;
    }
  | { readonly type: 'abort' };

/** The framer's and the exporter's answers to the downloading thread. */
export type ExportWorkerReply =
  | { readonly type: 'free'; readonly buffer: ArrayBuffer }
  | { readonly type: 'done'; readonly summary: ResultsSummary }
  | { readonly type: 'aborted' }
  | { readonly type: 'error'; readonly message: string; readonly isFormat: boolean };

/** Between the framer and the exporter. */
type BatchMessage =
  /** A batch of the set `id`; `set`: its buffers, when the exporter does not have them (at this version). */
  | {
      readonly type: 'batch';
      readonly batch: Omit<FramedBatch, 'set'> & { readonly id: number };
      readonly set?: BatchBuffers;
    }
  /** `counts`: the framer's (FramedCounts), when it counted. */
  | { readonly type: 'end'; readonly counts?: ResultsCounts }
  | { readonly type: 'free'; readonly id: number };

const parent = parentPort;
if (!parent) throw new Error('exportWorker.js runs as a worker thread');
const { role, port } = workerData as ExportWorkerData;
const reply = (message: ExportWorkerReply, transfer: ArrayBuffer[] = []) =>
  parent.postMessage(message, transfer);

/** A Buffer arrives as a Uint8Array. */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

let failed = false;
let queue: Promise<void> = Promise.resolve();
/** Runs the handlers one at a time, in the order their messages came; after a failure, only `always` ones. */
const inTurn = (handle: () => Promise<void>, always = false) => {
  queue = queue.then(async () => {
    if (failed && !always) return;
    try {
      await handle();
    } catch (error) {
      failed = true;
      reply({
        type: 'error',
        message: error instanceof Error ? error.message : String(error),
        isFormat: error instanceof ResultsProblem,
      });
    }
  });
};

if (role === 'frame') {
  // Four sets: the one being filled, and up to three with the exporter.
  const pool = new BatchPool(4, true);
  /** The sets with the exporter, and the version of each it has. */
  const lent = new Map<number, BatchBuffers>();
  const known = new Map<number, number>();
  let framer: RowFramer | undefined;
  let counts: FramedCounts | undefined;
  port.on('message', (message: BatchMessage) => {
    if (message.type !== 'free') return;
    const set = lent.get(message.id)!;
    lent.delete(message.id);
    pool.give(set);
  });
  const emit = (framed: FramedBatch) => {
    const { set, ...batch } = framed;
    lent.set(set.id, set);
    const isKnown = known.get(set.id) === set.version;
    known.set(set.id, set.version);
    port.postMessage({
      type: 'batch',
      batch: { ...batch, id: set.id },
      ...(isKnown ? {} : { set }),
    } satisfies BatchMessage);
    // Counted once handed on, while the exporter writes it: neither side changes a lent set, and the set
    // comes back (`free`) only after this returns.
    counts?.add(framed);
  };
  parent.on('message', (request: FrameWorkerRequest) => {
    if (request.type === 'chunk' && failed) {
      reply({ type: 'free', buffer: request.buffer }, [request.buffer]);
      return;
    }
    inTurn(async () => {
      switch (request.type) {
        case 'start':
          if (request.counts) counts = new FramedCounts(request.counts);
          framer = new RowFramer(request.delimiter, {
            take: (minBytes) => pool.take(minBytes),
            give: (set) => pool.give(set),
            emit,
          });
          return;
        case 'chunk':
          try {
            await framer!.push(new Uint8Array(request.buffer, 0, request.length));
          } finally {
            reply({ type: 'free', buffer: request.buffer }, [request.buffer]);
          }
          return;
        case 'end':
          await framer!.finish();
          port.postMessage({ type: 'end', counts: counts?.result() } satisfies BatchMessage);
          return;
      }
    });
  });
} else {
  let file: BufferedFile | undefined;
  let exporter: ResultsExporter | undefined;
  const sets = new Map<number, BatchBuffers>();
  // Batches are taken once the start has come (it is sent first, but on the other channel).
  let started: () => void = () => undefined;
  const isStarted = new Promise<void>((resolve) => (started = resolve));
  port.on('message', (message: BatchMessage) => {
    if (message.type === 'free') return;
    void isStarted.then(() =>
      inTurn(async () => {
        if (message.type === 'end') {
          await file?.close();
          const summary = await exporter!.finish(true, message.counts);
          reply({ type: 'done', summary });
          return;
        }
        const { id, length, rowCount, header, otherStatuses } = message.batch;
        if (message.set) sets.set(id, { ...message.set, window: asBuffer(message.set.window) });
        // (Each batch made alike, as the framer's: one hidden class for the exporter's code.)
        const batch: FramedBatch = { set: sets.get(id)!, length, rowCount, header, otherStatuses };
        // The results file is written from the batch's own bytes while its rows go to the exports.
        const written = file?.writeUncopied(batch.set.window.subarray(0, batch.length));
        written?.catch(() => undefined);
        await exporter!.consume(batch);
        await written;
        port.postMessage({ type: 'free', id } satisfies BatchMessage);
      }),
    );
  });
  parent.on('message', (request: ExportWorkerRequest) => {
    if (request.type === 'abort') {
      // The batches still waiting are skipped; the one being written finishes first.
      failed = true;
      inTurn(async () => {
        await file?.close().catch(() => undefined);
        await exporter?.abort();
        reply({ type: 'aborted' });
      }, true);
      return;
    }
    inTurn(async () => {
      if (request.partPath !== undefined) file = await BufferedFile.create(request.partPath);
      exporter = await openExporter(
        request.delimiter,
        request.exports,
        request.counts,
        request.isCountedByFramer,
      );
    });
    started();
  });
}
