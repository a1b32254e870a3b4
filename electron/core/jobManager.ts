// Runs jobs: upload → follow → purchase → download, on the REST client of shared/api (the same flow as
// `mailsieve clean`), with every step recorded in the history so a job survives a restart:
// - `queued` or `uploading` when the app stopped: the upload starts again (a half-sent upload left nothing);
// - `processing` (the service has the list): following resumes;
// - `downloading`: the download starts again (results become visible only when complete).
// A report-only job (E7 `report=true`) stops when its list awaits purchase: `awaiting-purchase`, with its
// match reports, until the user buys (E9, `purchase()`); the list then runs again and is followed to Results.
// Progress events carry bytes, counts, a rate and an ETA, at most every PROGRESS_INTERVAL_MS per job.
import { onlineProgressOf } from './onlineProgress.js';
import { createWriteStream, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { safeFileName, pollList, type ApiError, type Client } from '../../shared/api/client.js';
import {
  LIST_SERVICE_KEYS,
  isAwaitingPurchase,
  isFinalListStatus,
  listProgress,
  type ListResource,
} from '../../shared/api/list.js';
import type { JobProgress, JobPurchase, JobStatus } from '../../shared/desktop/contract.js';
import { countColumnValue } from './results.js';
import { fileStream } from './jobs/runner.js';
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
} from './history/db.js';

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

class Cancelled extends Error {}

/** A purchase the service refused or could not take: the job still awaits one. */
export class PurchaseFailure extends Error {
  readonly code = 'purchase-failed';
}

function describeApiError(error: ApiError): string {
  return error.message;
}

