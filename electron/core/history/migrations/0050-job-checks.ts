import type { Migration } from '../../../../service/store/migrate.js';

/**
 * Checks levels (issue #11, docs/online-checks.md): the level each job ran with (offline, dns, smtp, or
 * provider) and why in words; and the versions of a job's results — a re-check of its unknown rows writes a
 * new results file of the same rows, in the same order, and the job keeps every version with what changed
 * (`change`, JSON: the unknown rows asked again and what they became). Jobs from before ran offline (local)
 * or with the provider's checks: NULL reads that way.
 */
export const jobChecks: Migration = {
  version: 50,
  name: 'job-checks',
  up(db) {
    db.exec(`
      ALTER TABLE jobs ADD COLUMN checks_level TEXT;
      ALTER TABLE jobs ADD COLUMN checks_reason TEXT;
      CREATE TABLE job_versions (
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        results_path TEXT NOT NULL,
        results_name TEXT NOT NULL,
        checks_level TEXT NOT NULL,
        checks_reason TEXT NOT NULL,
        change TEXT,
        PRIMARY KEY (job_id, version)
      ) STRICT;
    `);
  },
};
