// A job's downloaded results file, read offline: the rows of one status (the Results screen's preview) and
// exports (safe to send, clean, invalid, all, or a chosen set of statuses). The service appends its columns
// to every row (spec: "Results file"); the row's list status is in `Validation Status`. A job that ran no
// validation (email append, intelligence only) has no status column: its rows are previewed and exported whole.
import { createWriteStream, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { quoteField, readRecordBatches, splitFields } from './files/records.js';
import { decodeStream, openListSource } from './files/source.js';

export const STATUS_COLUMN = 'Validation Status';

export class ResultsProblem extends Error {
  readonly code = 'results-unreadable';
}

async function* resultRecords(path: string, name: string, onLineBreak?: (sequence: string) => void) {
  const source = await openListSource(path, name, statSync(path).size);
  yield* readRecordBatches(decodeStream(await source.open(), 'utf-8'), onLineBreak);
}

/** The status column's place counted from the end of the row, or -1 when the file has none. */
function statusFromEnd(header: readonly string[]): number {
  const index = header.lastIndexOf(STATUS_COLUMN);
  return index < 0 ? -1 : header.length - 1 - index;
}

function statusFromEndOrFail(header: readonly string[]): number {
  const fromEnd = statusFromEnd(header);
  if (fromEnd < 0)
    throw new ResultsProblem(
      `The results file has no “${STATUS_COLUMN}” column (the job ran no validation): export all rows.`,
    );
  return fromEnd;
}

/**
 * Where the field ending at `end` starts, read backwards. A field that ends in a quote runs back to its opening
 * quote (`""` inside is a quote); any other field runs back to the delimiter before it.
 */
function fieldStartBefore(raw: string, delimiter: string, end: number): number {
  if (end > 0 && raw[end - 1] === '"') {
    let j = end - 2;
    for (;;) {
      const q = raw.lastIndexOf('"', j);
      if (q < 0) break;
      // Inside a quoted field quotes come in pairs: taken from the back, the one left over opens it.
      if (q > 0 && raw[q - 1] === '"') j = q - 2;
      else if (q === 0 || raw.startsWith(delimiter, q - delimiter.length)) return q;
      else j = q - 1;
      if (j < 0) break;
    }
  }
  return raw.lastIndexOf(delimiter, end - 1) + 1;
}

/**
 * The status of a results row. Appended columns come last and are quoted when a value holds a delimiter (an
 * appended postal address may), so the status is read from the end of the row: robust to a data field with a
 * stray quote or delimiter before them.
 */
function statusOf(raw: string, delimiter: string, fromEnd: number): string {
  let end = raw.length;
  for (let k = 0; k < fromEnd; k++) {
    const start = fieldStartBefore(raw, delimiter, end);
    if (start <= 0) return '';
    end = start - delimiter.length;
  }
  const start = fieldStartBefore(raw, delimiter, end);
  return raw.slice(start, end).replace(/^"|"$/g, '');
}

/**
 * The header with the file's own names in front: the file sent may have renamed columns for the service
 * (name and postal columns are found by header synonyms), and the user reads their own names.
 */
function withOwnNames(columns: string[], names: readonly string[] | null): string[] {
  if (!names) return columns;
  return columns.map((column, i) => (i < names.length ? names[i] : column));
}

/** Up to `limit` rows whose status is `status` (null: any row, for a job without validation). */
export async function previewRows(
  path: string,
  name: string,
  delimiter: string,
  status: string | null,
  limit: number,
  names: readonly string[] | null = null,
): Promise<{ columns: string[]; rows: string[][]; hasMore: boolean }> {
  let columns: string[] | undefined;
  let fromEnd = 0;
  const rows: string[][] = [];
  for await (const batch of resultRecords(path, name)) {
    for (const raw of batch) {
      if (!columns) {
        columns = splitFields(raw, delimiter);
        if (status !== null) fromEnd = statusFromEndOrFail(columns);
        columns = withOwnNames(columns, names);
        continue;
      }
      if (raw === '' || (status !== null && statusOf(raw, delimiter, fromEnd) !== status)) continue;
      if (rows.length === limit) return { columns, rows, hasMore: true };
      rows.push(splitFields(raw, delimiter));
    }
  }
  return { columns: columns ?? [], rows, hasMore: false };
}

/**
 * Writes the header (with the file's own `names`, when given) and the rows whose status `keep` accepts (null:
 * every row) to `destination`, via a temporary name so the file appears only when complete. Answers the rows
 * written and the file's size.
 */
export async function writeExport(
  path: string,
  name: string,
  delimiter: string,
  keep: ((status: string) => boolean) | null,
  destination: string,
  names: readonly string[] | null = null,
): Promise<{ rows: number; bytes: number }> {
  const temporary = `${destination}.${process.pid}.tmp`;
  const out = createWriteStream(temporary, { mode: 0o600 });
  let lineBreak = '\n';
  let isHeader = true;
  let fromEnd = 0;
  let rows = 0;
  try {
    for await (const batch of resultRecords(path, name, (sequence) => (lineBreak = sequence))) {
      let text = '';
      for (const raw of batch) {
        if (isHeader) {
          const columns = splitFields(raw, delimiter);
          if (keep !== null) fromEnd = statusFromEndOrFail(columns);
          text +=
            (names
              ? withOwnNames(columns, names)
                  .map((column) => quoteField(column, delimiter))
                  .join(delimiter)
              : raw) + lineBreak;
          isHeader = false;
          continue;
        }
        if (raw === '') continue;
        if (keep !== null && !keep(statusOf(raw, delimiter, fromEnd))) continue;
        text += raw + lineBreak;
        rows++;
      }
      if (text && !out.write(text)) await once(out, 'drain');
    }
    if (isHeader) throw new ResultsProblem('The results file is empty.');
    out.end();
    await once(out, 'finish');
  } catch (error) {
    out.destroy();
    rmSync(temporary, { force: true });
    throw error;
  }
  renameSync(temporary, destination);
  return { rows, bytes: statSync(destination).size };
}

/**
 * Rows whose `column` holds `value` (the `Duplicate` column's `true`, for the Results screen); null when the
 * file has no such column.
 */
export async function countColumnValue(
  path: string,
  name: string,
  delimiter: string,
  column: string,
  value: string,
): Promise<number | null> {
  let fromEnd = -1;
  let isHeader = true;
  let count = 0;
  for await (const batch of resultRecords(path, name)) {
    for (const raw of batch) {
      if (isHeader) {
        const columns = splitFields(raw, delimiter);
        const index = columns.lastIndexOf(column);
        if (index < 0) return null;
        fromEnd = columns.length - 1 - index;
        isHeader = false;
        continue;
      }
      if (raw !== '' && statusOf(raw, delimiter, fromEnd) === value) count++;
    }
  }
  return count;
}
