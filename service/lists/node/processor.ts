// The list pipeline's work on a node: the jobs of the queue (backend/port.ts), run with this node's pipeline
// worker and online verifier. One pipeline whatever the adapter:
//
//   plan    pass 1 of a list (pipeline/plan.ts) in the pipeline worker: its rows verified offline, its
//           duplicates known, cut into parts; the plan is kept and a job queued per part.
//   part    the part's online checks, if any (onlinePhase.ts; a part waiting for a retry waits in the queue),
//           then pass 2 of its rows (partWriter.ts); its results are saved once, and the last part's save
//           queues the list's completion.
//   finish  the parts' counts summed into the list's reports (and a zip list's archive, the explain CSV put
//           together): Results. Then the callback.
//
// Statuses move Pending → Processing → Results | Processed | Invalid | Error (docs/lists.md).
import { createReadStream, mkdirSync, openSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LIST_RECORD_LIMIT } from '../../../shared/api/limits.js';
import { minLevel, type ChecksLevel, type OnlineVerifier } from '../../engine/online/index.js';
import type { KeyRecord } from '../../store/keys.js';
import type { ListBackend, ListJobHandlers, PartSlot, RunStart } from '../backend/port.js';
import { callbackResolutionOf, deliverCallback, type CallbackOptions } from './callback.js';
import type { CallbackResolution } from './callbackTarget.js';
import { identityReporting } from '../pipeline/identityPass.js';
import {
  DomainShare,
  Lanes,
  runPartOnline,
  DEFAULT_MAX_WAIT_MS,
  DEFAULT_RETRY_DELAY_MS,
} from './onlinePhase.js';
import { sleep } from '../../engine/online/cache.js';
import { EXPLAIN_HEADER } from '../pipeline/partWriter.js';
import { PipelineThread } from './pipelineThread.js';
import { identityJobFor } from './purchase.js';
import { ReportCounter } from '../report.js';
import { partAddresses, decodePartRows, SPREAD_PARTS } from '../parts.js';
import type { IdentityReportState, ListJob, ListLimits, ListPolicy, PartResult } from '../types.js';
import { toVerifyPolicy } from '../verdicts.js';
import { fileSink, zipSink, ZIP_LIMITS } from '../read/zip.js';
import { MAX_ROW_BYTES } from '../read/rowWalk.js';
import { isObserved, publish, type OpsEvents } from '../../ops/events.js';

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
   * How long the pipeline worker is kept once it has nothing to do, before it is stopped and its memory given
   * back. Default 0: at once (a list is a big job; starting the workers again costs ~0.2 s, and an arriving
   * upload starts them ahead of need).
   */
  readonly idleMs?: number;
  /** Time each row's online check may take (DNS, SMTP, retries, the catch-all probe), in ms. Default 10 s. */
  readonly onlineBudgetMs?: number;
  /**
   * Online checks in flight at once on this node, over every part it works on (fed grouped by domain; the
   * verifier keeps the per-host and global conversation limits). Default 500: enough to keep the 50
   * conversations busy.
   */
  readonly onlineConcurrency?: number;
  /** First wait before temporary failures (greylisting, timeouts) are asked again, in ms. Default 5 min. */
  readonly retryDelayMs?: number;
  /** The longest a list waits for retries, in ms (0: no retries; those rows stay unknown). Default 30 min. */
  readonly maxWaitMs?: number;
  /** better-sqlite3's addon for the pipeline worker's read-only connection (the identity services). */
  readonly nativeBinding?: string;
  /** Days a completed list's files are kept (retention.ts). Default 30. */
  readonly retainDays?: number;
  /** Parts worked on at once by this node. Default 8. */
  readonly parts?: number;
  /** How long one job of a part checks online before it hands the rest on (default 60 s). */
  readonly sliceMs?: number;
  /**
   * Rows per part of the lists this node plans (default 10,000): smaller parts spread a list's online checks
   * over more nodes. The results are the same bytes whatever the parts.
   */
  readonly partRows?: number;
}

/** The node's online verifier and its ceiling (`serve --checks`): lists run min(key.checks, ceiling). */
export interface ListOnlineContext {
  readonly verifier: OnlineVerifier;
  readonly ceiling: ChecksLevel;
}

export const DEFAULT_MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_LIST_LIMITS: ListLimits = {
  maxRecords: LIST_RECORD_LIMIT,
  maxRowBytes: MAX_ROW_BYTES,
  ...ZIP_LIMITS,
};

