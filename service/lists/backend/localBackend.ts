// The single-node adapter of the list pipeline's ports (port.ts): lists in the service's SQLite database,
// their input, parts and results as files in the list's folder (`<dataDir>/lists/<id>/`), and an in-process
// queue. The plan of the list being processed stays in the pipeline worker's memory, so a part is written
// from it; a service stopped mid-list starts the list's next run at its next start (the online verdicts
// already learnt are kept in the journal and not asked again). One list runs at a time, as it always did.
/* eslint-disable @typescript-eslint/require-await -- SQLite answers synchronously; the port is async for PostgreSQL */
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rm,
  rmSync,
  statSync,
} from 'node:fs';
import { open as openFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ListResource, ListServiceKey, PurchaseRequest } from '../../../shared/api/list.js';
import type { ServiceDb } from '../../store/db.js';
import type {
  JournalEntry,
  ListBackend,
  ListCompletion,
  ListJobHandlers,
  NewList,
  PartReports,
  PartSlot,
  PartWork,
  RunStart,
  StoredBytes,
  UploadClaim,
  UploadTicket,
} from './port.js';
import { ArrivingUploads, uploadLimitProblem } from './limits.js';
import { listDir, listsRoot } from '../names.js';
import { isActiveKeyId, RevokedKeyError } from '../../store/keys.js';
import { statement } from '../../store/statements.js';
import { DEFAULT_RETAIN_DAYS, RETENTION_SWEEP_MS, sweepListFiles } from './retention.js';
import {
  deleteStoredList,
  encodePlan,
  getList,
  insertList,
  keyHoldings,
  listDocument,
  markFailed,
  markProcessing,
  markPurchased,
  markResults,
  nextRun,
  setListChecks,
  setListDelimiter,
  setListOnline,
  setListServices,
  unfinishedLists,
  updateProgress,
  type ListRecord,
  type PartProgress,
} from './store.js';
import type {
  IdentityReportState,
  PartBounds,
  PartOnlineState,
  PartResult,
  PlanRecord,
  ReportState,
} from '../types.js';

/** Attempts of a part job before its list is given up with Error (as the team server's queue does). */
const PART_ATTEMPTS = 3;
/**
 * The longest the parts of a list with online checks wait for each other before checking (each part's own
 * work, its addresses out of the plan, takes ~50 ms: a 1,000,000-row list's 100 parts gather in ~5 s).
 */
const GATHER_MAX_MS = 15_000;

type Job =
  | { readonly kind: 'plan'; readonly listId: number; readonly run: number }
  | {
      readonly kind: 'part';
      readonly listId: number;
      readonly run: number;
      readonly part: number;
      attempt: number;
    }
  | { readonly kind: 'finish'; readonly listId: number; readonly run: number }
  | { readonly kind: 'callback'; readonly listId: number };

const partFile = (dir: string, run: number, part: number, what: 'out' | 'explain') =>
  join(dir, 'parts', `${run}-${part}.${what}`);

/**
 * Writes a file whole, a chunk at a time (no copy of them all), through the thread pool (the service's thread
 * keeps answering): a temporary name, then renamed.
 */
async function writeWhole(path: string, chunks: readonly Uint8Array[] | string): Promise<void> {
  const temporary = `${path}.tmp`;
  const file = await openFile(temporary, 'w', 0o600);
  try {
    if (typeof chunks === 'string') await file.writeFile(chunks);
    else for (const chunk of chunks) await file.write(chunk);
  } finally {
    await file.close();
  }
  await rename(temporary, path);
}

export interface LocalBackendOptions {
  /** Days a completed list's files are kept (retention.ts). */
  readonly retainDays?: number;
  /** Gives back a list's records reserved against its key's quota (usage metering). */
  readonly onRefund?: (list: ListRecord, records: number) => void;
  /** Charges a list's records beyond those reserved, once it is complete. */
  readonly onComplete?: (list: ListRecord, records: number) => void;
}

