import { formatCount, formatPercent } from '../format.js';

export interface BarRow {
  readonly key: string;
  readonly label: string;
  readonly value: number;
  /** A CSS class for the bar's colour. */
  readonly tone?: string;
  /** A longer description, shown under the label. */
  readonly detail?: string;
}

interface Props {
  readonly caption: string;
  readonly rows: readonly BarRow[];
  readonly total: number;
  readonly labelHeader: string;
  /** The heading of the counts column (default `Rows`). */
  readonly valueHeader?: string;
  /** Makes each label a button (e.g. to preview the rows of a status). */
  readonly onSelect?: (key: string) => void;
  readonly selectedKey?: string | null;
  readonly selectLabel?: (row: BarRow) => string;
}

/** A horizontal bar chart drawn as a table: the bars are SVG, the figures stay readable text for everyone. */
export function BarTable({
  caption,
  rows,
  total,
  labelHeader,
  valueHeader = 'Rows',
  onSelect,
  selectedKey,
  selectLabel,
}: Readonly<Props>) {
  return (
    <table className="bar-table" aria-label={caption}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{labelHeader}</th>
          <th scope="col" className="bar-col">
            <span className="visually-hidden">Bar</span>
          </th>
          <th scope="col" className="num">
            {valueHeader}
          </th>
          <th scope="col" className="num">
            Share
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const share = total > 0 ? row.value / total : 0;
          return (
            <tr key={row.key} className={selectedKey === row.key ? 'is-selected' : undefined}>
              <th scope="row">
                {onSelect ? (
                  <button
                    type="button"
                    className="link-button"
                    aria-pressed={selectedKey === row.key}
                    aria-label={selectLabel ? selectLabel(row) : undefined}
                    onClick={() => onSelect(row.key)}
                  >
                    {row.label}
                  </button>
                ) : (
                  row.label
                )}
                {row.detail ? <span className="row-detail">{row.detail}</span> : null}
              </th>
              <td className="bar-col">
                <Bar tone={row.tone ?? ''} width={Math.max(share * 100, row.value > 0 ? 0.8 : 0)} />
              </td>
              <td className="num">{formatCount(row.value)}</td>
              <td className="num">{formatPercent(row.value, total)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A horizontal bar: a track and a fill `width` per cent long, coloured by the `tone` class. */
export function Bar({ tone, width }: { tone: string; width: number }) {
  return (
    <svg className="bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
      <rect className="bar-track" x="0" y="0" width="100" height="10" rx="2" />
      <rect className={`bar-fill ${tone}`} x="0" y="0" width={width} height="10" rx="2" />
    </svg>
  );
}
