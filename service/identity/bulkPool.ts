// The bulk workers of the service: E4 and E6 requests are answered in worker threads (bulkWorker.ts), at most
// one request per worker at a time; further requests wait in a queue shared between keys: each key's requests
// wait in arrival order, and a free worker takes the next request of the key whose turn it is (round robin
// between the keys with waiting work), so one key's flood delays another key's request by about one request
// per worker, not by the flood. A key holds at most BULK_QUEUE_PER_KEY of the queue's places (beyond them its
// requests are refused 429), so another key's request is queued, not refused 503 as the queue fills. The
// request thread stays free for everything else (E1 under four 5,000-record E6 clients: `npm run bench --
// load`), and bulk work in flight is capped, so a burst of bulk requests queues instead of starving the service. Where a thread
// can have its own OS priority (Linux), every worker runs a little below the request thread, so a burst of
// bulk work can use both cores while yielding them to the request thread when that needs them.
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { workerScriptUrl } from '../workerUrl.js';
import { canLowerThreadPriority } from '../threadPriority.js';
import { answerBulk, type BulkOutcome, type BulkTask } from './bulkWork.js';
import type { BulkReply, BulkRequest, BulkWorkerData } from './bulkWorker.js';
import type { IdentityStore } from './store.js';

/** Requests waiting for a worker beyond which the service answers 503 (busy) rather than queue more. */
export const BULK_QUEUE_LIMIT = 256;
/**
 * Requests of one key waiting for a worker beyond which that key's next is refused (429). A waiting request
 * holds its body (up to 16 MiB), so this bounds the memory one key holds in the queue (128 MiB at most); a
 * client sending more at once would only lengthen its own wait (the spec's older E6 description allows one
 * request at a time per customer), and it takes 32 keys flooding at once to fill the queue.
 */
export const BULK_QUEUE_PER_KEY = 8;

export class BulkBusyError extends Error {
  constructor() {
    super('The service is busy with other bulk requests; try again in a few seconds.');
  }
}

/** A key has its share of the queue's places waiting already (429: the key's own excess, not the service's). */
export class BulkShareError extends Error {
  constructor() {
    super(
      `Too many requests: this key already has ${BULK_QUEUE_PER_KEY} bulk requests waiting; ` +
        'send more as they are answered.',
    );
  }
}

interface Pending {
  readonly task: BulkTask;
  resolve(outcome: BulkOutcome): void;
  reject(error: Error): void;
}

/** The requests of one key waiting for a worker, in arrival order. */
interface Lane {
  readonly owner: number;
  readonly pending: Pending[];
}

interface Member {
  readonly worker: Worker;
  current: { readonly id: number; readonly pending: Pending } | undefined;
}

/** Bulk workers by default: one per core but the request thread's, at least one, at most two. */
export function defaultBulkThreads(): number {
  return Math.max(1, Math.min(2, availableParallelism() - 1));
}

/**
 * Bulk workers in all: one per core, at most two. On Linux all of them take requests, at BULK_WORKER_NICE.
 * Where a thread cannot have its own priority, the workers beyond `defaultBulkThreads` only take a request
 * while the request thread was busy less than IDLE_BELOW of its recent time: a second bulk request runs at
 * once when no other traffic needs that core, and yields to the request thread when it does.
 */
export function idleBulkThreads(): number {
  return Math.max(defaultBulkThreads(), Math.min(2, availableParallelism()));
}

/**
 * How far below the request thread's OS priority every bulk worker runs, in steps of nice, on Linux
 * (service/threadPriority.ts: relative, so that a node run under `nice` keeps the gap). A little below: the
 * scheduler gives such a worker about two thirds of the time of a normal thread it shares a core with
 * (weight 655 against 1024), so bulk work yields to other requests. All workers alike, so that no request
 * waits on a slower worker than the others: with the first worker at the request thread's priority and the
 * second at nice 3, the requests the second took made E6's p99 (`npm run bench -- load`, 4 runs each:
 * p99 460–508 ms against 408–467 ms at nice 2 for both, E1 keeping 42–62% against 49–60% of its
 * throughput). Both at nice 3 let E6 fall behind (p99 508–520 ms); both at the request thread's priority
 * kept E1 at 40%.
 */
export const BULK_WORKER_NICE = 2;

/** Event-loop utilisation of the request thread below which it counts as idle. */
const IDLE_BELOW = 0.5;
/** How long a measure of the request thread's utilisation holds, in ms. */
const IDLE_WINDOW_MS = 200;
/**
 * A bulk worker's young generation, in MB. A 5,000-record E6 answer makes tens of MB of short-lived
 * objects; with V8's default young generation much of them is copied and promoted before it dies, and the
 * collector took about a fifth of the worker's time (CPU per request about 18% lower with 96–192 MB).
 */
const WORKER_YOUNG_GENERATION_MB = 128;

export interface BulkPoolOptions {
  /** The service database file; an in-memory database (tests) is answered on the request thread. */
  readonly dbPath: string;
  readonly nativeBinding?: string | undefined;
  /** Workers that always take requests; default `defaultBulkThreads()`. */
  readonly threads?: number;
  /** Workers while the request thread is idle (at least `threads`); default `idleBulkThreads()`. */
  readonly idleThreads?: number;
}

export class BulkPool {
  private members: Member[] = [];
  /** Each key's waiting requests, by key id. */
  private readonly lanes = new Map<number, Lane>();
  /** The keys with waiting requests, in the order of their turns: the first is served next. */
  private readonly turns: Lane[] = [];
  /** Requests waiting, of every key. */
  private waiting = 0;
  private nextId = 0;
  private isClosed = false;
  private readonly threads: number;
  private readonly idleThreads: number;
  private utilisationMark = performance.eventLoopUtilization();
  private utilisationAt = performance.now();
  private isRequestThreadBusy = true;

