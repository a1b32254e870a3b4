// File inspection for the column mapper: delimiter, header row, encoding, an exact row count (by the
// service's row scanner, see count.ts), the first 50 rows, each column's share of email-like values
// and a suggested role for each column, from the spec's header synonyms and the contents. Column detection
// itself is shared/columns.ts (the same rules the service decides a list's layout with).
import {
  columnKindOf,
  describeDelimiter,
  detectDelimiter,
  looksLikeEmail,
  normaliseHeaderName,
  parseSampleRows,
  resolveLayout,
} from '../../../shared/columns.js';
import {
  PART_LIMIT,
  type ColumnRole,
  type InspectedColumn,
  type Inspection,
  type InspectionWarning,
} from '../../../shared/desktop/contract.js';
import { rowLimitWarning } from '../../../shared/desktop/rowLimit.js';
import { countRows, type CountOptions } from './count.js';
import {
  detectEncoding,
  openListSource,
  readHead,
  type Encoding,
  type ListSource,
  type SheetOptions,
} from './source.js';
import { formatCount } from '../../../shared/count.js';

/** Bytes of the file read for the sample. */
export const SAMPLE_BYTES = 256 * 1024;
/** Rows of the sample used for detection. */
const SAMPLE_ROWS = 1000;
/** Rows shown in the preview. */
export const PREVIEW_ROWS = 50;

export interface InspectRequest extends SheetOptions {
  readonly fileId: string;
  readonly path: string;
  readonly name: string;
  readonly size: number;
  readonly delimiter?: string;
  readonly header?: boolean;
  /** An .xlsx list: its sheets, and the one to read (the first when absent). */
  readonly sheets?: readonly string[];
  readonly sheet?: string;
  /**
   * Count the rows of an ordinary text file exactly (one more pass over it); false: estimate them from the
   * sample, as for big files, and leave the exact count to the pre-check (analysis.ts).
   */
  readonly isCountExact?: boolean;
  /** A remembered mapping for the file's header signature. */
  readonly presetFor?: (
    signature: string,
  ) => { roles: readonly ColumnRole[]; delimiter: string; header: boolean } | undefined;
  /** Stops the row count of a big file. */
  readonly signal?: AbortSignal;
  /** Bytes of the file counted so far (for a progress bar while the exact count runs). */
  readonly onCountProgress?: (bytesRead: number) => void;
}

/** A signature of a file's layout: its normalised header names, or its column count when it has no header. */
export function headerSignature(header: boolean, columnNames: readonly string[]): string {
  return header ? `h:${columnNames.map(normaliseHeaderName).join('|')}` : `n:${columnNames.length}`;
}

const HEX32 = /^[0-9a-f]{32}$/i;
const HEX40 = /^[0-9a-f]{40}$/i;

function shareOf(values: readonly string[], test: (value: string) => boolean): number {
  let filled = 0;
  let hits = 0;
  for (const value of values) {
    if (value.trim() === '') continue;
    filled++;
    if (test(value.trim())) hits++;
  }
  return filled === 0 ? 0 : hits / filled;
}

/**
 * An estimate of a big file's data rows from the sample's bytes per line: what the mapper says ("about N
 * rows") while countListRows runs. Never the ground for a warning.
 */
export function estimateRows(sample: string, sampleBytes: number, textSize: number, header: boolean): number {
  const breaks = sample.includes('\n') ? sample.split('\n').length - 1 : sample.split('\r').length - 1;
  const perRow = sampleBytes / Math.max(1, breaks);
  return Math.max(0, Math.round(textSize / perRow) - (header ? 1 : 0));
}

/** The exact data rows of a list source (blank rows and the header not counted), streamed. */
export async function countListRows(
  source: ListSource,
  options: Omit<CountOptions, 'encoding'> & { readonly encoding: Encoding },
): Promise<number> {
  return countRows(await source.open(), options);
}