export class JobManager {
  private readonly running = new Map<number, Running>();
  private readonly purchasing = new Set<number>();
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
      entry.controller.abort(new Cancelled());
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
      const result = await client.purchase(listId, body, { timeoutMs: 30_000 });
      if (!result.ok) {
        // A purchase whose answer was lost (a restart, a timeout) went through if the list moved on.
        const status = result.error.kind === 'http' ? await client.listStatus(listId) : undefined;
        const hasMovedOn = status?.ok === true && !isAwaitingPurchase(status.value);
        if (!hasMovedOn) {
          setJobPurchase(this.options.db, jobId, null);
          this.options.onChange(jobId);
          throw new PurchaseFailure(`Buying the results failed: ${describeApiError(result.error)}`);
        }
      }
      setJobPurchaseSent(this.options.db, jobId);
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
      let job = getJob(this.options.db, jobId)!;
      const connection = await this.options.connect(job);
      if (job.status === 'queued' || job.status === 'uploading' || job.listId === null) {
        await this.upload(job, entry, connection.client, signal);
        job = getJob(this.options.db, jobId)!;
      }
      if (job.status === 'processing') {
        await this.follow(job, entry, connection, signal);
        job = getJob(this.options.db, jobId)!;
      }
      if (job.status === 'downloading') await this.download(job, entry, connection.client, signal);
    } catch (error) {
      if (signal.aborted) return; // cancelled or closing: cancel() records the status itself
      this.setStatus(jobId, 'failed', error instanceof Error ? error.message : String(error));
    }
  }

  private async upload(job: JobRecord, entry: Running, client: Client, signal: AbortSignal): Promise<void> {
    this.setStatus(job.id, 'uploading', job.status === 'uploading' ? 'The upload starts again.' : null);
    const size = statSync(job.filePath).size;
    entry.progress = { ...entry.progress, sentBytes: 0, totalBytes: size };
    // Pulled a chunk at a time (Readable.toWeb would read the whole file ahead into memory).
    const body = fileStream(job.filePath);
    const result = await client.submitList(
      { name: job.uploadName, body, size },
      {
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
      {
        signal,
        onProgress: (sent, total) =>
          this.update(entry, { sentBytes: sent, totalBytes: total ?? size }, sent, (total ?? size) - sent),
      },
    );
    if (!result.ok) {
      if (signal.aborted) throw new Cancelled();
      throw new Error(`The upload failed: ${describeApiError(result.error)}`);
    }
    setJobListId(this.options.db, job.id, result.value.list_id);
    // The whole file went: say so before the next step, however fast the upload was.
    entry.progress = { ...entry.progress, sentBytes: size, totalBytes: size };
    this.emit(entry, true);
    this.setStatus(job.id, 'processing', `Submitted as list ${result.value.list_id}.`);
  }

  private async follow(
    job: JobRecord,
    entry: Running,
    connection: JobConnection,
    signal: AbortSignal,
  ): Promise<void> {
    const listId = job.listId!;
    const onUpdate = (document: ListResource) => {
      const reporting = document.services.email_validation?.reporting ?? null;
      setJobDocument(this.options.db, job.id, document, document.records, reporting);
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
      if (changed) this.options.onChange(job.id);
    };
    // A report-only list not bought yet stops when its match reports are in; once bought, at a final status.
    const isReportPhase = job.options.reportOnly && job.purchase === null;
    const isDone = (document: ListResource) =>
      isFinalListStatus(document.status) || (isReportPhase && isAwaitingPurchase(document));
    for (;;) {
      const result = await pollList(connection.client, listId, {
        intervalMs: connection.pollIntervalMs,
        onUpdate,
        isDone,
        signal,
      });
      if (signal.aborted) throw new Cancelled();
      if (result.ok) {
        const document = result.value;
        if (isReportPhase && isAwaitingPurchase(document)) {
          this.setStatus(
            job.id,
            'awaiting-purchase',
            `The match reports of list ${listId} are in: buy the results to download them.`,
          );
          return;
        }
        if (document.status === 'Results') {
          this.setStatus(job.id, 'downloading', null);
          return;
        }
        if (document.status === 'Cancelled') {
          this.setStatus(job.id, 'cancelled', `The service cancelled list ${listId}.`);
          return;
        }
        this.setStatus(
          job.id,
          'failed',
          `The service reports list ${listId} as ${document.status}${typeof document.reason === 'string' ? `: ${document.reason}` : '.'}`,
        );
        return;
      }
      const error = result.error;
      if (error.kind === 'http' && (error.status === 404 || error.status === 401 || error.status === 403))
        throw new Error(`Following list ${listId} failed: ${describeApiError(error)}`);
      // The service could not be reached for a while: keep the job and try again.
      setJobStatus(
        this.options.db,
        job.id,
        'processing',
        `Waiting for the service: ${describeApiError(error)}`,
      );
      this.options.onChange(job.id);
      await sleep(this.options.retryDelayMs ?? 5000, signal);
    }
  }

  private async download(job: JobRecord, entry: Running, client: Client, signal: AbortSignal): Promise<void> {
    const listId = job.listId!;
    if (job.reporting === null) {
      // Resumed at this step: the status document (and its reporting) was not recorded yet.
      const status = await client.listStatus(listId, { signal });
      if (!status.ok) throw new Error(`Reading list ${listId} failed: ${describeApiError(status.error)}`);
      const document = status.value;
      setJobDocument(
        this.options.db,
        job.id,
        document,
        document.records,
        document.services.email_validation?.reporting ?? null,
      );
    }
    if (!job.options.reportOnly) {
      const purchase = await client.purchase(listId, undefined, { signal });
      if (!purchase.ok) throw new Error(`Buying the results failed: ${describeApiError(purchase.error)}`);
    }
    const result = await client.results(listId, { signal });
    if (!result.ok) throw new Error(`Downloading the results failed: ${describeApiError(result.error)}`);
    const dir = join(this.options.resultsDir, String(job.id));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const name =
      safeFileName(result.value.fileName) ??
      `${job.uploadName.replace(/\.[^.]+$/, '')}-${listId}-results${extensionOf(job.uploadName)}`;
    const path = join(dir, name);
    const temporary = `${path}.download`;
    const total = result.value.contentLength ?? 0;
    let received = 0;
    entry.progress = { ...entry.progress, sentBytes: 0, totalBytes: total };
    const update = () => this.update(entry, { sentBytes: received }, received, Math.max(0, total - received));
    try {
      await pipeline(
        Readable.fromWeb(result.value.body),
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            received += chunk.length;
            update();
            yield chunk;
          }
        },
        createWriteStream(temporary, { mode: 0o600 }),
        { signal },
      );
    } catch (error) {
      rmSync(temporary, { force: true });
      if (signal.aborted) throw new Cancelled();
      throw new Error(
        `Downloading the results failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    renameSync(temporary, path);
    const duplicates = job.options.services.includes('email_validation')
      ? await countColumnValue(path, name, job.mapping.delimiter, 'Duplicate', 'true').catch(() => null)
      : null;
    setJobResults(this.options.db, job.id, { path, name, duplicates });
    this.setStatus(job.id, 'completed', null);
  }
}

function extensionOf(name: string): string {
  return /\.[^.]+$/.exec(name)?.[0]?.toLowerCase() ?? '';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Cancelled());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Cancelled());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
