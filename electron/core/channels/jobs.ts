// Jobs: starting a list (inspect again, save the mapping as a preset, prepare the parts, one job per part),
// cancelling it, and buying a report-only list. The scheduler itself is jobs/scheduler.ts.
import { randomUUID } from 'node:crypto';
import { copyFileSync, linkSync, mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { LIST_SERVICE_TITLES } from '../../../shared/api/listServices.js';
import { PART_LIMIT } from '../../../shared/desktop/constants.js';
import { inspectFile } from '../files/inspect.js';
import { formatOf } from '../files/source.js';
import {
  getJob,
  insertJob,
  jobsWithStatus,
  savePreset,
  setJobSha256,
  setJobFilePath,
  type JobRecord,
} from '../history/db.js';
import { PurchaseFailure } from '../jobs/scheduler.js';
import { RecheckRefused } from '../results/recheckJob.js';
import { rerunJob, RerunRefused } from '../jobs/runAgain.js';
import { setJobChecks } from '../history/jobVersions.js';
import { finishListWait, ListOnlineError } from '../jobs/listOnline.js';
import { ReplyFailure, type CoreContext, type Handlers } from './context.js';
import { preparation } from './files.js';
import { jobLookup } from './history.js';

export type JobsChannel =
  | 'jobs:start'
  | 'jobs:cancel'
  | 'jobs:purchase'
  | 'jobs:activity'
  | 'jobs:rerun'
  | 'jobs:finish-now'
  | 'jobs:recheck'
  | 'jobs:recheck-cancel';

export function jobHandlers(ctx: CoreContext): Handlers<JobsChannel> {
  const { db, emit, jobs, resultsDir, stagingDir } = ctx;
  const { stagedOrFail } = ctx.staging;
  const { storedConnection, clientFor, allowedServices } = ctx.connection;
  const { jobOrFail, detail } = jobLookup(ctx);
  return {
    'jobs:start': async (input) => {
      const file = stagedOrFail(input.fileId);
      const format = formatOf(file.name);
      if (!format)
        throw new ReplyFailure('invalid-input', `“${file.name}” is not a .csv, .txt, .xlsx or .zip file.`);
      const stored = storedConnection();
      if (stored.kind === 'provider') await clientFor('provider', stored.baseUrl); // fails early without a key
      const allowed = await allowedServices();
      const refused = input.options.services.filter((service) => !allowed.services.includes(service));
      if (refused.length > 0)
        throw new ReplyFailure(
          'not-allowed',
          `${refused.map((service) => LIST_SERVICE_TITLES[service]).join(', ')} ${refused.length === 1 ? 'is' : 'are'} not available on this connection` +
            (allowed.source === 'chosen' ? ': tick it on the Connection screen if your key has it.' : '.'),
        );
      // What the job runs with, and with it the embedded service started (its modules loaded, its checks
      // probed): beside the file's inspection, hash and preparation rather than after them.
      const ranWithPending = ctx.connection.currentJobChecks(stored.kind);
      ranWithPending.catch(() => undefined);
      // The row count from the pre-check already made of this layout, else counted here when the list may be
      // split (whether it is over the limit, only the exact count says). A list sent whole is not counted
      // first (a pass over the file before the upload starts: 0.6 s for 1,000,000 rows): the service's own
      // count of its records becomes the job's rows as soon as it reports them.
      const checked = ctx.staging.checks.answered(input.fileId, input.mapping);
      const inspection = await inspectFile({
        fileId: input.fileId,
        ...file,
        delimiter: input.mapping.delimiter,
        header: input.mapping.header,
        isCountExact: checked === undefined && input.options.split,
      });
      if (checked)
        Object.assign(inspection, {
          rowCount: checked.rowsToSend + checked.blank,
          isRowCountEstimate: false,
        });
      // Split is "split when over the limit": whether the list is over it, the exact count says (never the
      // mapper's estimate); a list within it goes whole, under its own name.
      const rowsToSend = checked ? checked.rowsToSend : inspection.rowCount;
      const options = { ...input.options, split: input.options.split && rowsToSend > PART_LIMIT };
      if (inspection.columns.length !== input.mapping.roles.length)
        throw new ReplyFailure(
          'invalid-input',
          'The mapping does not match the file’s columns: inspect the file again.',
        );
      savePreset(db, inspection.signature, {
        roles: input.mapping.roles,
        delimiter: input.mapping.delimiter,
        header: input.mapping.header,
      });
      const prepareDir = join(stagingDir, `prepared-${randomUUID()}`);
      const { headerFor, prepareUpload, sha256FileAside } = await preparation();
      // The history's SHA-256 of the file, hashed on a thread of its own (a second read of the file, ~65 ms of
      // CPU for 80 MB, off this thread that also serves the window) and stored when it is known: the job does
      // not wait for it (0.2-0.3 s before a 1,000,000-row job began, issue 38). Only the history's later
      // views read it (the same file's earlier job, an input's deletion).
      const sha256Pending = sha256FileAside(file.path);
      // The file's own names, when the file sent renames them: previews and exports give them back.
      const headerNames = inspection.columns.map((column) => column.name);
      const sent = headerFor(input.mapping, headerNames, input.options.services).cells;
      const originalHeader =
        input.mapping.header && sent.some((cell, i) => cell !== headerNames[i]) ? headerNames : undefined;
      const parts = await prepareUpload(file, input.mapping, {
        split: options.split,
        dir: prepareDir,
        headerNames,
        services: input.options.services,
      });
      const ranWith = await ranWithPending;
      const jobIds: number[] = [];
      for (const [index, part] of parts.entries()) {
        const id = insertJob(db, {
          fileName: file.name,
          filePath: part.path,
          uploadName: part.name,
          uploadHeader: part.header,
          fileSize: file.size,
          fileSha256: null,
          fileFormat: format,
          fileEncoding: inspection.encoding,
          mapping: input.mapping,
          options,
          connectionKind: stored.kind,
          connectionUrl: stored.kind === 'provider' ? (stored.baseUrl ?? null) : null,
          ...(originalHeader ? { originalHeader } : {}),
          ...(parts.length > 1 ? { partIndex: index + 1, partCount: parts.length } : {}),
          ...(part.rows !== null
            ? { rows: part.rows }
            : inspection.isRowCountEstimate
              ? {}
              : { rows: inspection.rowCount }),
        });
        // The job keeps its own copy of what it uploads, so a restart can upload it again. A file picked by
        // path (Electron) is read where it is; staged and prepared copies move into the job's folder.
        const dir = join(resultsDir, String(id), 'input');
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const isOwnCopy = part.path.startsWith(stagingDir);
        if (isOwnCopy) {
          const target = join(dir, basename(part.path));
          try {
            linkSync(part.path, target);
          } catch {
            copyFileSync(part.path, target);
          }
          setJobFilePath(db, id, target);
        }
        setJobChecks(db, id, ranWith);
        jobIds.push(id);
      }
      rmSync(prepareDir, { recursive: true, force: true });
      for (const id of jobIds) jobs.start(id);
      void sha256Pending.then(
        (sha256) => {
          if (db.open) for (const id of jobIds) setJobSha256(db, id, sha256);
        },
        // A file that cannot be read again fails its upload too, in words; its history keeps no hash.
        () => undefined,
      );
      emit('jobs:changed', { jobIds });
      return { jobIds };
    },
    'jobs:activity': () => {
      const brief = (job: JobRecord) => ({ id: job.id, fileName: job.fileName, status: job.status });
      return {
        running: jobsWithStatus(db, ['queued', 'uploading', 'processing', 'downloading']).map(brief),
        resumed: ctx.resumed.ids.flatMap((id) => {
          const job = getJob(db, id);
          return job ? [brief(job)] : [];
        }),
      };
    },
    'jobs:rerun': (input) => {
      try {
        const jobId = rerunJob(db, resultsDir, jobOrFail(input.jobId));
        jobs.start(jobId);
        emit('jobs:changed', { jobIds: [jobId] });
        return { jobId };
      } catch (error) {
        if (error instanceof RerunRefused) throw new ReplyFailure(error.code, error.message);
        throw error;
      }
    },
    'jobs:cancel': async (input) => {
      jobOrFail(input.jobId);
      await jobs.cancel(input.jobId);
      return detail(jobOrFail(input.jobId));
    },
    'jobs:finish-now': async (input) => {
      const job = jobOrFail(input.jobId);
      if (job.connectionKind !== 'embedded' || job.listId === null)
        throw new ReplyFailure(
          'invalid-input',
          'Only a job of the local service waiting for a retry can finish now.',
        );
      const service = await ctx.connection.ensureEmbedded();
      try {
        await finishListWait(service.baseUrl, service.apiKey, job.listId);
      } catch (error) {
        if (error instanceof ListOnlineError) throw new ReplyFailure('connection-failed', error.message);
        throw error;
      }
      return detail(jobOrFail(job.id));
    },
    'jobs:recheck': (input) => {
      try {
        ctx.rechecks.start(jobOrFail(input.jobId).id);
      } catch (error) {
        if (error instanceof RecheckRefused) throw new ReplyFailure(error.code, error.message);
        throw error;
      }
      return detail(jobOrFail(input.jobId));
    },
    'jobs:recheck-cancel': async (input) => {
      jobOrFail(input.jobId);
      await ctx.rechecks.cancel(input.jobId);
      return detail(jobOrFail(input.jobId));
    },
    'jobs:purchase': async (input) => {
      const job = jobOrFail(input.jobId);
      if (job.status !== 'awaiting-purchase')
        throw new ReplyFailure('not-awaiting-purchase', 'This job is not waiting for a purchase.');
      try {
        await jobs.purchase(job.id, { fields: input.fields, matchType: input.matchType });
      } catch (error) {
        if (error instanceof PurchaseFailure) throw new ReplyFailure(error.code, error.message);
        throw error;
      }
      return detail(jobOrFail(job.id));
    },
  };
}
