import type { Migration } from '../../../../service/store/migrate.js';

/**
 * After the campaign (issue 37): a job's verdicts measured against the campaign's real bounces. The last
 * import of a job is kept (`report` is JSON: shared/outcomes.ts `OutcomesReport`), with what the report's
 * risks are made of per status code (`job_outcome_codes`: rows mailed, hard bounces among them), from which
 * an export planned against a bounce budget takes this user's measured risks. Both go with the job.
 */
export const jobOutcomes: Migration = {
  version: 70,
  name: 'job-outcomes',
  up(db) {
    db.exec(`
      CREATE TABLE job_outcomes (
        job_id INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
        imported_at TEXT NOT NULL,
        bounce_file TEXT NOT NULL,
        sent_file TEXT,
        report TEXT NOT NULL
      ) STRICT;
      CREATE TABLE job_outcome_codes (
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        code INTEGER NOT NULL,
        sent INTEGER NOT NULL,
        hard_bounced INTEGER NOT NULL,
        PRIMARY KEY (job_id, code)
      ) STRICT;
    `);
  },
};