export class LocalListBackend implements ListBackend {
  readonly kind = 'sqlite' as const;
  readonly workRoot: string;
  private handlers: ListJobHandlers | undefined;
  private partSlots = 8;
  private readonly plans: Job[] = [];
  /** When each key's list last started (a count of lists started), for fair shares between keys. */
  private readonly turns = new Map<number, number>();
  private turnCount = 0;
  private readonly ready: Job[] = [];
  private readonly delayed = new Map<string, { timer: NodeJS.Timeout; job: Job }>();
  private readonly running = new Set<Promise<void>>();
  private runningParts = 0;
  /** Runs whose parts are still arriving at their online phase (the key: `listId:run`). */
  private readonly gatherings = new Map<
    string,
    {
      readonly total: number;
      readonly arrived: Set<number>;
      readonly ready: Promise<void>;
      readonly open: () => void;
      readonly timer: NodeJS.Timeout;
    }
  >();
  /** The list being processed (`<list>:<run>`): the next is planned once it is done. */
  private active: string | undefined;
  private retentionTimer: NodeJS.Timeout | undefined;
  private isClosed = false;
  /** Uploads arriving now, per key (`--max-uploads`). */
  private readonly arriving = new ArrivingUploads();

  constructor(
    private readonly db: ServiceDb,
    private readonly dataDir: string,
    private readonly options: LocalBackendOptions = {},
  ) {
    this.workRoot = join(listsRoot(dataDir), 'work');
    mkdirSync(listsRoot(dataDir), { recursive: true, mode: 0o700 });
  }

  // Records.

  async getList(id: number): Promise<ListRecord | undefined> {
    return getList(this.db, id);
  }

  async document(list: ListRecord): Promise<ListResource> {
    return listDocument(list, this.partsProgress(list));
  }

  /** The parts' progress: their online phases for a list with online checks, else their rows done, summed. */
  private partsProgress(list: ListRecord): PartProgress[] {
    if (list.checks === 'dns' || list.checks === 'smtp') {
      const rows = statement(
        this.db,
        'SELECT completed, online FROM list_parts WHERE list_id = ? AND run = ? ORDER BY part',
      ).all(list.id, list.run) as { completed: number; online: string | null }[];
      return rows.map((row) => ({
        completed: row.completed,
        online: row.online ? (JSON.parse(row.online) as PartOnlineState) : null,
      }));
    }
    // (Polled every 25 ms by the CLI and the app while a list runs: one small aggregate.)
    const row = statement(
      this.db,
      'SELECT count(*) AS parts, sum(completed) AS completed FROM list_parts WHERE list_id = ? AND run = ?',
    ).get(list.id, list.run) as { parts: number; completed: number | null };
    return row.parts > 0 ? [{ completed: row.completed ?? 0, online: null }] : [];
  }

  async beginUpload(claim: UploadClaim): Promise<UploadTicket> {
    const held = { ...keyHoldings(this.db, claim.keyId), ...this.arriving.of(claim.keyId) };
    const problem = uploadLimitProblem(claim.limits, held, claim.leastBytes, claim.isExact);
    if (problem) throw problem;
    return { end: this.arriving.add(claim.keyId, claim.leastBytes) };
  }

  async createList(list: NewList): Promise<number> {
    let listId: number | undefined;
    try {
      // A key revoked while its list was uploading (by `keys revoke` in another process too) adds no list: asked
      // under the database's write lock, in the transaction that adds the list.
      listId = this.db
        .transaction(() => {
          if (!isActiveKeyId(this.db, list.keyId)) throw new RevokedKeyError();
          return insertList(this.db, {
            keyId: list.keyId,
            name: list.name,
            options: list.options,
            sizeBytes: list.sizeBytes,
            textBytes: list.textBytes,
            inputFile: () => list.inputFile,
            services: list.services,
            servicesExplicit: list.servicesExplicit,
            reserved: list.reservedRecords,
            chargedPeriod: list.chargedPeriod,
            limits: list.limits,
          });
        })
        .immediate();
      // The upload is a list now (counted as one from here).
      list.upload?.end();
      const dir = listDir(this.dataDir, listId);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      renameSync(list.uploadPath, join(dir, list.inputFile));
    } catch (error) {
      rmSync(list.uploadPath, { force: true });
      if (listId !== undefined) deleteStoredList(this.db, this.dataDir, listId);
      throw error;
    }
    this.push({ kind: 'plan', listId, run: 1 });
    return listId;
  }

  async markPurchased(id: number, purchase: PurchaseRequest): Promise<boolean> {
    if (!markPurchased(this.db, id, purchase)) return false;
    const list = getList(this.db, id)!;
    this.push({ kind: 'plan', listId: id, run: list.run });
    return true;
  }

