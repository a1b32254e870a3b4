import { ChecksNote } from '../components/ChecksNote.js';
import { useState } from 'react';
import { statusForCode, type VerificationMode } from '../../shared/api/codes.js';
import { LIST_SERVICE_TITLES } from '../../shared/api/listServiceNames.js';
import { PURCHASE_MATCH_TYPE_LABELS, fieldLabel, type ResultStatus } from '../../shared/desktop/constants.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { countsOf } from '../../shared/desktop/listServices.js';
import { Bar, BarTable, type BarRow } from '../components/BarTable.js';
import { ExportDialog } from '../components/ExportDialog.js';
import { RowsPreview } from '../components/RowsPreview.js';
import { MatchReports } from '../components/MatchReports.js';
import {
  countOf,
  formatBytes,
  formatCount,
  formatDate,
  formatPercent,
  REPORT_KEY_OF_STATUS,
  STATUS_ORDER,
} from '../format.js';
import { codeMeaning, statusMeaning, statusName } from '../../shared/vocabulary.js';
import { keyModeOf } from '../keyMode.js';
import { useAppStore } from '../store/index.js';

function sum(record: Readonly<Record<string, number>>): number {
  return Object.values(record).reduce<number>((total, n) => total + n, 0);
}

/** What was bought of a report-only job, in words. */
function Bought({ job }: Readonly<{ job: JobDetail }>) {
  if (!job.purchase) return null;
  const isService = (
    name: string,
  ): name is 'email_append' | 'alternate_email_append' | 'email_intelligence' =>
    name === 'email_append' || name === 'alternate_email_append' || name === 'email_intelligence';
  const fields = job.purchase.fields.filter((name) => !isService(name));
  // A long selection is counted rather than listed.
  const names = [
    ...(fields.length > 6 ? [`${fields.length} intelligence fields`] : fields.map(fieldLabel)),
    ...job.purchase.fields.filter(isService).map((name) => LIST_SERVICE_TITLES[name]),
  ];
  return (
    <p className="note">
      Bought after the match report ({formatDate(job.purchase.at)}): {names.join(', ')}
      {job.purchase.fields.includes('email_append')
        ? ` — email append: ${PURCHASE_MATCH_TYPE_LABELS[job.purchase.matchType].toLowerCase()}`
        : ''}
      .
    </p>
  );
}

