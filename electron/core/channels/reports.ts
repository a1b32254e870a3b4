// Printable summary (issue #12): the spec's report CSVs of a job (shared/reportCsv.ts: the match report
// `field,records matched,percent`, the chart data `field,value,count`), written from the job's reporting into
// its exports folder and kept as one of its exports, so the shell saves it (native dialog, or a download in
// browser mode) as it saves any export.
import { mkdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { outputNameFor } from '../../../shared/fileName.js';
import { REPORT_CSV_OF } from '../../../shared/reportCsv.js';
import { insertExport } from '../history/db.js';
import { exportFileName } from '../jobs/exports.js';
import { writeFileWhole } from '../jobs/outputs.js';
import { jobLookup } from './history.js';
import { ReplyFailure, type CoreContext, type Handlers } from './context.js';

export type ReportChannel = 'jobs:save-report';

export function reportHandlers(ctx: CoreContext): Handlers<ReportChannel> {
  const { db, emit, resultsDir } = ctx;
  const { jobOrFail, detail } = jobLookup(ctx);
  return {
    'jobs:save-report': (input) => {
      const job = detail(jobOrFail(input.jobId));
      if (job.status !== 'completed' && job.status !== 'awaiting-purchase')
        throw new ReplyFailure('no-results', 'This job has no reports yet.');
      const text = REPORT_CSV_OF[input.report]({
        records: job.rows ?? job.lastDocument?.records ?? 0,
        validation: job.reporting,
        duplicates: job.duplicates,
        matchReports: job.matchReports,
      });
      const dir = join(resultsDir, String(job.id), 'exports');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const upload = outputNameFor(job.file.name);
      const fileName = exportFileName(basename(upload, extname(upload)), input.report, '.csv');
      const path = join(dir, `${Date.now()}-${fileName}`);
      writeFileWhole(path, text);
      const record = insertExport(db, {
        jobId: job.id,
        kind: input.report,
        statuses: [],
        path,
        fileName,
        rows: text.split('\n').length - 2,
        bytes: statSync(path).size,
      });
      emit('jobs:changed', { jobIds: [job.id] });
      const { path: _path, ...info } = record;
      return info;
    },
  };
}