/**
 * How long a team node's part worker that handed a part back rests before it asks the queue again: meanwhile
 * the other nodes, which have room for the part, take it.
 */
const HAND_BACK_REST_MS = 2_000;

/** Plans a team server's node makes at once (a small list's plan is not held back by a big one's). */
const PLAN_LANES = 2;

/** A list interrupted this many times (the service stopped while it ran) is given up with Error. */
export const MAX_ATTEMPTS = 3;

/** What the list work of a node needs besides its backend. */
export interface ListNode {
  /** The key of a list, by id (it may have changed since the list was submitted). */
  keyById(id: number): Promise<KeyRecord | undefined>;
  /** The node's service database (reference data for the services other than validation). */
  readonly serviceDbPath: string;
  /** Where the node's imported bounces are, for a key with known bouncers (code 520); undefined: none. */
  knownBouncers?(key: KeyRecord): ListPolicy['knownBouncers'];
}

export class ListProcessor {
  readonly limits: ListLimits;
  readonly maxUploadBytes: number;
  private readonly host: PipelineThread;
  /** The team server's plans' pipeline workers (takePlanHost), and those not planning now. */
  private readonly planHosts: PipelineThread[] = [];
  private readonly freePlanHosts: PipelineThread[] = [];
  private readonly lanes: Lanes;
  /** On a team server: the checks this node holds by domain, so that a heavy domain's parts go to every node. */
  private readonly share: DomainShare | undefined;
  private readonly stopping = new AbortController();
  private readonly deliveries = new Set<Promise<unknown>>();
  private isClosed = false;
  private inHand = 0;
  /** The key of each list this node works on (its log lines name it). */
  private readonly keyIds = new Map<number, number>();

  constructor(
    private readonly backend: ListBackend,
    private readonly node: ListNode,
    private readonly options: ListServiceOptions = {},
    private readonly online?: ListOnlineContext,
  ) {
    this.limits = { ...DEFAULT_LIST_LIMITS, ...options.limits };
    this.maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
    this.host = new PipelineThread({
      ...(options.verifyThreads !== undefined ? { verifyThreads: options.verifyThreads } : {}),
      ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    });
    this.lanes = new Lanes(options.onlineConcurrency ?? 500);
    this.share = backend.kind === 'postgres' ? new DomainShare() : undefined;
  }

  /** How this node resolves and checks callback targets (E7's check, and its deliveries). */
  get callbackResolution(): CallbackResolution {
    return callbackResolutionOf(this.options.callback);
  }

  /** Parts of lists this node is working on now (`mailsieve status`). */
  get partsInHand(): number {
    return this.inHand;
  }

  /** Takes the queue's list work on this node. */
  start(): Promise<void> {
    const handlers: ListJobHandlers = {
      plan: (listId, run) => this.plan(listId, run),
      part: async (listId, run, part, slot, from) => {
        this.inHand++;
        try {
          await this.part(listId, run, part, slot, from);
        } finally {
          this.inHand--;
        }
      },
      finish: (listId, run) => this.finish(listId, run),
      callback: (listId) => this.callback(listId),
      failed: (listId, run, reason) =>
        this.failRun(listId, run, 'Error', `Processing failed: ${reason}; submit the list again.`, 0),
    };
    return this.backend.work(handlers, {
      parts: this.options.parts ?? 8,
      ...(this.backend.kind === 'postgres' ? { plans: PLAN_LANES } : {}),
    });
  }

  /** Starts the pipeline worker ahead of need (an upload is arriving). */
  warm(): void {
    if (!this.isClosed) this.host.warm();
  }

  /** Work taken while the node stops is handed back (the job fails, and is taken again later or elsewhere). */
  private checkOpen(): void {
    if (this.isClosed) throw new Error('the node is stopping; the work is taken up again');
  }

  private async plan(listId: number, run: number): Promise<void> {
    await this.options.ready?.catch(() => undefined);
    this.checkOpen();
    const start = await this.backend.startRun(listId, run);
    if (!start) return;
    try {
      await this.planRun(start);
    } finally {
      start.release?.();
    }
  }

