import { OnlineProgress } from '../components/OnlineProgress.js';
import { useEffect, useRef, useState } from 'react';
import type { ListServiceKey } from '../../shared/api/listServiceNames.js';
import { LIST_SERVICE_TITLES } from '../../shared/api/listServiceNames.js';
import { CHECKS_LEVEL_NAMES } from '../../shared/desktop/checks.js';
import { ACTIVE_JOB_STATUSES } from '../../shared/desktop/constants.js';
import type { JobDetail, JobProgress } from '../../shared/desktop/contract.js';
import {
  countOf,
  formatBytes,
  formatCount,
  formatDate,
  formatDuration,
  formatPercent,
  JOB_STATUS_LABELS,
} from '../format.js';
import { useAppStore } from '../store/index.js';
import { PurchaseView } from './PurchaseView.js';
import { ResultsView } from './ResultsView.js';

const STEPS = [
  { status: 'uploading', label: 'Upload' },
  { status: 'processing', label: 'Processing at the service' },
  { status: 'downloading', label: 'Download results' },
  { status: 'completed', label: 'Done' },
] as const;

function Steps({ status }: Readonly<{ status: JobDetail['status'] }>) {
  const order = ['queued', 'uploading', 'processing', 'downloading', 'completed'];
  const at = order.indexOf(status);
  return (
    <ol className="steps" aria-label="Steps">
      {STEPS.map((step) => {
        const index = order.indexOf(step.status);
        const state = at > index ? 'done' : at === index ? 'current' : 'todo';
        return (
          <li
            key={step.status}
            className={`step is-${state}`}
            aria-current={state === 'current' ? 'step' : undefined}
          >
            <span className="step-dot" aria-hidden="true" />
            {step.label}
            <span className="visually-hidden">
              {state === 'done' ? ' (done)' : state === 'current' ? ' (in progress)' : ''}
            </span>
          </li>
        );
      })}
    </ol>
  );
}

function rateText(progress: JobProgress): string | null {
  if (progress.rate === null || progress.rate === 0) return null;
  if (progress.status === 'uploading' || progress.status === 'downloading')
    return `${formatBytes(progress.rate)}/s`;
  return `${formatCount(Math.round(progress.rate))} rows/s`;
}

/** Cancel asks first, and says what is lost. */
function ConfirmCancel({ job, onClose }: Readonly<{ job: JobDetail; onClose: () => void }>) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancelJob = useAppStore((s) => s.cancelJob);
  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);
  const isPaid = job.connection.kind === 'provider';
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="cancel-heading" onClose={onClose}>
      <h2 id="cancel-heading">Cancel this job?</h2>
      <p>
        The list stops at the service and the rows checked so far are not kept: there will be no results for “
        {job.file.name}”.
        {isPaid
          ? ' Credits the provider has already used for this list are not given back.'
          : ' Nothing is charged on the local service.'}{' '}
        You can run it again from the start later.
      </p>
      <div className="actions">
        <button type="button" autoFocus onClick={() => dialog.current?.close()}>
          Keep it running
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            dialog.current?.close();
            void cancelJob(job.id);
          }}
        >
          Cancel the job
        </button>
      </div>
    </dialog>
  );
}

