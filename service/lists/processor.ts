// The list processor, on the service's main thread: a queue of lists, run one at a time by the pipeline
// worker (worker.ts), whose progress and outcomes it records in the lists table; the completion callbacks;
// and recovery at start-up. Statuses move Pending → Processing → Results | Invalid | Error (docs/lists.md).
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LIST_RECORD_LIMIT } from '../../shared/api/limits.js';
import { listFileExtension } from '../../shared/api/list.js';
import { minLevel, type ChecksLevel, type OnlineLevel, type OnlineVerifier } from '../engine/online/index.js';
import type { VerifyPolicy } from '../engine/types.js';
import type { ServiceDb } from '../store/db.js';
import { getKeyById } from '../store/keys.js';
import { deliverCallback, type CallbackOptions } from './callback.js';
import { listDir, listsRoot } from './names.js';
import { DEFAULT_RETAIN_DAYS, RETENTION_SWEEP_MS, sweepListFiles } from './retention.js';
import {
  getList,
  listDocument,
  markFailed,
  markProcessing,
  markResults,
  setListChecks,
  setListOnline,
  setListDelimiter,
  setListServices,
  unfinishedLists,
  updateProgress,
  updateServiceProgress,
  type IdentityListService,
  type ListRecord,
} from './store.js';
import { identityJobFor } from './purchase.js';
import type {
  ListJob,
  ListLimits,
  ListOutcome,
  ListPolicy,
  PipelineMessage,
  PipelineRequest,
} from './types.js';
import { toVerifyPolicy } from './verdicts.js';
import { knownBouncersFor } from '../identity/bounces.list.js';
import { DEFAULT_MAX_WAIT_MS, DEFAULT_RETRY_DELAY_MS, removeJournal, runOnlinePhase } from './onlinePhase.js';
import { WORKER_OLD_GENERATION_MB, workerUrl } from './workerUrl.js';
import { ZIP_LIMITS } from './zip.js';

export interface ListServiceOptions {
  /** Lists start once this settles (the service's checks level being decided). */
  readonly ready?: Promise<unknown>;
  /** Bytes an upload may have. Default 1 GiB. */
  readonly maxUploadBytes?: number;
  readonly limits?: Partial<ListLimits>;
  /** Verify workers beside the pipeline worker (0: it verifies alone). Default: one fewer than the cores, 1 to 3. */
  readonly verifyThreads?: number;
  readonly callback?: CallbackOptions;
  /**
   * How long the pipeline worker is kept once no list is queued or running, before it is stopped and its
   * memory given back. Default 0: at once (a list is a big job; starting the workers again costs ~0.2 s, and
   * an arriving upload starts them ahead of need).
   */
  readonly idleMs?: number;
  /** Time each row's online check may take (DNS, SMTP, retries, the catch-all probe), in ms. Default 10 s. */
  readonly onlineBudgetMs?: number;
  /** Online checks of a list in flight at once (fed grouped by domain; the verifier keeps the per-host and global
   * conversation limits). Default 500: enough to keep the 50 conversations busy. */
  readonly onlineConcurrency?: number;
  /** First wait before temporary failures (greylisting, timeouts) are asked again, in ms. Default 5 min. */
  readonly retryDelayMs?: number;
  /** The longest a list waits for retries, in ms (0: no retries; those rows stay unknown). Default 30 min. */
  readonly maxWaitMs?: number;
  /** better-sqlite3's addon for the pipeline worker's read-only connection (the identity services). */
  readonly nativeBinding?: string;
  /** Days a completed list's files are kept (retention.ts). Default 30. */
  readonly retainDays?: number;
}

/** The service's online verifier and its ceiling (`serve --checks`): lists run min(key.checks, ceiling). */
export interface ListOnlineContext {
  readonly verifier: OnlineVerifier;
  readonly ceiling: ChecksLevel;
}

/** How often online verdicts are sent back to the pipeline worker (and so progress moves). */
const ONLINE_FLUSH_MS = 100;

export const DEFAULT_MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_LIST_LIMITS: ListLimits = {
  maxRecords: LIST_RECORD_LIMIT,
  maxRowBytes: 1024 * 1024,
  ...ZIP_LIMITS,
};

/** How long a worker started for an arriving upload waits for its list. */
const WARM_GRACE_MS = 30_000;

/** A list interrupted this many times (the service stopped while it ran) is given up with Error. */
export const MAX_ATTEMPTS = 3;

