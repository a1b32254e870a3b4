// The printable summary of a job (issue #12): one page with the file, date, connection, checks level and
// why, counts per status with their chart, the status codes with their meanings (shared/vocabulary.ts),
// domain types, role accounts and duplicates, and the other services' match reports. Saved as PDF by
// Electron's printToPDF (Save summary as PDF) or printed by the browser (Print summary); the print styles
// (styles.css, @media print) leave out the app around it. Beside: the spec's match report and chart data CSVs.
import { useEffect, useState } from 'react';
import type { VerificationMode } from '../../shared/api/codes.js';
import { CHECKS_LEVEL_WORDS } from '../../shared/desktop/checks.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { countsOf } from '../../shared/desktop/listServices.js';
import type { ReportCsv } from '../../shared/reportCsv.js';
import {
  codeMeaning,
  domainTypeMeaning,
  domainTypeOfReportKey,
  statusMeaning,
  statusName,
} from '../../shared/vocabulary.js';
import { BarTable, type BarRow } from '../components/BarTable.js';
import { checksLevelOf, checksWhy } from '../components/ChecksNote.js';
import { MatchReports } from '../components/MatchReports.js';
import {
  countOf,
  formatCount,
  formatDate,
  formatPercent,
  REPORT_KEY_OF_STATUS,
  STATUS_ORDER,
} from '../format.js';
import { keyModeOf } from '../keyMode.js';
import { app } from '../platform/app.js';
import { useAppStore } from '../store/index.js';
import type { SavedFile } from '../store/types.js';

