// Starts the preparing of answers (prepared.ts) in the background: when the service opens its database, and
// at each check (every CHECK_MS) that finds people or addresses waiting, e.g. after an import by another
// process. One worker at a time (prepareWorker.ts).
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';
import { workerScriptUrl } from '../workerUrl.js';
import { hasAnswersWaiting } from './prepared.js';
import type { PrepareReply, PrepareWorkerData } from './prepareWorker.js';

/** How often the service looks for answers to prepare, in ms. */
const CHECK_MS = 60_000;
/** Steps of nice the worker takes below the node's (Linux): background work, behind every request. */
const PREPARE_NICE = 10;

export class AnswerPreparer {
  private worker: Worker | undefined;
  private readonly timer: NodeJS.Timeout;
  private finished: Promise<void> = Promise.resolve();
  private isClosed = false;
  /** People and addresses prepared so far, and the last failure, for status and tests. */
  prepared = 0;
  failure: string | undefined;

  constructor(
    private readonly db: Database,
    private readonly options: {
      readonly nativeBinding?: string | undefined;
      /** Where a failed run is reported; default stderr. */
      readonly log?: (line: string) => void;
    } = {},
  ) {
    this.check();
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  /** Starts the worker when answers wait and none runs. */
  check(): void {
    if (this.isClosed || this.worker || this.db.memory || !this.db.open || !hasAnswersWaiting(this.db))
      return;
    const data: PrepareWorkerData = {
      dbPath: this.db.name,
      nativeBinding: this.options.nativeBinding,
      nice: PREPARE_NICE,
    };
    const worker = new Worker(workerScriptUrl(import.meta.url, 'prepareWorker'), { workerData: data });
    // Background work does not keep the process alive.
    worker.unref();
    this.worker = worker;
    this.finished = new Promise((resolve) => {
      worker.once('message', (reply: PrepareReply) => (this.prepared += reply.prepared));
      worker.once('error', (error) => {
        this.failure = error.message;
        (this.options.log ?? ((line: string) => process.stderr.write(`${line}\n`)))(
          `Preparing answers of imported people failed (${error.message}); answers come from the columns meanwhile, and it is tried again in a minute.`,
        );
      });
      worker.once('exit', () => {
        this.worker = undefined;
        resolve();
      });
    });
  }

  /** Resolves when the running worker (if any) ends. */
  whenIdle(): Promise<void> {
    return this.finished;
  }

  /** Stops after the current batch. */
  async close(): Promise<void> {
    this.isClosed = true;
    clearInterval(this.timer);
    this.worker?.postMessage('stop');
    await this.finished;
  }
}
