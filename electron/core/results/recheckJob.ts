// Re-check unknown rows in the app (issue #11): a finished job's rows that could not be checked (codes 5 and
// 10) go through the current connection again — the local service at its current Checks setting, or the
// provider (its key stays here, in the main process) — and a new version of the job's results is written
// beside the first (recheckFile.ts: same rows, same order, only those rows' verdicts changed; temporary name,
// then renamed). The history records every version with what it changed (job_versions), and the job's
// results become the new version: Results, previews and exports read it, its numbers are counted from it.
// The older versions stay in the job's folder (deleting the job removes them all: jobs/deletion.ts).
import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { listProgress } from '../../../shared/api/list.js';
import { fitBytes, MAX_FILE_NAME_BYTES } from '../../../shared/fileName.js';
import type { JobProgress, JobRecheck } from '../../../shared/desktop/contract.js';
import type { Connection } from '../channels/connection.js';
import { jobChecksOf, jobVersions, recordJobVersion } from '../history/jobVersions.js';
import { getJob, type HistoryDb, type JobRecord } from '../history/db.js';
import type { JobEvent } from '../jobs/engine.js';
import { keepEvidence, recheckExplainPath } from './evidence.js';
import { downloadExplanations } from '../jobs/listOnline.js';
import { onlineProgressOf } from '../jobs/onlineProgress.js';
import { RECHECK_CODES, recheckResults } from './recheckFile.js';
import { formatCount } from '../../../shared/count.js';

/** A re-check refused before it starts, in words; `code` is the reply's error code. */
export class RecheckRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface JobRechecksOptions {
  readonly db: HistoryDb;
  readonly connection: Pick<Connection, 'currentClient' | 'currentJobChecks' | 'ensureEmbedded'>;
  /** Status requests to the local service (loopback); a provider is asked every 5 s. */
  readonly localPollIntervalMs: number;
  readonly onProgress: (progress: JobProgress) => void;
  readonly onChange: (jobId: number) => void;
}

interface Running {
  readonly controller: AbortController;
  /** It runs on the local service (known once the connection is). */
  isLocal: boolean;
  readonly done: Promise<void>;
  words: string;
  progress: JobProgress;
}

const rowsWord = (count: number) => `${formatCount(count)} ${count === 1 ? 'row' : 'rows'}`;

/** Rows of a job's current results that a re-check would send: codes 5 and 10 of its reporting. */
export function unknownRowsOf(job: Pick<JobRecord, 'reporting' | 'lastDocument' | 'options'>): number | null {
  if (!job.options.services.includes('email_validation')) return null;
  const reporting = job.lastDocument?.services.email_validation?.reporting ?? job.reporting;
  const codes = reporting?.status_codes;
  if (!codes) return null;
  return [...RECHECK_CODES].reduce((total, code) => total + (codes[code] ?? 0), 0);
}

/** `<stem>-v<version><ext>` beside the first results, fitted to a file name's 255 bytes. */
function versionPath(job: JobRecord, firstName: string, version: number): { path: string; name: string } {
  const ext = extname(firstName);
  const suffix = `-v${version}${ext}`;
  const stem = fitBytes(basename(firstName, ext), MAX_FILE_NAME_BYTES - 40 - Buffer.byteLength(suffix));
  const name = `${stem}${suffix}`;
  return { path: join(dirname(job.resultsPath!), name), name };
}

export class JobRechecks {
  private readonly running = new Map<number, Running>();
  /** How the last re-check of each job ended when it did not complete (this run of the app). */
  private readonly failures = new Map<number, string>();
  private isClosed = false;

  constructor(private readonly options: JobRechecksOptions) {}

  isRunning(jobId: number): boolean {
    return this.running.has(jobId);
  }

  /** Whether a re-check runs on the local service (a new Checks setting then waits for it). */
  hasLocalRunning(): boolean {
    return [...this.running.values()].some((entry) => entry.isLocal);
  }

