import { ChecksNote, checksLevelOf, NOT_CHECKED_OFFLINE } from '../components/ChecksNote.js';
import { useEffect, useState } from 'react';
import type { VerificationMode } from '../../shared/api/codes.js';
import { LIST_SERVICE_TITLES } from '../../shared/api/listServiceNames.js';
import { PURCHASE_MATCH_TYPE_LABELS, fieldLabel } from '../../shared/desktop/constants.js';
import type { JobDetail, ResultsCounts } from '../../shared/desktop/contract.js';
import type { RowFilter } from '../../shared/rowFilter.js';
import { countsOf } from '../../shared/desktop/listServices.js';
import { Bar, BarTable, type BarRow } from '../components/BarTable.js';
import { CampaignResults } from '../components/CampaignResults.js';
import { ExportDialog } from '../components/ExportDialog.js';
import { RowsPreview } from '../components/RowsPreview.js';
import { RecheckButton, RecheckPanel } from '../components/Recheck.js';
import { MatchReports } from '../components/MatchReports.js';
import { JobChanges } from '../components/JobChanges.js';
import { countOf, formatBytes, formatCount, formatDate, formatPercent, STATUS_ORDER } from '../format.js';
import {
  DOMAIN_TYPE_REPORT_KEYS,
  codeMeaning,
  domainTypeMeaning,
  groupOf,
  invalidExplained,
  statusMeaning,
  statusName,
} from '../../shared/vocabulary.js';
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

/** What the default export is called in the headline's note. */
const DEFAULT_EXPORT_WORDS: Readonly<Record<string, string>> = {
  clean: 'Clean (all but invalid and risky)',
  safe: 'Safe to send only',
};

/**
 * The Results numbers, counted from the results file (electron/core/results.ts): the headline (Ready to mail
 * is exactly what the default export writes), statuses, codes under the status their rows ended in, domain
 * types, role accounts and duplicates — each opens its rows.
 */
