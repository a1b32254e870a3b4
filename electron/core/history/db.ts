// The history database (`history.sqlite` in the app home): jobs, their timelines and exports, mapping presets,
// recent files and settings. Opened once, WAL. Query functions take the db first; statements are prepared
// once per database and bound with parameters, never concatenated.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from '../../../service/store/migrate.js';
import { statement as stmt } from '../../../service/store/statements.js';
import type { EmailValidationReporting, ListResource } from '../../../shared/api/list.js';
import type {
  ExportInfo,
  JobListInput,
  JobOptions,
  JobOptionsInput,
  JobPurchase,
  JobStatus,
  JobSummary,
  Mapping,
} from '../../../shared/desktop/contract.js';
import type { ExportRecordKind } from '../../../shared/exports.js';
import { hasMatchReports, matchReportsOf, type MatchReports } from '../../../shared/desktop/listServices.js';
import { HISTORY_MIGRATIONS } from './migrations/index.js';

export type HistoryDb = Database.Database;

export const HISTORY_DB_FILE = 'history.sqlite';

export interface OpenOptions {
  /** better-sqlite3's native addon built for this runtime (Electron's ABI differs from Node's). */
  readonly nativeBinding?: string;
}

export function openHistoryDb(file: string, options: OpenOptions = {}): HistoryDb {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file, options.nativeBinding ? { nativeBinding: options.nativeBinding } : {});
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db, HISTORY_MIGRATIONS);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

// ---------------------------------------------------------------------------------------------------------
// Jobs

/** What a job is made of, as it is created and as it is stored: its file, how it is read, where it goes. */
interface JobMakeup {
  readonly fileName: string;
  /** The file that is uploaded: the original, or a prepared copy (a part, a renamed header). */
  readonly filePath: string;
  /** The name the list is submitted under. */
  readonly uploadName: string;
  /** Whether the uploaded file has a header row (a prepared copy may add one). */
  readonly uploadHeader: boolean;
  readonly fileSize: number;
  readonly fileSha256: string | null;
  readonly fileFormat: 'csv' | 'txt' | 'zip' | 'xlsx';
  readonly fileEncoding: string | null;
  readonly mapping: Mapping;
  readonly connectionKind: 'embedded' | 'provider';
  readonly connectionUrl: string | null;
}

export interface JobRecord extends JobMakeup {
  readonly id: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly status: JobStatus;
  readonly message: string | null;
  readonly options: JobOptions;
  readonly partIndex: number | null;
  readonly partCount: number | null;
  readonly listId: number | null;
  readonly rows: number | null;
  /** The last status document (E8) the service sent, as its client parsed it. */
  readonly lastDocument: ListResource | null;
  /** Its email_validation reporting (the last one given: kept while a purchase reruns the list). */
  readonly reporting: EmailValidationReporting | null;
  readonly resultsPath: string | null;
  readonly resultsName: string | null;
  /** Rows the results mark as duplicates (the reporting has no such count). */
  readonly duplicates: number | null;
  /** The last match reports of the services beyond validation; null before any. */
  readonly matchReports: MatchReports | null;
  /** What the user chose to buy of a report-only job; null until then. */
  readonly purchase: JobPurchase | null;
  /** When E9 was answered for that purchase; null while it is still to be sent. */
  readonly purchaseSentAt: string | null;
  /** The file's own header names when the file sent renamed them (results show these); null otherwise. */
  readonly originalHeader: readonly string[] | null;
}

interface JobRow {
  id: number;
  created_at: string;
  updated_at: string;
  status: JobStatus;
  message: string | null;
  file_name: string;
  file_path: string;
  upload_name: string;
  upload_header: number;
  file_size: number;
  file_sha256: string | null;
  file_format: 'csv' | 'txt' | 'zip' | 'xlsx';
  file_encoding: string | null;
  mapping: string;
  options: string;
  connection_kind: 'embedded' | 'provider';
  connection_url: string | null;
  part_index: number | null;
  part_count: number | null;
  list_id: number | null;
  rows: number | null;
  last_document: string | null;
  reporting: string | null;
  results_path: string | null;
  results_name: string | null;
  duplicate_count: number | null;
  match_reports: string | null;
  purchase: string | null;
  purchase_sent_at: string | null;
  original_header: string | null;
}

