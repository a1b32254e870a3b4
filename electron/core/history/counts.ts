// The Results screen's numbers of each job, counted from its results file (electron/core/results.ts) and kept
// (migrations/0060-job-counts.ts) for the results file they count.
import type { ResultsCounts } from '../results/resultsFile.js';
import type { HistoryDb } from './db.js';

/** The stored counts of a job's results file at `resultsPath`; undefined when missing or of another file. */
export function jobCountsOf(db: HistoryDb, jobId: number, resultsPath: string): ResultsCounts | undefined {
  const row = db.prepare('SELECT results_path, counts FROM job_counts WHERE job_id = ?').get(jobId) as
    { results_path: string; counts: string } | undefined;
  if (!row || row.results_path !== resultsPath) return undefined;
  return JSON.parse(row.counts) as ResultsCounts;
}

export function setJobCounts(db: HistoryDb, jobId: number, resultsPath: string, counts: ResultsCounts): void {
  db.prepare(
    `INSERT INTO job_counts (job_id, results_path, counted_at, counts) VALUES (?, ?, ?, ?)
     ON CONFLICT (job_id) DO UPDATE SET results_path = excluded.results_path,
       counted_at = excluded.counted_at, counts = excluded.counts`,
  ).run(jobId, resultsPath, new Date().toISOString(), JSON.stringify(counts));
}
