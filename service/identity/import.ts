// `mailsieve data import people|activity|bounces FILE`: a CSV file streamed row by row (papaparse; never the
// whole file in memory), each row checked, good rows written in batches of one transaction each, bad rows
// reported by line number (the first few, and a count). See docs/identity.md, "Import" and "Bounces".
import type { Database } from 'better-sqlite3';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import Papa from 'papaparse';
import { createReferenceIndexes, REFERENCE_INDEXES } from '../store/migrations/0040-identity.js';
import { ANSWER_INDEXES, createAnswerIndexes } from '../store/migrations/0070-person-answers.js';
import { ActivityWriter, activityLayout, readActivityRow, type ActivityRecord } from './import.activity.js';
import { BounceWriter, bounceLayout, readBounceRow, type BounceRecord } from './import.bounces.js';
import {
  ImportFileError,
  PeopleWriter,
  peopleLayout,
  readPersonRow,
  type PersonRecord,
  type RowResult,
} from './import.people.js';
import { formatCount } from '../../shared/count.js';

export { ImportFileError } from './import.people.js';

export interface RowError {
  /** The row's first line in the file (the header is line 1). */
  readonly line: number;
  readonly message: string;
}

export interface ImportReport {
  readonly kind: 'people' | 'activity' | 'bounces';
  readonly file: string;
  readonly datasetId: number;
  /** Data rows read (blank lines not counted). */
  readonly rows: number;
  readonly imported: number;
  readonly rejected: number;
  /** The first `maxErrors` rejected rows. */
  readonly errors: readonly RowError[];
  readonly warnings: readonly string[];
  /**
   * people: people added and updated. activity: events added, and events already stored. bounces: addresses
   * added, and addresses whose latest hard bounce moved later.
   */
  readonly added: number;
  readonly updated: number;
  readonly seconds: number;
  /** bounces: the rows by kind (`imported` is the hard ones; soft and other rows are read, not stored). */
  readonly bounces?: BounceCounts;
}

export interface BounceCounts {
  readonly hard: number;
  readonly soft: number;
  readonly other: number;
  /** Hard bounces without a date: they count from the import. */
  readonly undated: number;
}

export interface ImportOptions {
  /** Rejected rows listed in the report (all are counted). Default 20. */
  readonly maxErrors?: number;
  /**
   * Called after each batch, and at most every PROGRESS_MS while reading, with the data rows read so far and
   * how far the import is (bytes of the file read, rows written, rows rejected).
   */
  readonly onProgress?: (rows: number, progress: ImportProgress) => void;
  /** Rows per transaction. Default 10,000. */
  readonly batchSize?: number;
  /**
   * Unix seconds that bound activity and bounce times (future ones are refused), and the time of an undated
   * bounce. Default now.
   */
  readonly nowS?: number;
  /** Stops the import after the current chunk (the rows written so far stay). */
  readonly signal?: AbortSignal;
}

export interface ImportProgress {
  readonly rows: number;
  readonly imported: number;
  readonly rejected: number;
  readonly bytesRead: number;
  readonly totalBytes: number;
}

export const DEFAULT_MAX_ERRORS = 20;
/** The longest wait between two progress calls while a file is read. */
const PROGRESS_MS = 100;

/**
 * Streams a CSV file through papaparse, handing each parsed chunk's rows to `onRow` with the row's first
 * line number; blank lines skipped. Chunk mode, not papaparse's Node stream: this reads 4-5 times faster,
 * and the rows are handled synchronously (SQLite writes are synchronous), which paces the file stream.
 */
