import { useRef, useState } from 'react';
import type {
  PersonAnswer,
  PersonLookupInput,
  ReferenceImport,
  ReferenceKind,
} from '../../shared/desktop/contract.js';
import { countOf, formatBytes, formatCount } from '../format.js';
import { activityLines, detailLines, queryWords, summaryOf } from '../personWords.js';
import { useAppStore } from '../store/index.js';

type By = PersonLookupInput['by'];

const BY_LABELS: Readonly<Record<By, string>> = {
  email: 'Email address',
  postal: 'Name and postal address',
  hash: 'Hash (MD5 or SHA-1)',
};

const POSTAL_FIELDS = [
  ['first', 'First name', 'given-name'],
  ['last', 'Last name', 'family-name'],
  ['street', 'Street', 'address-line1'],
  ['city', 'City', 'address-level2'],
  ['state', 'State', 'address-level1'],
  ['zip', 'ZIP code', 'postal-code'],
] as const;
type PostalField = (typeof POSTAL_FIELDS)[number][0];

const EMPTY_POSTAL: Record<PostalField, string> = {
  first: '',
  last: '',
  street: '',
  city: '',
  state: '',
  zip: '',
};

/** The query the form describes, or null while it is incomplete. */
function queryOf(
  by: By,
  email: string,
  hash: string,
  postal: Record<PostalField, string>,
): PersonLookupInput | null {
  if (by === 'email') return email.trim() ? { by, email: email.trim() } : null;
  if (by === 'hash') return hash.trim() ? { by, hash: hash.trim() } : null;
  const p = Object.fromEntries(Object.entries(postal).map(([k, v]) => [k, v.trim()])) as typeof postal;
  const isComplete = p.first && p.last && p.street && (p.zip || (p.city && p.state));
  return isComplete ? { by, ...p } : null;
}