/** Options as stored: a job from before list services ran validation only. */
function optionsOf(text: string): JobOptions {
  const stored = JSON.parse(text) as Partial<JobOptions> & Pick<JobOptions, 'reportOnly' | 'split'>;
  return { ...stored, services: stored.services ?? ['email_validation'] };
}

function toJob(row: JobRow): JobRecord {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status,
    message: row.message,
    fileName: row.file_name,
    filePath: row.file_path,
    uploadName: row.upload_name,
    uploadHeader: row.upload_header === 1,
    fileSize: row.file_size,
    fileSha256: row.file_sha256,
    fileFormat: row.file_format,
    fileEncoding: row.file_encoding,
    mapping: JSON.parse(row.mapping) as Mapping,
    options: optionsOf(row.options),
    connectionKind: row.connection_kind,
    connectionUrl: row.connection_url,
    partIndex: row.part_index,
    partCount: row.part_count,
    listId: row.list_id,
    rows: row.rows,
    // Stored by setJobDocument from documents the client had parsed with shared/api's schemas.
    lastDocument: row.last_document === null ? null : (JSON.parse(row.last_document) as ListResource),
    reporting: row.reporting === null ? null : (JSON.parse(row.reporting) as EmailValidationReporting),
    resultsPath: row.results_path,
    resultsName: row.results_name,
    duplicates: row.duplicate_count,
    matchReports: row.match_reports === null ? null : (JSON.parse(row.match_reports) as MatchReports),
    purchase: row.purchase === null ? null : (JSON.parse(row.purchase) as JobPurchase),
    purchaseSentAt: row.purchase_sent_at,
    originalHeader: row.original_header === null ? null : (JSON.parse(row.original_header) as string[]),
  };
}

export interface NewJob extends JobMakeup {
  readonly options: JobOptionsInput;
  readonly partIndex?: number;
  readonly partCount?: number;
  readonly rows?: number;
  /** The file's own header names, when the file sent renames them. */
  readonly originalHeader?: readonly string[];
  /** For tests and imports: the creation time (default now). */
  readonly createdAt?: string;
}

export function insertJob(db: HistoryDb, job: NewJob): number {
  const at = job.createdAt ?? new Date().toISOString();
  const result = stmt(
    db,
    `INSERT INTO jobs (created_at, updated_at, status, file_name, file_path, upload_name, upload_header, file_size, file_sha256, file_format,
       file_encoding, mapping, options, connection_kind, connection_url, part_index, part_count, rows, original_header)
     VALUES (@at, @at, 'queued', @fileName, @filePath, @uploadName, @uploadHeader, @fileSize, @fileSha256, @fileFormat, @fileEncoding,
       @mapping, @options, @connectionKind, @connectionUrl, @partIndex, @partCount, @rows, @originalHeader)`,
  ).run({
    at,
    fileName: job.fileName,
    filePath: job.filePath,
    uploadName: job.uploadName,
    uploadHeader: job.uploadHeader ? 1 : 0,
    fileSize: job.fileSize,
    fileSha256: job.fileSha256,
    fileFormat: job.fileFormat,
    fileEncoding: job.fileEncoding,
    mapping: JSON.stringify(job.mapping),
    options: JSON.stringify({ ...job.options, services: job.options.services ?? ['email_validation'] }),
    connectionKind: job.connectionKind,
    connectionUrl: job.connectionUrl,
    partIndex: job.partIndex ?? null,
    partCount: job.partCount ?? null,
    rows: job.rows ?? null,
    originalHeader: job.originalHeader ? JSON.stringify(job.originalHeader) : null,
  });
  const id = Number(result.lastInsertRowid);
  addJobEvent(db, id, 'queued', null, at);
  return id;
}

export function getJob(db: HistoryDb, id: number): JobRecord | undefined {
  const row = stmt(db, 'SELECT * FROM jobs WHERE id = ?').get(id) as JobRow | undefined;
  return row ? toJob(row) : undefined;
}

export function jobsWithStatus(db: HistoryDb, statuses: readonly JobStatus[]): JobRecord[] {
  const rows = stmt(
    db,
    'SELECT * FROM jobs WHERE status IN (SELECT value FROM json_each(?)) ORDER BY id',
  ).all(JSON.stringify(statuses)) as JobRow[];
  return rows.map(toJob);
}

