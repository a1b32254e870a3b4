// The match reports of the services beyond validation, in words and as tables: email intelligence (records
// matched per field, with their share of the list), email append (individual and household matches) and
// alternate email append (matches by rank and kind). Shown on Results, and on a job awaiting purchase.
import type { ListServiceKey } from '../../shared/api/listServiceNames.js';
import { LIST_SERVICE_TITLES } from '../../shared/api/listServiceNames.js';
import { fieldLabel } from '../../shared/desktop/constants.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { alternateRows } from '../../shared/desktop/listServices.js';
import { formatCount, formatOrdinal, formatPercent } from '../format.js';
import { BarTable, type BarRow } from './BarTable.js';

type Reports = JobDetail['matchReports'];

function records(n: number): string {
  return `${formatCount(n)} ${n === 1 ? 'record' : 'records'}`;
}

function IntelligenceReport({ fields, total }: Readonly<{ fields: Record<string, number>; total: number }>) {
  const rows: BarRow[] = Object.entries(fields)
    .map(([field, value]) => ({ key: field, label: fieldLabel(field), value, tone: 'tone-neutral' }))
    .sort((a, b) => b.value - a.value || a.label.localeCompare(b.label));
  const best = rows[0];
  return (
    <section className="panel match-report" aria-labelledby="report-email_intelligence">
      <h2 id="report-email_intelligence">{LIST_SERVICE_TITLES.email_intelligence}</h2>
      {best === undefined ? (
        <p>No field matched any of the {records(total)}.</p>
      ) : (
        <>
          <p>
            Data was found for {rows.length} {rows.length === 1 ? 'field' : 'fields'}. The most matched is{' '}
            {best.label.toLowerCase()}: {formatCount(best.value)} of {records(total)} (
            {formatPercent(best.value, total)}).
          </p>
          <BarTable
            caption="Email intelligence matches"
            labelHeader="Field"
            valueHeader="Records matched"
            rows={rows}
            total={total}
          />
        </>
      )}
    </section>
  );
}

function EmailAppendReport({
  report,
  total,
}: Readonly<{ report: NonNullable<Reports['email_append']>; total: number }>) {
  const found = report.individual + report.household;
  const rows: BarRow[] = [
    {
      key: 'individual',
      label: 'Individual',
      value: report.individual,
      tone: 'tone-valid',
      detail: 'The address of the person named in the row.',
    },
    {
      key: 'household',
      label: 'Household',
      value: report.household,
      tone: 'tone-corrected',
      detail: 'The address of someone else at the same postal address.',
    },
  ];
  return (
    <section className="panel match-report" aria-labelledby="report-email_append">
      <h2 id="report-email_append">{LIST_SERVICE_TITLES.email_append}</h2>
      <p>
        An address was found for {formatCount(found)} of {records(total)} ({formatPercent(found, total)}):{' '}
        {formatCount(report.individual)} individual and {formatCount(report.household)} household{' '}
        {report.household === 1 ? 'match' : 'matches'}.
        {total > found ? ` ${records(total - found)} had no match.` : ''}
      </p>
      <BarTable
        caption="Email append matches"
        labelHeader="Match type"
        valueHeader="Records"
        rows={rows}
        total={total}
      />
    </section>
  );
}

function AlternateReport({ counts, total }: Readonly<{ counts: Record<string, number>; total: number }>) {
  const rows = alternateRows(counts);
  const first = rows[0] ?? { individual: 0, household: 0 };
  const withOne = first.individual + first.household;
  return (
    <section className="panel match-report" aria-labelledby="report-alternate_email_append">
      <h2 id="report-alternate_email_append">{LIST_SERVICE_TITLES.alternate_email_append}</h2>
      <p>
        {formatCount(withOne)} of {records(total)} ({formatPercent(withOne, total)}) got at least one
        alternate address
        {rows.length > 1
          ? `; ${rows
              .slice(1)
              .map((row) => `${formatCount(row.individual + row.household)} a ${formatOrdinal(row.rank)}`)
              .join(', ')}`
          : ''}
        .
      </p>
      <table className="plain-table" aria-label="Alternate email matches">
        <thead>
          <tr>
            <th scope="col">Alternate</th>
            <th scope="col" className="num">
              Individual
            </th>
            <th scope="col" className="num">
              Household
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.rank}>
              <th scope="row">{formatOrdinal(row.rank)}</th>
              <td className="num">{formatCount(row.individual)}</td>
              <td className="num">{formatCount(row.household)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Every match report of a job, in the spec's service order; nothing for a validation-only job. */
export function MatchReports({
  reports,
  services,
  total,
}: Readonly<{ reports: Reports; services: readonly ListServiceKey[]; total: number }>) {
  const pending = services.filter(
    (service) => service !== 'email_validation' && reports[service] === undefined,
  );
  if (Object.keys(reports).length === 0 && pending.length === 0) return null;
  return (
    <div className="match-reports">
      {reports.email_intelligence ? (
        <IntelligenceReport fields={reports.email_intelligence} total={total} />
      ) : null}
      {reports.email_append ? <EmailAppendReport report={reports.email_append} total={total} /> : null}
      {reports.alternate_email_append ? (
        <AlternateReport counts={reports.alternate_email_append} total={total} />
      ) : null}
      {pending.length > 0 ? (
        <p className="muted small">
          No match report came for {pending.map((service) => LIST_SERVICE_TITLES[service]).join(', ')}.
        </p>
      ) : null}
    </div>
  );
}