export async function inspectFile(request: InspectRequest): Promise<Inspection> {
  const source: ListSource = await openListSource(request.path, request.name, request.size, request);
  const head = await readHead(await source.open(), SAMPLE_BYTES);
  const { encoding, bom } = detectEncoding(head.bytes, head.isWhole);
  let sample = new TextDecoder(encoding === 'utf-16be' ? 'utf-16be' : encoding).decode(
    head.bytes.subarray(bom),
  );
  if (!head.isWhole) {
    // Leave out a partly read last row.
    const cut = Math.max(sample.lastIndexOf('\n'), sample.lastIndexOf('\r'));
    if (cut > 0) sample = sample.slice(0, cut + 1);
  }
  const warnings: InspectionWarning[] = [];
  const base = {
    fileId: request.fileId,
    ...(request.sheets ? { sheets: [...request.sheets], sheet: request.sheet ?? request.sheets[0] } : {}),
    name: request.name,
    size: request.size,
    format: source.format,
    ...(source.format === 'zip' ? { innerName: source.textName } : {}),
    encoding,
    partLimit: PART_LIMIT,
  };

  const delimiter =
    request.delimiter !== undefined
      ? { delimiter: request.delimiter, how: 'given' as const }
      : detectDelimiter(sample, source.textName);
  const { rows } = parseSampleRows(sample, delimiter.delimiter, {
    maxRows: SAMPLE_ROWS + 1,
    isWhole: head.isWhole,
  });
  if (rows.length === 0) {
    return {
      ...base,
      delimiter: delimiter.delimiter,
      delimiterHow: delimiter.how,
      header: false,
      headerHow: 'detected',
      rowCount: 0,
      isRowCountEstimate: false,
      columns: [],
      rows: [],
      warnings: [{ code: 'empty-file', message: 'The file has no rows with data.' }],
      signature: 'n:0',
      isPresetApplied: false,
    };
  }

  // The header row: as given, else as the service's layout rules see it. Naming the first column as the
  // email column skips email-column detection, which may fail here (two email columns) without affecting it.
  let header = request.header;
  let headerHow: 'given' | 'detected' = 'given';
  if (header === undefined) {
    headerHow = 'detected';
    const layout = resolveLayout(rows, { delimiter: delimiter.delimiter, emailColumn: 1 });
    header = layout.ok ? layout.layout.header : rows.length > 1 && !rows[0].some(looksLikeEmail);
  }
  const data = header ? rows.slice(1) : rows;
  const columnCount = Math.max(...rows.slice(0, 50).map((row) => row.length));
  const names = Array.from(
    { length: columnCount },
    (_, c) => (header ? (rows[0][c] ?? '').trim() : '') || `Column ${c + 1}`,
  );

  // Suggested roles.
  const columns: InspectedColumn[] = names.map((name, index) => {
    const values = data.map((row) => row[index] ?? '');
    const emailShare = shareOf(values, looksLikeEmail);
    const kind = header ? columnKindOf(name) : undefined;
    let suggestedRole: ColumnRole = 'ignore';
    let suggestedBy: InspectedColumn['suggestedBy'] = 'none';
    if (emailShare >= 0.5) [suggestedRole, suggestedBy] = ['email', 'content'];
    else if (kind && kind !== 'email') [suggestedRole, suggestedBy] = [kind, 'header'];
    else if (kind === 'email' && emailShare > 0) [suggestedRole, suggestedBy] = ['email', 'header'];
    else if (shareOf(values, (v) => HEX32.test(v)) >= 0.9) [suggestedRole, suggestedBy] = ['md5', 'content'];
    else if (shareOf(values, (v) => HEX40.test(v)) >= 0.9) [suggestedRole, suggestedBy] = ['sha1', 'content'];
    return { index, name, emailShare, suggestedRole, suggestedBy };
  });

  // One email column: the one the header names, else the one with most addresses.
  const emailColumns = columns.filter((column) => column.suggestedRole === 'email');
  if (emailColumns.length > 1) {
    const byName = emailColumns.find((column) => header && columnKindOf(column.name) === 'email');
    const chosen = byName ?? [...emailColumns].sort((a, b) => b.emailShare - a.emailShare)[0];
    for (const column of emailColumns) {
      if (column === chosen) continue;
      columns[column.index] = { ...column, suggestedRole: 'ignore', suggestedBy: 'content' };
    }
    warnings.push({
      code: 'several-email-columns',
      message:
        `${emailColumns.length} columns hold email addresses (${emailColumns.map((c) => `“${c.name}”`).join(', ')}). ` +
        `Mailsieve verifies the one marked Email — “${chosen.name}” is suggested; the others are kept in the results as they are.`,
    });
  } else if (emailColumns.length === 0) {
    warnings.push({
      code: 'no-email-column',
      message: `No column holds email addresses when the rows are split by ${describeDelimiter(delimiter.delimiter)}. Check the delimiter, or mark the email column yourself.`,
    });
  }

  // A remembered mapping for this header wins over suggestions.
  const signature = headerSignature(header, names);
  const preset = request.presetFor?.(signature);
  let isPresetApplied = false;
  if (
    preset &&
    preset.roles.length === columns.length &&
    preset.roles.filter((r) => r === 'email').length === 1
  ) {
    isPresetApplied = true;
    preset.roles.forEach(
      (role, i) => (columns[i] = { ...columns[i], suggestedRole: role, suggestedBy: 'preset' }),
    );
  }

  // Rows: exact, counted by the service's row scanner over the whole file (never warn from an estimate).
  let rowCount: number;
  let isRowCountEstimate: boolean;
  if (head.isWhole) {
    rowCount = data.length;
    isRowCountEstimate = false;
  } else if (request.isCountExact === false) {
    // The mapper shows from the sample at once; the pre-check (off-thread) brings the exact count.
    const sampleBytes = Buffer.byteLength(sample, encoding === 'windows-1252' ? 'latin1' : 'utf8');
    rowCount = estimateRows(sample, sampleBytes, source.textSize, header);
    isRowCountEstimate = true;
  } else {
    rowCount = await countListRows(source, {
      encoding,
      delimiter: delimiter.delimiter,
      header,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.onCountProgress ? { onProgress: request.onCountProgress } : {}),
    });
    isRowCountEstimate = false;
  }

  if (encoding === 'windows-1252')
    warnings.push({
      code: 'not-utf8',
      message:
        'The file is not UTF-8 (it reads as Windows-1252). Accented names may show wrongly in the results; save it as UTF-8 if they do.',
    });
  const ragged = data.filter((row) => row.length !== columnCount).length;
  if (ragged > 0 && data.length > 0)
    warnings.push({
      code: 'ragged-rows',
      message: `${formatCount(ragged)} of the first ${formatCount(data.length)} rows have a different number of fields than the others. Check the delimiter.`,
    });
  if (headerHow === 'detected' && !header && columnCount > 1)
    warnings.push({
      code: 'header-guess',
      message:
        'The first row holds data, so the file is read as having no header row; the columns are named by position.',
    });
  // The limit is said from an exact count only: an estimate can overshoot it (short rows first).
  const overLimit = isRowCountEstimate ? undefined : rowLimitWarning(rowCount);
  if (overLimit) warnings.push(overLimit);

  return {
    ...base,
    delimiter: delimiter.delimiter,
    delimiterHow: delimiter.how,
    header,
    headerHow,
    rowCount,
    isRowCountEstimate,
    columns,
    rows: data.slice(0, PREVIEW_ROWS),
    warnings,
    signature,
    isPresetApplied,
  };
}