/** Moves a job to a status, recording it on the timeline when it changed (or when a message is given). */
export function setJobStatus(
  db: HistoryDb,
  id: number,
  status: JobStatus,
  message: string | null = null,
): void {
  const at = new Date().toISOString();
  db.transaction(() => {
    const current = stmt(db, 'SELECT status, message FROM jobs WHERE id = ?').get(id) as
      { status: string; message: string | null } | undefined;
    if (!current) return;
    stmt(db, 'UPDATE jobs SET status = ?, message = ?, updated_at = ? WHERE id = ?').run(
      status,
      message,
      at,
      id,
    );
    if (current.status !== status || (message !== null && message !== current.message))
      addJobEvent(db, id, status, message, at);
  })();
}

export function addJobEvent(
  db: HistoryDb,
  jobId: number,
  status: string,
  message: string | null,
  at?: string,
): void {
  stmt(db, 'INSERT INTO job_events (job_id, at, status, message) VALUES (?, ?, ?, ?)').run(
    jobId,
    at ?? new Date().toISOString(),
    status,
    message,
  );
}

export function jobTimeline(
  db: HistoryDb,
  jobId: number,
): { at: string; status: string; message: string | null }[] {
  return stmt(db, 'SELECT at, status, message FROM job_events WHERE job_id = ? ORDER BY id').all(jobId) as {
    at: string;
    status: string;
    message: string | null;
  }[];
}

export function setJobListId(db: HistoryDb, id: number, listId: number | null): void {
  stmt(db, 'UPDATE jobs SET list_id = ?, updated_at = ? WHERE id = ?').run(
    listId,
    new Date().toISOString(),
    id,
  );
}

/** Where the job's own copy of the file it uploads is (the job's folder, once moved there). */
export function setJobFilePath(db: HistoryDb, id: number, path: string): void {
  stmt(db, 'UPDATE jobs SET file_path = ? WHERE id = ?').run(path, id);
}

/** The file's SHA-256, once hashed (jobs:start does not wait for it). */
export function setJobSha256(db: HistoryDb, id: number, sha256: string): void {
  stmt(db, 'UPDATE jobs SET file_sha256 = ? WHERE id = ?').run(sha256, id);
}

export function setJobFileFacts(
  db: HistoryDb,
  id: number,
  facts: { sha256: string; rows: number | null },
): void {
  stmt(db, 'UPDATE jobs SET file_sha256 = ?, rows = coalesce(?, rows) WHERE id = ?').run(
    facts.sha256,
    facts.rows,
    id,
  );
}

/**
 * Stores the last status document, its records count, its validation reporting (with the summary counts) and
 * its match reports. A document without reporting (a list running again after a purchase) keeps the last.
 */
export function setJobDocument(
  db: HistoryDb,
  id: number,
  document: unknown,
  records: number,
  reporting: unknown,
): void {
  const statuses =
    typeof reporting === 'object' && reporting !== null && 'statuses' in reporting
      ? ((reporting as { statuses?: Record<string, number> }).statuses ?? {})
      : undefined;
  const safe = statuses ? (statuses.Valid ?? 0) + (statuses.Corrected ?? 0) : null;
  const invalid = statuses ? (statuses.Invalid ?? 0) : null;
  const reports = matchReportsOf(document);
  stmt(
    db,
    // While a job runs, the records processed so far never lower the list's size (History's Rows).
    `UPDATE jobs SET last_document = @document, rows = max(coalesce(rows, @records), @records),
       reporting = coalesce(@reporting, reporting), safe_count = coalesce(@safe, safe_count),
       invalid_count = coalesce(@invalid, invalid_count), match_reports = coalesce(@reports, match_reports),
       updated_at = @at WHERE id = @id`,
  ).run({
    document: JSON.stringify(document),
    records,
    reporting: reporting === undefined || reporting === null ? null : JSON.stringify(reporting),
    safe,
    invalid,
    reports: hasMatchReports(reports) ? JSON.stringify(reports) : null,
    at: new Date().toISOString(),
    id,
  });
}

/** Records what the user buys of a report-only job (not yet sent), or forgets it (null) when E9 refused it. */
export function setJobPurchase(db: HistoryDb, id: number, purchase: JobPurchase | null): void {
  stmt(db, 'UPDATE jobs SET purchase = ?, purchase_sent_at = NULL, updated_at = ? WHERE id = ?').run(
    purchase === null ? null : JSON.stringify(purchase),
    new Date().toISOString(),
    id,
  );
}

