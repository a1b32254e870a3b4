// History: the jobs list, one job's detail, deleting a job with its files, and what a finished job's results
// file gives: a preview of its rows and exports (kept in the job's folder, listed with the job).
import { existsSync } from 'node:fs';
import type { JobDetail } from '../../../shared/desktop/contract.js';
import {
  deleteJob,
  getExport,
  getJob,
  insertExport,
  jobExports,
  jobTimeline,
  listJobs,
  type JobRecord,
} from '../history/db.js';
import { jobChecksOf, jobVersions } from '../history/jobVersions.js';
import { deleteJobFiles } from '../jobs/deletion.js';
import { exportJobResults } from '../jobs/desktopExport.js';
import { isBudgetExportKind } from '../../../shared/outcomes.js';
import { measuredRisks } from '../outcomes/store.js';
import { ResultsProblem } from '../jobs/rowFramer.js';
import { ReplyFailure, type CoreContext, type Handlers } from './context.js';

/** Finding a job (or failing in words) and describing it: shared with the jobs domain. */
export function jobLookup({ db, jobs, rechecks }: CoreContext) {
  function jobOrFail(jobId: number): JobRecord {
    const job = getJob(db, jobId);
    if (!job)
      throw new ReplyFailure('not-found', `Job ${jobId} is not in the history (it may have been deleted).`);
    return job;
  }

  function detail(job: JobRecord): JobDetail {
    const reporting = job.lastDocument?.services.email_validation?.reporting ?? job.reporting;
    return {
      id: job.id,
      createdAt: job.createdAt,
      updatedAt: job.updatedAt,
      status: job.status,
      message: job.message,
      file: {
        name: job.fileName,
        size: job.fileSize,
        sha256: job.fileSha256,
        format: job.fileFormat,
        encoding: job.fileEncoding,
      },
      mapping: job.mapping,
      options: job.options,
      connection: { kind: job.connectionKind, baseUrl: job.connectionUrl },
      part:
        job.partIndex !== null && job.partCount !== null
          ? { index: job.partIndex, count: job.partCount }
          : null,
      listId: job.listId,
      rows: job.rows,
      timeline: jobTimeline(db, job.id),
      lastDocument: job.lastDocument,
      reporting: reporting ?? null,
      matchReports: job.matchReports ?? {},
      purchase: job.purchase,
      hasResults: job.resultsPath !== null && existsSync(job.resultsPath),
      duplicates: job.duplicates,
      resultsName: job.resultsName,
      exports: jobExports(db, job.id).map(({ path: _path, ...info }) => info),
      progress: jobs.progress(job.id) ?? null,
      ...jobChecksDetail(job),
      recheck: rechecks.state(job),
    };
  }

  /** The level a job ran with: recorded since issue #11; older local jobs ran offline. */
  function jobChecksDetail(job: JobRecord): Pick<JobDetail, 'checks' | 'checksRun'> {
    const recorded = jobChecksOf(db, job.id);
    const level = recorded?.level ?? (job.connectionKind === 'embedded' ? 'offline' : 'provider');
    return {
      checks: level === 'offline' ? 'offline' : level === 'provider' ? 'provider' : 'online',
      checksRun: recorded,
    };
  }

  return { jobOrFail, detail };
}

/** The file of an export, for the shell to save or the web host to send. */
export function exportFileOf({ db }: CoreContext, exportId: number) {
  const record = getExport(db, exportId);
  return record && existsSync(record.path) ? { path: record.path, fileName: record.fileName } : undefined;
}

export type HistoryChannel =
  'jobs:list' | 'jobs:get' | 'jobs:delete' | 'jobs:preview' | 'jobs:export' | 'jobs:counts';

export function historyHandlers(ctx: CoreContext): Handlers<HistoryChannel> {
  const { db, emit, jobs, resultsDir } = ctx;
  const { jobOrFail, detail } = jobLookup(ctx);

  function resultsOf(job: JobRecord): { path: string; name: string } {
    if (!job.resultsPath || !job.resultsName || !existsSync(job.resultsPath))
      throw new ReplyFailure(
        'no-results',
        job.status === 'completed'
          ? 'The results file of this job is missing from disk.'
          : 'This job has no results yet.',
      );
    return { path: job.resultsPath, name: job.resultsName };
  }

  /** A results file that cannot be read fails in words. */
  async function readable<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof ResultsProblem) throw new ReplyFailure('results-unreadable', error.message);
      throw error;
    }
  }

  return {
    'jobs:list': (input) => listJobs(db, input),
    'jobs:get': (input) => detail(jobOrFail(input.jobId)),
    'jobs:delete': async (input) => {
      const job = jobOrFail(input.jobId);
      if (jobs.isRunning(job.id)) await jobs.cancel(job.id);
      await ctx.rechecks.cancel(job.id);
      // Every version's results file (they are in the job's folder; one kept elsewhere goes too).
      const versionPaths = jobVersions(db, job.id).map((version) => version.resultsPath);
      const deleted = deleteJob(db, job.id);
      ctx.results.forget(job);
      await deleteJobFiles(
        { ...job, versionPaths },
        {
          resultsDir,
          stagingDir: ctx.stagingDir,
          embedded: ctx.connection.ensureEmbedded,
        },
      );
      emit('jobs:changed', { jobIds: [job.id] });
      return { deleted };
    },
    'jobs:preview': async (input) => {
      const job = jobOrFail(input.jobId);
      const results = resultsOf(job);
      const filter = input.filter ?? (input.status ? { status: input.status } : {});
      return readable(() => ctx.results.page(job, results, filter, input.offset, input.limit));
    },
    'jobs:counts': async (input) => {
      const job = jobOrFail(input.jobId);
      if (!job.options.services.includes('email_validation'))
        throw new ReplyFailure(
          'invalid-input',
          'This job ran no validation, so its rows have no status to count.',
        );
      return readable(() => ctx.results.counts(job, resultsOf(job)));
    },
    'jobs:export': async (input) => {
      const job = jobOrFail(input.jobId);
      const results = resultsOf(job);
      if (input.kind !== 'all' && !job.options.services.includes('email_validation'))
        throw new ReplyFailure(
          'invalid-input',
          'This job ran no validation, so its rows have no status: export all rows.',
        );
      const statuses = input.kind === 'custom' ? (input.statuses ?? []) : [];
      const maxRatePercent = input.maxBounceRate;
      // A bounce budget (issue 37) plans an export that starts from the rows judged safe.
      if (maxRatePercent !== undefined && (!isBudgetExportKind(input.kind) || input.filter))
        throw new ReplyFailure(
          'invalid-input',
          'A bounce budget plans the “Safe to send only” or the “Clean” export: choose one of them.',
        );
      const written = await readable(() =>
        exportJobResults(
          job,
          results,
          input.kind,
          statuses,
          resultsDir,
          input.choices,
          input.filter,
          // Risks measured from every campaign outcome this user imported (Campaign results).
          maxRatePercent === undefined ? undefined : { maxRatePercent, measured: measuredRisks(db) },
        ),
      );
      const { path, fileName } = written;
      const record = insertExport(db, {
        jobId: job.id,
        kind: input.kind,
        statuses,
        path,
        fileName,
        rows: written.rows,
        bytes: written.bytes,
      });
      emit('jobs:changed', { jobIds: [job.id] });
      const { path: _path, ...info } = record;
      return {
        ...info,
        ...(written.leftOut ? { leftOut: written.leftOut } : {}),
        ...(written.budget ? { budget: written.budget } : {}),
      };
    },
  };
}
