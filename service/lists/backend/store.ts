// The lists table (migrations 0020…0080) of the single-node service: one row per submitted list, and the
// status document (E8) both adapters build from a list's record and its parts. Query functions take the db first.
import { rmSync } from 'node:fs';
import type { ServiceDb } from '../../store/db.js';
import { statement } from '../../store/statements.js';
import { listDir } from '../names.js';
import { dayStartOf, listLimitProblem, type KeyHoldings, type ListLimits } from './limits.js';
import type { IdentityListService, PartBounds, PartContext, PartOnlineState } from '../types.js';
import { UnknownCauseTally } from '../../../shared/unknownCauses.js';
import type {
  EmailValidationReporting,
  ListOnline,
  ListResource,
  ListServiceKey,
  ListStatus,
  PurchaseRequest,
  ServiceStatus,
  SubmitListParams,
} from '../../../shared/api/list.js';

/** The state of a list service other than validation, as the status document shows it. */
export interface ServiceState {
  readonly status: ServiceStatus;
  readonly input_count: number;
  readonly completed_count: number;
  readonly reporting?: object;
}

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
  /** The list services: asked for (or the key's) until the file's columns are known, then those that run. */
  readonly services: readonly ListServiceKey[];
  /** Whether E7 named the services. */
  readonly servicesExplicit: boolean;
  readonly serviceState: Partial<Record<IdentityListService, ServiceState>>;
  /** What E9 bought, for a report-only list that was bought. */
  readonly purchase: PurchaseRequest | null;
  /** The checks level the list runs (ran) with, once it started. */
  readonly checks: 'offline' | 'dns' | 'smtp' | null;
  /** The list's online wait, for a list with DNS or SMTP checks (the progress is its parts'). */
  readonly online: ListWait | null;
  /** The current run: each processing of the list from its stored input (a restart, a purchase) is a new one. */
  readonly run: number;
  /** The current run's plan, once made. */
  readonly plan: StoredPlan | null;
  /** Records reserved against the key's quota when the list was accepted. */
  readonly reserved: number;
  /** The usage period they were charged in; null for a list from before it was kept. */
  readonly chargedPeriod: string | null;
}

/** A run's plan, as kept with its list: what the parts and the results' head need. */
export interface StoredPlan {
  readonly records: number;
  readonly head: Uint8Array;
  readonly context: PartContext;
  readonly parts: readonly PartBounds[];
  readonly completedOffline: number;
}

/** The list's side of its online phase: when its wait for retries began, whether it was ended. */
export interface ListWait {
  readonly started_at?: string;
  readonly waiting_since?: string | null;
  readonly finished_early?: boolean;
}

/** A part's progress, as the status document sums it. */
export interface PartProgress {
  readonly completed: number;
  readonly online: PartOnlineState | null;
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
  services: string;
  services_explicit: number;
  service_state: string;
  purchase: string | null;
  checks: 'offline' | 'dns' | 'smtp' | null;
  online: string | null;
  run: number;
  plan: string | null;
  reserved: number;
  charged_period: string | null;
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
    services: JSON.parse(row.services) as ListServiceKey[],
    servicesExplicit: row.services_explicit === 1,
    serviceState: JSON.parse(row.service_state) as Partial<Record<IdentityListService, ServiceState>>,
    purchase: row.purchase === null ? null : (JSON.parse(row.purchase) as PurchaseRequest),
    checks: row.checks ?? null,
    online: row.online ? (JSON.parse(row.online) as ListWait) : null,
    run: row.run,
    plan: row.plan ? planOf(row.id, row.run, row.plan) : null,
    reserved: row.reserved,
    chargedPeriod: row.charged_period ?? null,
  };
}

/** Plans decoded lately, by list, run and length: a run's plan never changes once made (jobs read it often). */
const plans = new Map<string, StoredPlan>();

/** The plan of a list's run, decoded once. */
export function planOf(listId: number, run: number, text: string): StoredPlan {
  const key = `${listId}:${run}:${text.length}`;
  let plan = plans.get(key);
  if (!plan) {
    plan = decodePlan(text);
    plans.set(key, plan);
    if (plans.size > 16) plans.delete(plans.keys().next().value!);
  }
  return plan;
}

/** A plan as JSON: its head in base64, and the sets of its policies (the intelligence fields) as arrays. */
export function encodePlan(plan: StoredPlan): string {
  return JSON.stringify(
    { ...plan, head: Buffer.from(plan.head).toString('base64') },
    (_key, value: unknown) => (value instanceof Set ? { $set: [...(value as Set<unknown>)] } : value),
  );
}

