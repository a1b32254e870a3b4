import { useEffect, useRef, useState, type DragEvent } from 'react';
import { LIST_SERVICE_KEYS, type ListServiceKey } from '../../shared/api/listServiceNames.js';
import { LIST_SERVICE_INPUTS, LIST_SERVICE_TITLES } from '../../shared/api/listServiceNames.js';
import {
  COLUMN_ROLES,
  COLUMN_ROLE_LABELS,
  INTELLIGENCE_CHOICES,
  fieldLabel,
  LIST_FILE_ACCEPT,
  type ColumnRole,
} from '../../shared/desktop/constants.js';
import { servicesLackingInputs } from '../../shared/desktop/listServices.js';
import { rowLimitWarning } from '../../shared/desktop/rowLimit.js';
import { OPEN_LIST_COMMAND } from '../commands.js';
import { countOf, describeDelimiterName, formatBytes, formatCount, formatDate } from '../format.js';
import { quotaShortfallWords } from '../quotaWords.js';
import { useAppStore } from '../store/index.js';
import type { FileProgress, NewJobState } from '../store/types.js';

type MappingState = Extract<NewJobState, { status: 'mapping' }>;

const DELIMITERS = [',', ';', '\t', '|', ' '];

function DropZone({ isCompact }: Readonly<{ isCompact: boolean }>) {
  const addFile = useAppStore((state) => state.addFile);
  const openListDialog = useAppStore((state) => state.openListDialog);
  const hasNativeDialogs = useAppStore((state) => state.appInfo?.hasNativeDialogs ?? false);
  const input = useRef<HTMLInputElement>(null);
  const [isOver, setIsOver] = useState(false);

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setIsOver(false);
    const file = event.dataTransfer.files[0];
    if (file) void addFile(file);
  };
  return (
    <section
      className={`drop-zone ${isOver ? 'is-over' : ''} ${isCompact ? 'is-compact' : ''}`}
      aria-label="Add a list"
      onDragOver={(event) => {
        event.preventDefault();
        setIsOver(true);
      }}
      onDragLeave={() => setIsOver(false)}
      onDrop={onDrop}
    >
      <svg
        viewBox="0 0 48 48"
        width={isCompact ? 28 : 44}
        height={isCompact ? 28 : 44}
        aria-hidden="true"
        className="drop-icon"
      >
        <path
          d="M12 30v8h24v-8"
          fill="none"
          stroke="currentColor"
          strokeWidth="3"
          strokeLinecap="round"
          strokeLinejoin="round"
        />
        <path
          d="M24 8v22M15 17l9-9 9 9"
          fill="none"
          stroke="currentColor"
          strokeWidth="3"
          strokeLinecap="round"
          strokeLinejoin="round"
        />
      </svg>
      <p>{isCompact ? 'Drop another list here, or' : 'Drop a .csv, .txt or .zip list here, or'}</p>
      <button
        type="button"
        className="primary"
        aria-keyshortcuts="Control+O"
        onClick={() => (hasNativeDialogs ? void openListDialog() : input.current?.click())}
      >
        Add list
      </button>
      <input
        ref={input}
        id="add-list-input"
        type="file"
        accept={LIST_FILE_ACCEPT}
        className="visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
        onChange={(event) => {
          const file = event.target.files?.[0];
          event.target.value = '';
          if (file) void addFile(file);
        }}
      />
    </section>
  );
}

