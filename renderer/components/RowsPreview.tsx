import { useEffect, useRef } from 'react';
import { countOf } from '../format.js';
import { statusName } from '../../shared/vocabulary.js';
import { keyModeOf } from '../keyMode.js';
import { useAppStore } from '../store/index.js';

/** The rows of a job for one status (or the first rows), opened from Results. */
export function RowsPreview({ jobId }: Readonly<{ jobId: number }>) {
  const preview = useAppStore((s) => s.preview);
  const closePreview = useAppStore((s) => s.closePreview);
  const mode = useAppStore(keyModeOf);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (preview?.state.status === 'ready') heading.current?.focus();
  }, [preview?.state.status]);
  if (!preview || preview.jobId !== jobId) return null;
  const label = preview.status === null ? null : statusName(preview.status, mode);
  const title = label === null ? 'First rows' : `Rows with status ${label}`;
  return (
    <section className="preview" aria-labelledby="preview-heading">
      <div className="section-head">
        <h2 id="preview-heading" ref={heading} tabIndex={-1}>
          {title}
        </h2>
        <button type="button" onClick={closePreview}>
          Close preview
        </button>
      </div>
      {preview.state.status === 'loading' ? <p className="muted">Reading the results…</p> : null}
      {preview.state.status === 'failed' ? (
        <p className="error" role="alert">
          {preview.state.error}
        </p>
      ) : null}
      {preview.state.status === 'ready' ? (
        preview.state.value.rows.length === 0 ? (
          <p className="muted">No rows have this status.</p>
        ) : (
          <>
            <div
              className="table-scroll"
              role="region"
              aria-label={`Table of ${title.charAt(0).toLowerCase()}${title.slice(1)}`}
              tabIndex={0}
            >
              <table className="data-table">
                <thead>
                  <tr>
                    {preview.state.value.columns.map((column, i) => (
                      <th key={i} scope="col">
                        {column}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {preview.state.value.rows.map((row, r) => (
                    <tr key={r}>
                      {preview.state.status === 'ready'
                        ? preview.state.value.columns.map((_, c) => <td key={c}>{row[c] ?? ''}</td>)
                        : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p className="muted small">
              {preview.state.value.hasMore
                ? `The first ${preview.state.value.rows.length} rows are shown.`
                : `${countOf(preview.state.value.rows.length, 'row')}.`}
            </p>
          </>
        )
      ) : null}
    </section>
  );
}