  private async planRun(start: RunStart): Promise<void> {
    const { list, run } = start;
    const listId = list.id;
    if (list.attempts > MAX_ATTEMPTS) {
      await this.failRun(
        listId,
        run,
        'Error',
        `Processing was interrupted ${list.attempts - 1} times (the service stopped while the list ran); submit the list again.`,
        0,
      );
      return;
    }
    const key = await this.node.keyById(list.keyId);
    if (!key) {
      await this.failRun(listId, run, 'Error', 'The key that submitted this list no longer exists.', 0);
      return;
    }
    // As E1: the key's checks level within the node's ceiling.
    // A bought report-only list runs again at the level it first ran with, never higher.
    const ceiling = this.online ? minLevel(key.checks, this.online.ceiling) : 'offline';
    const level = list.purchase ? minLevel(ceiling, list.checks ?? 'offline') : ceiling;
    const identity = list.services.some((service) => service !== 'email_validation')
      ? identityJobFor(list, key, this.node.serviceDbPath, this.options.nativeBinding)
      : undefined;
    if (identity && !identity.ok) {
      await this.failRun(listId, run, 'Error', identity.reason, 0);
      return;
    }
    const knownBouncers = this.node.knownBouncers?.(key);
    const job: ListJob = {
      listId: list.id,
      inputPath: start.inputPath,
      workDir: start.workDir,
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
      ...(level !== 'offline' ? { online: level, explain: true } : {}),
      services: identity ? identity.services : list.services,
      servicesExplicit: list.servicesExplicit,
      ...(this.options.partRows !== undefined ? { partRows: this.options.partRows } : {}),
      // A team server spreads a list's mailbox checks over its nodes: enough parts for each to take some.
      ...(this.backend.kind === 'postgres' && level === 'smtp' ? { spreadParts: SPREAD_PARTS } : {}),
      ...(identity ? { identity: identity.job } : {}),
    };
    await this.backend.setChecks(listId, run, level);
    const planKey = `${listId}:${run}`;
    // The team server's plans are stored whole and its parts written from what was stored: each plan gets a
    // pipeline worker of its own, so that a big list's plan holds back neither another list's plan nor any
    // part. The single node keeps its plans in its one pipeline worker, which writes their parts.
    const isStored = this.backend.kind === 'postgres';
    const host = isStored ? this.takePlanHost() : this.host;
    try {
      await this.planWith(host, planKey, job, list.keyId, run);
    } finally {
      if (isStored) this.freePlanHosts.push(host);
    }
  }

  /** A pipeline worker for a plan of the team server: a free one, or a new one (at most PLAN_LANES in all). */
  private takePlanHost(): PipelineThread {
    const free = this.freePlanHosts.pop();
    if (free) return free;
    const host = new PipelineThread({
      ...(this.options.verifyThreads !== undefined ? { verifyThreads: this.options.verifyThreads } : {}),
      ...(this.options.idleMs !== undefined ? { idleMs: this.options.idleMs } : {}),
    });
    this.planHosts.push(host);
    return host;
  }

  private async planWith(host: PipelineThread, planKey: string, job: ListJob, keyId: number, run: number) {
    const { listId } = job;
    let saving: Promise<void> = Promise.resolve();
    const outcome = await host.plan(planKey, job, this.backend.kind === 'postgres', false, {
      progress: (records, completed) => {
        saving = saving
          .then(() => this.backend.planProgress(listId, run, records, completed))
          .catch(() => undefined);
      },
      services: (services, delimiter) => {
        saving = saving
          .then(async () => {
            if (delimiter !== undefined) await this.backend.setDelimiter(listId, delimiter);
            if (services !== undefined) await this.backend.setServices(listId, run, services);
          })
          .catch(() => undefined);
      },
    });
    await saving;
    if (outcome.kind !== 'planned') {
      host.forget(planKey);
      await this.failRun(
        listId,
        run,
        outcome.kind === 'invalid' ? 'Invalid' : 'Error',
        outcome.reason,
        outcome.kind === 'invalid' ? outcome.records : 0,
      );
      return;
    }
    try {
      await this.backend.savePlan(listId, run, outcome.record);
      this.announce({
        event: 'planned',
        listId,
        keyId,
        records: outcome.record.records,
        parts: outcome.record.parts.length,
      });
    } finally {
      // The team server's parts are written from what was stored: the plan is not kept here.
      if (this.backend.kind === 'postgres') host.forget(planKey);
    }
  }

