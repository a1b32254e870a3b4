import { CHECKS_LEVEL_SHORT } from '../../shared/desktop/checks.js';
import { NOT_CHECKED_OFFLINE } from '../components/ChecksNote.js';
import { memo, useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { JOB_STATUSES, type HistorySort } from '../../shared/desktop/constants.js';
import type { JobSummary } from '../../shared/desktop/contract.js';
import { formatCount, formatDate, JOB_STATUS_LABELS } from '../format.js';
import { focusHeading } from '../focus.js';
import { RECHECK_LABEL, recheckBlocker } from '../components/Recheck.js';
import { useAppStore } from '../store/index.js';

/** Rows are of one height, so only those in view (and a few around) are in the DOM. */
export const HISTORY_ROW_HEIGHT = 44;
const OVERSCAN = 6;
/** The controls of a row, by column: Open, Re-check unknown rows, Delete. */
type Column = 0 | 1 | 2;
const LAST_COLUMN: Column = 2;

const COLUMNS: readonly { key: HistorySort | null; label: string; className: string }[] = [
  { key: 'name', label: 'File', className: 'col-file' },
  { key: 'created', label: 'Date', className: 'col-date' },
  { key: 'status', label: 'Status', className: 'col-status' },
  { key: 'rows', label: 'Rows', className: 'col-num' },
  { key: 'ready', label: 'Ready to mail', className: 'col-num' },
  { key: 'invalid', label: 'Invalid', className: 'col-num' },
  { key: 'connection', label: 'Connection', className: 'col-conn' },
  { key: null, label: 'Actions', className: 'col-actions' },
];

function Filters() {
  const query = useAppStore((s) => s.historyQuery);
  const setQuery = useAppStore((s) => s.setHistoryQuery);
  const [search, setSearch] = useState(query.search);
  useEffect(() => {
    if (search === query.search) return;
    const timer = setTimeout(() => setQuery({ search }), 200);
    return () => clearTimeout(timer);
  }, [search, query.search, setQuery]);
  return (
    <form
      className="filters"
      role="search"
      aria-label="Filter history"
      onSubmit={(event) => event.preventDefault()}
    >
      <label>
        <span className="visually-hidden">Search history</span>
        <input
          type="search"
          placeholder="Search by file name or list number"
          value={search}
          aria-label="Search history"
          onChange={(event) => setSearch(event.target.value)}
        />
      </label>
      <label>
        Status{' '}
        <select
          value={query.status}
          onChange={(event) => setQuery({ status: event.target.value as typeof query.status })}
        >
          <option value="">Any</option>
          {JOB_STATUSES.map((status) => (
            <option key={status} value={status}>
              {JOB_STATUS_LABELS[status]}
            </option>
          ))}
        </select>
      </label>
      <label>
        From{' '}
        <input type="date" value={query.from} onChange={(event) => setQuery({ from: event.target.value })} />
      </label>
      <label>
        To <input type="date" value={query.to} onChange={(event) => setQuery({ to: event.target.value })} />
      </label>
    </form>
  );
}

/** Rows keep their identity while the list scrolls: only those entering the view render. */
const Row = memo(function Row({
  job,
  index,
  activeColumn,
  onOpen,
  onRecheck,
  onDelete,
}: Readonly<{
  job: JobSummary;
  index: number;
  /** The control of this row that takes Tab (roving tabindex): 0 Open, 1 Re-check, 2 Delete; null: none. */
  activeColumn: Column | null;
  onOpen: (jobId: number) => void;
  onRecheck: (jobId: number) => void;
  onDelete: (job: JobSummary) => void;
}>) {
  // Focusable even when it cannot run (aria-disabled), so the grid's arrows reach it and it says why.
  const blocker = recheckBlocker({ ...job, hasValidation: job.unknown !== null });
  return (
    <div
      role="row"
      className="history-row"
      aria-rowindex={index + 2}
      data-index={index}
      style={{ transform: `translateY(${index * HISTORY_ROW_HEIGHT}px)` }}
    >
      <div role="gridcell" className="col-file">
        <button
          type="button"
          className="link-button"
          title={job.fileName}
          tabIndex={activeColumn === 0 ? 0 : -1}
          data-column={0}
          onClick={() => onOpen(job.id)}
          aria-label={`Open ${job.fileName}, job ${job.id}`}
        >
          {job.fileName}
        </button>
      </div>
      <div role="gridcell" className="col-date">
        <time dateTime={job.createdAt}>{formatDate(job.createdAt)}</time>
      </div>
      <div role="gridcell" className="col-status">
        <span className={`badge job-${job.status}`}>{JOB_STATUS_LABELS[job.status]}</span>
      </div>
      <div role="gridcell" className="col-num">
        {job.rows === null ? '—' : formatCount(job.rows)}
      </div>
      <div role="gridcell" className="col-num">
        {job.ready === null ? '—' : formatCount(job.ready)}
      </div>
      <div role="gridcell" className="col-num">
        {job.invalid === null ? '—' : formatCount(job.invalid)}
      </div>
      <div role="gridcell" className="col-conn" title={job.connection}>
        {job.connection === 'Local service' ? 'Local' : job.connection}
        {job.checks && job.checks !== 'provider' ? ` · ${CHECKS_LEVEL_SHORT[job.checks]}` : ''}
      </div>
      <div role="gridcell" className="col-actions">
        <button
          type="button"
          className="small-button"
          tabIndex={activeColumn === 1 ? 0 : -1}
          data-column={1}
          aria-label={RECHECK_LABEL}
          aria-disabled={blocker !== null}
          aria-describedby={`recheck-about-${job.id}`}
          title={blocker ?? `Re-check the unknown rows of job ${job.id}`}
          onClick={() => {
            if (blocker === null) onRecheck(job.id);
          }}
        >
          <span className="recheck-word">Re-check</span>
          <span className="recheck-icon" aria-hidden="true">
            ↻
          </span>
          <span id={`recheck-about-${job.id}`} className="visually-hidden">
            {blocker ??
              `Job ${job.id} (${job.fileName}): ${formatCount(job.unknown ?? 0)} ${job.checks === 'offline' ? `rows ${NOT_CHECKED_OFFLINE.toLowerCase()}` : 'unknown rows'}`}
          </span>
        </button>{' '}
        <button
          type="button"
          className="small-button"
          tabIndex={activeColumn === 2 ? 0 : -1}
          data-column={2}
          aria-label={`Delete job ${job.id} (${job.fileName})`}
          onClick={() => onDelete(job)}
        >
          Delete
        </button>
      </div>
    </div>
  );
});

function ConfirmDelete({ job, onClose }: Readonly<{ job: JobSummary; onClose: () => void }>) {
  const dialog = useRef<HTMLDialogElement>(null);
  const deleteJob = useAppStore((s) => s.deleteJob);
  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);
  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="delete-heading" onClose={onClose}>
      <h2 id="delete-heading">Delete this job?</h2>
      <p>
        “{job.fileName}” (job {job.id}) and its downloaded results and exports are removed from this computer.
        This cannot be undone.
      </p>
      <div className="actions">
        <button type="button" onClick={() => dialog.current?.close()}>
          Keep it
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            void deleteJob(job.id).then((isDeleted) => {
              dialog.current?.close();
              if (isDeleted) focusHeading();
            });
          }}
        >
          Delete job
        </button>
      </div>
    </dialog>
  );
}

