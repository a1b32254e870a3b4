// Campaign results of a job (issue 37), on the job's Results (History → a job): the mailing platform's bounce
// or suppression export, and its sent list when the user has one, read against the job by the core's outcomes
// engine (the same as `mailsieve outcomes import`); then how right the job was, in words, a chart and tables,
// and the verdicts that missed with their evidence. The report is kept with the job, so it shows on open.
import { useEffect, useId, useRef, useState, type DragEvent, type ReactNode } from 'react';
import type { VerificationMode } from '../../shared/api/codes.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import {
  evidenceWords,
  outcomesHeadline,
  percentWords,
  type OutcomeGroup,
  type OutcomesReport,
} from '../../shared/outcomes.js';
import { statusName } from '../../shared/vocabulary.js';
import { countOf, formatBytes, formatCount, formatDate } from '../format.js';
import { keyModeOf } from '../keyMode.js';
import { useAppStore } from '../store/index.js';
import { Bar } from './BarTable.js';

const EXPORT_ACCEPT = '.csv,.txt,text/csv,text/plain';

/** A file to give: its drop zone, its Choose button (the page's file picker), and what was chosen. */
function FileChoice({
  label,
  dropWords,
  file,
  isBusy,
  onChoose,
  onRemove,
}: Readonly<{
  label: string;
  dropWords: string;
  file: File | null;
  isBusy: boolean;
  onChoose: (file: File) => void;
  onRemove?: () => void;
}>) {
  const input = useRef<HTMLInputElement>(null);
  const [isOver, setIsOver] = useState(false);
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setIsOver(false);
    const dropped = event.dataTransfer.files[0];
    if (dropped && !isBusy) onChoose(dropped);
  };
  return (
    <div
      className={`drop-zone is-compact campaign-drop ${isOver ? 'is-over' : ''}`}
      onDragOver={(event) => {
        event.preventDefault();
        setIsOver(true);
      }}
      onDragLeave={() => setIsOver(false)}
      onDrop={onDrop}
    >
      <p>{dropWords}</p>
      <button type="button" disabled={isBusy} onClick={() => input.current?.click()}>
        {label}
      </button>
      <input
        ref={input}
        type="file"
        accept={EXPORT_ACCEPT}
        className="visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
        onChange={(event) => {
          const picked = event.target.files?.[0];
          event.target.value = '';
          if (picked) onChoose(picked);
        }}
      />
      {file ? (
        <span className="campaign-chosen">
          <strong>{file.name}</strong> <span className="muted">({formatBytes(file.size)})</span>
          {onRemove ? (
            <>
              {' '}
              <button
                type="button"
                className="link-button"
                disabled={isBusy}
                aria-label={`Remove ${file.name}`}
                onClick={onRemove}
              >
                Remove
              </button>
            </>
          ) : null}
        </span>
      ) : null}
    </div>
  );
}

/** The figures of a group (a status code, a provider family) as a sentence, for the chart's text. */
function groupWords(group: OutcomeGroup): string {
  return `${group.label}: ${percentWords(group.measuredRate)} measured, ${percentWords(group.predictedRate)} predicted`;
}

/**
 * Measured beside predicted hard-bounce rate per group, as bars. One image for assistive technology, named by
 * its caption and described by its figures in words; the table after it holds the same numbers.
 */
function RateChart({ title, groups }: Readonly<{ title: string; groups: readonly OutcomeGroup[] }>) {
  const captionId = useId();
  const max = Math.max(0.01, ...groups.map((group) => Math.max(group.measuredRate, group.predictedRate)));
  const width = (rate: number) => (rate > 0 ? Math.max((rate / max) * 100, 0.8) : 0);
  return (
    <figure className="rate-chart" aria-labelledby={captionId}>
      <figcaption id={captionId}>{title}</figcaption>
      <div role="img" aria-label={`${title}. ${groups.map(groupWords).join('; ')}.`}>
        <p className="rate-chart-legend muted small">
          <span className="rate-swatch tone-measured" /> Measured{' '}
          <span className="rate-swatch tone-predicted" /> Predicted · the bars run to {percentWords(max)}
        </p>
        {groups.map((group) => (
          <div key={group.id} className="rate-chart-row">
            <span className="rate-chart-label">{group.label}</span>
            <span className="rate-chart-bars">
              <Bar tone="tone-measured" width={width(group.measuredRate)} />
              <Bar tone="tone-predicted" width={width(group.predictedRate)} />
            </span>
            <span className="rate-chart-figures">
              {percentWords(group.measuredRate)}
              <span className="muted"> / {percentWords(group.predictedRate)}</span>
            </span>
          </div>
        ))}
      </div>
    </figure>
  );
}