function SummaryReport({ job, mode }: Readonly<{ job: JobDetail; mode: VerificationMode }>) {
  const reporting = job.reporting ?? {};
  const statuses = countsOf(reporting.statuses);
  const total = job.rows ?? Object.values(statuses).reduce((sum, n) => sum + n, 0);
  const hasValidation = job.options.services.includes('email_validation');
  const isLocal = job.connection.kind === 'embedded';
  const statusRows: BarRow[] = STATUS_ORDER.map((status) => ({
    key: status,
    label: statusName(status, mode),
    value: statuses[REPORT_KEY_OF_STATUS[status]] ?? 0,
    tone: `tone-${status}`,
  }));
  const codes = Object.entries(reporting.status_codes ?? {})
    .map(([code, value]) => ({ code: Number(code), value }))
    .sort((a, b) => b.value - a.value || a.code - b.code);
  const domainTypes = Object.entries(countsOf(reporting.domain_type))
    .filter(([, value]) => value > 0)
    .sort(([, a], [, b]) => b - a);
  const level = checksLevelOf(job);
  // The job's details: the level and why in words, and the decision's own reason (a resolver, `auto:`).
  const reason = job.checksRun?.reason ?? '';
  return (
    <article className="summary-report" aria-labelledby="summary-heading">
      <header>
        <h1 id="summary-heading">Summary of {job.file.name}</h1>
        <dl className="summary-facts">
          <dt>File</dt>
          <dd>
            {job.file.name}
            {job.part ? ` (part ${job.part.index} of ${job.part.count})` : ''} · {countOf(total, 'row')}
          </dd>
          <dt>Date</dt>
          <dd>{formatDate(job.createdAt)}</dd>
          <dt>Connection</dt>
          <dd>
            {isLocal ? 'Local service' : (job.connection.baseUrl ?? 'Provider')}
            {job.listId !== null ? ` · list ${job.listId}` : ''}
          </dd>
          <dt>Checks</dt>
          <dd>
            {level === null
              ? 'Not recorded (a job from before checks levels)'
              : `${CHECKS_LEVEL_WORDS[level]}. ${checksWhy(job) ?? ''}`}
          </dd>
          {reason !== '' ? (
            <>
              <dt>Checks decided</dt>
              <dd>{reason}</dd>
            </>
          ) : null}
        </dl>
      </header>
      {hasValidation ? (
        <>
          <section aria-labelledby="summary-statuses">
            <h2 id="summary-statuses">Statuses</h2>
            <BarTable caption="Rows per status" labelHeader="Status" rows={statusRows} total={total} />
            <ul className="summary-meanings">
              {STATUS_ORDER.map((status) => (
                <li key={status}>
                  <strong>{statusName(status, mode)}</strong>: {statusMeaning(status)}
                </li>
              ))}
            </ul>
          </section>
          <section aria-labelledby="summary-codes">
            <h2 id="summary-codes">Status codes</h2>
            <table className="summary-table" aria-label="Status codes">
              <thead>
                <tr>
                  <th scope="col">Code</th>
                  <th scope="col">Meaning</th>
                  <th scope="col">Rows</th>
                </tr>
              </thead>
              <tbody>
                {codes.map(({ code, value }) => (
                  <tr key={code}>
                    <td>{code}</td>
                    <td>{codeMeaning(code, code === 525 && isLocal ? 'disposable' : null)}</td>
                    <td>{formatCount(value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="summary-domains">
            <h2 id="summary-domains">Domain types, role accounts and duplicates</h2>
            <table className="summary-table" aria-label="Domain types">
              <thead>
                <tr>
                  <th scope="col">Domain type</th>
                  <th scope="col">Meaning</th>
                  <th scope="col">Rows</th>
                </tr>
              </thead>
              <tbody>
                {domainTypes.map(([key, value]) => (
                  <tr key={key}>
                    <td>{key}</td>
                    <td>{domainTypeMeaning(domainTypeOfReportKey(key) ?? key)}</td>
                    <td>{formatCount(value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p>
              Role accounts: {formatCount(reporting.role_accounts ?? 0)} (
              {formatPercent(reporting.role_accounts ?? 0, total)}). Duplicates:{' '}
              {job.duplicates === null
                ? 'not counted'
                : `${formatCount(job.duplicates)} rows hold an address that appears more than once`}
              .
            </p>
          </section>
        </>
      ) : null}
      <MatchReports reports={job.matchReports} services={job.options.services} total={total} />
    </article>
  );
}

export function SummaryScreen({ jobId }: Readonly<{ jobId: number }>) {
  const view = useAppStore((state) => state.jobs[jobId]);
  const loadJob = useAppStore((state) => state.loadJob);
  const navigate = useAppStore((state) => state.navigate);
  const saveReport = useAppStore((state) => state.saveReport);
  const saveSummaryPdf = useAppStore((state) => state.saveSummaryPdf);
  const showInFolder = useAppStore((state) => state.showInFolder);
  const mode = useAppStore(keyModeOf);
  const [saved, setSaved] = useState<SavedFile | null>(null);
  const [isBusy, setIsBusy] = useState(false);
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
  const stem = job.file.name.replace(/\.[^.]*$/, '');
  const run = async (save: () => Promise<SavedFile | null>) => {
    setIsBusy(true);
    try {
      const file = await save();
      if (file) setSaved(file);
    } finally {
      setIsBusy(false);
    }
  };
  const report = (kind: ReportCsv) => () => void run(() => saveReport(job.id, kind));
  return (
    <section className="screen summary-screen" aria-label="Summary">
      <div className="head-actions no-print">
        <button type="button" onClick={() => navigate({ name: 'job', jobId: job.id })}>
          Back to results
        </button>
        <button
          type="button"
          className="primary"
          disabled={isBusy}
          onClick={() => void run(() => saveSummaryPdf(`${stem}-summary.pdf`))}
        >
          {app.savePagePdf ? 'Save summary as PDF' : 'Print summary'}
        </button>
        <button type="button" disabled={isBusy} onClick={report('match-report')}>
          Save match report CSV
        </button>
        <button type="button" disabled={isBusy} onClick={report('chart-data')}>
          Save chart data CSV
        </button>
      </div>
      {saved ? (
        <div role="status" className="no-print">
          <p>Saved {saved.path ?? `${saved.fileName} in your browser’s downloads`}.</p>
          {saved.path && app.showInFolder ? (
            <button type="button" onClick={() => void showInFolder(saved.path!)}>
              Show in folder
            </button>
          ) : null}
        </div>
      ) : null}
      <SummaryReport job={job} mode={mode} />
    </section>
  );
}
