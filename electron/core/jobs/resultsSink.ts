// Hands the bytes of a download to the export worker (exportWorker.ts) through a few reused 1 MiB buffers
// that travel back and forth (transferred, never copied between threads), so the downloading thread neither
// scans rows nor allocates per chunk; it waits only when the worker is every buffer behind.
import type { CountsRequest } from './counts.js';
import { Worker } from 'node:worker_threads';
import type { ExportRequest, ResultsSummary } from './exports.js';
import type { ExportWorkerReply, ExportWorkerRequest } from './exportWorker.js';
import { workerScriptUrl } from '../../../service/lists/workerUrl.js';

const BUFFER_BYTES = 1024 * 1024;
const BUFFERS = 6;

export class ResultsFormatFailure extends Error {}

export class ResultsSink {
  private readonly free: ArrayBuffer[] = [];
  private readonly waiting: (() => void)[] = [];
  private current: Uint8Array | undefined;
  private at = 0;
  private failure: Error | undefined;
  private settle: ((summary: ResultsSummary) => void) | undefined;
  private onAborted: (() => void) | undefined;
  private reject: ((error: Error) => void) | undefined;
  private readonly done: Promise<ResultsSummary>;
  private isDiscarded = false;

  private constructor(private readonly worker: Worker) {
    for (let i = 0; i < BUFFERS; i++) this.free.push(new ArrayBuffer(BUFFER_BYTES));
    this.done = new Promise<ResultsSummary>((resolve, reject) => {
      this.settle = resolve;
      this.reject = reject;
    });
    this.done.catch(() => undefined);
    worker.on('message', (reply: ExportWorkerReply) => {
      if (reply.type === 'free') {
        this.free.push(reply.buffer);
        this.waiting.shift()?.();
      } else if (reply.type === 'done') {
        this.settle?.(reply.summary);
      } else if (reply.type === 'aborted') {
        this.onAborted?.();
      } else {
        this.fail(reply.isFormat ? new ResultsFormatFailure(reply.message) : new Error(reply.message));
      }
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => {
      if (!this.isDiscarded) this.fail(new Error(`the results writer stopped (exit code ${code})`));
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.reject?.(this.failure);
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** Starts the worker ahead of need (its start-up then overlaps the list's processing). */
  static spawn(): ResultsSink {
    // A small young generation, as for the list workers: it parses rows by the million into short-lived strings.
    return new ResultsSink(
      new Worker(workerScriptUrl(import.meta.url, 'exportWorker'), {
        resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 128 },
      }),
    );
  }

  /** Has the worker create the results file `partPath` and the exports (under temporary names). */
  begin(
    partPath: string,
    delimiter: string,
    exports: readonly ExportRequest[],
    counts?: CountsRequest,
  ): this {
    this.post({ type: 'start', partPath, delimiter, exports, ...(counts ? { counts } : {}) });
    return this;
  }

  /** Stops a worker that will not be used. */
  async discard(): Promise<void> {
    this.isDiscarded = true;
    await this.worker.terminate();
  }

  private post(request: ExportWorkerRequest, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(request, transfer);
  }

  /** Takes a chunk of the download (copied: the caller may reuse it). */
  async push(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      this.throwIfFailed();
      if (!this.current) {
        while (this.free.length === 0 && !this.failure)
          await new Promise<void>((resolve) => this.waiting.push(resolve));
        this.throwIfFailed();
        this.current = new Uint8Array(this.free.pop()!);
        this.at = 0;
      }
      const take = Math.min(chunk.length - offset, this.current.length - this.at);
      this.current.set(chunk.subarray(offset, offset + take), this.at);
      this.at += take;
      offset += take;
      if (this.at === this.current.length) this.flush();
    }
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  private flush(): void {
    if (!this.current || this.at === 0) return;
    const buffer = this.current.buffer as ArrayBuffer;
    this.post({ type: 'chunk', buffer, length: this.at }, [buffer]);
    this.current = undefined;
    this.at = 0;
  }

  /** Every byte is in: waits for the file and the exports to be complete. */
  async finish(): Promise<ResultsSummary> {
    if (this.failure) throw this.failure;
    this.flush();
    this.post({ type: 'end' });
    try {
      return await this.done;
    } finally {
      await this.worker.terminate();
    }
  }

  /** Abandons the results: the worker closes and removes the exports' temporary files, then stops. */
  async abort(): Promise<void> {
    this.isDiscarded = true;
    const aborted = new Promise<void>((resolve) => (this.onAborted = resolve));
    this.post({ type: 'abort' });
    await Promise.race([aborted, new Promise((resolve) => setTimeout(resolve, 2000))]);
    await this.worker.terminate();
  }
}