  private async part(
    listId: number,
    run: number,
    index: number,
    slot?: PartSlot,
    from?: number,
  ): Promise<void> {
    this.checkOpen();
    const work = await this.backend.partWork(listId, run, index);
    if (!work || work.isDone) return;
    const { context, bounds } = work;
    const planKey = `${listId}:${run}`;
    let stored: { rows: Uint8Array; text: Uint8Array } | undefined;
    if (!this.host.holds(planKey)) {
      const rows = await this.backend.partRows(listId, run, index);
      const text = await this.backend.partText(listId, run, bounds);
      // The single node's plan is lost with its process: that run is no longer current.
      if (!rows || !text) return;
      stored = { rows, text };
    }
    let verdicts;
    let unknown: OpsEvents['rows']['unknown'] = [];
    if (context.check && this.online) {
      const { addresses, rowCounts } = stored
        ? partAddresses(decodePartRows(stored.rows))
        : await this.host.addresses(planKey, index);
      if (addresses.length > 0) {
        // From here the part waits on mail servers: the next part may start its own work meanwhile.
        await slot?.release();
        const outcome = await runPartOnline(
          addresses,
          rowCounts,
          work,
          {
            level: context.check.level,
            policy: context.check.policy,
            verifyPolicy: toVerifyPolicy(context.check.policy),
            budgetMs: this.options.onlineBudgetMs ?? 10_000,
            retryDelayMs: this.options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
            maxWaitMs: this.options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
            // A job's checks stop well within its lease (the queue takes a job that runs longer for dead).
            sliceMs: this.options.sliceMs ?? Math.min(60_000, (this.backend.leaseMs ?? Infinity) / 3),
          },
          {
            verifier: this.online.verifier,
            lanes: this.lanes,
            backend: this.backend,
            listId,
            run,
            part: index,
            stopping: this.stopping.signal,
            share: this.share,
            from,
          },
        );
        if (outcome.kind === 'handed-back') {
          // Another node takes it (this worker rests first, so as not to take it straight back).
          await this.backend.requeuePart(listId, run, index, undefined, outcome.from);
          await sleep(HAND_BACK_REST_MS, this.stopping.signal);
          return;
        }
        if (outcome.kind === 'later') {
          await this.backend.requeuePart(listId, run, index, outcome.at, outcome.from);
          return;
        }
        // Another job of the part, asking the rest of its checks, writes it.
        if (outcome.kind === 'elsewhere') return;
        verdicts = outcome.verdicts;
        unknown = outcome.unknown;
      }
    }
    const outputPath = this.backend.partFile?.(listId, run, index);
    const result: PartResult = await this.host.write(planKey, context, bounds, {
      ...(stored ? { stored } : {}),
      identityDbPath: this.node.serviceDbPath,
      ...(outputPath ? { outputPath } : {}),
      ...(verdicts ? { verdicts } : {}),
    });
    await this.backend.savePart(listId, run, index, result);
    const rows = result.report.statuses.reduce((sum, n) => sum + n, 0);
    publish('rows', { level: context.check?.level ?? 'offline', rows, unknown });
    this.announce({ event: 'part done', listId, part: index, records: rows });
  }

