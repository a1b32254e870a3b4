// The team server's adapter of the list pipeline's ports (service/lists/backend/port.ts): lists, their input,
// plans, parts and results in PostgreSQL, their work on a pg-boss queue in the same database. Every step that
// writes data and queues the work that follows does both in one transaction (pg-boss's `db` option), so a
// crash never leaves a part without its job or a job without its part. Work is leased (a job's expiry): a
// node killed mid-part leaves its job to expire and be taken again, by any node; a part's results are saved
// once (the first save wins, later ones change nothing), so nothing is done twice in the results.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import PgBoss from 'pg-boss';
import { handleBossCompletions } from './bossCompletions.js';
import type { ListResource, ListServiceKey, PurchaseRequest } from '../../shared/api/list.js';
import type {
  JournalEntry,
  ListBackend,
  ListCompletion,
  ListJobHandlers,
  NewList,
  PartReports,
  PartWork,
  RunStart,
  StoredBytes,
  UploadClaim,
  UploadTicket,
} from '../lists/backend/port.js';
import type {
  IdentityReportState,
  PartBounds,
  PartOnlineState,
  PartResult,
  PlanRecord,
  ReportState,
} from '../lists/types.js';
import {
  planOf,
  encodePlan,
  listDocument,
  type ListRecord,
  type ListWait,
  type ServiceState,
} from '../lists/backend/store.js';
import {
  dayStartOf,
  listLimitProblem,
  uploadLimitProblem,
  type KeyHoldings,
} from '../lists/backend/limits.js';
import { RevokedKeyError } from '../store/keys.js';
import { lockActivePgKey } from './keys.js';
import {
  DEFAULT_UPLOAD_CONNECTIONS,
  inTransaction,
  openUploadPool,
  type PgClient,
  type PgPool,
  type Queryable,
} from './db.js';

/** Bytes per stored chunk of a list's input, text and assembled files. */
export const CHUNK_BYTES = 1024 * 1024;

/** The queues of list work. */
export const QUEUES = {
  plan: 'list-plan',
  part: 'list-part',
  finish: 'list-finish',
  callback: 'list-callback',
  failed: 'list-failed',
} as const;

/** The advisory lock of setting the queue up ("mailsieve queue"). */
const QUEUE_SETUP_LOCK = '7020745917350920549';

/** The advisory lock class of a key's submissions (with the key's id): its limits are counted one at a time. */
export const KEY_LISTS_LOCK = 0x6d736b6c; // "mskl"
/** The advisory lock class of a key's uploads arriving (with the key's id): counted one at a time. */
const KEY_UPLOADS_LOCK = 0x6d736b75; // "msku"
/** How long a node's row of an upload arriving counts without being renewed (a node that died lets it run out). */
const UPLOAD_LEASE_SECONDS = 30;
/** How often a node renews the lease of its uploads arriving. */
const UPLOAD_RENEW_MS = 10_000;
/** How long a node waits before asking again for a key's lock that another node holds (storing a list). */
const KEY_LOCK_RETRY_MS = 100;

/** Attempts of a job (the first and two retries) before the queue gives up on it. */
const ATTEMPTS = 3;

export interface PgListBackendOptions {
  /** A folder of this node for temporary files (the input of a plan, assembled files). */
  readonly workRoot: string;
  /** How long a job is leased to a node before it is taken to have died (default 180 s). */
  readonly leaseSeconds?: number;
  /** How often expired leases are looked for (default 5 s). */
  readonly maintenanceSeconds?: number;
  /** How often an idle node asks the queue for work (default 1 s). */
  readonly pollingSeconds?: number;
  /**
   * Connections uploads are stored with (default 4), a pool of their own: an upload holds its connection for
   * its whole insert, and uploads waiting for one wait their turn (without a time limit) instead of taking the
   * connections every other request needs.
   */
  readonly uploadConnections?: number;
  /** Gives back a list's records reserved against its key's quota, in `period` (the one they were charged in). */
  readonly onRefund?: (db: Queryable, keyId: number, records: number, period: string | null) => Promise<void>;
  /** Charges a list's records beyond those reserved, once it is complete, in `period` (the one charged). */
  readonly onComplete?: (db: Queryable, keyId: number, extra: number, period: string | null) => Promise<void>;
}

interface ListRow {
  id: number;
  key_id: number;
  name: string;
  input_file: string;
  options: ListRecord['options'];
  status: ListRecord['status'];
  service_status: ListRecord['serviceStatus'];
  reason: string | null;
  size_bytes: number;
  records: number;
  input_count: number;
  completed_count: number;
  reporting: ListRecord['reporting'];
  results_file: string | null;
  attempts: number;
  created_at: string;
  finished_at: string | null;
  services: ListServiceKey[];
  services_explicit: boolean;
  service_state: Partial<Record<string, ServiceState>>;
  purchase: PurchaseRequest | null;
  checks: ListRecord['checks'];
  online: ListWait | null;
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
    options: row.options,
    status: row.status,
    serviceStatus: row.service_status,
    reason: row.reason,
    sizeBytes: row.size_bytes,
    records: row.records,
    inputCount: row.input_count,
    completedCount: row.completed_count,
    reporting: row.reporting,
    resultsFile: row.results_file,
    attempts: row.attempts,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    services: row.services,
    servicesExplicit: row.services_explicit,
    serviceState: row.service_state,
    purchase: row.purchase,
    checks: row.checks,
    online: row.online,
    run: row.run,
    plan: row.plan ? planOf(row.id, row.run, row.plan) : null,
    reserved: row.reserved,
    chargedPeriod: row.charged_period,
  };
}

const now = () => new Date().toISOString();

/** pg-boss's `db` option over a client inside our transaction. */
function bossDb(client: PgClient): PgBoss.Db {
  return { executeSql: (text, values) => client.query(text, values) };
}

