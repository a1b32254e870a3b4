// `mailsieve clean FILE --compare-with JOB` (issue 37, "What changed since the last run"): after the clean, its
// results (and their evidence: the explain file the local service gives when it checked online) are compared
// with those of job JOB of the history in the app home (MAILSIEVE_HOME) by the app's own engine
// (electron/core/outcomes/compare.ts), so the CLI and the app name the same changed rows. The changed rows go to
// `<results>.changed.csv` beside the results, as the app's "Export changed rows" writes them.
//
// JOB is checked before any work is done: a job that is not in the history, or has no results to compare, is a
// one-line error and nothing is uploaded.
import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { JobChanges } from '../../shared/outcomes.js';
import { getJob } from '../core/history/db.js';
import {
  CompareError,
  compareResultSets,
  jobResultSet,
  notComparable,
  readChangedRows,
  writeChangesCsv,
  type ResultSet,
} from '../core/outcomes/compare.js';
import { temporaryPathOf } from '../core/jobs/outputs.js';
import { CliError, intOption } from './errors.js';
import { openHomeHistory } from './outcomes.js';
import { formatCount } from '../../shared/count.js';

/** Changed rows the CLI prints (all are in the CSV). */
const ROWS_PRINTED = 10;

/** What `--json` gives of the comparison. */
export interface ChangesJson {
  readonly earlierJobId: number;
  readonly compared: number;
  readonly changed: number;
  readonly byChange: JobChanges['byChange'];
  /** The CSV of the changed rows. */
  readonly file: string;
}

/** This run's results, as the comparison reads them. */
export interface CleanResults {
  readonly path: string;
  readonly delimiter: string;
  /** 1-based, as --email-column. */
  readonly emailColumn: number;
  /** The explain file of this run (by row), or null when there is none. */
  readonly explain: string | null;
  /** The run checked offline: its rows' codes say why. */
  readonly isOffline: boolean;
}

export interface CompareWith {
  readonly jobId: number;
  /** Compares this run's results with the job's; answers the outcome and its lines in words. */
  run(results: CleanResults): Promise<{ json: ChangesJson; lines: string[] }>;
}

/**
 * `--compare-with`: the job of the history, checked now (before the clean): undefined when the option is not
 * given; a CliError in one line when the job cannot be compared.
 */
export function compareWithOption(raw: string | undefined): CompareWith | undefined {
  if (raw === undefined) return undefined;
  const jobId = intOption('--compare-with', raw, 1, 2 ** 31);
  const { db, home } = openHomeHistory();
  let earlier: ResultSet;
  try {
    const job = getJob(db, jobId);
    if (!job) throw new CliError(`--compare-with: job ${jobId} is not in the history at ${home}.`);
    const problem = notComparable(job);
    if (problem) throw new CliError(`--compare-with: ${problem}`);
    earlier = jobResultSet(db, join(home, 'results'), job);
  } finally {
    db.close();
  }
  return {
    jobId,
    async run(results) {
      const file = results.path.replace(/(\.[^./\\]+)?$/, '.changed.csv');
      const rowsPath = temporaryPathOf(`${file}.rows`);
      try {
        const later: ResultSet = {
          label: 'this run',
          path: results.path,
          name: basename(results.path),
          delimiter: results.delimiter,
          emailIndex: results.emailColumn - 1,
          evidence: {
            byRow: results.explain,
            byAddress: [],
            isOfflineFallback: results.explain !== null || results.isOffline,
          },
        };
        const comparison = await compareResultSets(earlier, later, rowsPath);
        await writeChangesCsv(rowsPath, file);
        const first = readChangedRows(rowsPath, comparison.offsets, 0, ROWS_PRINTED);
        const lines = [
          `${formatCount(comparison.changed)} of ${formatCount(comparison.compared)} addresses changed status since job ${jobId}` +
            (comparison.changed === 0 ? '.' : ':'),
          ...first.map(
            (row) =>
              `  row ${row.row}  ${row.email}  ${row.before.status} ${row.before.code} → ${row.after.status} ${row.after.code}: ${row.words}`,
          ),
          ...(comparison.changed > first.length
            ? [`  … and ${formatCount(comparison.changed - first.length)} more`]
            : []),
          `Changed rows: ${file}`,
        ];
        return {
          json: {
            earlierJobId: jobId,
            compared: comparison.compared,
            changed: comparison.changed,
            byChange: comparison.byChange,
            file,
          },
          lines,
        };
      } catch (error) {
        if (error instanceof CompareError) throw new CliError(`--compare-with: ${error.message}`);
        throw error;
      } finally {
        rmSync(rowsPath, { force: true });
      }
    },
  };
}