/**
 * Verify workers beside the pipeline worker, which verifies too whenever they are busy: one fewer than the
 * cores (at least one, at most three), so that verification has every core and nothing more.
 */
function defaultVerifyThreads(): number {
  return Math.max(1, Math.min(3, availableParallelism() - 1));
}

/** What was checked and answered for each row of a list with online checks, inside the list's folder. */
export const EXPLAIN_FILE = 'explain.csv';

/** The results file inside a list's folder. */
export function resultsFileOf(list: Pick<ListRecord, 'name'>): string {
  return `results${listFileExtension(list.name) ?? '.csv'}`;
}

export class ListProcessor {
  readonly limits: ListLimits;
  readonly maxUploadBytes: number;
  private readonly queue: number[] = [];
  private worker: Worker | undefined;
  private current: number | undefined;
  /** The services of the running list other than validation, once known. */
  private currentIdentityServices: IdentityListService[] = [];
  /** The online level and policies of the running list, when it has online checks. */
  private currentOnline:
    | { level: OnlineLevel; policy: ListPolicy; verifyPolicy: VerifyPolicy; finish: AbortController }
    | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly deliveries = new Set<Promise<unknown>>();
  private readonly stopping = new AbortController();
  private isClosed = false;
  /** Until `options.ready` settles, lists wait in the queue. */
  private waitsForReady: boolean;
  private isWaitingForReady = false;

  constructor(
    private readonly db: ServiceDb,
    private readonly dataDir: string,
    private readonly options: ListServiceOptions = {},
    private readonly online?: ListOnlineContext,
  ) {
    this.limits = { ...DEFAULT_LIST_LIMITS, ...options.limits };
    this.maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
    this.waitsForReady = options.ready !== undefined;
    mkdirSync(listsRoot(dataDir), { recursive: true, mode: 0o700 });
  }

  /** Whether list callbacks may target this machine or a private network (CallbackOptions). */
  get allowsPrivateCallbacks(): boolean {
    return this.options.callback?.allowPrivateTargets ?? true;
  }

  /** Where uploads are written while they arrive (removed at start-up: an upload cut short leaves no list). */
  get uploadsDir(): string {
    return join(listsRoot(this.dataDir), 'uploads');
  }

  /**
   * At start-up: lists that were waiting or running when the service last stopped are queued again (their
   * results are written only when complete, so running one again from its stored input is safe), except one
   * interrupted MAX_ATTEMPTS times, which gets Error rather than another try.
   */
  recover(): void {
    rmSync(this.uploadsDir, { recursive: true, force: true });
    mkdirSync(this.uploadsDir, { recursive: true, mode: 0o700 });
    this.startRetention();
    for (const list of unfinishedLists(this.db)) {
      if (list.attempts >= MAX_ATTEMPTS) {
        this.fail(
          list.id,
          'Error',
          `Processing was interrupted ${list.attempts} times (the service stopped while the list ran); submit the list again.`,
        );
        continue;
      }
      const dir = listDir(this.dataDir, list.id);
      if (existsSync(dir))
        for (const stale of readdirSync(dir).filter((f) => f.endsWith('.tmp')))
          rmSync(join(dir, stale), { force: true });
      this.queue.push(list.id);
    }
    this.pump();
  }

  /** Starts the pipeline worker ahead of need (an upload is arriving), so its start-up overlaps the upload. */
  warm(): void {
    if (this.isClosed) return;
    this.ensureWorker();
    if (this.current === undefined) this.armIdleTimer(WARM_GRACE_MS);
  }