export function ResultsView({ job }: Readonly<{ job: JobDetail }>) {
  const showPreview = useAppStore((s) => s.showPreview);
  const preview = useAppStore((s) => s.preview);
  const resetExport = useAppStore((s) => s.resetExport);
  const navigate = useAppStore((s) => s.navigate);
  const mode: VerificationMode = useAppStore(keyModeOf);
  const [isExporting, setIsExporting] = useState(false);
  const reporting = job.reporting ?? {};
  const statuses = countsOf(reporting.statuses);
  const total = job.rows ?? sum(statuses);
  const safe = (statuses.Valid ?? 0) + (statuses.Corrected ?? 0);

  const statusRows: BarRow[] = STATUS_ORDER.map((status) => ({
    key: status,
    label: statusName(status, mode),
    value: statuses[REPORT_KEY_OF_STATUS[status]] ?? 0,
    tone: `tone-${status}`,
    detail: statusMeaning(status),
  }));
  const codes = Object.entries(reporting.status_codes ?? {})
    .map(([code, value]) => ({ code: Number(code), value }))
    .sort((a, b) => b.value - a.value || a.code - b.code);
  const categories: BarRow[] = Object.entries(countsOf(reporting.invalid_categories)).map(([key, value]) => ({
    key,
    label: key,
    value: value ?? 0,
    tone: 'tone-invalid',
  }));
  const domainTypes: BarRow[] = Object.entries(countsOf(reporting.domain_type))
    .map(([key, value]) => ({ key, label: key, value: value ?? 0, tone: 'tone-neutral' }))
    .filter((row) => row.value > 0)
    .sort((a, b) => b.value - a.value);
  const invalidTotal = statuses.Invalid ?? 0;
  const hasValidation = job.options.services.includes('email_validation');
  // The local service gives code 525 to disposable domains only (service/engine/verify.ts).
  const isLocal = job.connection.kind === 'embedded';

  return (
    <section className="screen" aria-labelledby="results-heading">
      <header className="screen-head with-actions">
        <div>
          <h1 id="results-heading">Results</h1>
          <p className="muted">
            {job.file.name}
            {job.part ? ` (part ${job.part.index} of ${job.part.count})` : ''} · {formatDate(job.createdAt)}
            {job.listId !== null ? ` · list ${job.listId}` : ''} ·{' '}
            {job.connection.kind === 'embedded' ? 'local service' : job.connection.baseUrl}
          </p>
        </div>
        <div className="head-actions">
          <button type="button" onClick={() => navigate({ name: 'history' })}>
            History
          </button>
          {/* The printable summary and the report CSVs (SummaryScreen.tsx). */}
          <button type="button" onClick={() => navigate({ name: 'summary', jobId: job.id })}>
            Summary
          </button>
          <button
            type="button"
            className="primary"
            disabled={!job.hasResults}
            onClick={() => {
              resetExport();
              setIsExporting(true);
            }}
          >
            Export
          </button>
        </div>
      </header>
      {!job.hasResults ? (
        <p className="error" role="alert">
          The results file of this job is no longer on disk, so rows cannot be previewed or exported.
        </p>
      ) : null}
      {hasValidation ? <ChecksNote job={job} /> : null}
      <Bought job={job} />
      {hasValidation ? (
        <>
          <dl className="stats cards" aria-label="Summary">
            <div>
              <dt>Rows</dt>
              <dd>{formatCount(total)}</dd>
            </div>
            <div>
              <dt>Safe to send</dt>
              <dd>{formatCount(safe)}</dd>
            </div>
            <div>
              <dt>Invalid</dt>
              <dd>{formatCount(invalidTotal)}</dd>
            </div>
            <div>
              <dt>Role accounts</dt>
              <dd>{formatCount(reporting.role_accounts ?? 0)}</dd>
            </div>
            <div>
              <dt>Duplicates</dt>
              <dd>{job.duplicates === null ? '—' : formatCount(job.duplicates)}</dd>
            </div>
          </dl>
          <div className="two-columns">
            <div className="panel">
              <BarTable
                caption="Statuses"
                labelHeader="Status"
                rows={statusRows}
                total={total}
                onSelect={(key) => void showPreview(job.id, key as ResultStatus)}
                selectedKey={preview?.jobId === job.id ? preview.status : null}
                selectLabel={(row) => `${row.label}: show ${countOf(row.value, 'row')}`}
              />
              <p className="muted small">Choose a status to see its rows.</p>
            </div>
            <div className="panel">
              <BarTable
                caption="Invalid categories"
                labelHeader="Category"
                rows={categories}
                total={invalidTotal}
              />
              {domainTypes.length > 0 ? (
                <BarTable caption="Domain types" labelHeader="Domain type" rows={domainTypes} total={total} />
              ) : (
                <p className="muted small">No domain types were recognised.</p>
              )}
            </div>
          </div>
          <div className="panel">
            <table className="bar-table codes" aria-label="Status codes">
              <caption>Status codes</caption>
              <thead>
                <tr>
                  <th scope="col">Code</th>
                  <th scope="col">Meaning</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="bar-col">
                    <span className="visually-hidden">Bar</span>
                  </th>
                  <th scope="col" className="num">
                    Rows
                  </th>
                  <th scope="col" className="num">
                    Share
                  </th>
                </tr>
              </thead>
              <tbody>
                {codes.map(({ code, value }) => {
                  const status = statusForCode(code, 'email_validation');
                  return (
                    <tr key={code}>
                      <th scope="row" className="num-left">
                        {code}
                      </th>
                      <td>{codeMeaning(code, code === 525 && isLocal ? 'disposable' : null)}</td>
                      <td>
                        <span className={`badge tone-${status}`}>{statusName(status, mode)}</span>
                      </td>
                      <td className="bar-col">
                        <Bar
                          tone={`tone-${status}`}
                          width={total ? Math.max((value / total) * 100, 0.8) : 0}
                        />
                      </td>
                      <td className="num">{formatCount(value)}</td>
                      <td className="num">{formatPercent(value, total)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      ) : (
        <>
          <dl className="stats cards" aria-label="Summary">
            <div>
              <dt>Rows</dt>
              <dd>{formatCount(total)}</dd>
            </div>
          </dl>
          <p className="muted">
            This job ran no validation, so its rows have no status: the results file holds every row with the
            columns the services appended.{' '}
            <button
              type="button"
              className="link-button"
              disabled={!job.hasResults}
              onClick={() => void showPreview(job.id, null)}
            >
              Show the first rows
            </button>
          </p>
        </>
      )}
      <MatchReports reports={job.matchReports} services={job.options.services} total={total} />
      <RowsPreview jobId={job.id} />
      {job.exports.length > 0 ? (
        <section aria-labelledby="exports-heading" className="panel">
          <h2 id="exports-heading">Exports</h2>
          <ul className="exports">
            {job.exports.map((info) => (
              <li key={info.id}>
                {info.fileName} · {countOf(info.rows, 'row')} · {formatBytes(info.bytes)} ·{' '}
                {formatDate(info.createdAt)}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {isExporting ? <ExportDialog job={job} onClose={() => setIsExporting(false)} /> : null}
    </section>
  );
}
