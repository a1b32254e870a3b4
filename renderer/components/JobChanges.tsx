// "Changes since the last run" on a job's Results (issue 37): when the history holds an earlier run of the same
// addresses (the job's own previous version when it was re-checked, else the latest earlier job of the same
// file: electron/core/outcomes/compare.ts), how many rows changed status since, the changed rows a page at a
// time with both verdicts and both pieces of evidence in words, and "Export changed rows". Nothing shows for
// a job without an earlier run.
import { useEffect } from 'react';
import type { VerificationMode } from '../../shared/api/codes.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { evidenceWords, type ChangedRow } from '../../shared/outcomes.js';
import { statusName } from '../../shared/vocabulary.js';
import { countOf, formatCount, formatDate } from '../format.js';
import { keyModeOf } from '../keyMode.js';
import { useAppStore } from '../store/index.js';
import { CHANGES_PAGE } from '../store/changes.js';

export const CHANGES_TITLE = 'Changes since the last run';

function Verdict({ verdict, mode }: Readonly<{ verdict: ChangedRow['before']; mode: VerificationMode }>) {
  return (
    <>
      <span className={`badge tone-${verdict.status}`}>{statusName(verdict.status, mode)}</span>{' '}
      <span className="muted">{verdict.code}</span>
    </>
  );
}

export function JobChanges({ job }: Readonly<{ job: JobDetail }>) {
  const loadChanges = useAppStore((s) => s.loadChanges);
  const state = useAppStore((s) => s.changes[job.id]);
  const exportChanges = useAppStore((s) => s.exportChanges);
  const exportState = useAppStore((s) => s.changesExport);
  const mode: VerificationMode = useAppStore(keyModeOf);
  const canCompare =
    job.status === 'completed' && job.hasResults && job.options.services.includes('email_validation');
  // Asked again when the job's results change (a re-check makes a new version, compared anew).
  useEffect(() => {
    if (canCompare) void loadChanges(job.id, 0);
  }, [canCompare, job.id, job.resultsName, loadChanges]);
  if (!canCompare || !state || state.status === 'loading' || state.status === 'idle') return null;
  if (state.status === 'failed')
    return (
      <p className="error" role="alert">
        {CHANGES_TITLE}: {state.error}
      </p>
    );
  const changes = state.value;
  if (changes.earlierJobId === null) return null;
  const since =
    changes.earlierJobId === job.id
      ? `version ${changes.earlierVersion ?? ''} of this job`
      : `job ${changes.earlierJobId}`;
  const first = changes.offset;
  const last = first + changes.rows.length;
  const isExporting = exportState.status === 'working' && exportState.jobId === job.id;
  return (
    <section className="panel changes" aria-labelledby="changes-heading">
      <h2 id="changes-heading">{CHANGES_TITLE}</h2>
      <p>
        {countOf(changes.changed, 'row')} changed status since {since}
        {changes.earlierAt ? ` (${formatDate(changes.earlierAt)})` : ''}.{' '}
        <span className="muted">
          {countOf(changes.compared, 'address', 'addresses')} found in both runs were compared.
        </span>
      </p>
      {changes.byChange.length > 0 ? (
        <ul className="changes-by" aria-label="Changes by status">
          {changes.byChange.map((change) => (
            <li key={`${change.before}→${change.after}`}>
              {statusName(change.before, mode)} → {statusName(change.after, mode)}:{' '}
              {countOf(change.rows, 'row')}
            </li>
          ))}
        </ul>
      ) : null}
      {changes.changed > 0 ? (
        <>
          <div className="changes-table">
            <table aria-label="Changed rows">
              <thead>
                <tr>
                  <th scope="col" className="num">
                    Row
                  </th>
                  <th scope="col">Address</th>
                  <th scope="col">Before</th>
                  <th scope="col">After</th>
                  <th scope="col">Evidence before</th>
                  <th scope="col">Evidence after</th>
                </tr>
              </thead>
              <tbody>
                {changes.rows.map((row) => (
                  <tr key={row.row}>
                    <td className="num">{formatCount(row.row)}</td>
                    <th scope="row">{row.email}</th>
                    <td>
                      <Verdict verdict={row.before} mode={mode} />
                    </td>
                    <td>
                      <Verdict verdict={row.after} mode={mode} />
                    </td>
                    <td>{evidenceWords(row.before.evidence)}</td>
                    <td>{evidenceWords(row.after.evidence)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="changes-pager">
            <button
              type="button"
              className="small-button"
              disabled={first === 0}
              onClick={() => void loadChanges(job.id, Math.max(0, first - CHANGES_PAGE))}
            >
              Previous rows
            </button>
            <span role="status" aria-label="Changed rows shown">
              Rows {formatCount(first + 1)}–{formatCount(last)} of {formatCount(changes.changed)}
            </span>
            <button
              type="button"
              className="small-button"
              disabled={last >= changes.changed}
              onClick={() => void loadChanges(job.id, last)}
            >
              Next rows
            </button>
          </div>
        </>
      ) : null}
      <p>
        <button
          type="button"
          disabled={changes.changed === 0 || isExporting}
          onClick={() => void exportChanges(job.id)}
        >
          Export changed rows
        </button>
      </p>
      {exportState.status === 'done' && exportState.jobId === job.id ? (
        <p role="status">
          Exported {countOf(exportState.info.rows, 'changed row')} to{' '}
          {exportState.path ?? exportState.info.fileName}.
        </p>
      ) : null}
      {exportState.status === 'failed' && exportState.jobId === job.id ? (
        <p className="error" role="alert">
          {exportState.error}
        </p>
      ) : null}
    </section>
  );
}
