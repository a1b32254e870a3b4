// The online phase of a job with DNS or SMTP checks (issue #11): rows checked online of those to check,
// domains done of the total, rate and time left; while temporary failures wait for a retry, "N rows waiting
// for a retry at HH:MM" and Finish now (those rows stay unknown).
import { UnknownCauses } from './UnknownCauses.js';
import { useState } from 'react';
import type { JobProgress } from '../../shared/desktop/contract.js';
import { formatCount, formatDuration } from '../format.js';
import { app } from '../platform/app.js';
import { useAppStore } from '../store/index.js';

function clockTime(iso: string): string {
  const date = new Date(iso);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

export function OnlineProgress({ jobId, progress }: Readonly<{ jobId: number; progress: JobProgress }>) {
  const notify = useAppStore((s) => s.notify);
  const [isFinishing, setFinishing] = useState(false);
  const online = progress.online;
  if (!online) return null;
  const left = Math.max(0, online.rowsToCheck - online.rowsChecked - online.retryRows);
  const eta = online.ratePerSecond > 0 && left > 0 ? Math.ceil(left / online.ratePerSecond) : null;
  return (
    <section className="online-progress" aria-labelledby={`online-${jobId}`}>
      <h2 id={`online-${jobId}`}>Online checks</h2>
      <dl className="facts" aria-label="Online checks">
        <div>
          <dt>Rows checked online</dt>
          <dd>
            {formatCount(online.rowsChecked)} of {formatCount(online.rowsToCheck)}
          </dd>
        </div>
        <div>
          <dt>Domains done</dt>
          <dd>
            {formatCount(online.domainsDone)} of {formatCount(online.domainsTotal)}
          </dd>
        </div>
        <div>
          <dt>Rate</dt>
          <dd>
            {online.ratePerSecond > 0 ? `${formatCount(Math.round(online.ratePerSecond))} rows/s` : '—'}
          </dd>
        </div>
        <div>
          <dt>Online time left</dt>
          <dd>{eta !== null ? formatDuration(eta) : '—'}</dd>
        </div>
      </dl>
      {online.pacedBy ? (
        <p className="paced-by" role="status" aria-label="Pace">
          {online.pacedBy}. Nothing is wrong: the list goes as fast as this mail server allows.
        </p>
      ) : null}
      <UnknownCauses causes={online.unknownCauses} />
      {online.retryRows > 0 && online.retryAt ? (
        <div className="retry-wait" role="status" aria-label="Retry wait">
          <p>
            {formatCount(online.retryRows)} {online.retryRows === 1 ? 'row' : 'rows'} waiting for a retry at{' '}
            {clockTime(online.retryAt)}: mail servers answered “try again later” (greylisting, a timeout).
          </p>
          <button
            type="button"
            disabled={isFinishing}
            onClick={() => {
              setFinishing(true);
              void app.finishJobNow({ jobId }).then((reply) => {
                setFinishing(false);
                notify(
                  reply.ok ? 'Finishing now: the rows waiting stay unknown.' : reply.error.message,
                  reply.ok ? 'info' : 'error',
                );
              });
            }}
          >
            Finish now
          </button>
          <p className="muted small">
            Finish now ends the wait: those rows stay unknown, and can be re-checked later.
          </p>
        </div>
      ) : null}
    </section>
  );
}
