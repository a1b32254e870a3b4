// Hands the bytes of a download to the results writer's two worker threads (exportWorker.ts: the framer, then
// the exporter) through a few reused 1 MiB buffers that travel back and forth (transferred, never copied
// between threads), so the downloading thread neither scans rows nor allocates per chunk; it waits only when
// the framer is every buffer behind.
import type { CountsRequest } from './counts.js';
import { MessageChannel, Worker } from 'node:worker_threads';
import { isCountShared, type ExportRequest, type ResultsSummary } from './exports.js';
import type {
  ExportWorkerData,
  ExportWorkerReply,
  ExportWorkerRequest,
  FrameWorkerRequest,
} from './exportWorker.js';
import { workerScriptUrl } from '../../../service/workerUrl.js';
import { ResultsProblem } from './rowFramer.js';

const BUFFER_BYTES = 1024 * 1024;
const BUFFERS = 6;

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
  /** Finished or aborted. */
  private isOver = false;

  private constructor(
    /** Finds the rows. */
    private readonly framer: Worker,
    /** Writes the results file and the exports. */
    private readonly exporter: Worker,
  ) {
    for (let i = 0; i < BUFFERS; i++) this.free.push(new ArrayBuffer(BUFFER_BYTES));
    this.done = new Promise<ResultsSummary>((resolve, reject) => {
      this.settle = resolve;
      this.reject = reject;
    });
    this.done.catch(() => undefined);
    const onReply = (reply: ExportWorkerReply) => {
      if (reply.type === 'free') {
        this.free.push(reply.buffer);
        this.waiting.shift()?.();
      } else if (reply.type === 'done') {
        this.settle?.(reply.summary);
      } else if (reply.type === 'aborted') {
        this.onAborted?.();
      } else {
        this.fail(reply.isFormat ? new ResultsProblem(reply.message) : new Error(reply.message));
      }
    };
    for (const worker of [framer, exporter]) {
      worker.on('message', onReply);
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (!this.isDiscarded) this.fail(new Error(`the results writer stopped (exit code ${code})`));
      });
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.reject?.(this.failure);
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** Starts the workers. */
  static spawn(): ResultsSink {
    const channel = new MessageChannel();
    const url = workerScriptUrl(import.meta.url, 'exportWorker');
    // A small young generation, as for the list workers: the exporter decodes fields into short-lived strings.
    const start = (data: ExportWorkerData, maxOldGenerationSizeMb: number) =>
      new Worker(url, {
        workerData: data,
        transferList: [data.port],
        resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb },
      });
    return new ResultsSink(
      start({ role: 'frame', port: channel.port1 }, 64),
      start({ role: 'export', port: channel.port2 }, 128),
    );
  }

  /**
   * Has the workers create the results file `partPath` (none for a stored file read again) and the exports
   * (under temporary names).
   */
  begin(
    partPath: string | undefined,
    delimiter: string,
    exports: readonly ExportRequest[],
    counts?: CountsRequest,
  ): this {
    // With the default export written in this pass, the framer counts the Results numbers but Ready to mail
    // (the exporter's first export's rows): the exporter is the stage's bottleneck (exports.ts FramedCounts).
    const isCountedByFramer = counts !== undefined && isCountShared(exports, counts);
    this.toExporter({
      type: 'start',
      ...(partPath !== undefined ? { partPath } : {}),
      delimiter,
      exports,
      ...(counts ? { counts } : {}),
      ...(isCountedByFramer ? { isCountedByFramer } : {}),
    });
    this.toFramer({ type: 'start', delimiter, ...(isCountedByFramer ? { counts } : {}) });
    return this;
  }

  private async terminate(): Promise<void> {
    await Promise.all([this.framer.terminate(), this.exporter.terminate()]);
  }

  private toFramer(request: FrameWorkerRequest, transfer: ArrayBuffer[] = []): void {
    this.framer.postMessage(request, transfer);
  }

  private toExporter(request: ExportWorkerRequest): void {
    this.exporter.postMessage(request);
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
    this.toFramer({ type: 'chunk', buffer, length: this.at }, [buffer]);
    this.current = undefined;
    this.at = 0;
  }

  /**
   * Every byte is in: waits for the file and the exports to be complete. On a failure the exports'
   * temporary files are removed (abort) before it is thrown.
   */
  async finish(): Promise<ResultsSummary> {
    try {
      if (this.failure) throw this.failure;
      this.flush();
      this.toFramer({ type: 'end' });
      const summary = await this.done;
      this.isOver = true;
      return summary;
    } catch (error) {
      await this.abort();
      throw error;
    } finally {
      this.isDiscarded = true;
      await this.terminate();
    }
  }

  /**
   * Abandons the results: the exporter closes and removes the exports' temporary files, then the workers
   * stop. Once is enough: a second call, or one after `finish`, does nothing.
   */
  async abort(): Promise<void> {
    if (this.isOver) return;
    this.isOver = true;
    this.isDiscarded = true;
    const aborted = new Promise<void>((resolve) => (this.onAborted = resolve));
    this.toExporter({ type: 'abort' });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([aborted, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    await this.terminate();
  }
}