/** E9 answered: the purchase is not to be sent again. */
export function setJobPurchaseSent(db: HistoryDb, id: number): void {
  const at = new Date().toISOString();
  stmt(db, 'UPDATE jobs SET purchase_sent_at = ?, updated_at = ? WHERE id = ?').run(at, at, id);
}

export function setJobResults(
  db: HistoryDb,
  id: number,
  results: { path: string; name: string; duplicates: number | null } | null,
): void {
  stmt(
    db,
    'UPDATE jobs SET results_path = ?, results_name = ?, duplicate_count = ?, updated_at = ? WHERE id = ?',
  ).run(
    results?.path ?? null,
    results?.name ?? null,
    results?.duplicates ?? null,
    new Date().toISOString(),
    id,
  );
}

export function deleteJob(db: HistoryDb, id: number): boolean {
  return stmt(db, 'DELETE FROM jobs WHERE id = ?').run(id).changes > 0;
}

const SORT_COLUMNS: Record<NonNullable<JobListInput['sort']>, string> = {
  created: 'created_at',
  name: 'file_name COLLATE NOCASE',
  rows: 'rows',
  status: 'status',
  ready: 'ready_count',
  invalid: 'invalid_count',
  connection: 'connection_kind',
};

/** History: jobs matching the search and filters, sorted; the summary columns only. */
export function listJobs(db: HistoryDb, input: JobListInput): { total: number; items: JobSummary[] } {
  const sort = SORT_COLUMNS[input.sort ?? 'created'];
  const direction = input.direction === 'asc' ? 'ASC' : 'DESC';
  // The sort column and direction come from the closed tables above, never from the caller's text.
  const rows = stmt(
    db,
    `SELECT id, created_at, file_name, status, rows, invalid_count, connection_kind, connection_url,
            checks_level,
            -- Ready to mail: the rows the job's default export writes, as its Results count them (job_counts,
            -- counted when it completed, for the results file it shows); NULL until counted.
            json_extract(job_counts.counts, '$.ready') AS ready_count,
            -- Rows a re-check would send (codes 5 and 10), and whether results were downloaded (issue #11).
            CASE WHEN reporting IS NULL OR json_extract(reporting, '$.status_codes') IS NULL THEN NULL
              ELSE coalesce(json_extract(reporting, '$.status_codes."5"'), 0)
                 + coalesce(json_extract(reporting, '$.status_codes."10"'), 0) END AS unknown_count,
            jobs.results_path IS NOT NULL AS has_results
       FROM jobs
       LEFT JOIN job_counts ON job_counts.job_id = jobs.id AND job_counts.results_path = jobs.results_path
      WHERE (@search IS NULL OR file_name LIKE @search ESCAPE '\\' COLLATE NOCASE OR CAST(list_id AS TEXT) = @plain)
        AND (@status IS NULL OR status = @status)
        AND (@from IS NULL OR created_at >= @from)
        AND (@to IS NULL OR created_at < @to)
      ORDER BY ${sort} ${direction}, id ${direction}`,
  ).all({
    search: input.search ? `%${input.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null,
    plain: input.search ?? null,
    status: input.status ?? null,
    from: input.from ? `${input.from}T00:00:00.000Z` : null,
    to: input.to ? nextDay(input.to) : null,
  }) as {
    id: number;
    created_at: string;
    file_name: string;
    status: JobStatus;
    rows: number | null;
    ready_count: number | null;
    invalid_count: number | null;
    connection_kind: string;
    connection_url: string | null;
    checks_level: JobSummary['checks'];
    unknown_count: number | null;
    has_results: number;
  }[];
  const items = rows.map((row): JobSummary => ({
    id: row.id,
    createdAt: row.created_at,
    fileName: row.file_name,
    status: row.status,
    rows: row.rows,
    ready: row.ready_count,
    invalid: row.invalid_count,
    connection: row.connection_kind === 'embedded' ? 'Local service' : hostOf(row.connection_url),
    checks: row.checks_level,
    unknown: row.unknown_count,
    hasResults: row.has_results === 1,
  }));
  return { total: items.length, items };
}

function nextDay(date: string): string {
  const day = new Date(`${date}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime())) return date;
  day.setUTCDate(day.getUTCDate() + 1);
  return day.toISOString();
}