  /** What JobDetail shows of the re-checks of `job`. */
  state(job: JobRecord): JobRecheck {
    const versions = jobVersions(this.options.db, job.id);
    return {
      unknownRows: unknownRowsOf(job),
      running: this.running.get(job.id)?.words ?? null,
      error: this.failures.get(job.id) ?? null,
      versions: versions.map((version) => ({
        version: version.version,
        createdAt: version.createdAt,
        resultsName: version.resultsName,
        checks: version.checks,
        change: summaryOf(version.change),
        isCurrent: version.resultsPath === job.resultsPath,
      })),
    };
  }

  /** Starts re-checking the unknown rows of `jobId`; throws RecheckRefused when it cannot. */
  start(jobId: number): void {
    if (this.isClosed) throw new RecheckRefused('closing', 'Mailsieve is closing.');
    const job = getJob(this.options.db, jobId);
    if (!job)
      throw new RecheckRefused('not-found', `Job ${jobId} is not in the history (it may have been deleted).`);
    if (this.running.has(jobId)) throw new RecheckRefused('busy', 'The unknown rows are being re-checked.');
    const refusal = refusalOf(job);
    if (refusal) throw new RecheckRefused(refusal.code, refusal.message);
    const controller = new AbortController();
    const entry: Running = {
      controller,
      isLocal: false,
      done: Promise.resolve(),
      words: 'Starting the re-check…',
      progress: {
        jobId,
        status: job.status,
        listStatus: null,
        sentBytes: 0,
        totalBytes: 0,
        completed: 0,
        total: 0,
        rate: null,
        etaSeconds: null,
        services: [],
      },
    };
    this.failures.delete(jobId);
    this.running.set(jobId, entry);
    (entry as { done: Promise<void> }).done = this.run(job, entry)
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        this.failures.set(
          jobId,
          controller.signal.aborted
            ? 'The re-check was stopped: the results are as they were.'
            : `The re-check did not complete: ${message} The results are as they were.`,
        );
      })
      .finally(() => {
        this.running.delete(jobId);
        this.options.onChange(jobId);
      });
    this.options.onChange(jobId);
  }

  /** Stops a re-check under way; the job's results stay as they were. */
  async cancel(jobId: number): Promise<void> {
    const entry = this.running.get(jobId);
    if (!entry) return;
    entry.controller.abort(new Error('cancelled'));
    await entry.done;
  }

  async close(): Promise<void> {
    this.isClosed = true;
    const entries = [...this.running.values()];
    for (const entry of entries) entry.controller.abort(new Error('closing'));
    await Promise.all(entries.map((entry) => entry.done));
  }

  private say(entry: Running, words: string, patch: Partial<JobProgress> = {}): void {
    entry.words = words;
    entry.progress = { ...entry.progress, ...patch, recheck: { words } };
    this.options.onProgress(entry.progress);
  }

  private async run(job: JobRecord, entry: Running): Promise<void> {
    const { db, connection } = this.options;
    const signal = entry.controller.signal;
    const { client, kind } = await connection.currentClient();
    entry.isLocal = kind === 'embedded';
    const ranWith = await connection.currentJobChecks(kind);
    const known = jobVersions(db, job.id);
    const firstName = known[0]?.resultsName ?? job.resultsName!;
    const version = (known.at(-1)?.version ?? 1) + 1;
    const out = versionPath(job, firstName, version);
    let listId: number | undefined;
    let toCheck = 0;
    const sent = { addresses: 0 };
    this.say(entry, 'Reading the results for the rows that could not be checked…');
    try {
      const outcome = await recheckResults({
        client,
        resultsFile: job.resultsPath!,
        outFile: out.path,
        pollIntervalMs: kind === 'embedded' ? this.options.localPollIntervalMs : 5000,
        signal,
        onStage: (stage, facts) => {
          toCheck = facts.rechecked;
          sent.addresses = facts.addresses;
          this.say(
            entry,
            stage === 'checking'
              ? `Sending ${rowsWord(facts.rechecked)} to check (${formatCount(facts.addresses)} distinct ${facts.addresses === 1 ? 'address' : 'addresses'})…`
              : `Writing version ${version} of the results…`,
          );
        },
        onEvent: (event: JobEvent) => {
          if (event.phase === 'submitted') listId = event.listId;
          else if (event.phase === 'processing') {
            const { completed, total } = listProgress(event.list);
            const online = onlineProgressOf(event.list);
            const words =
              online && online.rowsToCheck > 0
                ? `Checking ${formatCount(online.rowsChecked)} of ${formatCount(online.rowsToCheck)} addresses online (domains ${formatCount(online.domainsDone)} of ${formatCount(online.domainsTotal)})…`
                : `Checking ${formatCount(sent.addresses)} ${sent.addresses === 1 ? 'address' : 'addresses'}…`;
            this.say(entry, words, { listStatus: event.list.status, completed, total, online });
          } else if (event.phase === 'waiting') this.say(entry, event.message);
          else if (event.phase === 'downloading') this.say(entry, 'Downloading the new verdicts…');
        },
      });
      if (outcome.rechecked === 0 || !outcome.reporting) {
        this.failures.set(job.id, 'No unknown rows: nothing to re-check.');
        return;
      }
      // The job may have been deleted meanwhile: then the new file goes with its folder.
      if (!getJob(db, job.id)) return;
      recordJobVersion(
        db,
        job.id,
        {
          resultsPath: job.resultsPath!,
          resultsName: job.resultsName!,
          checks: jobChecksOf(db, job.id) ?? {
            level: job.connectionKind === 'embedded' ? 'offline' : 'provider',
            reason: '',
          },
          createdAt: job.updatedAt,
        },
        {
          resultsPath: outcome.outFile,
          resultsName: out.name,
          checks: ranWith,
          change: {
            summary: outcome.summary,
            rechecked: outcome.rechecked,
            after: outcome.after,
            ...(outcome.listId !== undefined ? { listId: outcome.listId } : {}),
          },
          reporting: outcome.reporting,
        },
      );
      // The why of the re-checked addresses (a local re-check with online checks), kept with this version: the
      // drill-down's Why column reads it before the first run's (jobView.ts).
      if (kind === 'embedded' && ranWith.level !== 'offline' && outcome.listId !== undefined) {
        const id = outcome.listId;
        await connection
          .ensureEmbedded()
          .then((service) =>
            downloadExplanations(
              service.baseUrl,
              service.apiKey,
              id,
              recheckExplainPath(outcome.outFile, version),
              keepEvidence,
            ),
          )
          .catch(() => undefined);
      }
      this.say(entry, `Re-checked ${rowsWord(toCheck)}: ${outcome.summary}.`);
    } finally {
      // The list the re-check ran is the local service's copy of those addresses: not kept.
      if (kind === 'embedded' && listId !== undefined) {
        const id = listId;
        await connection
          .ensureEmbedded()
          .then((service) => service.deleteList?.(id))
          .catch(() => undefined);
      }
    }
  }
}

function summaryOf(change: unknown): string | null {
  if (typeof change !== 'object' || change === null) return null;
  const summary = (change as { summary?: unknown }).summary;
  return typeof summary === 'string' ? summary : null;
}

/** Why a job's unknown rows cannot be re-checked, or undefined when they can. */
export function refusalOf(job: JobRecord): { code: string; message: string } | undefined {
  if (job.status !== 'completed')
    return { code: 'invalid-input', message: 'Only a completed job’s results can be re-checked.' };
  if (!job.options.services.includes('email_validation'))
    return {
      code: 'invalid-input',
      message: 'This job ran no validation: its rows have no status to re-check.',
    };
  if (!job.resultsPath || !existsSync(job.resultsPath))
    return { code: 'no-results', message: 'The results file of this job is missing from disk.' };
  if (unknownRowsOf(job) === 0)
    return { code: 'invalid-input', message: 'This job has no unknown rows: nothing to re-check.' };
  return undefined;
}
