// A second thread for the pre-check's address checks (syntaxWorker.ts): the pre-check hands it a batch when it
// is ready and not already busy, and checks the batch itself otherwise, so both cores share the work without
// tuning. A helper that fails is no loss: the batches it held are checked by the pre-check.
import { Worker } from 'node:worker_threads';
import type { CheckedAddresses } from './addressCheck.js';
import type { SyntaxWorkerReply, SyntaxWorkerRequest } from './syntaxWorker.js';
import { workerScriptUrl } from '../../../service/workerUrl.js';

/** Batches in flight: enough to keep the helper busy while the pre-check reads the next ones. */
const IN_FLIGHT = 4;

interface Waiting {
  readonly resolve: (checked: CheckedAddresses) => void;
  readonly reject: (error: Error) => void;
}

export class SyntaxHelper {
  private readonly worker: Worker;
  private isReady = false;
  private failure: Error | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor() {
    this.worker = new Worker(workerScriptUrl(import.meta.url, 'syntaxWorker'), {
      resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 256 },
    });
    this.worker.unref();
    this.worker.on('message', (reply: SyntaxWorkerReply) => {
      if (reply.type === 'ready') {
        this.isReady = true;
        return;
      }
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      waiting?.resolve({ invalid: reply.invalid, hashes: reply.hashes });
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const { reject } of this.waiting.values()) reject(error);
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', () => fail(new Error('the pre-check helper stopped')));
  }

  /** The batch's figures from the helper; undefined when it is not ready, busy or failed (check it yourself). */
  tryCheck(values: readonly string[]): Promise<CheckedAddresses> | undefined {
    if (!this.isReady || this.failure || this.waiting.size >= IN_FLIGHT) return undefined;
    const id = this.nextId++;
    return new Promise<CheckedAddresses>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, values } satisfies SyntaxWorkerRequest);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error('closed');
    await this.worker.terminate();
  }
}