export function HistoryScreen() {
  const history = useAppStore((s) => s.history);
  const query = useAppStore((s) => s.historyQuery);
  const setQuery = useAppStore((s) => s.setHistoryQuery);
  const loadHistory = useAppStore((s) => s.loadHistory);
  const navigate = useAppStore((s) => s.navigate);
  const openJob = useCallback((jobId: number) => navigate({ name: 'job', jobId }), [navigate]);
  const recheckJob = useAppStore((s) => s.recheckJob);
  // The re-check's progress and what it changed show on the job's Results.
  const recheckAndOpen = useCallback(
    (jobId: number) => void recheckJob(jobId).then((isStarted) => isStarted && openJob(jobId)),
    [recheckJob, openJob],
  );
  const viewport = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const [toDelete, setToDelete] = useState<JobSummary | null>(null);
  // The one row control in the Tab order (roving tabindex): arrows move it, focus follows.
  const [active, setActive] = useState<{ index: number; column: Column }>({ index: 0, column: 0 });
  const shouldFocus = useRef(false);

  useEffect(() => {
    if (history.status === 'idle') void loadHistory();
  }, [history.status, loadHistory]);

  useEffect(() => {
    const element = viewport.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setHeight(element.clientHeight));
    observer.observe(element);
    setHeight(element.clientHeight);
    return () => observer.disconnect();
  }, [history.status]);

  const frame = useRef(0);
  const onScroll = useCallback(() => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setScrollTop(viewport.current?.scrollTop ?? 0);
    });
  }, []);

  const items = history.status === 'ready' ? history.value.items : [];
  const first = Math.max(0, Math.floor(scrollTop / HISTORY_ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((scrollTop + height) / HISTORY_ROW_HEIGHT) + OVERSCAN);

  const activeIndex = Math.min(active.index, Math.max(0, items.length - 1));

  // After an arrow key: scroll the active row into view (it renders then), and focus its control.
  useEffect(() => {
    if (!shouldFocus.current) return;
    const element = viewport.current;
    if (!element) return;
    const top = activeIndex * HISTORY_ROW_HEIGHT;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + HISTORY_ROW_HEIGHT > element.scrollTop + element.clientHeight)
      element.scrollTop = top + HISTORY_ROW_HEIGHT - element.clientHeight;
    const control = element.querySelector<HTMLElement>(
      `[data-index="${activeIndex}"] [data-column="${active.column}"]`,
    );
    if (control) {
      shouldFocus.current = false;
      control.focus({ preventScroll: true });
    } else setScrollTop(element.scrollTop);
  }, [activeIndex, active.column, first, last]);

  // Arrow keys move between rows (Up, Down, Page Up/Down, Home, End) and between a row's controls (Left,
  // Right); Enter opens (the Open control is a button); Delete asks to delete the job.
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const element = viewport.current;
    if (!element || items.length === 0) return;
    const page = Math.max(1, Math.floor(element.clientHeight / HISTORY_ROW_HEIGHT) - 1);
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    let next = { index: activeIndex, column: active.column };
    if (event.key in moves) next.index = activeIndex + moves[event.key];
    else if (event.key === 'Home') next = { index: event.ctrlKey ? 0 : activeIndex, column: 0 };
    else if (event.key === 'End')
      next = { index: event.ctrlKey ? items.length - 1 : activeIndex, column: LAST_COLUMN };
    else if (event.key === 'ArrowRight') next.column = Math.min(LAST_COLUMN, active.column + 1) as Column;
    else if (event.key === 'ArrowLeft') next.column = Math.max(0, active.column - 1) as Column;
    else if (event.key === 'Delete') {
      event.preventDefault();
      const job = items[activeIndex];
      if (job) setToDelete(job);
      return;
    } else return;
    event.preventDefault();
    next.index = Math.max(0, Math.min(items.length - 1, next.index));
    shouldFocus.current = true;
    setActive(next);
  };

  return (
    <section className="screen history-screen" aria-labelledby="history-heading">
      <header className="screen-head">
        <h1 id="history-heading">History</h1>
        <p className="muted">Every job on this computer. Results open and export offline.</p>
      </header>
      <Filters />
      {history.status === 'failed' ? (
        <p className="error" role="alert">
          {history.error}
        </p>
      ) : null}
      <p className="muted small" role="status">
        {history.status === 'ready'
          ? `${formatCount(history.value.total)} ${history.value.total === 1 ? 'job' : 'jobs'}`
          : 'Loading…'}
      </p>
      <div
        role="grid"
        className="history-grid"
        aria-label="Jobs"
        aria-rowcount={items.length + 1}
        aria-colcount={COLUMNS.length}
      >
        <div role="rowgroup" className="history-head">
          <div role="row" className="history-row is-head" aria-rowindex={1}>
            {COLUMNS.map((column) => {
              const isSorted = column.key !== null && query.sort === column.key;
              return (
                <div
                  key={column.label}
                  role="columnheader"
                  className={column.className}
                  aria-sort={isSorted ? (query.direction === 'asc' ? 'ascending' : 'descending') : undefined}
                >
                  {column.key ? (
                    <button
                      type="button"
                      className="sort-button"
                      onClick={() =>
                        setQuery(
                          isSorted
                            ? { direction: query.direction === 'asc' ? 'desc' : 'asc' }
                            : { sort: column.key!, direction: column.key === 'name' ? 'asc' : 'desc' },
                        )
                      }
                    >
                      {column.label}
                      <span aria-hidden="true" className="sort-mark">
                        {isSorted ? (query.direction === 'asc' ? '▲' : '▼') : ''}
                      </span>
                    </button>
                  ) : (
                    column.label
                  )}
                </div>
              );
            })}
          </div>
        </div>
        <div
          role="rowgroup"
          className="history-viewport"
          ref={viewport}
          onScroll={onScroll}
          onKeyDown={onKeyDown}
          onFocus={(event) => {
            // A click (or Tab) on a row's control makes it the active one.
            const control = (event.target as HTMLElement).closest<HTMLElement>('[data-column]');
            const row = control?.closest<HTMLElement>('[data-index]');
            if (!control || !row) return;
            const index = Number(row.dataset.index);
            const column = Math.min(LAST_COLUMN, Math.max(0, Number(control.dataset.column) || 0)) as Column;
            if (index !== activeIndex || column !== active.column) setActive({ index, column });
          }}
        >
          <div className="history-spacer" style={{ height: items.length * HISTORY_ROW_HEIGHT }}>
            {items.slice(first, last).map((job, i) => (
              <Row
                key={job.id}
                job={job}
                index={first + i}
                activeColumn={first + i === activeIndex ? active.column : null}
                onOpen={openJob}
                onRecheck={recheckAndOpen}
                onDelete={setToDelete}
              />
            ))}
          </div>
          {history.status === 'ready' && items.length === 0 ? (
            <p className="empty muted">
              {query.search || query.status || query.from || query.to
                ? 'No job matches these filters.'
                : 'No jobs yet: add a list on New job.'}
            </p>
          ) : null}
        </div>
      </div>
      {toDelete ? <ConfirmDelete job={toDelete} onClose={() => setToDelete(null)} /> : null}
    </section>
  );
}
