// A job's outcomes as the history keeps them (migrations/0070-job-outcomes.ts): the last import's report, and
// per status code the rows mailed and hard bounces among them, from which a budget export takes this user's
// measured risks (shared/outcomes.ts riskOf). Deleted with the job.
import { statement } from '../../../service/store/statements.js';
import { outcomesReportSchema, type OutcomesReport } from '../../../shared/outcomes.js';
import type { HistoryDb } from '../history/db.js';

/** Keeps a job's outcomes, replacing its earlier import. */
export function saveOutcomes(
  db: HistoryDb,
  report: OutcomesReport,
  codes: ReadonlyMap<number, { sent: number; hardBounced: number }>,
): void {
  db.transaction(() => {
    statement(
      db,
      `INSERT INTO job_outcomes (job_id, imported_at, bounce_file, sent_file, report) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (job_id) DO UPDATE SET imported_at = excluded.imported_at, bounce_file = excluded.bounce_file,
         sent_file = excluded.sent_file, report = excluded.report`,
    ).run(report.jobId, report.importedAt, report.bounceFile, report.sentFile, JSON.stringify(report));
    statement(db, 'DELETE FROM job_outcome_codes WHERE job_id = ?').run(report.jobId);
    const insert = statement(
      db,
      'INSERT INTO job_outcome_codes (job_id, code, sent, hard_bounced) VALUES (?, ?, ?, ?)',
    );
    for (const [code, { sent, hardBounced }] of codes) insert.run(report.jobId, code, sent, hardBounced);
  })();
}

/** A job's last imported outcomes, or null before any. */
export function storedOutcomes(db: HistoryDb, jobId: number): OutcomesReport | null {
  const text = statement(db, 'SELECT report FROM job_outcomes WHERE job_id = ?').pluck().get(jobId) as
    string | undefined;
  return text === undefined ? null : outcomesReportSchema.parse(JSON.parse(text));
}

/**
 * Per status code, rows mailed and hard bounces among them over every job's outcomes (optionally leaving one
 * job out: a report's own prediction does not learn from itself).
 */
export function measuredRisks(
  db: HistoryDb,
  exceptJobId = -1,
): Map<number, { sent: number; hardBounced: number }> {
  const rows = statement(
    db,
    `SELECT code, SUM(sent) AS sent, SUM(hard_bounced) AS hardBounced FROM job_outcome_codes
     WHERE job_id != ? GROUP BY code`,
  ).all(exceptJobId) as { code: number; sent: number; hardBounced: number }[];
  return new Map(rows.map((row) => [row.code, { sent: row.sent, hardBounced: row.hardBounced }]));
}
