// The desktop's scheduler of jobs: queueing, cancel, resume after a restart, progress with a rate. Each job
// runs on the one job engine (jobs/engine.ts, the same as `mailsieve clean`), whose checkpoints this module
// records in the history, so a job survives a restart:
// - `queued` or `uploading` when the app stopped: the upload starts again (a half-sent upload left nothing);
// - `processing` (the service has the list): following resumes;
// - `downloading`: the download starts again (results become visible only when complete).
// A report-only job (E7 `report=true`) stops when its list awaits purchase: `awaiting-purchase`, with its
// match reports, until the user buys (E9, `purchase()`, the only E9 the app sends); the list then runs again
// and is followed to Results.
// Progress events carry bytes, counts, a rate and an ETA, at most every PROGRESS_INTERVAL_MS per job.
// The jobs take turns at a service (the engine's ServiceSlots: two uploads and two downloads at once), so the
// parts of a split file, started together, stay within what a team server lets one key do at once.
import { onlineProgressOf } from './onlineProgress.js';
import { join } from 'node:path';
import type { Client } from '../../../shared/api/client.js';
import { LIST_SERVICE_KEYS, listProgress, type ListResource } from '../../../shared/api/list.js';
import type { JobProgress, JobPurchase, JobStatus } from '../../../shared/desktop/contract.js';
import {
  DOWNLOADS_AT_ONCE,
  JobFailure,
  purchaseList,
  runJob,
  ServiceSlots,
  UPLOADS_AT_ONCE,
  type CheckpointPort,
  type JobEvent,
  type JobSpec,
} from './engine.js';
import { removeStaleTemporaries } from './outputFolder.js';
import type { CountsRequest } from './counts.js';
import { setJobCounts } from '../history/counts.js';
import { notePreparedExport, PREPARED_EXPORT, preparedExportRequest } from './preparedExport.js';
import type { ExportSpec } from './exports.js';
import {
  getJob,
  jobsWithStatus,
  setJobDocument,
  setJobListId,
  setJobPurchase,
  setJobPurchaseSent,
  setJobResults,
  setJobStatus,
  type HistoryDb,
  type JobRecord,
} from '../history/db.js';

export const PROGRESS_INTERVAL_MS = 100;

export interface JobConnection {
  readonly client: Client;
  /** Least time between two status requests: short on the loopback service, 5 s for a provider. */
  readonly pollIntervalMs: number;
}

export interface JobManagerOptions {
  readonly db: HistoryDb;
  /** `results/` in the app home: each job's files go in `results/<id>/`. */
  readonly resultsDir: string;
  /** The client for a job's connection (starting the embedded service when it is the one). */
  readonly connect: (job: JobRecord) => Promise<JobConnection>;
  readonly onProgress: (progress: JobProgress) => void;
  /** A job's row changed (status, document, results). */
  readonly onChange: (jobId: number) => void;
  /** How long to wait before following a list again after the service could not be reached. */
  readonly retryDelayMs?: number;
  /** A job's results are in (before it reads completed): e.g. save its why per row beside them. */
  readonly onCompleted?: (jobId: number) => void;
  /** The Results screen's numbers to count while the results download (kept with the job when it completes). */
  readonly countsOf?: (job: JobRecord) => CountsRequest | undefined;
}

/** A rate over a sliding window of samples. */
class RateMeter {
  private samples: { at: number; value: number }[] = [];
  constructor(private readonly windowMs = 5000) {}
  add(value: number, at = Date.now()): void {
    this.samples.push({ at, value });
    while (this.samples.length > 2 && at - this.samples[0].at > this.windowMs) this.samples.shift();
  }
  reset(): void {
    this.samples = [];
  }
  /** Units per second, or null until two samples a little apart exist. */
  rate(): number | null {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.at - first.at < 200) return null;
    return Math.max(0, (last.value - first.value) / ((last.at - first.at) / 1000));
  }
}

interface Running {
  readonly controller: AbortController;
  readonly done: Promise<void>;
  progress: JobProgress;
  readonly meter: RateMeter;
  lastEmit: number;
  timer?: ReturnType<typeof setTimeout>;
}

