// A job's downloaded results file, read offline: the rows of one status (the Results screen's preview).
// Exports are the exporter's (jobs/exports.ts). The service appends its columns
// to every row (spec: "Results file"); the row's list status is in `Validation Status`. A job that ran no
// validation (email append, intelligence only) has no status column: its rows are previewed and exported whole.
import { statSync } from 'node:fs';
import { readRecordBatches, splitFields } from './files/records.js';
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