  submit(listId: number): void {
    if (this.isClosed) return;
    this.queue.push(listId);
    this.pump();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerUrl('worker'), {
      workerData: { verifyThreads: this.options.verifyThreads ?? defaultVerifyThreads() },
      resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB },
    });
    worker.on('message', (message: PipelineMessage) => this.onMessage(message));
    worker.on('error', (error) => this.onWorkerGone(worker, `the list processor failed (${error.message})`));
    worker.on('exit', (code) => this.onWorkerGone(worker, `the list processor stopped (exit code ${code})`));
    this.worker = worker;
    return worker;
  }

  private onWorkerGone(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const listId = this.current;
    this.current = undefined;
    if (listId !== undefined && !this.isClosed)
      this.finish(listId, { kind: 'error', reason: `Processing failed: ${why}.` });
    this.pump();
  }

  private armIdleTimer(delayMs: number): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.current === undefined && this.queue.length === 0 && this.worker) {
        const worker = this.worker;
        this.worker = undefined;
        void worker.terminate();
      }
    }, delayMs);
    this.idleTimer.unref();
  }

  private pump(): void {
    if (this.isClosed || this.current !== undefined) return;
    if (this.waitsForReady) {
      if (this.queue.length > 0 && !this.isWaitingForReady) {
        this.isWaitingForReady = true;
        const go = () => {
          this.waitsForReady = false;
          this.pump();
        };
        this.options.ready!.then(go, go);
      }
      return;
    }
    const listId = this.queue.shift();
    if (listId === undefined) {
      this.worker?.unref();
      if (this.worker) this.armIdleTimer(this.options.idleMs ?? 0);
      return;
    }
    const job = this.jobFor(listId);
    if (!job) return this.pump();
    this.current = listId;
    this.currentIdentityServices = [];
    this.currentOnline = job.online ? this.onlineOf(job, job.online) : undefined;
    markProcessing(this.db, listId);
    setListChecks(this.db, listId, job.online ?? 'offline');
    const worker = this.ensureWorker();
    worker.ref();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    worker.postMessage({ type: 'run', job, isMoreQueued: this.queue.length > 0 } satisfies PipelineRequest);
  }

  /** The job of a list, or undefined (after marking it Error) when it cannot run. */
  private jobFor(listId: number): ListJob | undefined {
    const list = getList(this.db, listId);
    if (!list || (list.status !== 'Pending' && list.status !== 'Processing')) return undefined;
    const dir = listDir(this.dataDir, list.id);
    if (!existsSync(join(dir, list.inputFile))) {
      this.fail(list.id, 'Error', 'The stored file of this list is missing; submit the list again.');
      return undefined;
    }
    const key = getKeyById(this.db, list.keyId);
    if (!key) {
      this.fail(list.id, 'Error', 'The key that submitted this list no longer exists.');
      return undefined;
    }
    // As E1: the key's checks level within the service's ceiling.
    // A bought report-only list runs again at the level it first ran with, never higher.
    const ceiling = this.online ? minLevel(key.checks, this.online.ceiling) : 'offline';
    const level = list.purchase ? minLevel(ceiling, list.checks ?? 'offline') : ceiling;
    const identity = list.services.some((service) => service !== 'email_validation')
      ? identityJobFor(list, key, this.db.name, this.options.nativeBinding)
      : undefined;
    if (identity && !identity.ok) {
      this.fail(list.id, 'Error', identity.reason);
      return undefined;
    }
    const knownBouncers = knownBouncersFor(this.db, key, this.options.nativeBinding);
    return {
      listId: list.id,
      dir,
      inputFile: list.inputFile,
      name: list.name,
      delimiter: list.options.delimiter,
      header: list.options.header,
      emailColumn: list.options.email_column,
      policy: {
        corrections: key.services.has('corrections'),
        allow: [...key.allow],
        suppress: [...key.suppress],
        legacyAcceptAll: key.legacyAcceptAll,
        ...(level !== 'offline' ? { online: true } : {}),
        ...(knownBouncers ? { knownBouncers } : {}),
      },
      limits: this.limits,
      resultsFile: resultsFileOf(list),
      ...(level !== 'offline' ? { online: level, explainFile: EXPLAIN_FILE } : {}),
      services: identity ? identity.services : list.services,
      servicesExplicit: list.servicesExplicit,
      ...(identity ? { identity: identity.job } : {}),
    };
  }

  private onlineOf(job: ListJob, level: OnlineLevel) {
    return {
      level,
      policy: job.policy,
      verifyPolicy: toVerifyPolicy(job.policy),
      finish: new AbortController(),
    };
  }

  /**
   * Finish now: a list waiting for a retry of its temporary failures stops waiting; those rows stay unknown.
   * Answers whether the list had a wait to end (now, or when it resumes after a restart).
   */
  finishNow(listId: number): boolean {
    const list = getList(this.db, listId);
    if (!list || (list.status !== 'Processing' && list.status !== 'Pending') || !list.online) return false;
    setListOnline(this.db, listId, { ...list.online, finished_early: true });
    if (this.current === listId) this.currentOnline?.finish.abort();
    return true;
  }

  /** The online phase of the running list (onlinePhase.ts): its verdicts go back to the pipeline worker. */
  private async checkOnline(
    listId: number,
    addresses: readonly string[],
    rowCounts: readonly number[],
  ): Promise<void> {
    const worker = this.worker;
    const online = this.currentOnline;
    const isCurrent = () => !this.isClosed && this.current === listId && this.worker === worker;
    if (!worker || !online || !this.online) return;
    await runOnlinePhase(
      addresses,
      rowCounts,
      {
        level: online.level,
        policy: online.policy,
        verifyPolicy: online.verifyPolicy,
        budgetMs: this.options.onlineBudgetMs ?? 10_000,
        concurrency: this.options.onlineConcurrency ?? 500,
        retryDelayMs: this.options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
        maxWaitMs: this.options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
        flushMs: ONLINE_FLUSH_MS,
      },
      {
        verifier: this.online.verifier,
        dir: listDir(this.dataDir, listId),
        saved: getList(this.db, listId)?.online ?? null,
        isCurrent,
        finish: online.finish.signal,
        stopping: this.stopping.signal,
        send: (verdicts, isLast) =>
          worker.postMessage({
            type: 'online-verdicts',
            listId,
            verdicts,
            isLast,
          } satisfies PipelineRequest),
        saveState: (state) => {
          if (isCurrent()) setListOnline(this.db, listId, state);
        },
      },
    );
  }

  private onMessage(message: PipelineMessage): void {
    if (message.type === 'progress') {
      if (message.listId !== this.current) return;
      updateProgress(this.db, message.listId, message.records, message.inputCount, message.completedCount);
      if (this.currentIdentityServices.length > 0)
        updateServiceProgress(
          this.db,
          message.listId,
          this.currentIdentityServices,
          message.records,
          message.identityCompleted,
        );
    } else if (message.type === 'services') {
      if (message.listId !== this.current) return;
      if (message.delimiter !== undefined) setListDelimiter(this.db, message.listId, message.delimiter);
      if (message.services === undefined) return;
      setListServices(this.db, message.listId, message.services);
      this.currentIdentityServices = message.services.filter(
        (service): service is IdentityListService => service !== 'email_validation',
      );
    } else if (message.type === 'online') {
      if (message.listId !== this.current) return;
      const { listId } = message;
      // A failure here (never a check's: those end as unknown) leaves the list unfinished: end its run (Error).
      this.checkOnline(listId, message.addresses, message.rowCounts).catch(() => {
        if (this.current === listId) void this.worker?.terminate();
      });
    } else if (message.type === 'done') {
      if (message.listId !== this.current) return;
      this.current = undefined;
      this.finish(message.listId, message.outcome);
      this.pump();
    }
  }

  private finish(listId: number, outcome: ListOutcome): void {
    removeJournal(listDir(this.dataDir, listId));
    if (outcome.kind === 'results') {
      const list = getList(this.db, listId);
      if (!list) return;
      markResults(this.db, listId, {
        records: outcome.records,
        reporting: outcome.reporting,
        resultsFile: outcome.isAwaitingPurchase ? null : resultsFileOf(list),
        services: outcome.services,
        serviceReporting: outcome.serviceReporting,
        isAwaitingPurchase: outcome.isAwaitingPurchase,
      });
      this.announce(listId);
    } else {
      this.fail(
        listId,
        outcome.kind === 'invalid' ? 'Invalid' : 'Error',
        outcome.reason,
        outcome.kind === 'invalid' ? outcome.records : 0,
      );
    }
  }

  private fail(listId: number, status: 'Invalid' | 'Error', reason: string, records = 0): void {
    markFailed(this.db, listId, status, reason, records);
    this.announce(listId);
  }

  /** The callback, when the list asked for one; delivered on its own, never awaited by processing. */
  private announce(listId: number): void {
    const list = getList(this.db, listId);
    const url = list?.options.callback_url;
    if (!list || !url || this.isClosed) return;
    const delivery = deliverCallback(url, listDocument(list), this.stopping.signal, this.options.callback);
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }

  /** Stops: callbacks in flight are abandoned, a running list stays Processing (resumed at the next start). */
  private retentionTimer: NodeJS.Timeout | undefined;

  /** Deletes lists past their retention now, and every hour while the service runs. */
  private startRetention(): void {
    const sweep = () => {
      try {
        sweepListFiles(this.db, this.dataDir, this.options.retainDays ?? DEFAULT_RETAIN_DAYS);
      } catch (error) {
        console.error(`Could not delete old list files: ${(error as Error).message}`);
      }
    };
    sweep();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.retentionTimer = setInterval(sweep, RETENTION_SWEEP_MS);
    this.retentionTimer.unref();
  }

  async close(): Promise<void> {
    this.isClosed = true;
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.stopping.abort();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
    await Promise.all([...this.deliveries]);
  }
}