  constructor(
    private readonly options: BulkPoolOptions,
    /** The request thread's store, for an in-memory database, which workers cannot open. */
    private readonly inline: IdentityStore,
  ) {
    this.threads = Math.max(1, options.threads ?? defaultBulkThreads());
    this.idleThreads = Math.max(this.threads, options.idleThreads ?? idleBulkThreads());
  }

  /**
   * How many workers may take requests now: `idleThreads` where workers run at a lower priority (Linux:
   * canLowerThreadPriority); elsewhere `threads`, or `idleThreads` while the request thread idles.
   */
  private workersNow(): number {
    if (this.idleThreads === this.threads || canLowerThreadPriority) return this.idleThreads;
    const now = performance.now();
    if (now - this.utilisationAt >= IDLE_WINDOW_MS) {
      const mark = performance.eventLoopUtilization();
      this.isRequestThreadBusy =
        performance.eventLoopUtilization(mark, this.utilisationMark).utilization >= IDLE_BELOW;
      this.utilisationMark = mark;
      this.utilisationAt = now;
    }
    return this.isRequestThreadBusy ? this.threads : this.idleThreads;
  }

  private get isInline(): boolean {
    return this.options.dbPath === '' || this.options.dbPath === ':memory:';
  }

  /**
   * Why a request of key `owner` would not be queued now: its share of the queue is taken (BulkShareError) or
   * the queue is full (BulkBusyError); undefined when it would. Asked before paying for a request (its quota
   * reservation); `run` asks again.
   */
  refusal(owner: number): BulkShareError | BulkBusyError | undefined {
    if (this.isInline) return undefined;
    if ((this.lanes.get(owner)?.pending.length ?? 0) >= BULK_QUEUE_PER_KEY) return new BulkShareError();
    if (this.waiting >= BULK_QUEUE_LIMIT) return new BulkBusyError();
    return undefined;
  }

  /**
   * Answers a bulk task of key `owner` in a worker, once one is free and it is the key's turn. Rejects with
   * BulkShareError when the key has its share of the queue waiting, BulkBusyError when the queue is full.
   */
  run(task: BulkTask, owner: number): Promise<BulkOutcome> {
    if (this.isClosed) return Promise.reject(new Error('the service is stopping'));
    if (this.isInline) return Promise.resolve(answerBulk(this.inline, task));
    const refusal = this.refusal(owner);
    if (refusal) return Promise.reject(refusal);
    return new Promise<BulkOutcome>((resolve, reject) => {
      let lane = this.lanes.get(owner);
      if (!lane) {
        lane = { owner, pending: [] };
        this.lanes.set(owner, lane);
        this.turns.push(lane);
      }
      lane.pending.push({ task, resolve, reject });
      this.waiting += 1;
      this.pump();
    });
  }

  /** The next waiting request: the first of the key whose turn it is, that key going to the end of the turns. */
  private next(): Pending {
    const lane = this.turns.shift()!;
    const pending = lane.pending.shift()!;
    this.waiting -= 1;
    if (lane.pending.length > 0) this.turns.push(lane);
    else this.lanes.delete(lane.owner);
    return pending;
  }

  private pump(): void {
    while (this.waiting > 0) {
      const allowed = this.workersNow();
      if (this.members.filter((m) => m.current !== undefined).length >= allowed) return;
      let member = this.members.find((m) => m.current === undefined);
      if (!member && this.members.length < allowed) member = this.startWorker();
      if (!member) return;
      const pending = this.next();
      const id = this.nextId++;
      member.current = { id, pending };
      member.worker.ref();
      member.worker.postMessage({ id, task: pending.task } satisfies BulkRequest);
    }
  }

  private startWorker(): Member {
    const data: BulkWorkerData = {
      dbPath: this.options.dbPath,
      nativeBinding: this.options.nativeBinding,
      nice: BULK_WORKER_NICE,
    };
    const worker = new Worker(workerScriptUrl(import.meta.url, 'bulkWorker'), {
      workerData: data,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const member: Member = { worker, current: undefined };
    worker.on('message', (reply: BulkReply) => {
      const current = member.current;
      if (!current || current.id !== reply.id) return;
      member.current = undefined;
      // An idle worker does not keep the process alive.
      worker.unref();
      if ('failure' in reply) current.pending.reject(new Error(reply.failure));
      else current.pending.resolve(reply.outcome);
      this.pump();
    });
    const gone = (why: string) => {
      if (!this.members.includes(member)) return;
      this.members = this.members.filter((m) => m !== member);
      member.current?.pending.reject(new Error(`a bulk worker failed: ${why}`));
      member.current = undefined;
      if (!this.isClosed) this.pump();
    };
    worker.on('error', (error) => gone(error.message));
    worker.on('exit', (code) => gone(`exit code ${code}`));
    this.members.push(member);
    return member;
  }

  async close(): Promise<void> {
    this.isClosed = true;
    for (const lane of this.turns.splice(0))
      for (const pending of lane.pending) pending.reject(new Error('the service is stopping'));
    this.lanes.clear();
    this.waiting = 0;
    const members = this.members;
    this.members = [];
    for (const member of members) member.current?.pending.reject(new Error('the service is stopping'));
    await Promise.all(members.map((m) => m.worker.terminate()));
  }
}