/** A purchase the service refused or could not take: the job still awaits one. */
export class PurchaseFailure extends Error {
  readonly code = 'purchase-failed';
}

export class JobManager {
  private readonly running = new Map<number, Running>();
  private readonly purchasing = new Set<number>();
  /** The jobs' turns at a service: the parts of a split file are sent and fetched a few at a time. */
  private readonly turns = {
    uploads: new ServiceSlots(UPLOADS_AT_ONCE),
    downloads: new ServiceSlots(DOWNLOADS_AT_ONCE),
  };
  private isClosed = false;

  constructor(private readonly options: JobManagerOptions) {}

  /** Progress of a running job, or undefined. */
  progress(jobId: number): JobProgress | undefined {
    return this.running.get(jobId)?.progress;
  }

  isRunning(jobId: number): boolean {
    return this.running.has(jobId);
  }

  /** Takes up every job the last run left unfinished. */
  resume(): number[] {
    const jobs = jobsWithStatus(this.options.db, ['queued', 'uploading', 'processing', 'downloading']);
    for (const job of jobs) this.start(job.id);
    return jobs.map((job) => job.id);
  }

  /** Runs a job from wherever its record says it stands. */
  start(jobId: number): void {
    if (this.isClosed || this.running.has(jobId)) return;
    const job = getJob(this.options.db, jobId);
    if (!job) return;
    const controller = new AbortController();
    const entry: Running = {
      controller,
      done: Promise.resolve(),
      progress: {
        jobId,
        status: job.status,
        listStatus: null,
        sentBytes: 0,
        totalBytes: 0,
        completed: 0,
        total: job.rows ?? 0,
        rate: null,
        etaSeconds: null,
        services: [],
      },
      meter: new RateMeter(),
      lastEmit: 0,
    };
    this.running.set(jobId, entry);
    (entry as { done: Promise<void> }).done = this.run(jobId, entry).finally(() => {
      if (entry.timer) clearTimeout(entry.timer);
      this.running.delete(jobId);
    });
  }

  /** Stops following a job. A submitted list may still complete at the service (the spec has no cancel). */
  async cancel(jobId: number): Promise<void> {
    const entry = this.running.get(jobId);
    const job = getJob(this.options.db, jobId);
    if (!job || !['queued', 'uploading', 'processing', 'downloading'].includes(job.status)) return;
    if (entry) {
      entry.controller.abort(new Error('cancelled'));
      await entry.done;
    }
    this.setStatus(
      jobId,
      'cancelled',
      job.listId ? `Stopped following list ${job.listId}.` : 'Cancelled before the upload finished.',
    );
  }

  /**
   * Buys the results of a job awaiting purchase (E9 with the fields and the email append match type), then
   * follows its list as it runs again. Throws a PurchaseFailure when the service refuses: the job still awaits.
   */
  async purchase(jobId: number, request: Pick<JobPurchase, 'fields' | 'matchType'>): Promise<void> {
    const job = getJob(this.options.db, jobId);
    if (!job || job.status !== 'awaiting-purchase' || job.listId === null)
      throw new PurchaseFailure('This job is not waiting for a purchase.');
    if (this.purchasing.has(jobId)) throw new PurchaseFailure('This job is being bought already.');
    this.purchasing.add(jobId);
    try {
      const listId = job.listId;
      const { client } = await this.options.connect(job);
      // Recorded before it is sent: the history says what was asked for, whatever happens next.
      setJobPurchase(this.options.db, jobId, { ...request, at: new Date().toISOString() });
      const body = {
        fields: [...request.fields],
        ...(job.options.services.includes('email_append')
          ? { options: { email_append: { match_type: request.matchType } } }
          : {}),
      };
      try {
        await purchaseList(client, listId, body, {
          purchased: () => setJobPurchaseSent(this.options.db, jobId),
        });
      } catch (error) {
        setJobPurchase(this.options.db, jobId, null);
        this.options.onChange(jobId);
        throw new PurchaseFailure(error instanceof Error ? error.message : String(error));
      }
      this.setStatus(
        jobId,
        'processing',
        `Bought ${request.fields.length > 4 ? `${request.fields.length} fields` : request.fields.join(', ')}: ` +
          `list ${listId} runs again for the results.`,
      );
    } finally {
      this.purchasing.delete(jobId);
    }
    this.start(jobId);
  }

