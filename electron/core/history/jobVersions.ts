// The checks level each job ran with, and the versions of its results (a re-check of unknown rows writes a
// new version: migrations/0050-job-checks.ts).
import type { EmailValidationReporting } from '../../../shared/api/list.js';
import type { JobChecks } from '../../../shared/desktop/checks.js';
import type { HistoryDb } from './db.js';

export function setJobChecks(db: HistoryDb, jobId: number, checks: JobChecks): void {
  db.prepare('UPDATE jobs SET checks_level = ?, checks_reason = ? WHERE id = ?').run(
    checks.level,
    checks.reason,
    jobId,
  );
}

/** What the job ran with; null for a job from before levels were recorded. */
export function jobChecksOf(db: HistoryDb, jobId: number): JobChecks | null {
  const row = db
    .prepare('SELECT checks_level AS level, checks_reason AS reason FROM jobs WHERE id = ?')
    .get(jobId) as { level: string | null; reason: string | null } | undefined;
  if (!row?.level) return null;
  return { level: row.level as JobChecks['level'], reason: row.reason ?? '' };
}

export interface JobVersion {
  readonly version: number;
  readonly createdAt: string;
  readonly resultsPath: string;
  readonly resultsName: string;
  readonly checks: JobChecks;
  /** What the re-check changed (null for the first version). */
  readonly change: unknown;
}

export function jobVersions(db: HistoryDb, jobId: number): JobVersion[] {
  const rows = db
    .prepare(
      `SELECT version, created_at, results_path, results_name, checks_level, checks_reason, change
       FROM job_versions WHERE job_id = ? ORDER BY version`,
    )
    .all(jobId) as {
    version: number;
    created_at: string;
    results_path: string;
    results_name: string;
    checks_level: string;
    checks_reason: string;
    change: string | null;
  }[];
  return rows.map((row) => ({
    version: row.version,
    createdAt: row.created_at,
    resultsPath: row.results_path,
    resultsName: row.results_name,
    checks: { level: row.checks_level as JobChecks['level'], reason: row.checks_reason },
    change: row.change === null ? null : (JSON.parse(row.change) as unknown),
  }));
}

export function insertJobVersion(
  db: HistoryDb,
  jobId: number,
  version: Omit<JobVersion, 'createdAt'> & { createdAt?: string },
): void {
  db.prepare(
    `INSERT INTO job_versions (job_id, version, created_at, results_path, results_name, checks_level, checks_reason, change)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    jobId,
    version.version,
    version.createdAt ?? new Date().toISOString(),
    version.resultsPath,
    version.resultsName,
    version.checks.level,
    version.checks.reason,
    version.change === null ? null : JSON.stringify(version.change),
  );
}

/**
 * A re-check's new version becomes the job's results: recorded in `job_versions` (the first results as
 * version 1 when no version is recorded yet), and the job's results file, reporting and checks level are the
 * new version's — the History's Safe and Invalid columns and the last status document's reporting with them, so
 * Results, previews and exports read it. One transaction: the history never holds half of it.
 */
export function recordJobVersion(
  db: HistoryDb,
  jobId: number,
  first: Omit<JobVersion, 'version' | 'createdAt' | 'change'> & { createdAt: string },
  next: Omit<JobVersion, 'version' | 'createdAt'> & { reporting: EmailValidationReporting },
): number {
  return db.transaction(() => {
    const known = jobVersions(db, jobId);
    if (known.length === 0) insertJobVersion(db, jobId, { ...first, version: 1, change: null });
    const version = (known.at(-1)?.version ?? 1) + 1;
    insertJobVersion(db, jobId, {
      version,
      resultsPath: next.resultsPath,
      resultsName: next.resultsName,
      checks: next.checks,
      change: next.change,
    });
    const statuses = next.reporting.statuses ?? {};
    db.prepare(
      `UPDATE jobs SET results_path = @path, results_name = @name, reporting = @reporting,
         checks_level = @level, checks_reason = @reason,
         safe_count = @safe, invalid_count = @invalid,
         last_document = CASE WHEN json_type(last_document, '$.services.email_validation') = 'object'
           THEN json_set(last_document, '$.services.email_validation.reporting', json(@reporting))
           ELSE last_document END,
         updated_at = @at
       WHERE id = @id`,
    ).run({
      path: next.resultsPath,
      name: next.resultsName,
      reporting: JSON.stringify(next.reporting),
      level: next.checks.level,
      reason: next.checks.reason,
      safe: (statuses.Valid ?? 0) + (statuses.Corrected ?? 0),
      invalid: statuses.Invalid ?? 0,
      at: new Date().toISOString(),
      id: jobId,
    });
    return version;
  })();
}