export function readCsv(
  file: string,
  onRow: (line: number, row: string[]) => void,
  signal?: AbortSignal,
  onChunk?: (bytesRead: number, totalBytes: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    stat(file).then(
      (info) => {
        if (!info.isFile()) return reject(new ImportFileError(`Cannot read ${file}: not a file.`));
        let line = 1;
        let failure: Error | undefined;
        const input = createReadStream(file, { encoding: 'utf8' });
        input.on('error', (error) => reject(new ImportFileError(`Cannot read ${file}: ${error.message}`)));
        Papa.parse<string[]>(input, {
          chunk(results, parser) {
            try {
              if (signal?.aborted) throw new ImportFileError(`Import of ${file} interrupted.`);
              for (const row of results.data) {
                const start = line;
                line += 1;
                // A quoted field may span lines: count them, so later rows keep their true line numbers.
                for (const field of row) if (field.includes('\n')) line += field.split('\n').length - 1;
                if (row.length === 1 && row[0].trim() === '') continue;
                onRow(start, row);
              }
              onChunk?.(input.bytesRead, info.size);
            } catch (error) {
              failure = error instanceof Error ? error : new Error(String(error));
              parser.abort();
            }
          },
          complete: () => (failure === undefined ? resolve() : reject(failure)),
          error: (error: Error) => reject(new ImportFileError(`Cannot read ${file}: ${error.message}`)),
        });
      },
      () => reject(new ImportFileError(`Cannot read ${file}: no such file.`)),
    );
  });
}

function startDataset(db: Database, kind: 'people' | 'activity' | 'demo', name: string): number {
  return Number(
    db
      .prepare('INSERT INTO ref_datasets (kind, name, started_at) VALUES (?, ?, ?)')
      .run(kind, name, new Date().toISOString()).lastInsertRowid,
  );
}

function finishDataset(db: Database, id: number, rows: number, imported: number, rejected: number): void {
  db.prepare(
    'UPDATE ref_datasets SET finished_at = ?, rows_read = ?, rows_imported = ?, rows_rejected = ? WHERE id = ?',
  ).run(new Date().toISOString(), rows, imported, rejected, id);
}

/**
 * Runs `load` with the store tuned for a bulk load:
 * - a 256 MiB page cache;
 * - no automatic checkpoints until the end. In WAL mode with synchronous=NORMAL a commit is not synced;
 *   only checkpoints are, and the default one every 4 MB made a large import wait on the disk most of the
 *   time. One checkpoint at the end syncs the WAL before copying it, so a crash leaves a consistent store;
 * - when the reference tables are empty, the secondary indexes dropped first and built once at the end
 *   (faster than keeping them up to date row by row). They are rebuilt even when `load` fails.
 */
export async function withBulkLoad<T>(db: Database, load: () => Promise<T>): Promise<T> {
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  const autoCheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma('cache_size = -262144');
  db.pragma('wal_autocheckpoint = 0');
  const isEmpty =
    db.prepare('SELECT 1 FROM ref_people LIMIT 1').get() === undefined &&
    db.prepare('SELECT 1 FROM ref_emails LIMIT 1').get() === undefined;
  if (isEmpty)
    for (const index of [...REFERENCE_INDEXES, ...ANSWER_INDEXES]) db.exec(`DROP INDEX IF EXISTS ${index}`);
  try {
    return await load();
  } finally {
    createReferenceIndexes(db);
    createAnswerIndexes(db);
    db.pragma(`wal_autocheckpoint = ${autoCheckpoint}`);
    db.pragma('wal_checkpoint(PASSIVE)');
    db.pragma(`cache_size = ${cacheSize}`);
  }
}

/** Runs an import under its dataset row; a failed import that wrote no people leaves no dataset behind. */
async function withDataset<T>(db: Database, datasetId: number, load: () => Promise<T>): Promise<T> {
  try {
    return await withBulkLoad(db, load);
  } catch (error) {
    db.prepare(
      'DELETE FROM ref_datasets WHERE id = ? AND NOT EXISTS (SELECT 1 FROM ref_people WHERE dataset_id = ?)',
    ).run(datasetId, datasetId);
    throw error;
  }
}