export function decodePlan(text: string): StoredPlan {
  const parsed = JSON.parse(text, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && Array.isArray((value as { $set?: unknown }).$set)
      ? new Set((value as { $set: unknown[] }).$set)
      : value,
  ) as Omit<StoredPlan, 'head'> & { head: string };
  return { ...parsed, head: Buffer.from(parsed.head, 'base64') };
}

const now = () => new Date().toISOString();

/**
 * What a key holds, as its limits count it: its lists waiting or running, and the bytes of its lists submitted
 * today (their text's; a list from before text_bytes, its upload's).
 */
export function keyHoldings(db: ServiceDb, keyId: number): KeyHoldings {
  const held = statement(
    db,
    `SELECT count(*) FILTER (WHERE status IN ('Pending', 'Processing')) AS in_flight,
              coalesce(sum(coalesce(text_bytes, size_bytes)) FILTER (WHERE created_at >= ?), 0) AS bytes_today
       FROM lists WHERE key_id = ?`,
  ).get(dayStartOf(), keyId) as { in_flight: number; bytes_today: number };
  return { inFlight: held.in_flight, bytesToday: held.bytes_today };
}

/** A new list, Pending. The input file is named once the id is known: pass a function of it. */
export function insertList(
  db: ServiceDb,
  list: {
    keyId: number;
    name: string;
    options: SubmitListParams;
    sizeBytes: number;
    /** The bytes of the list's text (a zip's file uncompressed), what the day's bytes count. Default sizeBytes. */
    textBytes?: number;
    inputFile: (id: number) => string;
    /** The services asked for (E7 `services`), or the key's list services. Default: validation. */
    services?: readonly ListServiceKey[];
    /** Default true. */
    servicesExplicit?: boolean;
    /** Records reserved against the key's quota. */
    reserved?: number;
    /** The usage period they were charged in. */
    chargedPeriod?: string;
    /** What the key may hold: throws ListLimitError past it. */
    limits?: ListLimits;
  },
): number {
  return db.transaction(() => {
    const at = now();
    const textBytes = list.textBytes ?? list.sizeBytes;
    if (list.limits) {
      const problem = listLimitProblem(list.limits, keyHoldings(db, list.keyId), textBytes);
      if (problem) throw problem;
    }
    const result = db
      .prepare(
        `INSERT INTO lists (key_id, name, input_file, options, size_bytes, text_bytes, created_at, updated_at,
                            services, services_explicit, run, reserved, charged_period)
         VALUES (?, ?, '', ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
      )
      .run(
        list.keyId,
        list.name,
        JSON.stringify(list.options),
        list.sizeBytes,
        textBytes,
        at,
        at,
        JSON.stringify(list.services ?? ['email_validation']),
        list.servicesExplicit === false ? 0 : 1,
        list.reserved ?? 0,
        list.chargedPeriod ?? null,
      );
    const id = Number(result.lastInsertRowid);
    db.prepare('UPDATE lists SET input_file = ? WHERE id = ?').run(list.inputFile(id), id);
    return id;
  })();
}

export function getList(db: ServiceDb, id: number): ListRecord | undefined {
  const row = statement(db, 'SELECT * FROM lists WHERE id = ?').get(id) as ListRow | undefined;
  return row ? toRecord(row) : undefined;
}

export function deleteList(db: ServiceDb, id: number): void {
  db.prepare('DELETE FROM lists WHERE id = ?').run(id);
}

/**
 * Deletes a list and every file it has: its row, its stored input and its results (`<dataDir>/lists/<id>/`).
 * The desktop app calls this when the user deletes a job of its embedded service; retention calls it once a
 * list is old (retention.ts).
 */
export function deleteStoredList(db: ServiceDb, dataDir: string, id: number): void {
  deleteList(db, id);
  rmSync(listDir(dataDir, id), { recursive: true, force: true });
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
       service_state = '{}', attempts = attempts + 1, plan = NULL, parts_done = 0, updated_at = ? WHERE id = ?`,
  ).run(now(), id);
}

/** A new run of an unfinished list (the service started again): it waits to be planned afresh. */
export function nextRun(db: ServiceDb, id: number): number {
  const row = db
    .prepare(
      `UPDATE lists SET run = run + 1, plan = NULL, parts_done = 0, updated_at = ? WHERE id = ? RETURNING run`,
    )
    .get(now(), id) as { run: number } | undefined;
  return row?.run ?? 0;
}

/** The checks level a list runs with (set when it starts running). */
export function setListChecks(db: ServiceDb, id: number, checks: 'offline' | 'dns' | 'smtp'): void {
  db.prepare('UPDATE lists SET checks = ? WHERE id = ?').run(checks, id);
}

/** The list's online wait; kept across a restart. */
export function setListOnline(db: ServiceDb, id: number, online: ListWait | null): void {
  db.prepare('UPDATE lists SET online = ? WHERE id = ?').run(online ? JSON.stringify(online) : null, id);
}

/**
 * The delimiter the file is read with (the `delimiter` parameter, or the one its content shows), kept in the
 * list's options as `delimiter_used` for E8.
 */
export function setListDelimiter(db: ServiceDb, id: number, delimiter: string): void {
  db.prepare("UPDATE lists SET options = json_set(options, '$.delimiter_used', ?) WHERE id = ?").run(
    delimiter,
    id,
  );
}

/** The services that run, once the pipeline has read the file's columns. */
export function setListServices(db: ServiceDb, id: number, services: readonly ListServiceKey[]): void {
  db.prepare("UPDATE lists SET services = ?, updated_at = ? WHERE id = ? AND status = 'Processing'").run(
    JSON.stringify(services),
    now(),
    id,
  );
}

/**
 * The services other than validation while the results are written: Processing with `completed` records
 * done, or Pending (undefined) while validation still runs.
 */
export function updateServiceProgress(
  db: ServiceDb,
  id: number,
  services: readonly IdentityListService[],
  inputCount: number,
  completed: number | undefined,
): void {
  const state: Partial<Record<IdentityListService, ServiceState>> = {};
  for (const service of services)
    state[service] = {
      status: completed === undefined ? 'Pending' : 'Processing',
      input_count: inputCount,
      completed_count: completed ?? 0,
    };
  db.prepare("UPDATE lists SET service_state = ?, updated_at = ? WHERE id = ? AND status = 'Processing'").run(
    JSON.stringify(state),
    now(),
    id,
  );
}

/**
 * A report-only list is bought (E9): it waits to run again, from its stored input, with what was bought.
 * Answers whether the list was still awaiting purchase (two purchases at once buy once).
 */
export function markPurchased(db: ServiceDb, id: number, purchase: PurchaseRequest): boolean {
  const result = db
    .prepare(
      `UPDATE lists SET status = 'Pending', service_status = 'Pending', purchase = ?, service_state = '{}',
         records = 0, input_count = 0, completed_count = 0, reporting = NULL, results_file = NULL, attempts = 0, online = NULL,
         finished_at = NULL, run = run + 1, plan = NULL, parts_done = 0, updated_at = ? WHERE id = ? AND status = 'Processed'`,
    )
    .run(JSON.stringify(purchase), now(), id);
  return result.changes === 1;
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
    // Counts only grow, even when a run starts again after a restart: completed ≤ input ≤ records at every poll.
    `UPDATE lists SET records = MAX(records, ?), input_count = MAX(input_count, MIN(?, ?)),
       completed_count = MAX(completed_count, MIN(?, ?, ?)), updated_at = ? WHERE id = ? AND status = 'Processing'`,
  ).run(records, inputCount, records, completedCount, inputCount, records, now(), id);
}

/**
 * Every service complete: `Results` with the results file, or, for a report-only list with services to buy,
 * `Processed` (awaiting purchase, no results file).
 */
export function markResults(
  db: ServiceDb,
  id: number,
  result: {
    records: number;
    reporting: EmailValidationReporting;
    resultsFile: string | null;
    /** The services that ran; default validation. */
    services?: readonly ListServiceKey[];
    serviceReporting?: Partial<Record<IdentityListService, object>>;
    isAwaitingPurchase?: boolean;
  },
): void {
  const at = now();
  const services = result.services ?? ['email_validation'];
  const state: Partial<Record<IdentityListService, ServiceState>> = {};
  for (const service of services) {
    if (service === 'email_validation') continue;
    state[service] = {
      status: 'Completed',
      input_count: result.records,
      completed_count: result.records,
      reporting: result.serviceReporting?.[service] ?? {},
    };
  }
  db.prepare(
    `UPDATE lists SET status = ?, service_status = 'Completed', records = ?, input_count = ?, completed_count = ?,
       reporting = ?, results_file = ?, services = ?, service_state = ?, reason = NULL, updated_at = ?, finished_at = ?
       WHERE id = ?`,
  ).run(
    result.isAwaitingPurchase === true ? 'Processed' : 'Results',
    result.records,
    result.records,
    result.records,
    JSON.stringify(result.reporting),
    result.resultsFile,
    JSON.stringify(services),
    JSON.stringify(state),
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

/** The status document (E8, and the callback's payload) of a list: one child per service it runs. */
export function listDocument(list: ListRecord, parts?: readonly PartProgress[]): ListResource {
  const delimiterUsed = (list.options as { delimiter_used?: string }).delimiter_used;
  const services: Record<string, ServiceState> = {};
  const failed = list.status === 'Invalid' || list.status === 'Error';
  // While the parts run, the rows complete are theirs (the plan's count until then).
  const isRunning = list.status === 'Processing' && parts !== undefined && parts.length > 0;
  const completed = isRunning
    ? Math.min(
        list.inputCount,
        parts.reduce((sum, part) => sum + part.completed, 0),
      )
    : list.completedCount;
  for (const key of list.services) {
    if (key === 'email_validation') {
      services[key] = {
        input_count: list.inputCount,
        completed_count: completed,
        status: list.serviceStatus,
        ...(list.reporting ? { reporting: list.reporting } : {}),
      };
    } else {
      services[key] = list.serviceState[key] ?? {
        input_count: list.inputCount,
        completed_count: 0,
        status: failed ? 'Error' : 'Pending',
      };
      if (failed && services[key].status !== 'Completed')
        services[key] = { ...services[key], status: 'Error' };
    }
  }
  const online = onlineOf(list, parts);
  return {
    list_id: list.id,
    name: list.name,
    status: list.status,
    records: list.records,
    size_bytes: list.sizeBytes,
    created_at: list.createdAt,
    services: services,
    ...(list.reason !== null ? { reason: list.reason } : {}),
    ...(list.checks !== null ? { checks: list.checks } : {}),
    ...(online ? { online } : {}),
    ...(delimiterUsed !== undefined ? { delimiter: delimiterUsed } : {}),
  };
}

/** E8's `online`: the parts' online phases summed, the list's wait beside them. */
function onlineOf(list: ListRecord, parts: readonly PartProgress[] | undefined): ListOnline | undefined {
  if (list.checks === null || list.checks === 'offline' || list.online === null) return undefined;
  const sum = {
    rows_to_check: 0,
    rows_checked: 0,
    domains_total: 0,
    domains_done: 0,
    retry_rows: 0,
    retry_attempt: 0,
  };
  let retryAt: string | null = null;
  const causes = new UnknownCauseTally();
  let pacedBy: ListOnline['paced_by'];
  for (const part of parts ?? []) {
    const state = part.online;
    if (!state) continue;
    // The host most checks wait on, of the parts still at work.
    if (
      state.paced_by &&
      list.finishedAt === null &&
      state.rows_checked < state.rows_to_check &&
      (!pacedBy || state.paced_by.waiting > pacedBy.waiting)
    )
      pacedBy = state.paced_by;
    for (const line of state.unknown_causes ?? []) causes.add(line.cause, line.count);
    sum.rows_to_check += state.rows_to_check;
    sum.rows_checked += state.rows_checked;
    sum.domains_total += state.domains_total;
    sum.domains_done += state.domains_done;
    sum.retry_rows += state.retry_rows;
    sum.retry_attempt = Math.max(sum.retry_attempt, state.retry_attempt);
    if (state.retry_at !== null && state.retry_rows > 0 && (retryAt === null || state.retry_at < retryAt))
      retryAt = state.retry_at;
  }
  const startedAt = list.online.started_at ? Date.parse(list.online.started_at) : undefined;
  const endAt = list.finishedAt ? Date.parse(list.finishedAt) : Date.now();
  const seconds = startedAt !== undefined ? (endAt - startedAt) / 1000 : 0;
  return {
    ...sum,
    rate_per_s: seconds > 0 ? Math.round((sum.rows_checked / seconds) * 10) / 10 : 0,
    retry_at: retryAt,
    ...(list.online.finished_early ? { finished_early: true } : {}),
    ...(pacedBy ? { paced_by: pacedBy } : {}),
    ...(causes.lines().length > 0 ? { unknown_causes: causes.lines() } : {}),
  };
}
