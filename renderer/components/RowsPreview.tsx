import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Preview } from '../../shared/desktop/contract.js';
import type { RowFilter } from '../../shared/rowFilter.js';
import { codeMeaning, statusName } from '../../shared/vocabulary.js';
import { countOf, formatCount } from '../format.js';
import { keyModeOf } from '../keyMode.js';
import { useAppStore } from '../store/index.js';

/** Rows a page of the core holds; the view asks for the pages it shows. */
const PAGE = 100;
/** Every row is this tall (its cells show two lines at most; the full text is in the cell's title). */
const ROW_HEIGHT = 52;
const VIEW_HEIGHT = 416;
const OVERSCAN = 8;

interface Column {
  readonly name: string;
  readonly width: string;
  readonly value: (fields: readonly string[], number: number, why: string | undefined) => string;
}

/** The row view's columns: for validation, the address, its answer and why; otherwise the file's columns. */
function columnsOf(first: Preview, mode: ReturnType<typeof keyModeOf>, hasWhy: boolean): Column[] {
  const { layout } = first;
  if (layout.status < 0)
    return first.columns.map((name, i) => ({ name, width: 'auto', value: (fields) => fields[i] ?? '' }));
  const field = (fields: readonly string[], index: number) => (index >= 0 ? (fields[index] ?? '') : '');
  return [
    { name: 'Row', width: '4.5rem', value: (_, number) => formatCount(number) },
    { name: 'Email', width: '22%', value: (fields) => field(fields, layout.email) },
    {
      name: 'Status',
      width: '7.5rem',
      value: (fields) => statusName(field(fields, layout.status).toLowerCase(), mode),
    },
    { name: 'Code', width: '4rem', value: (fields) => field(fields, layout.code) },
    {
      name: 'Meaning',
      width: hasWhy ? '22%' : 'auto',
      value: (fields) => {
        const code = field(fields, layout.code);
        return code === '' ? '' : codeMeaning(Number(code), field(fields, layout.domainType).toLowerCase());
      },
    },
    {
      name: 'Corrected address',
      width: '16%',
      value: (fields) =>
        field(fields, layout.status).toLowerCase() === 'corrected' ? field(fields, layout.validEmail) : '',
    },
    ...(hasWhy
      ? [
          {
            name: 'Why',
            width: 'auto',
            value: (_f: readonly string[], _n: number, why?: string) => why ?? '',
          },
        ]
      : []),
  ];
}

/** A page: its rows, being read (null), or why it could not be read. */
type PageState = Page | null | { readonly problem: string };

interface Page {
  readonly rows: readonly (readonly string[])[];
  readonly numbers: readonly number[];
  readonly whys: readonly string[] | null;
}

/**
 * The rows of a drill-down (a status, code, domain type, role accounts, duplicates; or every row of a job
 * without validation), opened from Results: all of them, in a virtualised view that reads pages from the core
 * as it scrolls, and "Export these rows".
 */
export function RowsPreview({ jobId }: Readonly<{ jobId: number }>) {
  const preview = useAppStore((s) => s.preview);
  if (!preview || preview.jobId !== jobId) return null;
  return <RowsView key={`${jobId}:${preview.key}`} jobId={jobId} />;
}

