// The lists table (migration 0020): one row per submitted list. Query functions take the db first.
import type { ServiceDb } from '../store/db.js';
import type {
  EmailValidationReporting,
  ListResource,
  ListStatus,
  ServiceStatus,
  SubmitListParams,
} from '../../shared/api/list.js';

export interface ListRecord {
  readonly id: number;
  readonly keyId: number;
  readonly name: string;
  readonly inputFile: string;
  readonly options: SubmitListParams;
  readonly status: ListStatus;
  readonly serviceStatus: ServiceStatus;
  readonly reason: string | null;
  readonly sizeBytes: number;
  readonly records: number;
  readonly inputCount: number;
  readonly completedCount: number;
  readonly reporting: EmailValidationReporting | null;
  readonly resultsFile: string | null;
  readonly attempts: number;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

interface ListRow {
  id: number;
  key_id: number;
  name: string;
  input_file: string;
  options: string;
  status: ListStatus;
  service_status: ServiceStatus;
  reason: string | null;
  size_bytes: number;
  records: number;
  input_count: number;
  completed_count: number;
  reporting: string | null;
  results_file: string | null;
  attempts: number;
  created_at: string;
  finished_at: string | null;
}

function toRecord(row: ListRow): ListRecord {
  return {
    id: row.id,
    keyId: row.key_id,
    name: row.name,
    inputFile: row.input_file,
    options: JSON.parse(row.options) as SubmitListParams,
    status: row.status,
    serviceStatus: row.service_status,
    reason: row.reason,
    sizeBytes: row.size_bytes,
    records: row.records,
    inputCount: row.input_count,
    completedCount: row.completed_count,
    reporting: row.reporting === null ? null : (JSON.parse(row.reporting) as EmailValidationReporting),
    resultsFile: row.results_file,
    attempts: row.attempts,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

const now = () => new Date().toISOString();

/** A new list, Pending. The input file is named once the id is known: pass a function of it. */
export function insertList(
  db: ServiceDb,
  list: {
    keyId: number;
    name: string;
    options: SubmitListParams;
    sizeBytes: number;
    inputFile: (id: number) => string;
  },
): number {
  return db.transaction(() => {
    const at = now();
    const result = db
      .prepare(
        `INSERT INTO lists (key_id, name, input_file, options, size_bytes, created_at, updated_at)
         VALUES (?, ?, '', ?, ?, ?, ?)`,
      )
      .run(list.keyId, list.name, JSON.stringify(list.options), list.sizeBytes, at, at);
    const id = Number(result.lastInsertRowid);
    db.prepare('UPDATE lists SET input_file = ? WHERE id = ?').run(list.inputFile(id), id);
    return id;
  })();
}

export function getList(db: ServiceDb, id: number): ListRecord | undefined {
  const row = db.prepare('SELECT * FROM lists WHERE id = ?').get(id) as ListRow | undefined;
  return row ? toRecord(row) : undefined;
}

export function deleteList(db: ServiceDb, id: number): void {
  db.prepare('DELETE FROM lists WHERE id = ?').run(id);
}

/** Lists that were waiting or running: to resume at start-up. */
export function unfinishedLists(db: ServiceDb): ListRecord[] {
  const rows = db
    .prepare("SELECT * FROM lists WHERE status IN ('Pending', 'Processing') ORDER BY id")
    .all() as ListRow[];
  return rows.map(toRecord);
}

/** Processing starts (again): counters reset, one more attempt. */
export function markProcessing(db: ServiceDb, id: number): void {
  db.prepare(
    `UPDATE lists SET status = 'Processing', service_status = 'Processing', records = 0, input_count = 0, completed_count = 0,
       attempts = attempts + 1, updated_at = ? WHERE id = ?`,
  ).run(now(), id);
}

/** `records`: found so far; `inputCount`: the pipeline's estimate of all, until the scan is done. */
export function updateProgress(
  db: ServiceDb,
  id: number,
  records: number,
  inputCount: number,
  completedCount: number,
): void {
  db.prepare(
    "UPDATE lists SET records = ?, input_count = ?, completed_count = ?, updated_at = ? WHERE id = ? AND status = 'Processing'",
  ).run(records, inputCount, completedCount, now(), id);
}

export function markResults(
  db: ServiceDb,
  id: number,
  result: { records: number; reporting: EmailValidationReporting; resultsFile: string },
): void {
  const at = now();
  db.prepare(
    `UPDATE lists SET status = 'Results', service_status = 'Completed', records = ?, input_count = ?, completed_count = ?,
       reporting = ?, results_file = ?, reason = NULL, updated_at = ?, finished_at = ? WHERE id = ?`,
  ).run(
    result.records,
    result.records,
    result.records,
    JSON.stringify(result.reporting),
    result.resultsFile,
    at,
    at,
    id,
  );
}

/** Invalid (the file) or Error (the processing), with the reason. */
export function markFailed(
  db: ServiceDb,
  id: number,
  status: 'Invalid' | 'Error',
  reason: string,
  records = 0,
): void {
  const at = now();
  db.prepare(
    `UPDATE lists SET status = ?, service_status = 'Error', reason = ?, records = ?, updated_at = ?, finished_at = ?
       WHERE id = ?`,
  ).run(status, reason, records, at, at, id);
}

/** The status document (E8, and the callback's payload) of a list. */
export function listDocument(list: ListRecord): ListResource {
  const service: NonNullable<ListResource['services']['email_validation']> = {
    input_count: list.inputCount,
    completed_count: list.completedCount,
    status: list.serviceStatus,
    ...(list.reporting ? { reporting: list.reporting } : {}),
  };
  return {
    list_id: list.id,
    name: list.name,
    status: list.status,
    records: list.records,
    size_bytes: list.sizeBytes,
    created_at: list.createdAt,
    services: { email_validation: service },
    ...(list.reason !== null ? { reason: list.reason } : {}),
  };
}