interface RowSink<T> {
  /** The header row is data too (a file without a header). */
  readonly takesFirstRow?: boolean;
  /** The fields every row must have (the header's); rows of another width are rejected before `read`. */
  readonly width?: number;
  read(row: readonly string[]): RowResult<T>;
  /** Writes a batch; answers how many of its rows count as imported. */
  write(records: readonly T[]): number;
}

async function importRows<T>(
  file: string,
  header: (row: readonly string[]) => RowSink<T>,
  options: ImportOptions,
): Promise<{ rows: number; imported: number; rejected: number; errors: RowError[] }> {
  const maxErrors = options.maxErrors ?? DEFAULT_MAX_ERRORS;
  const batchSize = options.batchSize ?? 10_000;
  let sink: RowSink<T> | undefined;
  let batch: T[] = [];
  const errors: RowError[] = [];
  let rows = 0;
  let imported = 0;
  let rejected = 0;
  let bytesRead = 0;
  let totalBytes = 0;
  let reported = 0;
  const report = () => {
    reported = performance.now();
    options.onProgress?.(rows, { rows, imported, rejected, bytesRead, totalBytes });
  };
  const flush = () => {
    if (!sink || batch.length === 0) return;
    imported += sink.write(batch);
    batch = [];
    report();
  };
  await readCsv(
    file,
    (line, row) => {
      if (!sink) {
        sink = header(row);
        if (!sink.takesFirstRow) return;
      }
      rows++;
      const result =
        sink.width === undefined || row.length === sink.width
          ? sink.read(row)
          : {
              ok: false as const,
              message: `the row has ${row.length} fields; the header has ${sink.width}`,
            };
      if (result.ok) {
        batch.push(result.record);
        if (batch.length >= batchSize) flush();
      } else {
        rejected++;
        if (errors.length < maxErrors) errors.push({ line, message: result.message });
      }
    },
    options.signal,
    (read, total) => {
      bytesRead = read;
      totalBytes = total;
      if (performance.now() - reported >= PROGRESS_MS) report();
    },
  );
  if (!sink) throw new ImportFileError(`${file} is empty: expected a header row and data rows.`);
  flush();
  return { rows, imported, rejected, errors };
}

