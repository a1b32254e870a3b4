// The verify workers of the pipeline worker: batches go to the least busy worker, a bounded number at a time
// so that a fast scanner does not queue a whole list's addresses in memory. When every worker has its fill,
// the pipeline verifies the batch itself (it has a core's worth of time once its scanning is done): on two
// cores, the pipeline worker and one verify worker share the verification evenly without any tuning.
import { Worker } from 'node:worker_threads';
import type { ListPolicy } from '../types.js';
import type { VerifyReply, VerifyRequest } from './verifyWorker.js';
import { WORKER_OLD_GENERATION_MB, workerScriptUrl } from '../../workerUrl.js';

export type BatchResult = Extract<VerifyReply, { type: 'batch' }>;

interface Member {
  readonly worker: Worker;
  inFlight: number;
}

/** Batches in flight per worker: enough to keep it busy while the pipeline does something else. */
const IN_FLIGHT_PER_WORKER = 4;

export class VerifierPool {
  private members: Member[] = [];
  private readonly waiting: (() => void)[] = [];
  private onResult: ((result: BatchResult, firstRow: number) => void) | undefined;
  /**
   * The first row of each batch in flight of the current list, by batch id. A list that stops early (Invalid)
   * leaves batches in flight; their answers come after the next list began, find no entry here, and are
   * dropped.
   */
  private readonly firstRows = new Map<number, number>();
  private failure: Error | undefined;
  private nextId = 0;
  private isClosing = false;

  constructor(private readonly size: number) {}

  /** Starts the workers (each loads the engine, ~0.2 s), if they are not running. */
  start(): void {
    this.isClosing = false;
    while (this.members.length < this.size) {
      // A small young generation: batches make short-lived strings by the million, and the default (up to
      // 3 × 16 MiB a worker) would hold tens of MiB of them between collections.
      const worker = new Worker(workerScriptUrl(import.meta.url, 'verifyWorker'), {
        resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB },
      });
      const member: Member = { worker, inFlight: 0 };
      worker.on('message', (reply: VerifyReply) => {
        if (reply.type !== 'batch') return;
        member.inFlight--;
        const firstRow = this.firstRows.get(reply.id);
        this.firstRows.delete(reply.id);
        if (firstRow !== undefined) this.onResult?.(reply, firstRow);
        this.waiting.shift()?.();
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        const wasMember = this.members.includes(member);
        this.members = this.members.filter((m) => m !== member);
        if (wasMember && !this.isClosing) this.fail(new Error(`a verify worker stopped (exit code ${code})`));
      });
      this.members.push(member);
    }
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** Begins a list: every worker gets its key's policy; results go to `onResult`. */
  begin(policy: ListPolicy, onResult: (result: BatchResult, firstRow: number) => void): void {
    this.failure = undefined;
    this.firstRows.clear();
    this.start();
    this.onResult = onResult;
    for (const member of this.members)
      member.worker.postMessage({ type: 'policy', policy } satisfies VerifyRequest);
  }

  /** Sends a batch whose rows start at `firstRow` to a worker with room; false when none has. */
  trySubmit(bytes: Uint8Array, firstRow: number): boolean {
    if (this.failure) throw this.failure;
    let member: Member | undefined;
    for (const m of this.members)
      if (m.inFlight < IN_FLIGHT_PER_WORKER && (!member || m.inFlight < member.inFlight)) member = m;
    if (!member) return false;
    const id = this.nextId++;
    member.inFlight++;
    this.firstRows.set(id, firstRow);
    member.worker.postMessage({ type: 'batch', id, bytes } satisfies VerifyRequest, [
      bytes.buffer as ArrayBuffer,
    ]);
    return true;
  }

  /** Waits until every batch sent has its result. */
  async drain(): Promise<void> {
    while (this.members.some((m) => m.inFlight > 0)) {
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    this.isClosing = true;
    const members = this.members;
    this.members = [];
    await Promise.all(members.map((m) => m.worker.terminate()));
  }
}