export function PersonAnswerView({
  query,
  answer,
}: Readonly<{ query: PersonLookupInput; answer: PersonAnswer }>) {
  const summary = summaryOf(answer);
  const details = detailLines(answer);
  const hasPerson = summary !== null || details.length > 0 || answer.postalAddress !== null;
  return (
    <section className="answer panel" aria-labelledby="person-heading">
      <h2 id="person-heading">{queryWords(query)}</h2>
      {answer.isMatch && !hasPerson ? (
        <p>The reference data has no attributes for this person; only email activity is known.</p>
      ) : null}
      {!answer.isMatch ? (
        <p className="no-match">
          No match in the reference data.
          {answer.connection === 'embedded' ? (
            <span className="muted">
              {' '}
              The local service knows only the people you import: use Import people file below.
            </span>
          ) : null}
        </p>
      ) : null}
      {summary ? <p className="summary">{summary}</p> : null}
      {details.length > 0 ? (
        <ul aria-label="Attributes">
          {details.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : null}
      {answer.postalAddress ? (
        <p>
          Postal address: {answer.postalAddress.firstName} {answer.postalAddress.lastName},{' '}
          {answer.postalAddress.address}, {answer.postalAddress.city}, {answer.postalAddress.state}{' '}
          {answer.postalAddress.zip}.
        </p>
      ) : null}
      {answer.isMatch && answer.eam ? (
        <>
          <h3 id="activity-heading">Email activity</h3>
          <ul aria-labelledby="activity-heading">
            {activityLines(answer.eam).map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </>
      ) : null}
      <p className="muted small">
        Answered by the {answer.connection === 'embedded' ? 'local service' : 'provider’s service'}.
      </p>
    </section>
  );
}

const KIND_WORDS: Readonly<Record<ReferenceKind, { button: string; rows: string }>> = {
  people: { button: 'Import people file', rows: 'people' },
  activity: { button: 'Import activity file', rows: 'activity' },
  bounces: { button: 'Import bounces file', rows: 'bounces' },
};

/** The report's rejected rows, one a line, as the CLI prints them: `line 12: …`. */
export function rejectionLines(report: ReferenceImport): string[] {
  const lines = report.errors.map((error) => `line ${error.line}: ${error.message}`);
  const unlisted = report.rejected - report.errors.length;
  if (unlisted > 0) lines.push(`… and ${formatCount(unlisted)} more`);
  return lines;
}

/** Saves the rejected rows as a text file (a download: the desktop app asks where). */
function saveRejections(report: ReferenceImport): void {
  const text = [
    `Rejected rows of ${report.fileName} (${report.kind} import): ${formatCount(report.rejected)}`,
    ...rejectionLines(report),
    '',
  ].join('\n');
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `${report.fileName.replace(/\.[^.]*$/, '')}-rejected-rows.txt`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** What an import added, in words (as `mailsieve data import` says it). */
function addedWords(report: ReferenceImport): string {
  if (report.kind === 'people')
    return `${countOf(report.added, 'person', 'people')} added, ${formatCount(report.updated)} updated`;
  if (report.kind === 'activity')
    return `${countOf(report.added, 'event')} added, ${formatCount(report.updated)} already stored`;
  const { soft = 0, other = 0 } = report.bounces ?? {};
  return (
    `hard bounces: ${countOf(report.added, 'address', 'addresses')} added, ${formatCount(report.updated)} updated; ` +
    `ignored: ${countOf(soft, 'soft bounce')}, ${countOf(other, 'row')} not a bounce`
  );
}

function importedWords(report: ReferenceImport): string {
  const what = addedWords(report);
  if (report.status === 'cancelled')
    return `Import of ${report.fileName} cancelled after ${countOf(report.rows, 'row')} read: the ${countOf(report.imported, 'row')} written before it stopped stay in the local service.`;
  return `Imported ${formatCount(report.imported)} of ${countOf(report.rows, 'row')} from ${report.fileName} (${what}).`;
}

function ImportReportView({ report }: Readonly<{ report: ReferenceImport }>) {
  const lines = rejectionLines(report);
  return (
    <div className="import-report" aria-label="Import report" role="region">
      <p>{importedWords(report)}</p>
      {report.status === 'done' && report.rows > 0 && report.imported === 0 ? (
        <p className="error">Nothing was imported: every row was rejected.</p>
      ) : null}
      {report.status === 'done' && report.rows === 0 ? (
        <p className="error">Nothing was imported: the file has a header but no data rows.</p>
      ) : null}
      {report.rejected > 0 ? (
        <>
          <h3 id="rejected-heading">Rejected {countOf(report.rejected, 'row')}</h3>
          <ul aria-labelledby="rejected-heading" className="rejections">
            {lines.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
          <button type="button" onClick={() => saveRejections(report)}>
            Save rejected rows
          </button>
        </>
      ) : null}
      {report.warnings.map((warning) => (
        <p key={warning} className="muted small">
          Note: {warning}
        </p>
      ))}
    </div>
  );
}

/** Import a people or activity file into the local service: the same import as `mailsieve data import`. */
function ReferenceData() {
  const state = useAppStore((s) => s.referenceImport);
  const importReferenceFile = useAppStore((s) => s.importReferenceFile);
  const cancelReferenceImport = useAppStore((s) => s.cancelReferenceImport);
  const hasNativeDialogs = useAppStore((s) => s.appInfo?.hasNativeDialogs ?? false);
  const isProvider = useAppStore((s) => s.connection?.kind === 'provider');
  const inputs = {
    people: useRef<HTMLInputElement>(null),
    activity: useRef<HTMLInputElement>(null),
    bounces: useRef<HTMLInputElement>(null),
  };
  const isBusy = state.status === 'uploading' || state.status === 'importing';
  const progress =
    state.status === 'uploading'
      ? state.progress && { bytesRead: state.progress.bytesRead, totalBytes: state.progress.totalBytes }
      : state.status === 'importing'
        ? state.progress
        : null;
  const share =
    progress && progress.totalBytes > 0 ? Math.min(1, progress.bytesRead / progress.totalBytes) : null;
  const label =
    state.status === 'uploading'
      ? `Copying ${state.fileName} to the app`
      : state.status === 'importing'
        ? `Importing ${state.fileName}`
        : '';
  const figures =
    state.status === 'uploading'
      ? state.progress
        ? `${formatBytes(state.progress.bytesRead)} of ${formatBytes(state.progress.totalBytes)}`
        : 'Starting…'
      : state.status === 'importing'
        ? state.progress
          ? `${countOf(state.progress.rows, 'row')} read, ${formatCount(state.progress.imported)} imported, ${formatCount(state.progress.rejected)} rejected`
          : 'Starting…'
        : '';
  return (
    <section className="reference-data panel" aria-labelledby="reference-heading">
      <h2 id="reference-heading">Reference data</h2>
      <p className="muted">
        The local service answers from the people and activity files you import (CSV with a header row; the
        columns are in docs/identity.md). Importing a person again updates them.
      </p>
      <p className="muted">
        A bounces file is your email platform’s bounce or suppression export (Mailchimp, SendGrid, Mailgun,
        Amazon SES, Postmark, Klaviyo, Brevo), or a list of addresses: its hard bounces of the last 365 days
        read “Bounced before” (code 520) in lists and checks, unless the address opened or clicked since.
      </p>
      {isProvider ? (
        <p className="muted small">
          Your connection is the provider’s service: Look up asks it, not the local service these files go
          into.
        </p>
      ) : null}
      <div className="button-row">
        {(['people', 'activity', 'bounces'] as const).map((kind) => (
          <span key={kind}>
            <button
              type="button"
              disabled={isBusy}
              onClick={() =>
                hasNativeDialogs ? void importReferenceFile(kind) : inputs[kind].current?.click()
              }
            >
              {KIND_WORDS[kind].button}
            </button>
            <input
              ref={inputs[kind]}
              type="file"
              accept=".csv,.txt,text/csv,text/plain"
              className="visually-hidden"
              tabIndex={-1}
              aria-hidden="true"
              onChange={(event) => {
                const file = event.target.files?.[0];
                event.target.value = '';
                if (file) void importReferenceFile(kind, file);
              }}
            />
          </span>
        ))}
      </div>
      <div aria-live="polite">
        {isBusy ? (
          <div className="file-work" role="status">
            <span>{label}</span>
            <progress
              aria-label={label}
              max={100}
              {...(share !== null ? { value: Math.round(share * 100) } : {})}
            />
            <span className="muted small">{figures}</span>
            <button
              type="button"
              disabled={state.status === 'importing' && state.isCancelling}
              onClick={() => void cancelReferenceImport()}
            >
              {state.status === 'importing' && state.isCancelling ? 'Cancelling…' : 'Cancel'}
            </button>
          </div>
        ) : null}
        {state.status === 'failed' ? (
          <p className="error" role="alert">
            {state.fileName ? `${state.fileName}: ` : ''}
            {state.error}
          </p>
        ) : null}
        {state.status === 'done' ? <ImportReportView report={state.report} /> : null}
      </div>
    </section>
  );
}

export function LookupScreen() {
  const lookup = useAppStore((s) => s.lookup);
  const lookUpPerson = useAppStore((s) => s.lookUpPerson);
  const clearLookup = useAppStore((s) => s.clearLookup);
  const [by, setBy] = useState<By>(lookup.status === 'idle' ? 'email' : lookup.query.by);
  const [email, setEmail] = useState('');
  const [hash, setHash] = useState('');
  const [postal, setPostal] = useState(EMPTY_POSTAL);
  const query = queryOf(by, email, hash, postal);
  const isLooking = lookup.status === 'looking';
  return (
    <section className="screen" aria-labelledby="lookup-heading">
      <header className="screen-head">
        <h1 id="lookup-heading">Look up a person</h1>
        <p className="muted">
          Ask the current connection what it knows about one person: attributes, interests and email activity,
          in words.
        </p>
      </header>
      <form
        className="lookup-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (query) void lookUpPerson(query);
        }}
      >
        <fieldset>
          <legend>Look up by</legend>
          <div className="lookup-by">
            {(Object.keys(BY_LABELS) as By[]).map((option) => (
              <label key={option} className="radio">
                <input
                  type="radio"
                  name="lookup-by"
                  value={option}
                  checked={by === option}
                  onChange={() => {
                    setBy(option);
                    clearLookup();
                  }}
                />
                {BY_LABELS[option]}
              </label>
            ))}
          </div>
        </fieldset>
        {by === 'email' ? (
          <div className="field">
            <label htmlFor="lookup-email">Email address</label>
            <input
              id="lookup-email"
              type="text"
              inputMode="email"
              autoComplete="off"
              spellCheck={false}
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
        ) : null}
        {by === 'hash' ? (
          <div className="field">
            <label htmlFor="lookup-hash">MD5 or SHA-1 hash</label>
            <input
              id="lookup-hash"
              type="text"
              autoComplete="off"
              spellCheck={false}
              aria-describedby="lookup-hash-hint"
              value={hash}
              onChange={(event) => setHash(event.target.value)}
            />
            <p id="lookup-hash-hint" className="muted small">
              Of the address lower-cased, without spaces: 32 hex digits (MD5) or 40 (SHA-1).
            </p>
          </div>
        ) : null}
        {by === 'postal' ? (
          <div className="postal-grid">
            {POSTAL_FIELDS.map(([name, label, autoComplete]) => (
              <div key={name} className={`field field-${name}`}>
                <label htmlFor={`lookup-${name}`}>{label}</label>
                <input
                  id={`lookup-${name}`}
                  type="text"
                  autoComplete={autoComplete}
                  value={postal[name]}
                  onChange={(event) => setPostal({ ...postal, [name]: event.target.value })}
                />
              </div>
            ))}
            <p className="muted small postal-hint">Give the ZIP code, or the city and state.</p>
          </div>
        ) : null}
        <div>
          <button type="submit" className="primary" disabled={isLooking || query === null}>
            {isLooking ? 'Looking up…' : 'Look up'}
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {lookup.status === 'failed' ? (
          <p className="error" role="alert">
            {lookup.error}
          </p>
        ) : null}
        {lookup.status === 'done' ? <PersonAnswerView query={lookup.query} answer={lookup.answer} /> : null}
      </div>
      <ReferenceData />
    </section>
  );
}