function ProgressView({ job, progress }: Readonly<{ job: JobDetail; progress: JobProgress | undefined }>) {
  const [isConfirming, setIsConfirming] = useState(false);
  const isTransfer = progress?.status === 'uploading' || progress?.status === 'downloading';
  const rate = progress ? rateText(progress) : null;
  return (
    <section className="screen" aria-labelledby="progress-heading">
      <header className="screen-head">
        <h1 id="progress-heading">Progress</h1>
        <p className="muted">
          {job.file.name}
          {job.part ? ` (part ${job.part.index} of ${job.part.count})` : ''} · started{' '}
          {formatDate(job.createdAt)}
        </p>
      </header>
      <Steps status={job.status} />
      <div className="progress-panel">
        {isTransfer && progress ? (
          <div className="meter">
            <label htmlFor="transfer-progress">
              {progress.status === 'uploading' ? 'Uploaded' : 'Downloaded'}
            </label>
            <progress
              id="transfer-progress"
              max={Math.max(progress.totalBytes, 1)}
              value={progress.sentBytes}
            />
            <span>
              {formatBytes(progress.sentBytes)} of {formatBytes(progress.totalBytes)}
            </span>
          </div>
        ) : null}
        {job.status === 'processing' ? (
          <div className="meter">
            <label htmlFor="rows-progress">Rows checked</label>
            {progress && progress.total > 0 ? (
              <>
                <progress id="rows-progress" max={progress.total} value={progress.completed} />
                <span>
                  {formatCount(progress.completed)} of {formatCount(progress.total)} (
                  {formatPercent(progress.completed, progress.total)})
                </span>
              </>
            ) : (
              <>
                {/* No value: an indeterminate bar while the service reads the list. */}
                <progress id="rows-progress" />
                <span>{job.rows ? `Reading ${countOf(job.rows, 'row')}…` : 'Reading the list…'}</span>
              </>
            )}
          </div>
        ) : null}
        <dl className="stats">
          <div>
            <dt>Status</dt>
            <dd>{JOB_STATUS_LABELS[job.status]}</dd>
          </div>
          <div>
            <dt>List at the service</dt>
            <dd>
              {progress?.listStatus ?? (job.listId !== null ? `List ${job.listId}` : 'Not submitted yet')}
            </dd>
          </div>
          <div>
            <dt>Rate</dt>
            <dd>{rate ?? '—'}</dd>
          </div>
          <div>
            <dt>Time left</dt>
            <dd>{progress?.etaSeconds != null ? formatDuration(progress.etaSeconds) : '—'}</dd>
          </div>
          {job.checksRun ? (
            <div>
              <dt>Checks</dt>
              <dd>{CHECKS_LEVEL_NAMES[job.checksRun.level]}</dd>
            </div>
          ) : null}
        </dl>
        {progress && progress.services.length > 0 ? (
          <table className="plain-table" aria-label="Services">
            <thead>
              <tr>
                <th scope="col">Service</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Done
                </th>
                <th scope="col" className="num">
                  Of
                </th>
              </tr>
            </thead>
            <tbody>
              {progress.services.map((service) => (
                <tr key={service.name}>
                  <th scope="row">
                    {LIST_SERVICE_TITLES[service.name as ListServiceKey] ?? service.name.replace(/_/g, ' ')}
                  </th>
                  <td>{service.status}</td>
                  <td className="num">{formatCount(service.completed)}</td>
                  <td className="num">{formatCount(service.input)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {progress?.online ? <OnlineProgress jobId={job.id} progress={progress} /> : null}
        {job.message ? <p className="muted">{job.message}</p> : null}
      </div>
      <p className="muted small">
        You can leave this screen: the job goes on, and History shows where it stands.
      </p>
      <div className="actions">
        <button type="button" onClick={() => setIsConfirming(true)}>
          Cancel job
        </button>
      </div>
      {isConfirming ? <ConfirmCancel job={job} onClose={() => setIsConfirming(false)} /> : null}
    </section>
  );
}

function EndedView({ job }: Readonly<{ job: JobDetail }>) {
  const navigate = useAppStore((s) => s.navigate);
  const rerunJob = useAppStore((s) => s.rerunJob);
  return (
    <section className="screen" aria-labelledby="ended-heading">
      <header className="screen-head">
        <h1 id="ended-heading">{job.status === 'failed' ? 'The job failed' : 'The job was cancelled'}</h1>
        <p className="muted">
          {job.file.name} · {formatDate(job.createdAt)}
        </p>
      </header>
      <p
        className={job.status === 'failed' ? 'error' : undefined}
        role={job.status === 'failed' ? 'alert' : undefined}
      >
        {job.message ?? (job.status === 'failed' ? 'No reason was given.' : 'Cancelled.')}
      </p>
      <h2>Timeline</h2>
      <ol className="timeline">
        {job.timeline.map((entry, i) => (
          <li key={i}>
            <time dateTime={entry.at}>{formatDate(entry.at)}</time>{' '}
            {JOB_STATUS_LABELS[entry.status] ?? entry.status}
            {entry.message ? ` — ${entry.message}` : ''}
          </li>
        ))}
      </ol>
      <div className="actions">
        <button type="button" onClick={() => navigate({ name: 'new' })}>
          New job
        </button>
        <button type="button" className="primary" onClick={() => void rerunJob(job.id)}>
          Run again
        </button>
      </div>
    </section>
  );
}

export function JobScreen({ jobId }: Readonly<{ jobId: number }>) {
  const view = useAppStore((state) => state.jobs[jobId]);
  const progress = useAppStore((state) => state.progress[jobId]);
  const loadJob = useAppStore((state) => state.loadJob);
  useEffect(() => {
    if (!view) void loadJob(jobId);
  }, [jobId, view, loadJob]);
  if (!view || view.status === 'loading' || view.status === 'idle')
    return <p className="muted">Loading the job…</p>;
  if (view.status === 'failed')
    return (
      <p className="error" role="alert">
        {view.error}
      </p>
    );
  const job = view.value;
  if (ACTIVE_JOB_STATUSES.includes(job.status)) return <ProgressView job={job} progress={progress} />;
  if (job.status === 'completed') return <ResultsView job={job} />;
  if (job.status === 'awaiting-purchase') return <PurchaseView job={job} />;
  return <EndedView job={job} />;
}
