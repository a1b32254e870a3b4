// Re-check unknown rows (issue #11) on Results: the button (disabled with its reason when the job has no
// unknown rows or no results on disk), how far a re-check under way is, in words, what the last one changed
// ("412 unknown → 380 valid, 25 invalid, 7 still unknown") and the versions of the job's results.
import { CHECKS_LEVEL_SHORT } from '../../shared/desktop/checks.js';
import type { JobDetail, JobSummary } from '../../shared/desktop/contract.js';
import { formatDate } from '../format.js';
import { useAppStore } from '../store/index.js';

export const RECHECK_LABEL = 'Re-check unknown rows';

/** Why a job's unknown rows cannot be re-checked now, or null when they can. */
export function recheckBlocker(job: {
  status: JobSummary['status'];
  hasResults: boolean;
  unknown: number | null;
  hasValidation: boolean;
  isRunning?: boolean;
}): string | null {
  if (job.isRunning) return 'A re-check of this job is under way.';
  if (job.status !== 'completed') return 'Only a completed job’s results can be re-checked.';
  if (!job.hasValidation || job.unknown === null)
    return 'This job ran no validation: its rows have no status to re-check.';
  if (!job.hasResults) return 'The results file of this job is no longer on disk.';
  if (job.unknown === 0) return 'This job has no unknown rows.';
  return null;
}

function blockerOf(job: JobDetail): string | null {
  return recheckBlocker({
    status: job.status,
    hasResults: job.hasResults,
    unknown: job.recheck?.unknownRows ?? null,
    hasValidation: job.options.services.includes('email_validation'),
    isRunning: (job.recheck?.running ?? null) !== null,
  });
}

/** The header action of Results. */
export function RecheckButton({ job }: Readonly<{ job: JobDetail }>) {
  const recheckJob = useAppStore((s) => s.recheckJob);
  const blocker = blockerOf(job);
  return (
    <button
      type="button"
      aria-disabled={blocker !== null}
      aria-describedby={blocker !== null ? 'recheck-blocker' : undefined}
      title={blocker ?? 'Send the rows that could not be checked through the current checks again'}
      onClick={() => {
        if (blocker === null) void recheckJob(job.id);
      }}
    >
      {RECHECK_LABEL}
    </button>
  );
}

/** The re-check under way, the change of the current version, and the versions. */
export function RecheckPanel({ job }: Readonly<{ job: JobDetail }>) {
  const progress = useAppStore((s) => s.progress[job.id]);
  const cancelRecheck = useAppStore((s) => s.cancelRecheck);
  const recheck = job.recheck;
  const blocker = blockerOf(job);
  const running = recheck?.running ?? null;
  const words = running !== null ? (progress?.recheck?.words ?? running) : null;
  const versions = recheck?.versions ?? [];
  const current = versions.find((version) => version.isCurrent);
  return (
    <>
      {blocker !== null ? (
        <p id="recheck-blocker" className="visually-hidden">
          {blocker}
        </p>
      ) : null}
      {words !== null ? (
        <div className="note recheck-running">
          <p role="status" aria-label="Re-check">
            {words}
          </p>
          <button type="button" className="small-button" onClick={() => void cancelRecheck(job.id)}>
            Stop the re-check
          </button>
        </div>
      ) : null}
      {running === null && recheck?.error ? (
        <p className="error" role="alert">
          {recheck.error}
        </p>
      ) : null}
      {running === null && current?.change ? (
        <p className="note" role="status" aria-label="Re-check">
          Re-check (version {current.version}, {CHECKS_LEVEL_SHORT[current.checks.level]}): {current.change}
        </p>
      ) : null}
      {versions.length > 1 ? (
        <section className="panel" aria-labelledby="versions-heading">
          <h2 id="versions-heading">Versions of the results</h2>
          <table className="versions" aria-labelledby="versions-heading">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Date</th>
                <th scope="col">Checks</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((version) => (
                <tr key={version.version} aria-current={version.isCurrent ? 'true' : undefined}>
                  <th scope="row">
                    {version.version}
                    {version.isCurrent ? ' (current)' : ''}
                  </th>
                  <td>{formatDate(version.createdAt)}</td>
                  <td>{CHECKS_LEVEL_SHORT[version.checks.level]}</td>
                  <td>{version.change ?? 'First results'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
    </>
  );
}