/** Imports a people file (docs/identity.md lists its columns). */
export async function importPeopleFile(
  db: Database,
  file: string,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const started = performance.now();
  const datasetId = startDataset(db, 'people', basename(file));
  let writer: PeopleWriter | undefined;
  let warnings: readonly string[] = [];
  const result = await withDataset(db, datasetId, () =>
    importRows<PersonRecord>(
      file,
      (header) => {
        const layout = peopleLayout(header);
        warnings = layout.warnings;
        const peopleWriter = new PeopleWriter(db, datasetId);
        writer = peopleWriter;
        return {
          width: header.length,
          read: (row) => readPersonRow(layout, row),
          write: (records) => peopleWriter.write(records),
        };
      },
      options,
    ),
  );
  finishDataset(db, datasetId, result.rows, result.imported, result.rejected);
  const withoutZip4 = writer?.withoutZip4 ?? 0;
  return {
    kind: 'people',
    file,
    datasetId,
    ...result,
    warnings:
      withoutZip4 > 0
        ? [
            ...warnings,
            `${withoutZip4} row(s) give a 5-digit ZIP without its +4: postal append does not return those people (it answers 9-digit ZIPs only).`,
          ]
        : warnings,
    added: writer?.added ?? 0,
    updated: writer?.updated ?? 0,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Imports an activity file: `email,source,event,occurred_at`. */
export async function importActivityFile(
  db: Database,
  file: string,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const started = performance.now();
  const nowS = options.nowS ?? Math.floor(Date.now() / 1000);
  const datasetId = startDataset(db, 'activity', basename(file));
  let writer: ActivityWriter | undefined;
  let warnings: readonly string[] = [];
  const result = await withDataset(db, datasetId, () =>
    importRows<ActivityRecord>(
      file,
      (header) => {
        const layout = activityLayout(header);
        warnings = layout.warnings;
        const activityWriter = new ActivityWriter(db);
        writer = activityWriter;
        return {
          width: header.length,
          read: (row) => readActivityRow(layout, row, nowS),
          write: (records) => activityWriter.write(records),
        };
      },
      options,
    ),
  );
  finishDataset(db, datasetId, result.rows, result.imported, result.rejected);
  return {
    kind: 'activity',
    file,
    datasetId,
    ...result,
    warnings,
    added: writer?.added ?? 0,
    updated: writer?.duplicates ?? 0,
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * Imports a bounces file (docs/identity.md, "Bounces"): an email platform's bounce or suppression export, or
 * a list of addresses. A failed import that stored no bounce leaves no trace; one stopped halfway keeps the
 * bounces stored and its counts so far.
 */
export async function importBouncesFile(
  db: Database,
  file: string,
  options: ImportOptions & {
    /**
     * Every checked row (hard, soft or other), a batch at a time, as it is stored: the outcomes of a job
     * (electron/core/outcomes/) match them to the job's rows in the same pass.
     */
    readonly onRecords?: (records: readonly BounceRecord[]) => void;
  } = {},
): Promise<ImportReport> {
  const started = performance.now();
  const nowS = options.nowS ?? Math.floor(Date.now() / 1000);
  const importId = Number(
    db
      .prepare('INSERT INTO ref_bounce_imports (name, started_at) VALUES (?, ?)')
      .run(basename(file), new Date(nowS * 1000).toISOString()).lastInsertRowid,
  );
  let writer: BounceWriter | undefined;
  let description = '';
  let rows = 0;
  let rejected = 0;
  const finish = () =>
    db
      .prepare(
        `UPDATE ref_bounce_imports SET finished_at = ?, rows_read = ?, hard = ?, soft = ?, other = ?,
                                       rows_rejected = ? WHERE id = ?`,
      )
      .run(
        new Date().toISOString(),
        rows,
        writer?.counts.hard ?? 0,
        writer?.counts.soft ?? 0,
        writer?.counts.other ?? 0,
        rejected,
        importId,
      );
  let result: Awaited<ReturnType<typeof importRows<BounceRecord>>>;
  try {
    result = await importRows<BounceRecord>(
      file,
      (first) => {
        const layout = bounceLayout(first);
        description = layout.description;
        const bounceWriter = new BounceWriter(db, importId, nowS);
        writer = bounceWriter;
        return {
          takesFirstRow: !layout.hasHeader,
          ...(layout.hasHeader ? { width: first.length } : {}),
          read: (row) => readBounceRow(layout, row, nowS),
          write: (records) => {
            const hard = bounceWriter.write(records);
            options.onRecords?.(records);
            return hard;
          },
        };
      },
      {
        ...options,
        onProgress: (read, progress) => {
          rows = progress.rows;
          rejected = progress.rejected;
          options.onProgress?.(read, progress);
        },
      },
    );
  } catch (error) {
    if ((writer?.counts.hard ?? 0) > 0) finish();
    else db.prepare('DELETE FROM ref_bounce_imports WHERE id = ?').run(importId);
    throw error;
  }
  rows = result.rows;
  rejected = result.rejected;
  finish();
  const counts = writer?.counts ?? { hard: 0, soft: 0, other: 0, undated: 0 };
  const warnings = [description];
  if (counts.undated > 0)
    warnings.push(
      `${formatCount(counts.undated)} hard bounce(s) give no date: they count from today, the day of this import.`,
    );
  return {
    kind: 'bounces',
    file,
    datasetId: importId,
    ...result,
    warnings,
    added: writer?.added ?? 0,
    updated: writer?.updated ?? 0,
    seconds: (performance.now() - started) / 1000,
    bounces: { ...counts },
  };
}

export { startDataset, finishDataset };
