// The main thread's side of the pipeline worker (pipeline/pipelineWorker.ts): starts it when list work comes
// (or ahead of need, while an upload arrives), sends it requests and matches their answers, and stops it once
// idle so its memory is given back. A worker that fails fails every request in flight; the next request
// starts a new one.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ListServiceKey } from '../../../shared/api/list.js';
import type {
  ListJob,
  OnlineVerdicts,
  PartBounds,
  PartContext,
  PartResult,
  PipelineMessage,
  PipelineRequest,
  PlanReply,
} from '../types.js';
import { WORKER_OLD_GENERATION_MB, workerScriptUrl } from '../../workerUrl.js';

/**
 * Verify workers beside the pipeline worker, which verifies too whenever they are busy: one fewer than the
 * cores (at least one, at most three), so that verification has every core and nothing more.
 */
function defaultVerifyThreads(): number {
  return Math.max(1, Math.min(3, availableParallelism() - 1));
}

/** How long a worker started for an arriving upload waits for its list. */
const WARM_GRACE_MS = 30_000;

type Pending = { resolve: (message: PipelineMessage) => void; reject: (error: Error) => void };

export interface PlanListeners {
  progress(records: number, completed: number): void;
  services(services: readonly ListServiceKey[] | undefined, delimiter?: string): void;
}

export class PipelineThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, PlanListeners>();
  /** Plans kept by the worker; while any is, the worker is not stopped for idleness. */
  private readonly held = new Set<string>();
  private idleTimer: NodeJS.Timeout | undefined;
  private isClosed = false;

  constructor(
    private readonly options: {
      readonly verifyThreads?: number;
      /** How long an idle worker is kept (default 0: stopped at once). */
      readonly idleMs?: number;
    } = {},
  ) {}

  /** Starts the worker ahead of need (an upload is arriving), so its start-up overlaps the upload. */
  warm(): void {
    if (this.isClosed) return;
    this.ensure();
    this.armIdle(WARM_GRACE_MS);
  }

  async plan(
    key: string,
    job: ListJob,
    encode: boolean,
    isMoreQueued: boolean,
    listeners: PlanListeners,
  ): Promise<PlanReply> {
    this.listeners.set(key, listeners);
    try {
      const reply = await this.request((id) => ({ type: 'plan', id, key, job, encode, isMoreQueued }));
      if (reply.type !== 'planned') throw new Error(`unexpected answer ${reply.type}`);
      if (reply.outcome.kind === 'planned') this.held.add(key);
      return reply.outcome;
    } finally {
      this.listeners.delete(key);
      this.settle();
    }
  }

  /** The distinct addresses a part of a plan held here checks online. */
  async addresses(key: string, part: number): Promise<{ addresses: string[]; rowCounts: number[] }> {
    const reply = await this.request((id) => ({ type: 'addresses', id, key, part }));
    if (reply.type !== 'addresses') throw new Error(`unexpected answer ${reply.type}`);
    this.settle();
    return { addresses: reply.addresses, rowCounts: reply.rowCounts };
  }

  async write(
    key: string,
    context: PartContext,
    bounds: PartBounds,
    options: {
      readonly stored?: { readonly rows: Uint8Array; readonly text: Uint8Array };
      readonly identityDbPath?: string;
      readonly outputPath?: string;
      readonly verdicts?: OnlineVerdicts;
    },
  ): Promise<PartResult> {
    const reply = await this.request((id) => ({ type: 'write', id, key, context, bounds, ...options }));
    if (reply.type !== 'written') throw new Error(`unexpected answer ${reply.type}`);
    this.settle();
    return reply.result;
  }

  /** Whether the worker holds this plan (the single node's plans; a restart loses them). */
  holds(key: string): boolean {
    return this.held.has(key) && this.worker !== undefined;
  }

  forget(key: string): void {
    if (!this.held.delete(key)) return;
    this.worker?.postMessage({ type: 'forget', key } satisfies PipelineRequest);
    this.settle();
  }

  private request(make: (id: number) => PipelineRequest): Promise<PipelineMessage> {
    if (this.isClosed) return Promise.reject(new Error('the list processor is stopping'));
    const worker = this.ensure();
    const id = this.nextId++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(make(id));
    });
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerScriptUrl(import.meta.url, '../pipeline/pipelineWorker'), {
      workerData: { verifyThreads: this.options.verifyThreads ?? defaultVerifyThreads() },
      resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB },
    });
    worker.on('message', (message: PipelineMessage) => this.onMessage(message));
    worker.on('error', (error) => this.onGone(worker, `the list processor failed (${error.message})`));
    worker.on('exit', (code) => this.onGone(worker, `the list processor stopped (exit code ${code})`));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private onMessage(message: PipelineMessage): void {
    if (message.type === 'ready') return;
    if (message.type === 'progress')
      return this.listeners.get(message.key)?.progress(message.records, message.completed);
    if (message.type === 'services')
      return this.listeners.get(message.key)?.services(message.services, message.delimiter);
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.type === 'failed') pending.reject(new Error(message.reason));
    else pending.resolve(message);
  }

  private onGone(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.held.clear();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of pending) reject(new Error(why));
  }

  /** With nothing asked and no plan held, the worker is let go (after `idleMs`). */
  private settle(): void {
    if (this.pending.size > 0 || this.held.size > 0 || !this.worker) return;
    this.worker.unref();
    this.armIdle(this.options.idleMs ?? 0);
  }

  private armIdle(delayMs: number): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.pending.size > 0 || this.held.size > 0 || !this.worker) return;
      const worker = this.worker;
      this.worker = undefined;
      void worker.terminate();
    }, delayMs);
    this.idleTimer.unref();
  }

  async close(): Promise<void> {
    this.isClosed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = undefined;
    for (const { reject } of this.pending.values()) reject(new Error('the list processor is stopping'));
    this.pending.clear();
    this.held.clear();
    await worker?.terminate();
  }
}