export class PgListBackend implements ListBackend {
  readonly kind = 'postgres' as const;
  readonly workRoot: string;
  private readonly boss: PgBoss;
  private readonly uploads: PgPool;
  private isStarted = false;
  private isClosed = false;
  private readonly partWorkers: string[] = [];
  private readonly planWorkers: string[] = [];
  private readonly finishWorkers: string[] = [];
  private readonly leaseSeconds: number;
  readonly leaseMs: number;
  /** This node's name on its rows of uploads arriving. */
  private readonly nodeId = randomUUID();
  /** This node's uploads arriving (their rows' ids), whose lease it renews. */
  private readonly arriving = new Set<number>();
  /** The row of each upload let in here. */
  private readonly uploadRows = new WeakMap<UploadTicket, number>();
  private renewal: NodeJS.Timeout | undefined;
  /** Each key's turn at this node's upload connections: a key stores one list at a time here (createList). */
  private readonly keyTurns = new Map<number, Promise<unknown>>();

  constructor(
    private readonly pool: PgPool,
    url: string,
    private readonly options: PgListBackendOptions,
  ) {
    this.workRoot = options.workRoot;
    this.leaseSeconds = options.leaseSeconds ?? 180;
    this.leaseMs = this.leaseSeconds * 1000;
    this.uploads = openUploadPool(url, options.uploadConnections ?? DEFAULT_UPLOAD_CONNECTIONS);
    handleBossCompletions();
    this.boss = new PgBoss({
      connectionString: url,
      schema: 'pgboss',
      max: 4,
      application_name: 'mailsieve-queue',
      supervise: true,
      maintenanceIntervalSeconds: options.maintenanceSeconds ?? 5,
      monitorStateIntervalSeconds: 3600,
      schedule: false,
    });
    // A lost connection (PostgreSQL restarted) surfaces here; pg-boss and the pool reconnect by themselves.
    this.boss.on('error', () => undefined);
  }

