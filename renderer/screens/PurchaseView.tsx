// A report-only job whose match reports are in: the reports, and "Buy results" — the matched fields and the
// append services to buy, and for email append the match type (E9). Once bought, the list runs again and the
// job goes on to Results like any other.
import { useEffect, useRef, useState } from 'react';
import { LIST_SERVICE_TITLES } from '../../shared/api/listServiceNames.js';
import {
  PURCHASE_MATCH_TYPES,
  PURCHASE_MATCH_TYPE_LABELS,
  fieldLabel,
  type PurchaseMatchType,
} from '../../shared/desktop/constants.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { alternateRows, countsOf } from '../../shared/desktop/listServices.js';
import { MatchReports } from '../components/MatchReports.js';
import { formatCount, formatDate } from '../format.js';
import { useAppStore } from '../store/index.js';

interface Choice {
  /** E9 `fields` name: an intelligence field, or a service key bought whole. */
  readonly name: string;
  readonly label: string;
  readonly records: number;
}

/** What can be bought: each matched intelligence field, then the append services that ran. */
export function purchaseChoices(job: JobDetail): Choice[] {
  const reports = job.matchReports;
  const choices: Choice[] = Object.entries(reports.email_intelligence ?? {})
    .filter(([, records]) => records > 0)
    .map(([name, records]) => ({ name, label: fieldLabel(name), records }));
  if (job.options.services.includes('email_append')) {
    const append = reports.email_append ?? { individual: 0, household: 0 };
    choices.push({
      name: 'email_append',
      label: LIST_SERVICE_TITLES.email_append,
      records: append.individual + append.household,
    });
  }
  if (job.options.services.includes('alternate_email_append')) {
    const first = alternateRows(reports.alternate_email_append ?? {})[0];
    choices.push({
      name: 'alternate_email_append',
      label: LIST_SERVICE_TITLES.alternate_email_append,
      records: first ? first.individual + first.household : 0,
    });
  }
  return choices;
}

function BuyDialog({ job, onClose }: Readonly<{ job: JobDetail; onClose: () => void }>) {
  const dialog = useRef<HTMLDialogElement>(null);
  const purchaseState = useAppStore((s) => s.purchaseState);
  const purchaseJob = useAppStore((s) => s.purchaseJob);
  const choices = purchaseChoices(job);
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set(choices.map((c) => c.name)));
  const [matchType, setMatchType] = useState<PurchaseMatchType>('H');
  const append = job.matchReports.email_append ?? { individual: 0, household: 0 };

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);

  const isWorking = purchaseState.status === 'working';
  const error =
    purchaseState.status === 'failed' && purchaseState.jobId === job.id ? purchaseState.error : null;
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="buy-heading" onClose={onClose}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          const fields = choices.map((c) => c.name).filter((name) => chosen.has(name));
          void purchaseJob(job.id, fields, matchType).then((isBought) => {
            if (isBought) dialog.current?.close();
          });
        }}
      >
        <h2 id="buy-heading">Buy results</h2>
        <fieldset>
          <legend>Fields to buy</legend>
          {choices.map((choice) => (
            <label key={choice.name} className="checkbox">
              <input
                type="checkbox"
                checked={chosen.has(choice.name)}
                onChange={(event) => {
                  const next = new Set(chosen);
                  if (event.target.checked) next.add(choice.name);
                  else next.delete(choice.name);
                  setChosen(next);
                }}
              />
              {choice.label}
              <span className="muted">
                {' '}
                · {formatCount(choice.records)} {choice.records === 1 ? 'record' : 'records'}
              </span>
            </label>
          ))}
        </fieldset>
        {chosen.has('email_append') ? (
          <fieldset>
            <legend>Email append matches</legend>
            {PURCHASE_MATCH_TYPES.map((type) => (
              <label key={type} className="radio">
                <input
                  type="radio"
                  name="match-type"
                  value={type}
                  checked={matchType === type}
                  onChange={() => setMatchType(type)}
                />
                {PURCHASE_MATCH_TYPE_LABELS[type]}
                <span className="muted">
                  {' '}
                  · {formatCount(
                    type === 'I' ? append.individual : append.individual + append.household,
                  )}{' '}
                  records
                </span>
              </label>
            ))}
          </fieldset>
        ) : null}
        <p className="muted small">
          The list runs again at the service and its results file gets the columns bought
          {job.options.services.includes('email_validation') ? ', after the validation columns' : ''}.
        </p>
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={isWorking || chosen.size === 0}>
            {isWorking ? 'Buying…' : 'Buy'}
          </button>
        </div>
      </form>
    </dialog>
  );
}

export function PurchaseView({ job }: Readonly<{ job: JobDetail }>) {
  const navigate = useAppStore((s) => s.navigate);
  const resetPurchase = useAppStore((s) => s.resetPurchase);
  const [isBuying, setIsBuying] = useState(false);
  const total = job.rows ?? 0;
  const statuses = countsOf(job.reporting?.statuses);
  const choices = purchaseChoices(job);
  return (
    <section className="screen" aria-labelledby="reports-heading">
      <header className="screen-head with-actions">
        <div>
          <h1 id="reports-heading">Match reports</h1>
          <p className="muted">
            {job.file.name}
            {job.part ? ` (part ${job.part.index} of ${job.part.count})` : ''} · {formatDate(job.createdAt)}
            {job.listId !== null ? ` · list ${job.listId}` : ''} · awaiting purchase
          </p>
        </div>
        <div className="head-actions">
          <button type="button" onClick={() => navigate({ name: 'history' })}>
            History
          </button>
          <button
            type="button"
            className="primary"
            disabled={choices.length === 0}
            onClick={() => {
              resetPurchase();
              setIsBuying(true);
            }}
          >
            Buy results
          </button>
        </div>
      </header>
      <p role="status">
        Nothing is bought yet: these are the counts of what the services found in {formatCount(total)}{' '}
        {total === 1 ? 'record' : 'records'}. Buy the fields you want to download the results.
      </p>
      {choices.length === 0 ? <p className="muted">Nothing matched, so there is nothing to buy.</p> : null}
      {job.options.services.includes('email_validation') ? (
        <dl className="stats cards" aria-label="Validation">
          <div>
            <dt>Rows</dt>
            <dd>{formatCount(total)}</dd>
          </div>
          <div>
            <dt>Safe to send</dt>
            <dd>{formatCount((statuses.Valid ?? 0) + (statuses.Corrected ?? 0))}</dd>
          </div>
          <div>
            <dt>Invalid</dt>
            <dd>{formatCount(statuses.Invalid ?? 0)}</dd>
          </div>
        </dl>
      ) : null}
      <MatchReports reports={job.matchReports} services={job.options.services} total={total} />
      {isBuying ? <BuyDialog job={job} onClose={() => setIsBuying(false)} /> : null}
    </section>
  );
}
