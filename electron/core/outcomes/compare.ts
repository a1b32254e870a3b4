// What changed since the last run of the same addresses (issue 37, point 4): a new job against the latest
// earlier job holding the same addresses, row by row with both verdicts and both pieces of evidence.
import type { ExportInfo } from '../../../shared/desktop/contract.js';
import type { JobChanges } from '../../../shared/outcomes.js';
import type { JobRecord } from '../history/db.js';
import { ReplyFailure, type CoreContext } from '../channels/context.js';

export function jobChanges(
  _ctx: CoreContext,
  job: JobRecord,
  _offset: number,
  _limit: number,
): Promise<JobChanges> {
  return Promise.reject(new ReplyFailure('unavailable', `Changes of job ${job.id}: not built yet.`));
}

export function exportJobChanges(_ctx: CoreContext, job: JobRecord): Promise<ExportInfo> {
  return Promise.reject(new ReplyFailure('unavailable', `Changes of job ${job.id}: not built yet.`));
}