function RecentFiles() {
  const recent = useAppStore((state) => state.recentFiles);
  const openRecent = useAppStore((state) => state.openRecent);
  if (recent.length === 0) return null;
  return (
    <section className="recent" aria-labelledby="recent-heading">
      <h2 id="recent-heading">Open recent</h2>
      <ul>
        {recent.map((file) => (
          <li key={file.path}>
            <button type="button" className="link-button" onClick={() => void openRecent(file.path)}>
              {file.name}
            </button>
            <span className="muted">
              {' '}
              {formatBytes(file.size)} · {formatDate(file.openedAt)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The file's rows: exact once a pre-check of this layout has read it, else as the sample estimates them. */
function rowsOf(state: MappingState): { rows: number; isEstimate: boolean } {
  const { counted, inspection } = state;
  if (counted) return { rows: counted.rowsToSend + counted.blank, isEstimate: false };
  return { rows: inspection.rowCount, isEstimate: inspection.isRowCountEstimate };
}

/**
 * The data rows the service counts against its limit, from the latest exact count only (the pre-check's,
 * else the inspection's when it read the whole file); null while only the sample's estimate is known.
 */
function exactRowsToSend(state: MappingState): number | null {
  const { counted, inspection } = state;
  if (counted) return counted.rowsToSend;
  return inspection.isRowCountEstimate ? null : inspection.rowCount;
}

function FileFacts({ state }: Readonly<{ state: MappingState }>) {
  const { inspection } = state;
  const { rows, isEstimate } = rowsOf(state);
  const facts = [
    inspection.format === 'zip'
      ? `${inspection.name} (holds ${inspection.innerName ?? 'one file'})`
      : inspection.name,
    formatBytes(inspection.size),
    inspection.encoding.toUpperCase(),
    `${isEstimate ? 'about ' : ''}${countOf(rows, 'row')}`,
    countOf(inspection.columns.length, 'column'),
  ];
  return <p className="file-facts">{facts.join(' · ')}</p>;
}

/** A progress bar with its figures and a Cancel button, for reading a file. */
function FileWork({
  label,
  progress,
  unit,
}: Readonly<{ label: string; progress: FileProgress | null; unit: 'bytes' | 'rows' }>) {
  const cancelFileWork = useAppStore((s) => s.cancelFileWork);
  const share =
    progress && progress.totalBytes > 0 ? Math.min(1, progress.bytesRead / progress.totalBytes) : null;
  const figures = !progress
    ? 'Starting…'
    : unit === 'bytes'
      ? `${formatBytes(progress.bytesRead)} of ${formatBytes(progress.totalBytes)}`
      : `${countOf(progress.rows, 'row')} read (${Math.round((share ?? 0) * 100)}%)`;
  return (
    <div className="file-work" role="status">
      <span>{label}</span>
      <progress
        aria-label={label}
        max={100}
        {...(share !== null ? { value: Math.round(share * 100) } : {})}
      />
      <span className="muted small">{figures}</span>
      <button type="button" onClick={() => void cancelFileWork()}>
        Cancel
      </button>
    </div>
  );
}

function LayoutControls({ state }: Readonly<{ state: MappingState }>) {
  const reinspect = useAppStore((s) => s.reinspect);
  const { inspection } = state;
  const delimiters = DELIMITERS.includes(inspection.delimiter)
    ? DELIMITERS
    : [...DELIMITERS, inspection.delimiter];
  return (
    <fieldset className="layout-controls" disabled={state.isReinspecting}>
      <legend className="visually-hidden">File layout</legend>
      {/* xlsx sheet picker (issue #12): a workbook of more than one sheet; the first is read unless chosen. */}
      {inspection.sheets && inspection.sheets.length > 1 ? (
        <label>
          Sheet{' '}
          <select
            value={inspection.sheet}
            onChange={(event) => void reinspect({ sheet: event.target.value })}
          >
            {inspection.sheets.map((sheet) => (
              <option key={sheet} value={sheet}>
                {sheet}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label className="checkbox">
        <input
          type="checkbox"
          checked={inspection.header}
          onChange={(event) => void reinspect({ header: event.target.checked })}
        />
        First row is a header
      </label>
      <label>
        Delimiter{' '}
        <select
          value={inspection.delimiter}
          onChange={(event) => void reinspect({ delimiter: event.target.value })}
        >
          {delimiters.map((d) => (
            <option key={d} value={d}>
              {describeDelimiterName(d)}
            </option>
          ))}
        </select>
      </label>
      <span className="muted small">
        {inspection.delimiterHow === 'content'
          ? 'Delimiter detected from the contents.'
          : inspection.delimiterHow === 'extension'
            ? 'Delimiter from the file name.'
            : ''}{' '}
        {inspection.isPresetApplied ? 'Roles from the mapping you used last time for this header.' : ''}
      </span>
    </fieldset>
  );
}

/** The chosen services that read the email column and nothing else. */
function servicesNeedingEmail(state: MappingState): ListServiceKey[] {
  return state.services.filter(
    (service) => service === 'email_validation' || service === 'alternate_email_append',
  );
}

function Warnings({ state }: Readonly<{ state: MappingState }>) {
  const emailColumns = state.roles.filter((role) => role === 'email').length;
  const isEmailMissing = emailColumns === 0 && servicesNeedingEmail(state).length > 0;
  // The row limit is said from the latest exact count, never from the inspection's (its estimate may overshoot).
  const warnings = state.inspection.warnings.filter(
    (w) => (w.code !== 'no-email-column' || isEmailMissing) && w.code !== 'too-many-rows',
  );
  const exact = exactRowsToSend(state);
  const overLimit = exact === null ? undefined : rowLimitWarning(exact, state.inspection.partLimit);
  const messages: { key: string; text: string }[] = [
    ...warnings.map((w) => ({ key: w.code, text: w.message })),
    ...(overLimit ? [{ key: overLimit.code, text: overLimit.message }] : []),
  ];
  if (isEmailMissing && !warnings.some((w) => w.code === 'no-email-column'))
    messages.push({
      key: 'mark-email',
      text: 'No column is marked Email: choose the column that holds the addresses.',
    });
  if (state.services.length === 0)
    messages.push({ key: 'no-service', text: 'No service is chosen: tick at least one.' });
  if (state.services.includes('email_intelligence') && state.fields?.length === 0)
    messages.push({ key: 'no-field', text: 'No intelligence field is chosen: tick at least one.' });
  // Which chosen service lacks the columns it reads (the email column alone is said above).
  for (const service of servicesLackingInputs(state.services, state.roles)) {
    if (isEmailMissing && servicesNeedingEmail(state).includes(service)) continue;
    messages.push({
      key: `lacks-${service}`,
      text: `${LIST_SERVICE_TITLES[service]} needs ${LIST_SERVICE_INPUTS[service]}: mark them in the column roles.`,
    });
  }
  if (messages.length === 0) return null;
  return (
    <section className="warnings" aria-label="Warnings">
      <ul>
        {messages.map((message) => (
          <li key={message.key}>{message.text}</li>
        ))}
      </ul>
    </section>
  );
}

function Mapper({ state }: Readonly<{ state: MappingState }>) {
  const setRole = useAppStore((s) => s.setRole);
  const { inspection } = state;
  return (
    <div className="table-scroll mapper" role="region" aria-label="Preview of the first rows" tabIndex={0}>
      <table className="data-table">
        <thead>
          <tr>
            {inspection.columns.map((column) => (
              <th key={column.index} scope="col">
                <span className="column-name" title={column.name}>
                  {column.name}
                </span>
                <select
                  aria-label={`Role of column “${column.name}”`}
                  value={state.roles[column.index] ?? 'ignore'}
                  className={state.roles[column.index] === 'email' ? 'is-email' : undefined}
                  onChange={(event) => setRole(column.index, event.target.value as ColumnRole)}
                >
                  {COLUMN_ROLES.map((role) => (
                    <option key={role} value={role}>
                      {COLUMN_ROLE_LABELS[role]}
                    </option>
                  ))}
                </select>
                <span className="column-hint">
                  {column.emailShare > 0 ? `${Math.round(column.emailShare * 100)}% addresses` : ' '}
                </span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {inspection.rows.map((row, r) => (
            <tr key={r}>
              {inspection.columns.map((column) => (
                <td key={column.index}>{row[column.index] ?? ''}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Precheck({ state }: Readonly<{ state: MappingState }>) {
  const runPrecheck = useAppStore((s) => s.runPrecheck);
  const precheck = state.precheck;
  let text: string;
  switch (precheck.status) {
    case 'idle':
      text = 'Mark only one column as Email to see what will be sent.';
      break;
    case 'loading':
      return (
        <section className="precheck" aria-label="Before sending">
          <FileWork label="Checking the file offline" progress={precheck.progress} unit="rows" />
        </section>
      );
    case 'cancelled':
      return (
        <section className="precheck" aria-label="Before sending">
          <p className="muted">
            The pre-check was cancelled:{' '}
            {state.counted
              ? 'the invalid and duplicate rows are not known.'
              : 'the row count is an estimate and the invalid and duplicate rows are not known.'}{' '}
            <button type="button" className="link-button" onClick={() => void runPrecheck()}>
              Check the file
            </button>
          </p>
        </section>
      );
    case 'failed':
      text = `The offline pre-check failed: ${precheck.error}`;
      break;
    case 'ready': {
      const p = precheck.value;
      // Without an email column (email append, intelligence by name) there are no addresses to check.
      const hasEmail = state.roles.includes('email');
      text = '';
      return (
        <section className="precheck" aria-label="Before sending" aria-live="polite">
          <dl className="stats">
            <div>
              <dt>Rows to send</dt>
              <dd>{formatCount(p.rowsToSend - p.overLimit)}</dd>
            </div>
            {hasEmail ? (
              <>
                <div>
                  <dt>Invalid by the offline check</dt>
                  <dd>{formatCount(p.invalid)}</dd>
                </div>
                <div>
                  <dt>Duplicates</dt>
                  <dd>{formatCount(p.duplicates)}</dd>
                </div>
              </>
            ) : null}
            {p.parts > 1 ? (
              <div>
                <dt>Parts</dt>
                <dd>{p.parts}</dd>
              </div>
            ) : null}
          </dl>
          <p className="muted small">
            {p.blank > 0 ? `${countOf(p.blank, 'blank row')} ${p.blank === 1 ? 'is' : 'are'} left out. ` : ''}
            {p.overLimit > 0
              ? `${countOf(p.overLimit, 'row')} ${p.overLimit === 1 ? 'is' : 'are'} over the service’s limit of ${formatCount(state.inspection.partLimit)} and would be refused: split the file. `
              : ''}
            The pre-check reads syntax and duplicates only; the service decides each row’s status.
            {hasEmail && p.invalid > 0
              ? ' Some invalid addresses may be corrected (a fixable typo): Results counts those as Corrected, not Invalid.'
              : ''}
          </p>
        </section>
      );
    }
  }
  return (
    <section className="precheck" aria-label="Before sending" aria-live="polite">
      <p className="muted">{text}</p>
    </section>
  );
}

function IntelligenceFields({
  state,
  offered,
}: Readonly<{ state: MappingState; offered: readonly string[] }>) {
  const setFields = useAppStore((s) => s.setFields);
  const chosen = new Set(state.fields ?? offered);
  const toggle = (field: string, isChosen: boolean) => {
    const next = new Set(chosen);
    if (isChosen) next.add(field);
    else next.delete(field);
    // Every field ticked is the default: no `fields` is sent, so the key's fields all come.
    setFields(offered.every((name) => next.has(name)) ? null : offered.filter((name) => next.has(name)));
  };
  return (
    <details className="intelligence-fields">
      <summary>
        Intelligence fields: {state.fields === null ? 'all' : `${state.fields.length} of ${offered.length}`}
      </summary>
      <fieldset>
        <legend className="visually-hidden">Intelligence fields</legend>
        <div className="field-grid">
          {offered.map((field) => (
            <label key={field} className="checkbox">
              <input
                type="checkbox"
                checked={chosen.has(field)}
                onChange={(event) => toggle(field, event.target.checked)}
              />
              {fieldLabel(field)}
            </label>
          ))}
        </div>
        <p className="muted small">
          <button type="button" className="link-button" onClick={() => setFields(null)}>
            All fields
          </button>{' '}
          ·{' '}
          <button type="button" className="link-button" onClick={() => setFields([])}>
            None
          </button>
        </p>
      </fieldset>
    </details>
  );
}

function Options({ state }: Readonly<{ state: MappingState }>) {
  const setReportOnly = useAppStore((s) => s.setReportOnly);
  const setSplit = useAppStore((s) => s.setSplit);
  const setService = useAppStore((s) => s.setService);
  const allowed = useAppStore((s) => s.allowedServices);
  const connection = useAppStore((s) => s.connection);
  // Offered once the exact count is over the limit (the estimate decides nothing).
  const exact = exactRowsToSend(state);
  const isOverLimit = exact !== null && exact > state.inspection.partLimit;
  const parts = exact === null ? 1 : Math.ceil(exact / state.inspection.partLimit);
  const offered: readonly ListServiceKey[] =
    allowed.status === 'ready' ? allowed.value.services : ['email_validation'];
  const offeredFields: readonly string[] =
    allowed.status === 'ready' && allowed.value.fields !== null ? allowed.value.fields : INTELLIGENCE_CHOICES;
  const hasPaidService = state.services.some((service) => service !== 'email_validation');
  return (
    <fieldset className="options">
      <legend>Services and options</legend>
      <fieldset className="services">
        <legend>Services</legend>
        {LIST_SERVICE_KEYS.filter((service) => offered.includes(service)).map((service) => (
          <label key={service} className="checkbox">
            <input
              type="checkbox"
              checked={state.services.includes(service)}
              onChange={(event) => setService(service, event.target.checked)}
            />
            {LIST_SERVICE_TITLES[service]}
          </label>
        ))}
        <p className="muted small">
          {allowed.status === 'loading'
            ? 'Asking the service which services your key allows…'
            : allowed.status === 'failed'
              ? `Which services the key allows is not known (${allowed.error}); Validation is offered.`
              : allowed.status === 'ready' && allowed.value.source === 'chosen'
                ? 'The services you ticked on the Connection screen for this key.'
                : connection?.kind === 'embedded'
                  ? 'On the local service: intelligence and appends come from the reference data imported on this computer.'
                  : 'The services your key allows.'}
        </p>
      </fieldset>
      {state.services.includes('email_intelligence') ? (
        <IntelligenceFields state={state} offered={offeredFields} />
      ) : null}
      {/* A report is for the services that sell data: validation alone always runs to its results. */}
      {hasPaidService ? (
        <label className="checkbox">
          <input
            type="checkbox"
            checked={state.reportOnly}
            onChange={(event) => setReportOnly(event.target.checked)}
          />
          Report only (review match counts before buying)
        </label>
      ) : null}
      {isOverLimit ? (
        <label className="checkbox">
          <input type="checkbox" checked={state.split} onChange={(event) => setSplit(event.target.checked)} />
          Split into {parts} parts of up to {formatCount(state.inspection.partLimit)} rows (one job each)
        </label>
      ) : null}
    </fieldset>
  );
}

/**
 * When the list has more rows than the key has queries left (the service refuses such a list at submission):
 * by how many, said beside Start cleaning. From the exact count once known, else the sample's estimate.
 */
function useQuotaShortfall(state: MappingState): string | undefined {
  const quota = useAppStore((s) => s.keyQuota);
  const loadKeyQuota = useAppStore((s) => s.loadKeyQuota);
  // Asked again for each file: other jobs (and other people's, on a team server) spend the same key.
  useEffect(() => {
    void loadKeyQuota();
  }, [loadKeyQuota, state.file.fileId]);
  if (quota.status !== 'ready' || quota.value.status !== 'limited') return undefined;
  const exact = exactRowsToSend(state);
  const { rows, isEstimate } = exact === null ? rowsOf(state) : { rows: exact, isEstimate: false };
  return quotaShortfallWords(rows, isEstimate, quota.value);
}

function MappingView({ state }: Readonly<{ state: MappingState }>) {
  const startCleaning = useAppStore((s) => s.startCleaning);
  const resetNewJob = useAppStore((s) => s.resetNewJob);
  const quotaShortfall = useQuotaShortfall(state);
  const emailColumns = state.roles.filter((role) => role === 'email').length;
  const isStarting = state.start.status === 'starting';
  const canRun =
    emailColumns <= 1 &&
    state.services.length > 0 &&
    servicesLackingInputs(state.services, state.roles).length === 0 &&
    !(state.services.includes('email_intelligence') && state.fields?.length === 0);
  return (
    <>
      <div className="section-head">
        <div>
          <h2>Map the columns</h2>
          <FileFacts state={state} />
        </div>
        <button type="button" onClick={resetNewJob}>
          Choose another file
        </button>
      </div>
      <LayoutControls state={state} />
      <Warnings state={state} />
      <Mapper state={state} />
      <div className="two-columns">
        <Options state={state} />
        <Precheck state={state} />
      </div>
      <div className="action-bar">
        <div className="action-summary">
          <ActionSummary state={state} />
          {quotaShortfall ? (
            <p id="quota-shortfall" className="warning">
              {quotaShortfall}
            </p>
          ) : null}
          {state.start.status === 'failed' ? (
            <p className="error" role="alert">
              {state.start.error}
            </p>
          ) : null}
        </div>
        <button
          type="button"
          className="primary large"
          disabled={!canRun || isStarting || state.isReinspecting}
          aria-describedby={quotaShortfall ? 'quota-shortfall' : undefined}
          onClick={() => void startCleaning()}
        >
          {isStarting ? 'Starting…' : 'Start cleaning'}
        </button>
      </div>
    </>
  );
}

/** The row counts beside Start cleaning. */
function ActionSummary({ state }: Readonly<{ state: MappingState }>) {
  const { rows, isEstimate } = rowsOf(state);
  const parts = [`${isEstimate ? 'About ' : ''}${countOf(rows, 'row')}`];
  if (state.precheck.status === 'ready') {
    const p = state.precheck.value;
    parts.push(`${formatCount(p.rowsToSend - p.overLimit)} to send`);
    if (state.roles.includes('email')) {
      parts.push(`${formatCount(p.invalid)} invalid`);
      parts.push(countOf(p.duplicates, 'duplicate'));
    }
  } else if (state.precheck.status === 'loading') parts.push('checking…');
  return <p className="muted">{parts.join(' · ')}</p>;
}

export function NewJobScreen() {
  const newJob = useAppStore((state) => state.newJob);
  return (
    <section className="screen" aria-labelledby="new-job-heading">
      <header className="screen-head">
        <h1 id="new-job-heading">New job</h1>
        <p className="muted">Add a list, check how its columns are read, and clean it.</p>
      </header>
      <DropZone isCompact={newJob.status === 'mapping'} />
      {newJob.status === 'adding' ? (
        <FileWork label={`Reading ${newJob.name}`} progress={newJob.progress} unit="bytes" />
      ) : null}
      {newJob.status === 'failed' ? (
        <p className="error" role="alert">
          {newJob.error}
        </p>
      ) : null}
      {newJob.status === 'mapping' ? <MappingView state={newJob} /> : null}
      {newJob.status === 'empty' || newJob.status === 'failed' ? <RecentFiles /> : null}
      <p className="muted small shortcut-hint">
        Tip: {OPEN_LIST_COMMAND.shortcut} opens a list from anywhere.
      </p>
    </section>
  );
}