  async finishNow(id: number): Promise<boolean> {
    const list = getList(this.db, id);
    if (!list || (list.status !== 'Processing' && list.status !== 'Pending') || !list.online) return false;
    setListOnline(this.db, id, { ...list.online, finished_early: true });
    // Its parts waiting for a retry are asked for at once.
    for (const [name, { timer, job }] of this.delayed)
      if (job.listId === id) {
        clearTimeout(timer);
        this.delayed.delete(name);
        this.push(job);
      }
    return true;
  }

  async results(list: ListRecord): Promise<StoredBytes | undefined> {
    const dir = listDir(this.dataDir, list.id);
    if (list.status !== 'Results' || !list.resultsFile) return undefined;
    if (list.resultsFile !== 'parts') return this.storedFile(join(dir, list.resultsFile));
    const plan = list.plan;
    if (!plan) return undefined;
    const paths = plan.parts.map((part) => partFile(dir, list.run, part.index, 'out'));
    let size = plan.head.length;
    for (const path of paths) {
      if (!existsSync(path)) return undefined;
      size += statSync(path).size;
    }
    return {
      size,
      open: () => Readable.from(concatFiles(plan.head, paths), { objectMode: false }),
    };
  }

  async explain(list: ListRecord): Promise<StoredBytes | undefined> {
    if (list.status !== 'Results') return undefined;
    return this.storedFile(join(listDir(this.dataDir, list.id), 'explain.csv'));
  }

  private storedFile(path: string): StoredBytes | undefined {
    if (!existsSync(path)) return undefined;
    const size = statSync(path).size;
    return { size, open: () => Readable.from(concatFiles(undefined, [path]), { objectMode: false }) };
  }

  async deleteList(id: number): Promise<void> {
    deleteStoredList(this.db, this.dataDir, id);
    if (this.active?.startsWith(`${id}:`)) this.release(this.active);
  }

  // The plan job.

  async startRun(listId: number, run: number): Promise<RunStart | undefined> {
    const list = getList(this.db, listId);
    if (!list || list.run !== run || (list.status !== 'Pending' && list.status !== 'Processing'))
      return undefined;
    markProcessing(this.db, listId);
    const dir = listDir(this.dataDir, listId);
    const inputPath = join(dir, list.inputFile);
    if (!existsSync(inputPath)) {
      await this.failRun(
        listId,
        run,
        'Error',
        'The stored file of this list is missing; submit the list again.',
        0,
      );
      return undefined;
    }
    rmSync(join(dir, 'parts'), { recursive: true, force: true });
    return { list: getList(this.db, listId)!, run, inputPath, workDir: dir };
  }

  async setChecks(listId: number, _run: number, level: 'offline' | 'dns' | 'smtp'): Promise<void> {
    setListChecks(this.db, listId, level);
  }

  async planProgress(listId: number, run: number, records: number, completed: number): Promise<void> {
    if (this.isCurrent(listId, run)) updateProgress(this.db, listId, records, records, completed);
  }

  async setDelimiter(listId: number, delimiter: string): Promise<void> {
    setListDelimiter(this.db, listId, delimiter);
  }

  async setServices(listId: number, run: number, services: readonly ListServiceKey[]): Promise<void> {
    if (this.isCurrent(listId, run)) setListServices(this.db, listId, services);
  }