  /** Waits for running jobs to stop; they stay in their status and resume next time. */
  async close(): Promise<void> {
    this.isClosed = true;
    const entries = [...this.running.values()];
    for (const entry of entries) entry.controller.abort(new Error('closing'));
    await Promise.all(entries.map((entry) => entry.done));
  }

  // -------------------------------------------------------------------------------------------------------

  private setStatus(jobId: number, status: JobStatus, message: string | null = null): void {
    setJobStatus(this.options.db, jobId, status, message);
    const entry = this.running.get(jobId);
    if (entry) {
      // A throttled update still pending is the last word on the step that ends here (e.g. completed =
      // total): send it before the new status replaces it.
      if (entry.timer) this.emit(entry, true);
      entry.progress = { ...entry.progress, status, rate: null, etaSeconds: null };
      entry.meter.reset();
      this.emit(entry, true);
    }
    this.options.onChange(jobId);
  }

  private emit(entry: Running, isNow = false): void {
    const now = Date.now();
    if (isNow && entry.timer) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
    }
    if (entry.timer) return;
    const wait = isNow ? 0 : Math.max(0, entry.lastEmit + PROGRESS_INTERVAL_MS - now);
    if (wait === 0) {
      entry.lastEmit = now;
      this.options.onProgress(entry.progress);
      return;
    }
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      entry.lastEmit = Date.now();
      this.options.onProgress(entry.progress);
    }, wait);
  }

  private update(entry: Running, patch: Partial<JobProgress>, measured: number, remaining: number): void {
    entry.meter.add(measured);
    const rate = entry.meter.rate();
    entry.progress = {
      ...entry.progress,
      ...patch,
      rate,
      etaSeconds: rate && rate > 0 ? Math.ceil(remaining / rate) : null,
    };
    this.emit(entry);
  }

  private async run(jobId: number, entry: Running): Promise<void> {
    const signal = entry.controller.signal;
    try {
      const job = getJob(this.options.db, jobId)!;
      const connection = await this.options.connect(job);
      const outDir = join(this.options.resultsDir, String(job.id));
      removeStaleTemporaries(outDir);
      const countsRequest = this.options.countsOf?.(job);
      const prepared = countsRequest ? { dir: outDir, spec: countsRequest.spec } : undefined;
      const spec: JobSpec = {
        client: connection.client,
        upload: {
          file: job.filePath,
          params: {
            name: job.uploadName,
            header: job.uploadHeader,
            delimiter: job.mapping.delimiter,
            // No email column: a list for email append, or intelligence by hashes or name and address.
            ...(job.mapping.roles.includes('email')
              ? { email_column: job.mapping.roles.indexOf('email') + 1 }
              : {}),
            services: [...job.options.services],
            ...(job.options.fields && job.options.services.includes('email_intelligence')
              ? { fields: [...job.options.fields] }
              : {}),
            ...(job.options.reportOnly ? { report: true } : {}),
          },
        },
        delimiter: job.mapping.delimiter,
        outDir,
        ...(countsRequest && prepared
          ? {
              counts: countsRequest,
              // The default export is written in the same pass (preparedExport.ts).
              exports: () => [preparedExportRequest(prepared.dir, prepared.spec)],
            }
          : {}),
        reportOnly: job.options.reportOnly,
        pollIntervalMs: connection.pollIntervalMs,
        ...(this.options.retryDelayMs !== undefined ? { retryDelayMs: this.options.retryDelayMs } : {}),
        turns: this.turns,
        signal,
        onEvent: (event) => this.onEvent(entry, event),
      };
      // An upload cut short left nothing at the service: a job without a list uploads (again).
      const listId = job.status === 'queued' || job.status === 'uploading' ? null : job.listId;
      await runJob(spec, { listId, isPurchased: job.purchase !== null }, this.portFor(job, entry, prepared));
    } catch (error) {
      if (signal.aborted) return; // cancelled or closing: cancel() records the status itself
      if (error instanceof JobFailure && error.code === 'list-cancelled')
        this.setStatus(jobId, 'cancelled', error.message);
      else this.setStatus(jobId, 'failed', error instanceof Error ? error.message : String(error));
    }
  }

  /** The engine's progress as the job's: bytes while uploading and downloading, rows while processing. */
  private onEvent(entry: Running, event: JobEvent): void {
    if (event.phase === 'uploading')
      this.update(
        entry,
        { sentBytes: event.sentBytes, totalBytes: event.totalBytes },
        event.sentBytes,
        event.totalBytes - event.sentBytes,
      );
    else if (event.phase === 'downloading') {
      const total = event.totalBytes ?? 0;
      this.update(
        entry,
        { sentBytes: event.receivedBytes, totalBytes: total },
        event.receivedBytes,
        Math.max(0, total - event.receivedBytes),
      );
    } else if (event.phase === 'processing') {
      const document = event.list;
      const { completed, total } = listProgress(document);
      const services = LIST_SERVICE_KEYS.flatMap((name) => {
        const service = document.services[name];
        return service
          ? [
              {
                name,
                status: String(service.status),
                completed: service.completed_count,
                input: service.input_count,
              },
            ]
          : [];
      });
      const changed = entry.progress.listStatus !== document.status;
      this.update(
        entry,
        { listStatus: document.status, completed, total, services, online: onlineProgressOf(document) },
        completed,
        total - completed,
      );
      if (changed) this.options.onChange(entry.progress.jobId);
    }
  }

  /**
   * The engine's checkpoints, recorded in the history. `prepared`: where the download writes the default
   * export, and its spec (preparedExport.ts).
   */
  private portFor(
    job: JobRecord,
    entry: Running,
    prepared?: { readonly dir: string; readonly spec: ExportSpec },
  ): CheckpointPort {
    const db = this.options.db;
    const id = job.id;
    return {
      uploading: () => {
        this.setStatus(id, 'uploading', job.status === 'uploading' ? 'The upload starts again.' : null);
      },
      submitted: (listId) => {
        setJobListId(db, id, listId);
        // The whole file went: say so before the next step, however fast the upload was.
        entry.progress = { ...entry.progress, sentBytes: entry.progress.totalBytes };
        this.emit(entry, true);
        this.setStatus(id, 'processing', `Submitted as list ${listId}.`);
      },
      followed: (document: ListResource) => {
        const reporting = document.services.email_validation?.reporting ?? null;
        setJobDocument(db, id, document, document.records, reporting);
      },
      // The step stays (a job waiting for its turn is still queued); the message says what it waits for.
      waiting: (message, step) => {
        setJobStatus(db, id, step, message);
        this.options.onChange(id);
      },
      awaitingPurchase: (document) => {
        this.setStatus(
          id,
          'awaiting-purchase',
          `The match reports of list ${document.list_id} are in: buy the results to download them.`,
        );
      },
      purchased: () => setJobPurchaseSent(db, id),
      downloading: () => this.setStatus(id, 'downloading', null),
      completed: (outcome) => {
        setJobResults(db, id, {
          path: outcome.resultsPath,
          name: outcome.resultsName,
          duplicates: outcome.summary?.duplicates ?? null,
        });
        if (outcome.summary?.counts) setJobCounts(db, id, outcome.resultsPath, outcome.summary.counts);
        // The prepared default export is noted before the job reads completed: an export asked for at once
        // finds it. Without the note (a write that failed), that export is written afresh: nothing is lost.
        const written = outcome.exports.find((e) => e.kind === PREPARED_EXPORT);
        if (prepared && written) {
          const leftOut = outcome.summary?.leftOut?.[PREPARED_EXPORT];
          try {
            notePreparedExport(
              prepared.dir,
              prepared.spec,
              { path: outcome.resultsPath, name: outcome.resultsName },
              { rows: written.rows, ...(leftOut ? { leftOut } : {}) },
            );
          } catch {
            // (see above)
          }
        }
        this.options.onCompleted?.(id);
        this.setStatus(id, 'completed', null);
      },
    };
  }
}
