// After the campaign (issue 37): a job's outcomes (the campaign's bounce export, and its sent list, matched to
// the job's rows: outcomes/outcomes.ts), and what changed since the last run of the same addresses
// (outcomes/compare.ts). The hard bounces go to the local service's known bouncers in the same step.
import { basename } from 'node:path';
import type { ChannelParsedInput } from '../../../shared/desktop/contract.js';
import { openServiceDb } from '../../../service/store/db.js';
import { serviceDataDir } from '../home.js';
import { OutcomesError, importJobOutcomes, type OutcomesFile } from '../outcomes/outcomes.js';
import { storedOutcomes } from '../outcomes/store.js';
import { jobLookup } from './history.js';
import { ReplyFailure, type CoreContext, type Handlers } from './context.js';

/**
 * What changed since the last run (outcomes/compare.ts, with the address rules' domain parser, tldts), loaded
 * when first asked for rather than with the app.
 */
const compare = () => import('../outcomes/compare.js');

export type OutcomesChannel = 'outcomes:import' | 'outcomes:get' | 'jobs:changes' | 'jobs:export-changes';

export function outcomesHandlers(ctx: CoreContext): Handlers<OutcomesChannel> {
  const { jobOrFail } = jobLookup(ctx);
  let isImporting = false;

  const fileOf = (given: { fileId?: string | undefined; path?: string | undefined }): OutcomesFile =>
    given.fileId !== undefined
      ? ctx.staging.stagedOrFail(given.fileId)
      : { path: given.path!, name: basename(given.path!) };

  async function importOutcomes(input: ChannelParsedInput<'outcomes:import'>) {
    const job = jobOrFail(input.jobId);
    if (isImporting)
      throw new ReplyFailure(
        'busy',
        'Campaign results are being read for another job: try again when it ends.',
      );
    isImporting = true;
    // The local service's store holds the known bouncers: started if need be, so its database is migrated.
    const embedded = await ctx.connection.ensureEmbedded().catch(() => undefined);
    const serviceDb = openServiceDb(embedded?.dataDir ?? serviceDataDir(ctx.home));
    try {
      const report = await importJobOutcomes({
        db: ctx.db,
        job,
        resultsDir: ctx.resultsDir,
        serviceDb,
        bounces: fileOf(input.bounces),
        ...(input.sent ? { sent: fileOf(input.sent) } : {}),
      });
      ctx.emit('jobs:changed', { jobIds: [job.id] });
      return report;
    } catch (error) {
      if (error instanceof OutcomesError) throw new ReplyFailure('outcomes-unreadable', error.message);
      throw error;
    } finally {
      serviceDb.close();
      isImporting = false;
    }
  }

  return {
    'outcomes:import': importOutcomes,
    'outcomes:get': (input) => storedOutcomes(ctx.db, jobOrFail(input.jobId).id),
    'jobs:changes': async (input) => {
      const job = jobOrFail(input.jobId);
      return (await compare()).jobChanges(ctx, job, input.offset, input.limit);
    },
    'jobs:export-changes': async (input) => {
      const job = jobOrFail(input.jobId);
      return (await compare()).exportJobChanges(ctx, job);
    },
  };
}