  async savePlan(listId: number, run: number, plan: PlanRecord): Promise<void> {
    const list = getList(this.db, listId);
    if (!list || list.run !== run || list.status !== 'Processing') return;
    const insert = this.db.prepare(
      'INSERT INTO list_parts (list_id, run, part, rows, completed) VALUES (?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE lists SET plan = ?, records = ?, input_count = ?, completed_count = ?, parts_done = 0 WHERE id = ?`,
        )
        .run(
          encodePlan({
            records: plan.records,
            head: plan.head,
            context: plan.context,
            parts: plan.parts,
            completedOffline: plan.completedOffline,
          }),
          plan.records,
          plan.records,
          plan.completedOffline,
          listId,
        );
      this.db.prepare('DELETE FROM list_parts WHERE list_id = ?').run(listId);
      for (const part of plan.parts)
        insert.run(listId, run, part.index, part.rowCount, plan.partStarts[part.index]?.completed ?? 0);
      if (plan.context.check) {
        const wait = list.online ?? {};
        setListOnline(this.db, listId, { ...wait, started_at: wait.started_at ?? new Date().toISOString() });
      }
    })();
    mkdirSync(join(listDir(this.dataDir, listId), 'parts'), { recursive: true, mode: 0o700 });
    if (plan.context.check) this.gather(`${listId}:${run}`, plan.parts.length);
    for (const part of plan.parts) this.push({ kind: 'part', listId, run, part: part.index, attempt: 0 });
  }

  async failRun(
    listId: number,
    run: number,
    status: 'Invalid' | 'Error',
    reason: string,
    records: number,
  ): Promise<void> {
    const list = getList(this.db, listId);
    if (list && list.run === run && (list.status === 'Pending' || list.status === 'Processing')) {
      markFailed(this.db, listId, status, reason, records);
      this.db.prepare('DELETE FROM list_verdicts WHERE list_id = ?').run(listId);
      // A list that failed runs no more: its input is of no more use, and is not kept until the retention sweep.
      rmSync(join(listDir(this.dataDir, listId), list.inputFile), { force: true });
      if (list.reserved > 0) this.options.onRefund?.(list, list.reserved);
      if (list.options.callback_url) this.push({ kind: 'callback', listId });
    }
    this.release(`${listId}:${run}`);
  }

  async isStale(listId: number, run: number): Promise<boolean> {
    return !this.isCurrent(listId, run);
  }

  private isCurrent(listId: number, run: number): boolean {
    const row = this.db.prepare('SELECT run, status FROM lists WHERE id = ?').get(listId) as
      { run: number; status: string } | undefined;
    return row !== undefined && row.run === run && row.status === 'Processing';
  }

  // Part jobs.

  async partWork(listId: number, run: number, part: number): Promise<PartWork | undefined> {
    const list = getList(this.db, listId);
    if (!list || list.run !== run || list.status !== 'Processing' || !list.plan) return undefined;
    const row = this.db
      .prepare('SELECT online, is_done FROM list_parts WHERE list_id = ? AND run = ? AND part = ?')
      .get(listId, run, part) as { online: string | null; is_done: number } | undefined;
    const bounds = list.plan.parts[part];
    if (!row || !bounds) return undefined;
    return {
      context: list.plan.context,
      bounds,
      online: row.online ? (JSON.parse(row.online) as PartOnlineState) : null,
      isDone: row.is_done === 1,
      waitingSince: list.online?.waiting_since ?? null,
      isFinishedEarly: list.online?.finished_early === true,
    };
  }

  async partRows(): Promise<Uint8Array | undefined> {
    return undefined;
  }

  async partText(): Promise<Buffer | undefined> {
    return undefined;
  }

  async journal(
    listId: number,
    level: string,
    addresses: readonly string[],
  ): Promise<Map<string, JournalEntry>> {
    const found = new Map<string, JournalEntry>();
    const select = this.db.prepare(
      'SELECT entry FROM list_verdicts WHERE list_id = ? AND level = ? AND address = ?',
    );
    for (const address of addresses) {
      const row = select.get(listId, level, address) as { entry: string } | undefined;
      if (row) found.set(address, JSON.parse(row.entry) as JournalEntry);
    }
    return found;
  }

  async addToJournal(
    listId: number,
    level: string,
    entries: readonly [string, JournalEntry][],
  ): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO list_verdicts (list_id, level, address, entry) VALUES (?, ?, ?, ?)
       ON CONFLICT (list_id, level, address) DO UPDATE SET entry = excluded.entry`,
    );
    try {
      this.db.transaction(() => {
        for (const [address, entry] of entries) upsert.run(listId, level, address, JSON.stringify(entry));
      })();
    } catch (error) {
      // The list was deleted meanwhile: its verdicts have nowhere to go.
      if (!/FOREIGN KEY/.test((error as Error).message)) throw error;
    }
  }

  async partOnline(
    listId: number,
    run: number,
    part: number,
    state: PartOnlineState,
    completed: number,
  ): Promise<void> {
    this.db
      .prepare(
        'UPDATE list_parts SET online = ?, completed = ? WHERE list_id = ? AND run = ? AND part = ? AND is_done = 0',
      )
      .run(JSON.stringify(state), completed, listId, run, part);
  }

  async beginWait(listId: number): Promise<string> {
    const list = getList(this.db, listId);
    const since = list?.online?.waiting_since;
    if (since) return since;
    const at = new Date().toISOString();
    if (list) setListOnline(this.db, listId, { ...(list.online ?? {}), waiting_since: at });
    return at;
  }

  async requeuePart(listId: number, run: number, part: number, at?: Date): Promise<void> {
    this.push({ kind: 'part', listId, run, part, attempt: 0 }, at);
  }

  /** Where a part's results file goes: this node's pipeline worker writes it there itself. */
  partFile(listId: number, run: number, part: number): string {
    return partFile(listDir(this.dataDir, listId), run, part, 'out');
  }

  async savePart(listId: number, run: number, part: number, result: PartResult): Promise<void> {
    const dir = listDir(this.dataDir, listId);
    const list = getList(this.db, listId);
    if (!list || list.run !== run || list.status !== 'Processing' || !list.plan) return;
    if (!result.isWritten) await writeWhole(partFile(dir, run, part, 'out'), result.chunks);
    if (list.plan.context.explain) await writeWhole(partFile(dir, run, part, 'explain'), result.explain);
    const isLast = this.db.transaction(() => {
      const changed = this.db
        .prepare(
          `UPDATE list_parts SET is_done = 1, completed = rows, size = ?, explain_size = ?, report = ?, identity = ?
           WHERE list_id = ? AND run = ? AND part = ? AND is_done = 0`,
        )
        .run(
          result.size,
          Buffer.byteLength(result.explain),
          JSON.stringify(result.report),
          result.identity ? JSON.stringify(result.identity) : null,
          listId,
          run,
          part,
        ).changes;
      if (changed === 0) return false;
      const row = this.db
        .prepare('UPDATE lists SET parts_done = parts_done + 1 WHERE id = ? RETURNING parts_done')
        .get(listId) as { parts_done: number };
      return row.parts_done === list.plan!.parts.length;
    })();
    if (isLast) this.push({ kind: 'finish', listId, run });
  }

  // The finish job.

  async partReports(listId: number, run: number): Promise<PartReports | undefined> {
    const rows = this.db
      .prepare('SELECT report, identity, is_done FROM list_parts WHERE list_id = ? AND run = ? ORDER BY part')
      .all(listId, run) as { report: string | null; identity: string | null; is_done: number }[];
    if (rows.length === 0 || rows.some((row) => row.is_done !== 1 || row.report === null)) return undefined;
    return {
      reports: rows.map((row) => JSON.parse(row.report!) as ReportState),
      identity: rows
        .filter((row) => row.identity)
        .map((row) => JSON.parse(row.identity!) as IdentityReportState),
    };
  }

  async *partBytes(listId: number, run: number, what: 'results' | 'explain'): AsyncIterable<Uint8Array> {
    const list = getList(this.db, listId);
    if (!list?.plan) return;
    const dir = listDir(this.dataDir, listId);
    if (what === 'results') yield list.plan.head;
    for (const part of list.plan.parts)
      yield readFileSync(partFile(dir, run, part.index, what === 'results' ? 'out' : 'explain'));
  }

  async saveAssembled(
    listId: number,
    run: number,
    what: 'results.zip' | 'explain',
    path: string,
  ): Promise<void> {
    if (!this.isCurrent(listId, run)) return;
    renameSync(path, join(listDir(this.dataDir, listId), what === 'explain' ? 'explain.csv' : 'results.zip'));
  }

  async completeRun(listId: number, run: number, completion: ListCompletion): Promise<void> {
    const list = getList(this.db, listId);
    if (!list || list.run !== run || list.status !== 'Processing' || !list.plan) return;
    const isZip = list.plan.context.zipEntryName !== undefined;
    markResults(this.db, listId, {
      records: completion.records,
      reporting: completion.reporting,
      resultsFile: completion.isAwaitingPurchase ? null : isZip ? 'results.zip' : 'parts',
      services: completion.services,
      serviceReporting: completion.serviceReporting,
      isAwaitingPurchase: completion.isAwaitingPurchase,
    });
    this.db.prepare('DELETE FROM list_verdicts WHERE list_id = ?').run(listId);
    if (!completion.isAwaitingPurchase) {
      const dir = listDir(this.dataDir, listId);
      // The results are all a list with Results needs: its input is not kept until the retention sweep (a
      // list awaiting purchase keeps it, to run again with what is bought). Removed off this thread: freeing a
      // 1,000,000-row list's 80 MB held the request thread ~10 ms, just as its client asked for the results.
      rm(join(dir, list.inputFile), { force: true }, () => undefined);
      // The archive holds everything: the parts' files are not needed any more.
      if (isZip) rmSync(join(dir, 'parts'), { recursive: true, force: true });
    }
    this.options.onComplete?.(list, completion.records);
    if (list.options.callback_url) this.push({ kind: 'callback', listId });
    this.release(`${listId}:${run}`);
  }

  // The in-process queue.

  async work(handlers: ListJobHandlers, options: { readonly parts: number }): Promise<void> {
    this.handlers = handlers;
    this.partSlots = Math.max(1, options.parts);
    const uploads = join(listsRoot(this.dataDir), 'uploads');
    rmSync(uploads, { recursive: true, force: true });
    rmSync(this.workRoot, { recursive: true, force: true });
    this.startRetention();
    // Lists that were waiting or running when the service last stopped run again, from their stored input.
    for (const list of unfinishedLists(this.db)) {
      const run =
        list.status === 'Pending' && list.attempts === 0 && list.plan === null
          ? list.run
          : nextRun(this.db, list.id);
      const dir = listDir(this.dataDir, list.id);
      rmSync(join(dir, 'parts'), { recursive: true, force: true });
      if (existsSync(dir))
        for (const stale of readdirSync(dir).filter((f) => f.endsWith('.tmp')))
          rmSync(join(dir, stale), { force: true });
      this.push({ kind: 'plan', listId: list.id, run });
    }
  }

  private push(job: Job, at?: Date): void {
    if (this.isClosed) return;
    const wait = at ? at.getTime() - Date.now() : 0;
    if (wait > 0) {
      const name = job.kind === 'part' ? `${job.listId}:${job.run}:${job.part}` : `${job.kind}:${job.listId}`;
      const previous = this.delayed.get(name);
      if (previous) clearTimeout(previous.timer);
      const timer = setTimeout(() => {
        this.delayed.delete(name);
        this.push(job);
      }, wait);
      timer.unref();
      this.delayed.set(name, { timer, job });
      return;
    }
    if (job.kind === 'plan') this.plans.push(job);
    else this.ready.push(job);
    this.pump();
  }

  /** The running list's turn ends when the list was ended from outside (its key revoked in another process). */
  private releaseEnded(): void {
    if (this.active === undefined) return;
    const [listId, run] = this.active.split(':').map(Number);
    const row = this.db.prepare('SELECT run, status FROM lists WHERE id = ?').get(listId) as
      { run: number; status: string } | undefined;
    if (!row || row.run !== run || (row.status !== 'Pending' && row.status !== 'Processing'))
      this.release(this.active);
  }

  private release(key: string): void {
    if (this.active !== key) return;
    this.active = undefined;
    this.pump();
  }

  private pump(): void {
    if (this.isClosed || !this.handlers) return;
    const handlers = this.handlers;
    for (let i = 0; i < this.ready.length;) {
      const job = this.ready[i];
      if (job.kind === 'part' && this.runningParts >= this.partSlots) {
        i++;
        continue;
      }
      this.ready.splice(i, 1);
      this.start(job, handlers);
    }
    if (this.active === undefined) {
      const job = this.nextPlan();
      if (job && job.kind === 'plan') {
        this.active = `${job.listId}:${job.run}`;
        this.start(job, handlers);
      }
    }
  }

  /**
   * The next list to run, in fair shares between keys: the first waiting list of the key whose turn came
   * longest ago (a key that never had one first), so that one client's many lists do not hold back another's.
   */
  private nextPlan(): Job | undefined {
    let best = -1;
    let bestTurn = Infinity;
    for (let i = 0; i < this.plans.length; i++) {
      const keyId = getList(this.db, this.plans[i].listId)?.keyId;
      const turn = keyId === undefined ? -1 : (this.turns.get(keyId) ?? -1);
      if (turn < bestTurn) {
        best = i;
        bestTurn = turn;
      }
    }
    if (best < 0) return undefined;
    const [job] = this.plans.splice(best, 1);
    const keyId = getList(this.db, job.listId)?.keyId;
    if (keyId !== undefined) this.turns.set(keyId, this.turnCount++);
    return job;
  }

  /** The parts of a run with online checks start checking together: each arrives once (see PartSlot). */
  private gather(key: string, parts: number): void {
    let open!: () => void;
    const ready = new Promise<void>((resolve) => (open = resolve));
    const timer = setTimeout(() => this.opened(key), GATHER_MAX_MS);
    timer.unref();
    this.gatherings.set(key, { total: parts, arrived: new Set(), ready, open, timer });
  }

  private arrive(key: string, part: number): void {
    const gathering = this.gatherings.get(key);
    if (!gathering) return;
    gathering.arrived.add(part);
    if (gathering.arrived.size >= gathering.total) this.opened(key);
  }

  private opened(key: string): void {
    const gathering = this.gatherings.get(key);
    if (!gathering) return;
    this.gatherings.delete(key);
    clearTimeout(gathering.timer);
    gathering.open();
  }

  /**
   * A part's place among the parts at once: given back when the part only waits on mail servers (`slot`) or
   * when its job ends (`end`), whichever comes first; either way the part has arrived for its run's gathering.
   */
  private takePartSlot(listId: number, run: number, part: number): { slot: PartSlot; end(): void } {
    this.runningParts++;
    const key = `${listId}:${run}`;
    let isHeld = true;
    const end = () => {
      if (!isHeld) return;
      isHeld = false;
      this.runningParts--;
      this.arrive(key, part);
    };
    const slot: PartSlot = {
      release: () => {
        if (isHeld) {
          end();
          this.pump();
        }
        return this.gatherings.get(key)?.ready ?? Promise.resolve();
      },
    };
    return { slot, end };
  }

  private start(job: Job, handlers: ListJobHandlers): void {
    const place = job.kind === 'part' ? this.takePartSlot(job.listId, job.run, job.part) : undefined;
    const task = (async () => {
      try {
        if (job.kind === 'plan') {
          await handlers.plan(job.listId, job.run);
          // A plan that did not make parts (the list failed, or its run is stale) ends the list's turn.
          const list = getList(this.db, job.listId);
          if (!list || list.run !== job.run || list.status !== 'Processing' || !list.plan)
            this.release(`${job.listId}:${job.run}`);
        } else if (job.kind === 'part') await handlers.part(job.listId, job.run, job.part, place?.slot);
        else if (job.kind === 'finish') await handlers.finish(job.listId, job.run);
        else await handlers.callback(job.listId);
      } catch (error) {
        if (this.isClosed) return;
        const reason = error instanceof Error ? error.message : String(error);
        if (job.kind === 'part' && job.attempt + 1 < PART_ATTEMPTS) {
          this.push({ ...job, attempt: job.attempt + 1 });
        } else if (job.kind !== 'callback') {
          await handlers.failed(job.listId, job.run, reason).catch(() => undefined);
        }
      } finally {
        // A part that ended without checking (done before, nothing to check, failed) is not waited for.
        place?.end();
      }
    })();
    this.running.add(task);
    void task.finally(() => {
      this.running.delete(task);
      this.releaseEnded();
      this.pump();
    });
  }

  private startRetention(): void {
    const sweep = () => {
      try {
        const deleted = sweepListFiles(this.db, this.dataDir, this.options.retainDays ?? DEFAULT_RETAIN_DAYS);
        for (const id of deleted) if (this.active?.startsWith(`${id}:`)) this.release(this.active);
      } catch (error) {
        console.error(`Could not delete old list files: ${(error as Error).message}`);
      }
    };
    sweep();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    this.retentionTimer = setInterval(sweep, RETENTION_SWEEP_MS);
    this.retentionTimer.unref();
  }

  async close(): Promise<void> {
    this.isClosed = true;
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    await Promise.all([...this.running]);
  }
}

/** The head (if any), then each file's bytes, in 1 MiB reads. */
async function* concatFiles(head: Uint8Array | undefined, paths: readonly string[]): AsyncIterable<Buffer> {
  if (head && head.length > 0) yield Buffer.from(head);
  for (const path of paths)
    yield* createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>;
}

export type { PartBounds };