  /**
   * Starts the queue (installing or upgrading pg-boss's schema) and makes our queues, one node at a time: nodes
   * starting at once would otherwise make the same queues' tables at once, which PostgreSQL answers with a
   * deadlock.
   */
  async start(): Promise<void> {
    if (this.isStarted) return;
    const lock = await this.pool.connect();
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [QUEUE_SETUP_LOCK]);
      await this.boss.start();
      // The dead-letter queue first: the others name it.
      await this.boss.createQueue(QUEUES.failed, { name: QUEUES.failed, retryLimit: ATTEMPTS - 1 });
      for (const name of [QUEUES.plan, QUEUES.part, QUEUES.finish, QUEUES.callback])
        await this.boss.createQueue(name, {
          name,
          retryLimit: ATTEMPTS - 1,
          retryDelay: 1,
          expireInSeconds: this.leaseSeconds,
          deadLetter: QUEUES.failed,
        });
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [QUEUE_SETUP_LOCK]).catch(() => undefined);
      lock.release();
    }
    // Uploads of nodes that died (their lease ran out) count no more.
    await this.pool.query('DELETE FROM list_uploads WHERE lease_until < now()');
    this.isStarted = true;
  }

  /** Whether the queue is started and not yet stopped (readiness). */
  get isRunning(): boolean {
    return this.isStarted && !this.isClosed;
  }

  // Records.

  async getList(id: number): Promise<ListRecord | undefined> {
    return getPgList(this.pool, id);
  }

  async document(list: ListRecord): Promise<ListResource> {
    if (list.checks === 'dns' || list.checks === 'smtp') {
      const { rows } = await this.pool.query<{ completed: number; online: PartOnlineState | null }>(
        'SELECT completed, online FROM list_parts WHERE list_id = $1 AND run = $2 ORDER BY part',
        [list.id, list.run],
      );
      return listDocument(list, rows);
    }
    const { rows } = await this.pool.query<{ parts: number; completed: number | null }>(
      'SELECT count(*)::int AS parts, sum(completed)::bigint AS completed FROM list_parts WHERE list_id = $1 AND run = $2',
      [list.id, list.run],
    );
    const parts = rows[0]?.parts ?? 0;
    return listDocument(list, parts > 0 ? [{ completed: rows[0]?.completed ?? 0, online: null }] : []);
  }

  async beginUpload(claim: UploadClaim): Promise<UploadTicket> {
    const id = await inTransaction(this.pool, async (client) => {
      // A lock of its own, held for these few statements (never while a list is stored, as the key's lists'
      // lock is): the key's uploads are counted one at a time, across API nodes.
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [KEY_UPLOADS_LOCK, claim.keyId]);
      // The rows of a node that died stop counting when their lease runs out; they go here.
      await client.query('DELETE FROM list_uploads WHERE key_id = $1 AND lease_until < now()', [claim.keyId]);
      const held = await pgKeyHoldings(client, claim.keyId, { withUploads: true });
      const problem = uploadLimitProblem(claim.limits, held, claim.leastBytes, claim.isExact);
      if (problem) throw problem;
      const { rows: made } = await client.query<{ id: number }>(
        `INSERT INTO list_uploads (key_id, node, bytes, lease_until)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING id`,
        [claim.keyId, this.nodeId, claim.leastBytes, UPLOAD_LEASE_SECONDS],
      );
      return made[0].id;
    });
    this.arriving.add(id);
    this.renewal ??= setInterval(() => void this.renewUploads(), UPLOAD_RENEW_MS).unref();
    const ticket = {
      end: () => {
        // (Its list made, the row went with it: see tryCreateList.)
        if (!this.endUpload(id)) return;
        // Should the database not answer, the row's lease runs out: it is not renewed any more.
        void this.pool.query('DELETE FROM list_uploads WHERE id = $1', [id]).catch(() => undefined);
      },
    };
    this.uploadRows.set(ticket, id);
    return ticket;
  }

  /** The upload of row `id` no longer arrives here; whether it still did. */
  private endUpload(id: number): boolean {
    if (!this.arriving.delete(id)) return false;
    if (this.arriving.size === 0) {
      clearInterval(this.renewal);
      this.renewal = undefined;
    }
    return true;
  }

  /** Renews the lease of this node's uploads arriving. */
  private async renewUploads(): Promise<void> {
    if (this.arriving.size === 0) return;
    await this.pool
      .query(
        'UPDATE list_uploads SET lease_until = now() + make_interval(secs => $2) WHERE id = ANY($1::bigint[])',
        [[...this.arriving], UPLOAD_LEASE_SECONDS],
      )
      .catch(() => undefined);
  }

  /**
   * Runs `work` when this node stores no other list of the key: a key takes at most one of the node's upload
   * connections, whatever it sends, so that its uploads never hold other keys' behind them.
   */
  private inKeyTurn<T>(keyId: number, work: () => Promise<T>): Promise<T> {
    const before = this.keyTurns.get(keyId) ?? Promise.resolve();
    const turn = before.then(work, work);
    const done = turn.then(
      () => undefined,
      () => undefined,
    );
    this.keyTurns.set(keyId, done);
    void done.then(() => {
      if (this.keyTurns.get(keyId) === done) this.keyTurns.delete(keyId);
    });
    return turn;
  }

  async createList(list: NewList): Promise<number> {
    // The key's turn here first, then an upload connection; the key's lock across nodes is only tried on it: a
    // connection is never held waiting while another node stores a list of the same key.
    return this.inKeyTurn(list.keyId, async () => {
      for (;;) {
        const id = await this.tryCreateList(list);
        if (id !== undefined) return id;
        await new Promise((resolve) => setTimeout(resolve, KEY_LOCK_RETRY_MS));
      }
    });
  }

  /** The list stored and queued, or undefined when another node holds the key's lock (storing one of its lists). */
  private async tryCreateList(list: NewList): Promise<number | undefined> {
    return inTransaction(this.uploads, async (client) => {
      const at = now();
      // What the key holds, counted with its other submissions waiting (any node's) until this one commits.
      const { rows: locked } = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_xact_lock($1, $2) AS ok',
        [KEY_LISTS_LOCK, list.keyId],
      );
      if (!locked[0]?.ok) return undefined;
      // A key revoked while its list was uploading adds no list (keys.ts lockActivePgKey).
      if (!(await lockActivePgKey(client, list.keyId))) throw new RevokedKeyError();
      const held = await pgKeyHoldings(client, list.keyId);
      const problem = listLimitProblem(list.limits, held, list.textBytes);
      if (problem) throw problem;
      const { rows } = await client.query<{ id: number }>(
        `INSERT INTO lists (key_id, name, input_file, options, size_bytes, text_bytes, created_at, updated_at,
                            services, services_explicit, run, reserved, charged_period)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9, 1, $10, $11) RETURNING id`,
        [
          list.keyId,
          list.name,
          list.inputFile,
          JSON.stringify(list.options),
          list.sizeBytes,
          list.textBytes,
          at,
          JSON.stringify(list.services),
          list.servicesExplicit,
          list.reservedRecords,
          list.chargedPeriod,
        ],
      );
      const id = rows[0].id;
      await this.storeChunks(
        client,
        id,
        'input',
        createReadStream(list.uploadPath, { highWaterMark: CHUNK_BYTES }),
      );
      // Fair shares between keys: a key with fewer lists in progress has its plan taken first.
      await this.boss.send(
        QUEUES.plan,
        { listId: id, run: 1 },
        { db: bossDb(client), priority: -held.inFlight },
      );
      // The upload is a list now: its row goes as the list comes, so that the key never counts both.
      const uploadRow = list.upload && this.uploadRows.get(list.upload);
      if (uploadRow !== undefined) await client.query('DELETE FROM list_uploads WHERE id = $1', [uploadRow]);
      return id;
    }).then((id) => {
      if (id === undefined) return id;
      const uploadRow = list.upload && this.uploadRows.get(list.upload);
      if (uploadRow !== undefined) this.endUpload(uploadRow);
      // Another list's plan may be under way here: a free plan worker of this node asks at once.
      for (const worker of this.planWorkers) this.boss.notifyWorker(worker);
      return id;
    });
  }

  /** Stores a stream of bytes as the list's chunks of `kind` (1 MiB each, whatever the stream's pieces). */
  private async storeChunks(client: PgClient, listId: number, kind: string, source: AsyncIterable<Buffer>) {
    let seq = 0;
    let pending: Buffer[] = [];
    let size = 0;
    const put = async (bytes: Buffer) => {
      await client.query('INSERT INTO list_blobs (list_id, kind, seq, bytes) VALUES ($1, $2, $3, $4)', [
        listId,
        kind,
        seq++,
        bytes,
      ]);
    };
    for await (const chunk of source) {
      pending.push(chunk);
      size += chunk.length;
      while (size >= CHUNK_BYTES) {
        const all = Buffer.concat(pending);
        await put(all.subarray(0, CHUNK_BYTES));
        pending = [all.subarray(CHUNK_BYTES)];
        size = all.length - CHUNK_BYTES;
      }
    }
    if (size > 0) await put(Buffer.concat(pending));
  }

  /** The bytes [start, end) of the list's chunks of `kind`. */
  private async readRange(listId: number, kind: string, start: number, end: number): Promise<Buffer> {
    if (end <= start) return Buffer.alloc(0);
    const first = Math.floor(start / CHUNK_BYTES);
    const last = Math.floor((end - 1) / CHUNK_BYTES);
    const { rows } = await this.pool.query<{ seq: number; bytes: Buffer }>(
      'SELECT seq, bytes FROM list_blobs WHERE list_id = $1 AND kind = $2 AND seq BETWEEN $3 AND $4 ORDER BY seq',
      [listId, kind, first, last],
    );
    const all = Buffer.concat(rows.map((row) => row.bytes));
    const from = start - first * CHUNK_BYTES;
    const bytes = all.subarray(from, from + (end - start));
    if (bytes.length !== end - start) throw new Error(`the stored ${kind} of list ${listId} is incomplete`);
    return bytes;
  }

  private async *chunks(listId: number, kind: string): AsyncIterable<Buffer> {
    for (let seq = 0; ; seq++) {
      const { rows } = await this.pool.query<{ bytes: Buffer }>(
        'SELECT bytes FROM list_blobs WHERE list_id = $1 AND kind = $2 AND seq = $3',
        [listId, kind, seq],
      );
      if (!rows[0]) return;
      yield rows[0].bytes;
    }
  }

  private async blobSize(listId: number, kind: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ size: number | null; n: number }>(
      'SELECT sum(octet_length(bytes))::bigint AS size, count(*)::int AS n FROM list_blobs WHERE list_id = $1 AND kind = $2',
      [listId, kind],
    );
    return rows[0] && rows[0].n > 0 ? (rows[0].size ?? 0) : undefined;
  }

  async markPurchased(id: number, purchase: PurchaseRequest): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ run: number }>(
        `UPDATE lists SET status = 'Pending', service_status = 'Pending', purchase = $1, service_state = '{}',
           records = 0, input_count = 0, completed_count = 0, reporting = NULL, results_file = NULL, attempts = 0,
           online = NULL, finished_at = NULL, run = run + 1, plan = NULL, parts_done = 0, updated_at = $2
         WHERE id = $3 AND status = 'Processed' RETURNING run`,
        [JSON.stringify(purchase), now(), id],
      );
      if (!rows[0]) return false;
      await this.boss.send(QUEUES.plan, { listId: id, run: rows[0].run }, { db: bossDb(client) });
      return true;
    });
  }

  async finishNow(id: number): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ run: number }>(
        `UPDATE lists SET online = online || '{"finished_early": true}'::jsonb
         WHERE id = $1 AND status IN ('Pending', 'Processing') AND online IS NOT NULL RETURNING run`,
        [id],
      );
      if (!rows[0]) return false;
      // The parts waiting for a retry are asked for at once (the jobs queued for later find them done).
      const { rows: waiting } = await client.query<{ part: number }>(
        `SELECT part FROM list_parts WHERE list_id = $1 AND run = $2 AND NOT is_done
           AND coalesce((online->>'retry_rows')::int, 0) > 0`,
        [id, rows[0].run],
      );
      for (const { part } of waiting)
        await this.boss.send(QUEUES.part, { listId: id, run: rows[0].run, part }, { db: bossDb(client) });
      return true;
    });
  }

  async results(list: ListRecord): Promise<StoredBytes | undefined> {
    if (list.status !== 'Results' || !list.resultsFile || !list.plan) return undefined;
    if (list.resultsFile === 'results.zip') {
      const size = await this.blobSize(list.id, 'results.zip');
      if (size === undefined) return undefined;
      return { size, open: () => Readable.from(this.chunks(list.id, 'results.zip')) };
    }
    const { rows } = await this.pool.query<{ size: number | null; n: number }>(
      `SELECT sum(octet_length(output))::bigint AS size, count(*)::int AS n FROM list_parts
       WHERE list_id = $1 AND run = $2 AND is_done`,
      [list.id, list.run],
    );
    if (!rows[0] || rows[0].n !== list.plan.parts.length) return undefined;
    const head = Buffer.from(list.plan.head);
    const parts = list.plan.parts;
    const pool = this.pool;
    async function* bytes(): AsyncIterable<Buffer> {
      if (head.length > 0) yield head;
      for (const part of parts) {
        const { rows: found } = await pool.query<{ output: Buffer }>(
          'SELECT output FROM list_parts WHERE list_id = $1 AND run = $2 AND part = $3',
          [list.id, list.run, part.index],
        );
        if (found[0]?.output) yield found[0].output;
      }
    }
    return { size: head.length + (rows[0].size ?? 0), open: () => Readable.from(bytes()) };
  }

  async explain(list: ListRecord): Promise<StoredBytes | undefined> {
    if (list.status !== 'Results') return undefined;
    const size = await this.blobSize(list.id, 'explain');
    if (size === undefined) return undefined;
    return { size, open: () => Readable.from(this.chunks(list.id, 'explain')) };
  }

  async deleteList(id: number): Promise<void> {
    await this.pool.query('DELETE FROM lists WHERE id = $1', [id]);
  }

  // The plan job.

  async startRun(listId: number, run: number): Promise<RunStart | undefined> {
    const { rows } = await this.pool.query<ListRow>(
      `UPDATE lists SET status = 'Processing', service_status = 'Processing', records = 0, input_count = 0,
         completed_count = 0, service_state = '{}', attempts = attempts + 1, updated_at = $3
       WHERE id = $1 AND run = $2 AND status IN ('Pending', 'Processing') AND plan IS NULL RETURNING *`,
      [listId, run, now()],
    );
    if (!rows[0]) return undefined;
    const list = toRecord(rows[0]);
    const workDir = join(this.workRoot, `plan-${listId}-${run}-${process.pid}`);
    rmSync(workDir, { recursive: true, force: true });
    mkdirSync(workDir, { recursive: true, mode: 0o700 });
    const inputPath = join(workDir, list.inputFile);
    await pipeline(
      Readable.from(this.chunks(listId, 'input')),
      createWriteStream(inputPath, { mode: 0o600 }),
    );
    return {
      list,
      run,
      inputPath,
      workDir,
      release: () => rmSync(workDir, { recursive: true, force: true }),
    };
  }

  async setChecks(listId: number, run: number, level: 'offline' | 'dns' | 'smtp'): Promise<void> {
    await this.pool.query('UPDATE lists SET checks = $1 WHERE id = $2 AND run = $3', [level, listId, run]);
  }

  async planProgress(listId: number, run: number, records: number, completed: number): Promise<void> {
    await this.pool.query(
      `UPDATE lists SET records = greatest(records, $1), input_count = greatest(input_count, $1),
         completed_count = greatest(completed_count, least($2, $1)), updated_at = $3
       WHERE id = $4 AND run = $5 AND status = 'Processing'`,
      [records, completed, now(), listId, run],
    );
  }

  async setDelimiter(listId: number, delimiter: string): Promise<void> {
    await this.pool.query(
      `UPDATE lists SET options = jsonb_set(options, '{delimiter_used}', to_jsonb($1::text)) WHERE id = $2`,
      [delimiter, listId],
    );
  }

  async setServices(listId: number, run: number, services: readonly ListServiceKey[]): Promise<void> {
    await this.pool.query(
      `UPDATE lists SET services = $1, updated_at = $2 WHERE id = $3 AND run = $4 AND status = 'Processing'`,
      [JSON.stringify(services), now(), listId, run],
    );
  }

  async savePlan(listId: number, run: number, plan: PlanRecord): Promise<void> {
    const encoded = plan.encodedRows;
    if (!encoded) throw new Error("the team server keeps each part's rows: plan with encode");
    await inTransaction(this.pool, async (client) => {
      // The plan is saved once per run (a plan job taken again after a lost lease finds it there).
      const { rows } = await client.query<{ plan: string | null; online: ListWait | null }>(
        `SELECT plan, online FROM lists WHERE id = $1 AND run = $2 AND status = 'Processing' FOR UPDATE`,
        [listId, run],
      );
      if (!rows[0] || rows[0].plan !== null) return;
      if (plan.extractedText)
        await this.storeChunks(
          client,
          listId,
          'text',
          createReadStream(plan.extractedText, { highWaterMark: CHUNK_BYTES }),
        );
      const online = plan.context.check
        ? JSON.stringify({ ...(rows[0].online ?? {}), started_at: rows[0].online?.started_at ?? now() })
        : null;
      await client.query(
        `UPDATE lists SET plan = $1, records = $2, input_count = $2, completed_count = $3, parts_done = 0,
           online = coalesce($4::jsonb, online) WHERE id = $5`,
        [
          encodePlan({
            records: plan.records,
            head: plan.head,
            context: plan.context,
            parts: plan.parts,
            completedOffline: plan.completedOffline,
          }),
          plan.records,
          plan.completedOffline,
          online,
          listId,
        ],
      );
      for (const part of plan.parts)
        await client.query(
          `INSERT INTO list_parts (list_id, run, part, rows, completed, plan_rows) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT DO NOTHING`,
          [
            listId,
            run,
            part.index,
            part.rowCount,
            plan.partStarts[part.index]?.completed ?? 0,
            encoded[part.index],
          ],
        );
      // Fair shares between keys: each part is queued behind the key's parts already waiting, so that the
      // queue (highest priority first) hands out the next part of the key with the least work in hand.
      const ahead = await keyPartsWaiting(client, listId);
      await this.boss.insert(
        plan.parts.map((part, i) => ({
          name: QUEUES.part,
          data: { listId, run, part: part.index },
          priority: -(ahead + i),
          retryLimit: ATTEMPTS - 1,
          retryDelay: 1,
          expireInSeconds: this.leaseSeconds,
          deadLetter: QUEUES.failed,
        })),
        { db: bossDb(client) },
      );
    });
    // The parts are there to take: this node's part workers ask at once rather than at their next poll.
    for (const id of this.partWorkers) this.boss.notifyWorker(id);
  }

  async failRun(
    listId: number,
    run: number,
    status: 'Invalid' | 'Error',
    reason: string,
    records: number,
  ): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const at = now();
      const { rows } = await client.query<{
        key_id: number;
        reserved: number;
        charged_period: string | null;
        callback: string | null;
      }>(
        `UPDATE lists SET status = $1, service_status = 'Error', reason = $2, records = $3, updated_at = $4,
           finished_at = $4
         WHERE id = $5 AND run = $6 AND status IN ('Pending', 'Processing')
         RETURNING key_id, reserved, charged_period, options->>'callback_url' AS callback`,
        [status, reason, records, at, listId, run],
      );
      if (!rows[0]) return;
      await client.query('DELETE FROM list_verdicts WHERE list_id = $1', [listId]);
      // A list that failed runs no more: its input is of no more use, and is not kept until the retention sweep.
      await dropInput(client, listId, false);
      if (rows[0].reserved > 0)
        await this.options.onRefund?.(client, rows[0].key_id, rows[0].reserved, rows[0].charged_period);
      if (rows[0].callback)
        await this.boss.send(QUEUES.callback, { listId }, { db: bossDb(client), retryLimit: 0 });
    });
  }

  async isStale(listId: number, run: number): Promise<boolean> {
    const { rows } = await this.pool.query(
      `SELECT 1 FROM lists WHERE id = $1 AND run = $2 AND status = 'Processing'`,
      [listId, run],
    );
    return rows.length === 0;
  }

  // Part jobs.

  async partWork(listId: number, run: number, part: number): Promise<PartWork | undefined> {
    const list = await this.getList(listId);
    if (!list || list.run !== run || list.status !== 'Processing' || !list.plan) return undefined;
    const { rows } = await this.pool.query<{
      online: PartOnlineState | null;
      is_done: boolean;
      cuts: number[];
      open_ranges: number[];
    }>(
      'SELECT online, is_done, cuts, open_ranges FROM list_parts WHERE list_id = $1 AND run = $2 AND part = $3',
      [listId, run, part],
    );
    const bounds = list.plan.parts[part];
    if (!rows[0] || !bounds) return undefined;
    return {
      context: list.plan.context,
      bounds,
      online: rows[0].online,
      isDone: rows[0].is_done,
      waitingSince: list.online?.waiting_since ?? null,
      isFinishedEarly: list.online?.finished_early === true,
      cuts: rows[0].cuts,
      openRanges: rows[0].open_ranges,
    };
  }

  async partRows(listId: number, run: number, part: number): Promise<Uint8Array | undefined> {
    const { rows } = await this.pool.query<{ plan_rows: Buffer }>(
      'SELECT plan_rows FROM list_parts WHERE list_id = $1 AND run = $2 AND part = $3',
      [listId, run, part],
    );
    return rows[0]?.plan_rows;
  }

  async partText(listId: number, _run: number, bounds: PartBounds): Promise<Buffer | undefined> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM list_blobs WHERE list_id = $1 AND kind = 'text'`,
      [listId],
    );
    const kind = rows[0] && rows[0].n > 0 ? 'text' : 'input';
    return this.readRange(listId, kind, bounds.byteStart, bounds.byteEnd);
  }

  async journal(
    listId: number,
    level: string,
    addresses: readonly string[],
  ): Promise<Map<string, JournalEntry>> {
    const found = new Map<string, JournalEntry>();
    if (addresses.length === 0) return found;
    const { rows } = await this.pool.query<{ address: string; entry: JournalEntry }>(
      'SELECT address, entry FROM list_verdicts WHERE list_id = $1 AND level = $2 AND address = ANY($3::text[])',
      [listId, level, addresses],
    );
    for (const row of rows) found.set(row.address, row.entry);
    return found;
  }

  async addToJournal(
    listId: number,
    level: string,
    entries: readonly [string, JournalEntry][],
  ): Promise<void> {
    if (entries.length === 0) return;
    await this.pool
      .query(
        `INSERT INTO list_verdicts (list_id, level, address, entry)
       SELECT $1, $2, a, e FROM unnest($3::text[], $4::jsonb[]) AS t(a, e)
       ON CONFLICT (list_id, level, address) DO UPDATE SET entry = excluded.entry`,
        [
          listId,
          level,
          entries.map(([address]) => address),
          entries.map(([, entry]) => JSON.stringify(entry)),
        ],
      )
      .catch((error: { code?: string }) => {
        // The list was deleted meanwhile: its verdicts have nowhere to go.
        if (error.code !== '23503') throw error;
      });
  }

  async partOnline(
    listId: number,
    run: number,
    part: number,
    state: PartOnlineState,
    completed: number,
  ): Promise<void> {
    // Two jobs of a part cut between them (cutPart) each save what they know: the one that knows more stays.
    await this.pool.query(
      `UPDATE list_parts SET online = $1, completed = $2 WHERE list_id = $3 AND run = $4 AND part = $5 AND NOT is_done
         AND coalesce((online->>'rows_checked')::int, 0) <= $6`,
      [JSON.stringify(state), completed, listId, run, part, state.rows_checked],
    );
  }

  async beginWait(listId: number): Promise<string> {
    const { rows } = await this.pool.query<{ since: string | null }>(
      `UPDATE lists SET online = coalesce(online, '{}'::jsonb) ||
         jsonb_build_object('waiting_since', coalesce(online->>'waiting_since', $2::text))
       WHERE id = $1 RETURNING online->>'waiting_since' AS since`,
      [listId, now()],
    );
    return rows[0]?.since ?? now();
  }

  async requeuePart(listId: number, run: number, part: number, at?: Date, from?: number): Promise<void> {
    await this.sendPart(listId, run, part, { at, from });
  }

  /**
   * A job for the part (from `from` on, when its checks were cut), queued behind the key's parts waiting now;
   * inside `client`'s transaction when given.
   */
  private async sendPart(
    listId: number,
    run: number,
    part: number,
    { at, from, client }: { at?: Date | undefined; from?: number | undefined; client?: PgClient },
  ): Promise<void> {
    // Behind the key's parts waiting now (a fair share, as when the list's parts were queued).
    const ahead = await keyPartsWaiting(client ?? this.pool, listId);
    await this.boss.send(
      QUEUES.part,
      { listId, run, part, ...(from ? { from } : {}) },
      {
        priority: -ahead,
        retryLimit: ATTEMPTS - 1,
        retryDelay: 1,
        expireInSeconds: this.leaseSeconds,
        deadLetter: QUEUES.failed,
        ...(at ? { startAfter: at } : {}),
        ...(client ? { db: bossDb(client) } : {}),
      },
    );
  }

  async cutPart(listId: number, run: number, part: number, from: number, cut: number): Promise<boolean> {
    // The cut and the job of its rest in one transaction: a crash leaves either both or neither.
    return inTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        `UPDATE list_parts SET
           cuts = ARRAY(SELECT DISTINCT c FROM unnest(cuts || $4::int) AS c ORDER BY c),
           open_ranges = ARRAY(SELECT DISTINCT r FROM unnest(open_ranges || ARRAY[$5::int, $4::int]) AS r ORDER BY r)
         WHERE list_id = $1 AND run = $2 AND part = $3 AND NOT is_done`,
        [listId, run, part, cut, from],
      );
      if (!rowCount) return false;
      await this.sendPart(listId, run, part, { from: cut, client });
      return true;
    });
  }

  async closeRange(listId: number, run: number, part: number, from: number): Promise<boolean> {
    // Under the part's row lock: of two jobs closing their ranges at once, one sees the other's range closed.
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ open_ranges: number[]; is_done: boolean }>(
        'SELECT open_ranges, is_done FROM list_parts WHERE list_id = $1 AND run = $2 AND part = $3 FOR UPDATE',
        [listId, run, part],
      );
      const row = rows[0];
      if (!row || row.is_done) return false;
      const open = row.open_ranges.filter((start) => start !== from);
      await client.query(
        `UPDATE list_parts SET open_ranges = $4::int[], cuts = CASE WHEN $5 THEN '{}'::int[] ELSE cuts END
         WHERE list_id = $1 AND run = $2 AND part = $3`,
        [listId, run, part, open, open.length === 0],
      );
      return open.length === 0;
    });
  }

  async savePart(listId: number, run: number, part: number, result: PartResult): Promise<void> {
    const isLast = await inTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        `UPDATE list_parts SET is_done = true, completed = rows, output = $1, explain = $2, report = $3, identity = $4
         WHERE list_id = $5 AND run = $6 AND part = $7 AND NOT is_done`,
        [
          Buffer.concat(result.chunks as Uint8Array[]),
          result.explain,
          JSON.stringify(result.report),
          result.identity ? JSON.stringify(result.identity) : null,
          listId,
          run,
          part,
        ],
      );
      if (!rowCount) return false;
      const { rows } = await client.query<{ parts_done: number; parts: number }>(
        `UPDATE lists SET parts_done = parts_done + 1 WHERE id = $1 AND run = $2
         RETURNING parts_done, (SELECT count(*)::int FROM list_parts WHERE list_id = $1 AND run = $2) AS parts`,
        [listId, run],
      );
      if (!rows[0] || rows[0].parts_done !== rows[0].parts) return false;
      await this.boss.send(
        QUEUES.finish,
        { listId, run },
        {
          db: bossDb(client),
          retryLimit: ATTEMPTS - 1,
          expireInSeconds: this.leaseSeconds,
          deadLetter: QUEUES.failed,
        },
      );
      return true;
    });
    // The list's finish is there to take: this node's finish worker asks at once rather than at its next poll.
    if (isLast) for (const id of this.finishWorkers) this.boss.notifyWorker(id);
  }

  // The finish job.

  async partReports(listId: number, run: number): Promise<PartReports | undefined> {
    const { rows } = await this.pool.query<{
      report: ReportState | null;
      identity: IdentityReportState | null;
      is_done: boolean;
    }>('SELECT report, identity, is_done FROM list_parts WHERE list_id = $1 AND run = $2 ORDER BY part', [
      listId,
      run,
    ]);
    if (rows.length === 0 || rows.some((row) => !row.is_done || row.report === null)) return undefined;
    return {
      reports: rows.map((row) => row.report!),
      identity: rows.filter((row) => row.identity).map((row) => row.identity!),
    };
  }

  async *partBytes(listId: number, run: number, what: 'results' | 'explain'): AsyncIterable<Uint8Array> {
    const list = await this.getList(listId);
    if (!list?.plan) return;
    if (what === 'results') yield list.plan.head;
    for (const part of list.plan.parts) {
      const { rows } = await this.pool.query<{ output: Buffer | null; explain: string | null }>(
        'SELECT output, explain FROM list_parts WHERE list_id = $1 AND run = $2 AND part = $3',
        [listId, run, part.index],
      );
      const row = rows[0];
      if (what === 'results' && row?.output) yield row.output;
      if (what === 'explain' && row?.explain) yield Buffer.from(row.explain, 'utf8');
    }
  }

  async saveAssembled(
    listId: number,
    run: number,
    what: 'results.zip' | 'explain',
    path: string,
  ): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query(
        `SELECT 1 FROM lists WHERE id = $1 AND run = $2 AND status = 'Processing' FOR UPDATE`,
        [listId, run],
      );
      if (rows.length === 0) return;
      await client.query('DELETE FROM list_blobs WHERE list_id = $1 AND kind = $2', [listId, what]);
      await this.storeChunks(client, listId, what, createReadStream(path, { highWaterMark: CHUNK_BYTES }));
    });
  }

  async completeRun(listId: number, run: number, completion: ListCompletion): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{
        plan: string | null;
        key_id: number;
        reserved: number;
        charged_period: string | null;
        callback: string | null;
      }>(
        `SELECT plan, key_id, reserved, charged_period, options->>'callback_url' AS callback FROM lists
         WHERE id = $1 AND run = $2 AND status = 'Processing' FOR UPDATE`,
        [listId, run],
      );
      const row = rows[0];
      if (!row?.plan) return;
      const plan = planOf(listId, run, row.plan);
      const at = now();
      const state: Record<string, ServiceState> = {};
      for (const service of completion.services) {
        if (service === 'email_validation') continue;
        state[service] = {
          status: 'Completed',
          input_count: completion.records,
          completed_count: completion.records,
          reporting: completion.serviceReporting[service] ?? {},
        };
      }
      await client.query(
        `UPDATE lists SET status = $1, service_status = 'Completed', records = $2, input_count = $2,
           completed_count = $2, reporting = $3, results_file = $4, services = $5, service_state = $6, reason = NULL,
           updated_at = $7, finished_at = $7
         WHERE id = $8`,
        [
          completion.isAwaitingPurchase ? 'Processed' : 'Results',
          completion.records,
          JSON.stringify(completion.reporting),
          completion.isAwaitingPurchase ? null : plan.context.zipEntryName ? 'results.zip' : 'parts',
          JSON.stringify(completion.services),
          JSON.stringify(state),
          at,
          listId,
        ],
      );
      await client.query('DELETE FROM list_verdicts WHERE list_id = $1', [listId]);
      await dropInput(client, listId, completion.isAwaitingPurchase);
      if (plan.context.zipEntryName && !completion.isAwaitingPurchase)
        await client.query('UPDATE list_parts SET output = NULL WHERE list_id = $1 AND run = $2', [
          listId,
          run,
        ]);
      await this.options.onComplete?.(
        client,
        row.key_id,
        completion.records - row.reserved,
        row.charged_period,
      );
      if (row.callback)
        await this.boss.send(QUEUES.callback, { listId }, { db: bossDb(client), retryLimit: 0 });
    });
  }

  // The queue.

  async work(
    handlers: ListJobHandlers,
    options: { readonly parts: number; readonly plans?: number },
  ): Promise<void> {
    await this.start();
    type Data = { listId: number; run: number; part?: number; from?: number };
    const polling = { pollingIntervalSeconds: this.options.pollingSeconds ?? 1 };
    for (let i = 0; i < Math.max(1, options.plans ?? 1); i++)
      this.planWorkers.push(
        await this.boss.work<Data>(QUEUES.plan, polling, async ([job]) => {
          if (job) await handlers.plan(job.data.listId, job.data.run);
        }),
      );
    for (let i = 0; i < Math.max(1, options.parts); i++)
      this.partWorkers.push(
        await this.boss.work<Data>(QUEUES.part, polling, async ([job]) => {
          if (job)
            await handlers.part(job.data.listId, job.data.run, job.data.part ?? 0, undefined, job.data.from);
        }),
      );
    this.finishWorkers.push(
      await this.boss.work<Data>(QUEUES.finish, polling, async ([job]) => {
        if (job) await handlers.finish(job.data.listId, job.data.run);
      }),
    );
    await this.boss.work<Data>(QUEUES.callback, polling, async ([job]) => {
      if (job) await handlers.callback(job.data.listId);
    });
    // A job the queue gave up on (it failed, or its lease ran out, every attempt): its list gets Error.
    await this.boss.work<Data>(QUEUES.failed, { ...polling, includeMetadata: true }, async ([job]) => {
      if (!job) return;
      const output = job.output as { message?: string; value?: { message?: string } } | undefined;
      const why = output?.message ?? output?.value?.message ?? 'it failed on every attempt';
      const what =
        job.data.part !== undefined
          ? `part ${job.data.part + 1} of the list failed 3 times`
          : 'the list failed 3 times';
      await handlers.failed(job.data.listId, job.data.run, `${what} (${why})`);
    });
  }

  /** Stops the queue: no more work is taken, and the work in flight is waited for (at most 10 s). */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.boss.stop({ graceful: true, close: true, wait: true, timeout: 10_000 }).catch(() => undefined);
    clearInterval(this.renewal);
    await this.pool.query('DELETE FROM list_uploads WHERE node = $1', [this.nodeId]).catch(() => undefined);
    await this.uploads.end().catch(() => undefined);
  }
}

/**
 * Deletes what a list kept of its input to run: its parts' rows (addresses among them) and a zip's extracted
 * text, and, unless `keepInput` (a list awaiting purchase runs again from it), the input itself. A list with
 * Results needs none of them: its results are its parts' output (or its archive).
 */
async function dropInput(db: Queryable, listId: number, keepInput: boolean): Promise<void> {
  await db.query(`DELETE FROM list_blobs WHERE list_id = $1 AND kind = ANY($2::text[])`, [
    listId,
    keepInput ? ['text'] : ['input', 'text'],
  ]);
  await db.query(`UPDATE list_parts SET plan_rows = '' WHERE list_id = $1 AND octet_length(plan_rows) > 0`, [
    listId,
  ]);
}

/**
 * What a key holds, as its limits count it: its lists waiting or running, and the bytes of its lists submitted
 * today (their text's; a list from before text_bytes, its upload's); `withUploads`, its uploads arriving too.
 *
 * One statement, so one snapshot: an upload becoming a list (tryCreateList adds the list and drops the
 * upload's row in one commit) is counted once, as the one or the other, never as both.
 */
async function pgKeyHoldings(
  db: Queryable,
  keyId: number,
  { withUploads = false }: { readonly withUploads?: boolean } = {},
): Promise<KeyHoldings> {
  const { rows } = await db.query<{
    in_flight: number;
    bytes_today: number;
    uploads: number;
    upload_bytes: number;
  }>(
    `SELECT count(*) FILTER (WHERE status IN ('Pending', 'Processing'))::int AS in_flight,
            coalesce(sum(coalesce(text_bytes, size_bytes)) FILTER (WHERE created_at >= $2), 0)::bigint AS bytes_today,
            ${withUploads ? '(SELECT count(*) FROM list_uploads u WHERE u.key_id = $1)::int' : '0'} AS uploads,
            ${withUploads ? '(SELECT coalesce(sum(u.bytes), 0) FROM list_uploads u WHERE u.key_id = $1)::bigint' : '0'}
              AS upload_bytes
     FROM lists WHERE key_id = $1`,
    [keyId, dayStartOf()],
  );
  const held = { inFlight: rows[0]?.in_flight ?? 0, bytesToday: rows[0]?.bytes_today ?? 0 };
  return withUploads
    ? { ...held, uploads: rows[0]?.uploads ?? 0, uploadBytes: rows[0]?.upload_bytes ?? 0 }
    : held;
}

/** The part jobs waiting or running of the key of list `listId` (its work in hand, in parts). */
async function keyPartsWaiting(db: Queryable, listId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pgboss.job j
     WHERE j.name = $1 AND j.state < 'completed'
       AND (j.data->>'listId')::bigint IN (
         SELECT id FROM lists WHERE key_id = (SELECT key_id FROM lists WHERE id = $2)
           AND status IN ('Pending', 'Processing'))`,
    [QUEUES.part, listId],
  );
  return rows[0]?.n ?? 0;
}

export async function getPgList(db: Queryable, id: number): Promise<ListRecord | undefined> {
  const { rows } = await db.query<ListRow>('SELECT * FROM lists WHERE id = $1', [id]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}