function Numbers({
  job,
  counts,
  mode,
  selectedKey,
  drill,
}: Readonly<{
  job: JobDetail;
  counts: ResultsCounts;
  mode: VerificationMode;
  selectedKey: string | null;
  drill: (key: string, filter: RowFilter, title: string) => void;
}>) {
  const reporting = job.reporting ?? {};
  const total = counts.rows;
  const corrected = counts.statuses.corrected ?? 0;
  const statusRows: BarRow[] = STATUS_ORDER.map((status) => ({
    key: `status:${status}`,
    label: statusName(status, mode),
    value: counts.statuses[status] ?? 0,
    tone: `tone-${status}`,
    detail: statusMeaning(status),
  }));
  const categories: BarRow[] = Object.entries(countsOf(reporting.invalid_categories)).map(([key, value]) => ({
    key,
    label: key,
    value: value ?? 0,
    tone: 'tone-invalid',
  }));
  const domainTypes: BarRow[] = Object.entries(counts.domainTypes)
    .map(([type, value]) => ({
      key: `domain:${type}`,
      label: DOMAIN_TYPE_REPORT_KEYS[type] ?? type,
      value,
      tone: 'tone-neutral',
      detail: domainTypeMeaning(type),
    }))
    .sort((a, b) => b.value - a.value);
  const statusOfKey = (key: string) => key.slice('status:'.length);
  // After offline checks a good address is mailable (in Ready to mail), so no row is Unknown in the headline's
  // sense; what there is instead are the rows only the syntax check passed: they are named for that.
  const isOffline = checksLevelOf(job) === 'offline';
  const notChecked = Object.entries(counts.statuses).reduce(
    (rows, [status, n]) => (groupOf(status, false) === 'unknown' ? rows + n : rows),
    0,
  );
  return (
    <>
      <dl className="stats cards" aria-label="Summary">
        <div>
          <dt>Rows</dt>
          <dd>{formatCount(total)}</dd>
        </div>
        <div>
          <dt>Ready to mail</dt>
          <dd>{formatCount(counts.ready)}</dd>
        </div>
        <div>
          <dt>Invalid</dt>
          <dd>{formatCount(counts.invalid)}</dd>
        </div>
        <div>
          <dt>Risky</dt>
          <dd>{formatCount(counts.risky)}</dd>
        </div>
        <div>
          <dt>{isOffline ? NOT_CHECKED_OFFLINE : 'Unknown'}</dt>
          <dd>{formatCount(isOffline ? notChecked : counts.unknown)}</dd>
        </div>
        <div>
          <dt>Duplicates left out</dt>
          <dd>{formatCount(counts.duplicatesLeftOut)}</dd>
        </div>
      </dl>
      <p className="muted small">
        Ready to mail is what the default export writes:{' '}
        {DEFAULT_EXPORT_WORDS[counts.exportKind] ?? counts.exportKind}, duplicates removed
        {counts.exportKind === 'clean'
          ? isOffline
            ? '; it keeps the rows not checked, whose syntax alone could be checked offline'
            : ' (rows of unknown status are kept)'
          : ''}
        .{' '}
        {corrected > 0
          ? `${invalidExplained(counts.statuses.invalid ?? 0, corrected)} (counted as Corrected: mail the corrected address).`
          : ''}
      </p>
      <ul className="drill-list" aria-label="More rows">
        <li>
          <button
            type="button"
            className="link-button"
            aria-pressed={selectedKey === 'role'}
            onClick={() => drill('role', { role: true }, 'Role accounts')}
          >
            Role accounts: {formatCount(counts.roleAccounts)}
          </button>
        </li>
        {counts.exportKind === 'clean' || counts.exportKind === 'safe' ? (
          <li>
            <button
              type="button"
              className="link-button"
              aria-pressed={selectedKey === 'left-out'}
              onClick={() =>
                drill(
                  'left-out',
                  { leftOutBy: counts.exportKind as 'clean' | 'safe' },
                  'Duplicates the default export leaves out',
                )
              }
            >
              Duplicates left out: {formatCount(counts.duplicatesLeftOut)}
            </button>
          </li>
        ) : null}
        <li>
          <button
            type="button"
            className="link-button"
            aria-pressed={selectedKey === 'duplicate'}
            onClick={() => drill('duplicate', { duplicate: true }, 'Rows marked duplicate')}
          >
            Rows marked duplicate (every occurrence): {formatCount(counts.duplicates)}
          </button>
        </li>
      </ul>
      <div className="two-columns">
        <div className="panel">
          <BarTable
            caption="Statuses"
            labelHeader="Status"
            rows={statusRows}
            total={total}
            onSelect={(key) =>
              drill(
                key,
                { status: statusOfKey(key) },
                `Rows with status ${statusName(statusOfKey(key), mode)}`,
              )
            }
            selectedKey={selectedKey}
            selectLabel={(row) => `${row.label}: show ${countOf(row.value, 'row')}`}
          />
          <p className="muted small">Choose a status, code or domain type to see its rows.</p>
        </div>
        <div className="panel">
          <BarTable
            caption="Invalid categories"
            labelHeader="Category"
            rows={categories}
            total={counts.invalid}
          />
          {domainTypes.length > 0 ? (
            <BarTable
              caption="Domain types"
              labelHeader="Domain type"
              rows={domainTypes}
              total={total}
              onSelect={(key) => {
                const type = key.slice('domain:'.length);
                drill(
                  key,
                  { domainType: type },
                  `Rows of domain type ${DOMAIN_TYPE_REPORT_KEYS[type] ?? type}`,
                );
              }}
              selectedKey={selectedKey}
              selectLabel={(row) => `${row.label}: show ${countOf(row.value, 'row')}`}
            />
          ) : (
            <p className="muted small">No domain types were recognised.</p>
          )}
        </div>
      </div>
      <div className="panel">
        <table className="bar-table codes" aria-label="Status codes">
          <caption>Status codes (by the status the rows ended in)</caption>
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
            {counts.codes.map(({ code, status, rows }) => {
              const key = `code:${code}:${status}`;
              const name = statusName(status, mode);
              return (
                <tr key={key} className={selectedKey === key ? 'is-selected' : undefined}>
                  <th scope="row" className="num-left">
                    <button
                      type="button"
                      className="link-button"
                      aria-pressed={selectedKey === key}
                      aria-label={`Code ${code}, ${name}: show ${countOf(rows, 'row')}`}
                      onClick={() =>
                        drill(key, { code, status }, `Rows with code ${code} and status ${name}`)
                      }
                    >
                      {code}
                    </button>
                  </th>
                  <td>
                    {codeMeaning(
                      code,
                      code === 525 && job.connection.kind === 'embedded' ? 'disposable' : null,
                    )}
                  </td>
                  <td>
                    <span className={`badge tone-${status}`}>{name}</span>
                  </td>
                  <td className="bar-col">
                    <Bar tone={`tone-${status}`} width={total ? Math.max((rows / total) * 100, 0.8) : 0} />
                  </td>
                  <td className="num">{formatCount(rows)}</td>
                  <td className="num">{formatPercent(rows, total)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

export function ResultsView({ job }: Readonly<{ job: JobDetail }>) {
  const showPreview = useAppStore((s) => s.showPreview);
  const preview = useAppStore((s) => s.preview);
  const resetExport = useAppStore((s) => s.resetExport);
  const navigate = useAppStore((s) => s.navigate);
  const loadCounts = useAppStore((s) => s.loadCounts);
  const counted = useAppStore((s) => s.counts[job.id]);
  const mode: VerificationMode = useAppStore(keyModeOf);
  const [isExporting, setIsExporting] = useState(false);
  const reporting = job.reporting ?? {};
  const statuses = countsOf(reporting.statuses);
  const hasValidation = job.options.services.includes('email_validation');
  const canCount = hasValidation && job.hasResults && job.status === 'completed';
  // The numbers are counted from the results file (once: the core keeps them); a new version is counted again.
  useEffect(() => {
    if (canCount) void loadCounts(job.id);
  }, [canCount, job.id, job.resultsName, job.updatedAt, loadCounts]);
  const counts = counted?.status === 'ready' ? counted.value : null;
  const total = counts?.rows ?? job.rows ?? sum(statuses);
  const selectedKey = preview?.jobId === job.id ? preview.key : null;
  const drill = (key: string, filter: RowFilter, title: string) =>
    void showPreview(job.id, key, filter, title);

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
          {hasValidation ? <RecheckButton job={job} /> : null}
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
      {hasValidation ? <RecheckPanel job={job} /> : null}
      <Bought job={job} />
      {hasValidation ? (
        counts ? (
          <Numbers job={job} counts={counts} mode={mode} selectedKey={selectedKey} drill={drill} />
        ) : counted?.status === 'failed' ? (
          <p className="error" role="alert">
            {counted.error}
          </p>
        ) : canCount ? (
          <p className="muted" role="status">
            Counting the rows of the results…
          </p>
        ) : (
          <dl className="stats cards" aria-label="Summary">
            <div>
              <dt>Rows</dt>
              <dd>{formatCount(total)}</dd>
            </div>
          </dl>
        )
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
              onClick={() => drill('all', {}, 'All rows')}
            >
              Show the rows
            </button>
          </p>
        </>
      )}
      <MatchReports reports={job.matchReports} services={job.options.services} total={total} />
      {hasValidation ? <JobChanges job={job} /> : null}
      <RowsPreview jobId={job.id} />
      {/* After the campaign (issue 37): its bounces measured against this job's verdicts. */}
      {hasValidation && job.hasResults ? <CampaignResults job={job} /> : null}
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
