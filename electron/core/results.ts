// A job's downloaded results file, read offline: the rows of one status (the Results screen's preview) and
// exports (safe to send, clean, invalid, all, or a chosen set of statuses). The service appends its columns
// to every row (spec: "Results file"); the row's list status is in `Validation Status`.
import { createWriteStream, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
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

function statusIndex(header: readonly string[]): number {
  const index = header.lastIndexOf(STATUS_COLUMN);
  if (index < 0) throw new ResultsProblem(`The results file has no “${STATUS_COLUMN}” column.`);
  return index;
}

/**
 * The status of a results row. Appended columns come last and hold no delimiters, so the status is read from
 * the end of the row: robust to a data field with a stray quote or delimiter before them.
 */
function statusOf(raw: string, delimiter: string, fromEnd: number): string {
  let end = raw.length;
  for (let k = 0; k < fromEnd; k++) {
    const at = raw.lastIndexOf(delimiter, end - 1);
    if (at < 0) return '';
    end = at;
  }
  const start = raw.lastIndexOf(delimiter, end - 1) + 1;
  return raw.slice(start, end).replace(/^"|"$/g, '');
}

/** Up to `limit` rows whose status is `status`. */
export async function previewRows(
  path: string,
  name: string,
  delimiter: string,
  status: string,
  limit: number,
): Promise<{ columns: string[]; rows: string[][]; hasMore: boolean }> {
  let columns: string[] | undefined;
  let fromEnd = 0;
  const rows: string[][] = [];
  for await (const batch of resultRecords(path, name)) {
    for (const raw of batch) {
      if (!columns) {
        columns = splitFields(raw, delimiter);
        fromEnd = columns.length - 1 - statusIndex(columns);
        continue;
      }
      if (raw === '' || statusOf(raw, delimiter, fromEnd) !== status) continue;
      if (rows.length === limit) return { columns, rows, hasMore: true };
      rows.push(splitFields(raw, delimiter));
    }
  }
  return { columns: columns ?? [], rows, hasMore: false };
}

/**
 * Writes the header and the rows whose status `keep` accepts to `destination`, via a
 * temporary name so the file appears only when complete. Answers the rows written and the file's size.
 */
export async function writeExport(
  path: string,
  name: string,
  delimiter: string,
  keep: (status: string) => boolean,
  destination: string,
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
          fromEnd = columns.length - 1 - statusIndex(columns);
          text += raw + lineBreak;
          isHeader = false;
          continue;
        }
        if (raw === '') continue;
        if (!keep(statusOf(raw, delimiter, fromEnd))) continue;
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

/** Rows whose `column` holds `value` (the `Duplicate` column's `true`, for the Results screen). */
export async function countColumnValue(
  path: string,
  name: string,
  delimiter: string,
  column: string,
  value: string,
): Promise<number> {
  let fromEnd = -1;
  let isHeader = true;
  let count = 0;
  for await (const batch of resultRecords(path, name)) {
    for (const raw of batch) {
      if (isHeader) {
        const columns = splitFields(raw, delimiter);
        const index = columns.lastIndexOf(column);
        if (index < 0) return 0;
        fromEnd = columns.length - 1 - index;
        isHeader = false;
        continue;
      }
      if (raw !== '' && statusOf(raw, delimiter, fromEnd) === value) count++;
    }
  }
  return count;
}