function hostOf(url: string | null): string {
  if (!url) return 'Provider';
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Exports

interface ExportRow {
  id: number;
  job_id: number;
  created_at: string;
  kind: ExportRecordKind;
  statuses: string;
  path: string;
  file_name: string;
  rows: number;
  bytes: number;
}

function toExport(row: ExportRow): ExportInfo & { path: string } {
  return {
    id: row.id,
    jobId: row.job_id,
    createdAt: row.created_at,
    kind: row.kind,
    statuses: JSON.parse(row.statuses) as string[],
    fileName: row.file_name,
    rows: row.rows,
    bytes: row.bytes,
    path: row.path,
  };
}

export function insertExport(
  db: HistoryDb,
  record: {
    jobId: number;
    kind: ExportRecordKind;
    statuses: readonly string[];
    path: string;
    fileName: string;
    rows: number;
    bytes: number;
  },
): ExportInfo & { path: string } {
  const at = new Date().toISOString();
  const result = stmt(
    db,
    'INSERT INTO exports (job_id, created_at, kind, statuses, path, file_name, rows, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    record.jobId,
    at,
    record.kind,
    JSON.stringify(record.statuses),
    record.path,
    record.fileName,
    record.rows,
    record.bytes,
  );
  return getExport(db, Number(result.lastInsertRowid))!;
}

export function getExport(db: HistoryDb, id: number): (ExportInfo & { path: string }) | undefined {
  const row = stmt(db, 'SELECT * FROM exports WHERE id = ?').get(id) as ExportRow | undefined;
  return row ? toExport(row) : undefined;
}

export function jobExports(db: HistoryDb, jobId: number): (ExportInfo & { path: string })[] {
  return (stmt(db, 'SELECT * FROM exports WHERE job_id = ? ORDER BY id').all(jobId) as ExportRow[]).map(
    toExport,
  );
}

// ---------------------------------------------------------------------------------------------------------
// Mapping presets, recent files, settings

export interface Preset {
  readonly roles: Mapping['roles'];
  readonly delimiter: string;
  readonly header: boolean;
}

export function getPreset(db: HistoryDb, signature: string): Preset | undefined {
  const row = stmt(db, 'SELECT roles, delimiter, header FROM mapping_presets WHERE signature = ?').get(
    signature,
  ) as { roles: string; delimiter: string; header: number } | undefined;
  return row
    ? { roles: JSON.parse(row.roles) as Mapping['roles'], delimiter: row.delimiter, header: row.header === 1 }
    : undefined;
}

export function savePreset(db: HistoryDb, signature: string, preset: Preset): void {
  stmt(
    db,
    `INSERT INTO mapping_presets (signature, roles, delimiter, header, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (signature) DO UPDATE SET roles = excluded.roles, delimiter = excluded.delimiter,
       header = excluded.header, updated_at = excluded.updated_at`,
  ).run(
    signature,
    JSON.stringify(preset.roles),
    preset.delimiter,
    preset.header ? 1 : 0,
    new Date().toISOString(),
  );
}

export function touchRecentFile(db: HistoryDb, file: { path: string; name: string; size: number }): void {
  stmt(
    db,
    `INSERT INTO recent_files (path, name, size, opened_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (path) DO UPDATE SET name = excluded.name, size = excluded.size, opened_at = excluded.opened_at`,
  ).run(file.path, file.name, file.size, new Date().toISOString());
  // Keep the ten most recent.
  stmt(
    db,
    'DELETE FROM recent_files WHERE path NOT IN (SELECT path FROM recent_files ORDER BY opened_at DESC LIMIT 10)',
  ).run();
}

export function recentFiles(db: HistoryDb): { path: string; name: string; size: number; openedAt: string }[] {
  return stmt(
    db,
    'SELECT path, name, size, opened_at AS openedAt FROM recent_files ORDER BY opened_at DESC',
  ).all() as {
    path: string;
    name: string;
    size: number;
    openedAt: string;
  }[];
}

export function getSetting<T>(db: HistoryDb, name: string): T | undefined {
  const row = stmt(db, 'SELECT value FROM settings WHERE name = ?').get(name) as
    { value: string } | undefined;
  return row ? (JSON.parse(row.value) as T) : undefined;
}

export function setSetting(db: HistoryDb, name: string, value: unknown): void {
  stmt(
    db,
    'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  ).run(name, JSON.stringify(value));
}