function RowsView({ jobId }: Readonly<{ jobId: number }>) {
  const preview = useAppStore((s) => s.preview)!;
  const closePreview = useAppStore((s) => s.closePreview);
  const readRows = useAppStore((s) => s.readRows);
  const exportJob = useAppStore((s) => s.exportJob);
  const exportState = useAppStore((s) => s.exportState);
  const resetExport = useAppStore((s) => s.resetExport);
  const mode = useAppStore(keyModeOf);
  const heading = useRef<HTMLHeadingElement>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [pages, setPages] = useState<ReadonlyMap<number, PageState>>(new Map());
  const [isExporting, setIsExporting] = useState(false);
  const { state, title, filter } = preview;
  const first = state.status === 'ready' ? state.value : undefined;

  useEffect(() => {
    if (state.status === 'ready') heading.current?.focus();
  }, [state.status]);
  useEffect(() => {
    if (!first) return;
    setPages(new Map([[0, { rows: first.rows, numbers: first.numbers, whys: first.whys }]]));
  }, [first]);

  const total = first?.total ?? 0;
  const start = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const end = Math.min(total, Math.ceil((scrollTop + VIEW_HEIGHT) / ROW_HEIGHT) + OVERSCAN);

  const load = useCallback(
    async (page: number, rowFilter: RowFilter) => {
      setPages((current) => new Map(current).set(page, null));
      const reply = await readRows(jobId, rowFilter, page * PAGE, PAGE);
      setPages((current) =>
        new Map(current).set(
          page,
          reply.status === 'ready'
            ? { rows: reply.value.rows, numbers: reply.value.numbers, whys: reply.value.whys }
            : { problem: reply.status === 'failed' ? reply.error : 'The rows could not be read.' },
        ),
      );
    },
    [jobId, readRows],
  );

  // The pages the visible rows are on, read once each; far pages are dropped to keep memory bounded.
  useEffect(() => {
    if (!first || end <= start) return;
    for (let page = Math.floor(start / PAGE); page <= Math.floor((end - 1) / PAGE); page++)
      if (!pages.has(page)) void load(page, filter);
    if (pages.size > 12) {
      const keep = Math.floor(start / PAGE);
      setPages((current) => new Map([...current].filter(([page]) => Math.abs(page - keep) <= 3)));
    }
  }, [first, start, end, pages, load, filter]);

  const columns = useMemo(() => (first ? columnsOf(first, mode, first.whys !== null) : []), [first, mode]);

  const label = `Table of ${title.charAt(0).toLowerCase()}${title.slice(1)}`;
  const visible: {
    index: number;
    row?: readonly string[];
    number?: number;
    why?: string;
    problem?: string;
  }[] = [];
  for (let index = start; index < end; index++) {
    const page = pages.get(Math.floor(index / PAGE));
    const at = index % PAGE;
    if (page === undefined || page === null) visible.push({ index });
    else if ('problem' in page) visible.push({ index, problem: page.problem });
    else
      visible.push({
        index,
        ...(page.rows[at] ? { row: page.rows[at] } : {}),
        ...(page.numbers[at] !== undefined ? { number: page.numbers[at] } : {}),
        ...(page.whys?.[at] !== undefined ? { why: page.whys[at] } : {}),
      });
  }

  return (
    <section className="preview" aria-labelledby="preview-heading">
      <div className="section-head">
        <h2 id="preview-heading" ref={heading} tabIndex={-1}>
          {title}
        </h2>
        <div className="head-actions">
          {first && first.total > 0 ? (
            <button
              type="button"
              disabled={exportState.status === 'working'}
              onClick={() => {
                resetExport();
                setIsExporting(true);
                void exportJob(jobId, 'all', [], undefined, filter);
              }}
            >
              Export these rows
            </button>
          ) : null}
          <button type="button" onClick={closePreview}>
            Close preview
          </button>
        </div>
      </div>
      {isExporting && exportState.status !== 'idle' ? (
        <p className={exportState.status === 'failed' ? 'error' : 'muted'} role="status">
          {exportState.status === 'working'
            ? 'Exporting these rows…'
            : exportState.status === 'failed'
              ? exportState.error
              : `Exported ${countOf(exportState.info.rows, 'row')}${exportState.path ? ` to ${exportState.path}` : ` as ${exportState.info.fileName}`}.`}
        </p>
      ) : null}
      {state.status === 'loading' ? <p className="muted">Reading the results…</p> : null}
      {state.status === 'failed' ? (
        <p className="error" role="alert">
          {state.error}
        </p>
      ) : null}
      {first ? (
        first.total === 0 ? (
          <p className="muted">No rows.</p>
        ) : (
          <>
            <div
              className="rows-view"
              ref={scroller}
              role="region"
              aria-label={label}
              tabIndex={0}
              style={{ height: Math.min(VIEW_HEIGHT, (total + 1) * ROW_HEIGHT) }}
              onScroll={(event) => setScrollTop(event.currentTarget.scrollTop)}
            >
              <table className="rows-table" aria-rowcount={total + 1}>
                <colgroup>
                  {columns.map((column) => (
                    <col
                      key={column.name}
                      style={column.width === 'auto' ? undefined : { width: column.width }}
                    />
                  ))}
                </colgroup>
                <thead>
                  <tr aria-rowindex={1}>
                    {columns.map((column) => (
                      <th key={column.name} scope="col">
                        {column.name}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {start > 0 ? (
                    <tr className="spacer" aria-hidden="true" style={{ height: start * ROW_HEIGHT }}>
                      <td colSpan={columns.length} />
                    </tr>
                  ) : null}
                  {visible.map(({ index, row, number, why, problem }) => (
                    <tr key={index} aria-rowindex={index + 2} style={{ height: ROW_HEIGHT }}>
                      {row === undefined ? (
                        <td colSpan={columns.length} className={problem ? 'error' : 'muted'}>
                          {problem ?? 'Reading…'}
                        </td>
                      ) : (
                        columns.map((column) => {
                          const text = column.value(row, number ?? index + 1, why);
                          return (
                            <td key={column.name} title={text}>
                              <div className="clamp">{text}</div>
                            </td>
                          );
                        })
                      )}
                    </tr>
                  ))}
                  {end < total ? (
                    <tr className="spacer" aria-hidden="true" style={{ height: (total - end) * ROW_HEIGHT }}>
                      <td colSpan={columns.length} />
                    </tr>
                  ) : null}
                </tbody>
              </table>
            </div>
            <p className="muted small">
              {countOf(first.total, 'row')}
              {first.whyNote ? ` · ${first.whyNote}` : ''}
            </p>
          </>
        )
      ) : null}
    </section>
  );
}
