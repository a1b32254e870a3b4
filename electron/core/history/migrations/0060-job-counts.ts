import type { Migration } from '../../../../service/store/migrate.js';

/**
 * The Results screen's numbers (issue #12: "one truthful set of numbers"), counted once from a job's results
 * file and kept with the job: the headline (Ready to mail = the rows the default export writes, Invalid, Risky,
 * Unknown, Duplicates left out), the (code, final status) table, domain types, role and duplicate rows.
 * `results_path` says which results file they count: a new version of the results (a re-check) is counted
 * again. `counts` is JSON (electron/core/results.ts `ResultsCounts`).
 */
export const jobCounts: Migration = {
  version: 60,
  name: 'job-counts',
  up(db) {
    db.exec(`
      CREATE TABLE job_counts (
        job_id INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
        results_path TEXT NOT NULL,
        counted_at TEXT NOT NULL,
        counts TEXT NOT NULL
      ) STRICT;
    `);
  },
};