function RateTable({
  caption,
  labelHeader,
  groups,
}: Readonly<{ caption: string; labelHeader: string; groups: readonly OutcomeGroup[] }>) {
  return (
    <table className="bar-table rate-table" aria-label={caption}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{labelHeader}</th>
          <th scope="col" className="num">
            Rows mailed
          </th>
          <th scope="col" className="num">
            Hard bounces
          </th>
          <th scope="col" className="num">
            Measured rate
          </th>
          <th scope="col" className="num">
            Predicted rate
          </th>
        </tr>
      </thead>
      <tbody>
        {groups.map((group) => (
          <tr key={group.id}>
            <th scope="row">{group.label}</th>
            <td className="num">{formatCount(group.sent)}</td>
            <td className="num">{formatCount(group.hardBounced)}</td>
            <td className="num">{percentWords(group.measuredRate)}</td>
            <td className="num">{percentWords(group.predictedRate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What became of the export's rows, in words: the kinds read, and the addresses no mailed row matched. */
function exportRowsWords(report: OutcomesReport): string {
  const rows = report.exportRows;
  const read =
    `${report.bounceFile} held ${countOf(rows.hard, 'hard bounce')}, ${countOf(rows.soft, 'soft bounce')}, ` +
    `${countOf(rows.other, 'other row')} and ${countOf(rows.rejected, 'unreadable row')}.`;
  const mailed = report.basis === 'sent-list' ? 'on the sent list' : 'in the Ready to mail export';
  const unmatched =
    rows.unmatched === 0
      ? ` Every address in it matches a row of this job ${mailed}.`
      : ` ${countOf(rows.unmatched, 'address', 'addresses')} in it ${rows.unmatched === 1 ? 'matches' : 'match'} no row of this job ${mailed}: ${rows.unmatched === 1 ? 'it is' : 'they are'} not counted above.`;
  return read + unmatched;
}

function MissedRows({ report, mode }: Readonly<{ report: OutcomesReport; mode: VerificationMode }>) {
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} className="campaign-missed">
      <h4 id={headingId}>Verdicts that missed</h4>
      {report.missedTotal === 0 ? (
        <p>None: no row called valid or accept-all hard-bounced.</p>
      ) : (
        <>
          <p>
            {countOf(report.missedTotal, 'row')} called valid or accept-all hard-bounced
            {report.missedTotal > report.missed.length
              ? `; the first ${formatCount(report.missed.length)} are listed`
              : ''}
            .
          </p>
          {/* Focusable: a keyboard scrolls it (a thousand rows are listed at most). */}
          <div className="table-scroll" role="region" aria-label="Rows whose verdicts missed" tabIndex={0}>
            <table className="plain-table missed-table" aria-label="Verdicts that missed">
              <thead>
                <tr>
                  <th scope="col" className="num">
                    Row
                  </th>
                  <th scope="col">Address</th>
                  <th scope="col">Verdict</th>
                  <th scope="col">Evidence</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {report.missed.map((row) => (
                  <tr key={row.row}>
                    <td className="num">{formatCount(row.row)}</td>
                    <td className="missed-email">{row.email}</td>
                    <td>
                      {row.code} {statusName(row.status, mode)}
                    </td>
                    <td>{evidenceWords(row.evidence)}</td>
                    <td>{row.why || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** The report of a job's campaign: the headline, its figures, the chart and tables, what missed. */
export function OutcomesReportView({ report }: Readonly<{ report: OutcomesReport }>) {
  const mode = useAppStore(keyModeOf);
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} className="campaign-report">
      <h3 id={headingId}>How right the job was</h3>
      <p className="campaign-headline">{outcomesHeadline(report)}</p>
      <p className="muted small">
        Read from {report.bounceFile}
        {report.sentFile ? ` with the sent list ${report.sentFile}` : ''} on {formatDate(report.importedAt)}.{' '}
        {report.bounceLayout}
      </p>
      <dl className="stats cards" aria-label="Campaign figures">
        <div>
          <dt>Rows mailed</dt>
          <dd>{formatCount(report.sent)}</dd>
        </div>
        <div>
          <dt>Hard bounces</dt>
          <dd>{formatCount(report.hardBounced)}</dd>
        </div>
        <div>
          <dt>Soft bounces</dt>
          <dd>{formatCount(report.softBounced)}</dd>
        </div>
        <div>
          <dt>Measured bounce rate</dt>
          <dd>{percentWords(report.measuredRate)}</dd>
        </div>
        <div>
          <dt>Predicted bounce rate</dt>
          <dd>{percentWords(report.predictedRate)}</dd>
        </div>
      </dl>
      <p>{exportRowsWords(report)}</p>
      <p className="muted small">
        Measured: the share of the rows mailed that hard-bounced. Predicted: what their verdicts said to
        expect (each status code’s bounce risk, from your own earlier campaigns when they hold enough rows of
        it).
      </p>
      {report.sent > 0 ? (
        <div className="two-columns">
          <div>
            <RateChart title="Bounce rate by status code" groups={report.byCode} />
            <RateTable caption="By status code" labelHeader="Status code" groups={report.byCode} />
          </div>
          <div>
            <RateChart title="Bounce rate by mail provider" groups={report.byProvider} />
            <RateTable caption="By mail provider" labelHeader="Mail provider" groups={report.byProvider} />
          </div>
        </div>
      ) : (
        <p className="error">
          No row of this job was mailed by this account of it: check that the sent list is this job’s.
        </p>
      )}
      <MissedRows report={report} mode={mode} />
      <p>
        Known bouncers: {countOf(report.knownBouncers.added, 'address', 'addresses')} added,{' '}
        {formatCount(report.knownBouncers.updated)} updated. Their hard bounces read “Bounced before” (code
        520) when a list holding them is cleaned again.
      </p>
    </section>
  );
}

/** What the core is doing with the files, with a bar: copying them to the app, then reading them. */
function ImportProgress({ label, children }: Readonly<{ label: string; children?: ReactNode }>) {
  return (
    <div className="file-work" role="status">
      <span>{label}</span>
      {children ?? <progress aria-label={label} />}
    </div>
  );
}

/** History → a job → Campaign results: the files of the campaign, then the job's report. */
export function CampaignResults({ job }: Readonly<{ job: JobDetail }>) {
  const kept = useAppStore((s) => s.outcomes[job.id]);
  const state = useAppStore((s) => s.outcomesImport);
  const loadOutcomes = useAppStore((s) => s.loadOutcomes);
  const importOutcomes = useAppStore((s) => s.importOutcomes);
  const [bounces, setBounces] = useState<File | null>(null);
  const [sent, setSent] = useState<File | null>(null);
  const headingId = useId();
  useEffect(() => {
    void loadOutcomes(job.id);
  }, [job.id, loadOutcomes]);
  const isBusy = state.status === 'uploading' || state.status === 'reading';
  const isHere = state.status !== 'idle' && state.jobId === job.id;
  // A finished import clears the choice: the next one starts afresh.
  const isDone = isHere && state.status === 'done';
  useEffect(() => {
    if (!isDone) return;
    setBounces(null);
    setSent(null);
  }, [isDone]);

  let work: ReactNode = null;
  if (isBusy && isHere) {
    if (state.status === 'uploading') {
      const label = `Copying ${state.fileName} to the app`;
      const share =
        state.progress && state.progress.totalBytes > 0
          ? Math.min(1, state.progress.bytesRead / state.progress.totalBytes)
          : null;
      work = (
        <ImportProgress label={label}>
          <progress
            aria-label={label}
            max={100}
            {...(share !== null ? { value: Math.round(share * 100) } : {})}
          />
        </ImportProgress>
      );
    } else work = <ImportProgress label={`Reading ${state.fileName} against job ${job.id}…`} />;
  } else if (isBusy)
    work = (
      <p className="muted" role="status">
        Campaign results are being read for job {state.jobId}: this job’s can be read when it ends.
      </p>
    );

  return (
    <section className="panel campaign-results" aria-labelledby={headingId}>
      <h2 id={headingId}>Campaign results</h2>
      <p className="muted">
        After mailing this job’s Ready to mail export, give your mailing platform’s bounce or suppression
        export (SendGrid, Mailgun, Amazon SES, Postmark, Klaviyo, Brevo, Mailchimp’s cleaned members, or a
        plain list of addresses) to see how right the job was. Give the platform’s sent or delivered list too
        when you mailed other rows than the Ready to mail export. The hard bounces also become known bouncers.
      </p>
      <div className="campaign-files">
        <FileChoice
          label="Choose bounce export"
          dropWords="Drop the bounce or suppression export here, or"
          file={bounces}
          isBusy={isBusy}
          onChoose={setBounces}
        />
        <FileChoice
          label="Choose sent list (optional)"
          dropWords="Drop the sent or delivered list here, or"
          file={sent}
          isBusy={isBusy}
          onChoose={setSent}
          onRemove={() => setSent(null)}
        />
      </div>
      <div className="actions">
        <button
          type="button"
          className="primary"
          disabled={isBusy || !bounces}
          onClick={() => bounces && void importOutcomes(job.id, { bounces, sent: sent ?? undefined })}
        >
          Read campaign results
        </button>
        {!bounces && !isBusy ? <span className="muted small">Choose the bounce export first.</span> : null}
      </div>
      <div aria-live="polite">
        {work}
        {isHere && state.status === 'failed' ? (
          <p className="error" role="alert">
            {state.error}
          </p>
        ) : null}
        {isDone ? (
          <p className="success">Campaign results read: the report below replaces any earlier one.</p>
        ) : null}
      </div>
      {kept?.status === 'failed' ? (
        <p className="error" role="alert">
          {kept.error}
        </p>
      ) : kept?.status === 'ready' ? (
        kept.value ? (
          <OutcomesReportView report={kept.value} />
        ) : (
          <p className="muted">No campaign results yet for this job.</p>
        )
      ) : (
        <p className="muted">Reading the kept campaign results…</p>
      )}
    </section>
  );
}