  private async finish(listId: number, run: number): Promise<void> {
    const list = await this.backend.getList(listId);
    const reports = await this.backend.partReports(listId, run);
    const plan = list?.plan;
    if (!list || !reports || !plan || list.run !== run) return;
    const { context } = plan;
    const counter = new ReportCounter();
    for (const report of reports.reports) counter.addState(report);
    let serviceReporting: Partial<Record<string, object>> = {};
    if (context.identity) {
      const sum: IdentityReportState = { fields: [], append: { Individual: 0, Household: 0 }, alternate: [] };
      const fields = new Map<string, number>();
      for (const state of reports.identity) {
        for (const [field, count] of state.fields) fields.set(field, (fields.get(field) ?? 0) + count);
        sum.append.Individual += state.append.Individual;
        sum.append.Household += state.append.Household;
        state.alternate.forEach((kinds, rank) => {
          const mine = (sum.alternate[rank] ??= { Individual: 0, Household: 0 });
          mine.Individual += kinds.Individual;
          mine.Household += kinds.Household;
        });
      }
      serviceReporting = identityReporting(
        { ...sum, fields: [...fields] },
        context.identity.services,
        context.identity.job.alternateMax,
      );
    }
    // A zip list's results are one archive, put together once; so is the explain CSV.
    const dir = join(this.backend.workRoot, `finish-${listId}-${run}-${process.pid}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      if (context.zipEntryName && !context.isReportOnly) {
        const path = join(dir, 'results.zip');
        await this.assemble(listId, run, 'results', path, {
          name: context.zipEntryName,
          ...(context.zipEntryTime ? { modified: context.zipEntryTime } : {}),
        });
        await this.backend.saveAssembled(listId, run, 'results.zip', path);
      }
      if (context.explain) {
        const path = join(dir, 'explain.csv');
        await this.assemble(listId, run, 'explain', path);
        await this.backend.saveAssembled(listId, run, 'explain', path);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await this.backend.completeRun(listId, run, {
      records: plan.records,
      reporting: counter.reporting(),
      services: context.services,
      serviceReporting,
      isAwaitingPurchase: context.isReportOnly,
    });
    this.host.forget(`${listId}:${run}`);
    this.announce({
      event: 'finished',
      listId,
      keyId: list.keyId,
      records: plan.records,
      status: context.isReportOnly ? 'Processed' : 'Results',
    });
  }

  /** The head and the parts' bytes in order, into a file (zipped as `zipEntry` when given). */
  private async assemble(
    listId: number,
    run: number,
    what: 'results' | 'explain',
    path: string,
    zipEntry?: { readonly name: string; readonly modified?: { date: number; time: number } },
  ): Promise<void> {
    const fd = openSync(path, 'w', 0o600);
    try {
      const sink = zipEntry ? zipSink(fd, zipEntry.name, zipEntry.modified) : fileSink(fd);
      // Fixed-size blocks, whatever the parts' sizes: the archive's bytes depend only on the results.
      const block = Buffer.alloc(4 * 1024 * 1024);
      const spare = Buffer.alloc(block.length);
      let current = block;
      let other = spare;
      let at = 0;
      if (what === 'explain') {
        at = current.write(EXPLAIN_HEADER, 0, 'utf8');
      }
      for await (const chunk of this.backend.partBytes(listId, run, what)) {
        let from = 0;
        while (from < chunk.length) {
          const n = Math.min(chunk.length - from, current.length - at);
          current.set(chunk.subarray(from, from + n), at);
          at += n;
          from += n;
          if (at === current.length) {
            await sink.write(current, at);
            [current, other] = [other, current];
            at = 0;
          }
        }
      }
      if (at > 0) await sink.write(current, at);
      await sink.finish();
    } finally {
      closeSync(fd);
    }
  }

  private async callback(listId: number): Promise<void> {
    const list = await this.backend.getList(listId);
    const url = list?.options.callback_url;
    if (!list || !url) return;
    this.checkOpen();
    const delivery = deliverCallback(
      url,
      await this.backend.document(list),
      this.stopping.signal,
      this.options.callback,
    );
    this.deliveries.add(delivery);
    await delivery.finally(() => this.deliveries.delete(delivery));
  }

  /** Gives a list up (Invalid or Error), and says so in the log. */
  private async failRun(
    listId: number,
    run: number,
    status: 'Invalid' | 'Error',
    reason: string,
    records: number,
  ): Promise<void> {
    await this.backend.failRun(listId, run, status, reason, records);
    this.announce({ event: 'failed', listId, status, reason });
  }

  /**
   * A step of a list, for the log, with its key's id (read once per list on this node, only when someone
   * listens).
   */
  private announce(event: OpsEvents['list']): void {
    if (!isObserved('list')) return;
    const isLast = event.event === 'finished' || event.event === 'failed';
    const keyId = event.keyId ?? this.keyIds.get(event.listId);
    if (isLast) this.keyIds.delete(event.listId);
    else if (keyId !== undefined) this.keyIds.set(event.listId, keyId);
    if (keyId !== undefined) return publish('list', { ...event, keyId });
    void this.backend.getList(event.listId).then(
      (list) => {
        if (list && !isLast) this.keyIds.set(event.listId, list.keyId);
        publish('list', list ? { ...event, keyId: list.keyId } : event);
      },
      () => publish('list', event),
    );
  }

  /** Stops taking work: checks in flight end, and their parts are handed back to the queue. */
  stop(): void {
    this.isClosed = true;
    this.stopping.abort();
  }

  /** Stops: work in flight is abandoned where it stands (it is taken up again: the queue's leases, a restart). */
  async close(): Promise<void> {
    this.stop();
    await Promise.all([this.host.close(), ...this.planHosts.map((host) => host.close())]);
    await Promise.all([...this.deliveries]);
  }
}

/** A stored file as a stream (for StoredBytes). */
export function fileBytes(path: string) {
  return () => createReadStream(path, { highWaterMark: 1 << 20 });
}
