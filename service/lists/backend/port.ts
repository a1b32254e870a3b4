// The ports of the list pipeline: where lists are kept (their records, stored input, plans, parts and
// results) and how their work is queued. There is one pipeline (node/processor.ts over pipeline/plan.ts and
// pipeline/partWriter.ts) and two adapters: the single-node one (SQLite and files, an in-process queue:
// backend/localBackend.ts) and the team server's (PostgreSQL, pg-boss: service/pg/listBackend.ts). Both pass
// one contract suite (test/service/lists/backend.contract.test.ts).
//
// Work is leased and done at least once, and recorded exactly once: a part's results are saved under its
// (list, run, part) key, and a second save of the same part changes nothing. A run is one processing of a
// list from its stored input; a restart of the single-node service, or a purchase, starts a new run, and any
// work of an older run is dropped.
import type { ListLimits } from './limits.js';
import type { Readable } from 'node:stream';
import type {
  EmailValidationReporting,
  ListResource,
  ListServiceKey,
  PurchaseRequest,
  SubmitListParams,
} from '../../../shared/api/list.js';
import type { ListRecord } from './store.js';
import type {
  IdentityReportState,
  PartBounds,
  PartContext,
  PartOnlineState,
  PartResult,
  PlanRecord,
  ReportState,
} from '../types.js';
import type { UnknownCause } from '../../../shared/unknownCauses.js';

/** A verdict of the online phase, as the journal keeps it (see onlinePhase.ts). */
export interface JournalEntry {
  /** code, flags, valid email, checked, why, retryable, cause of an unknown, evidence */
  readonly c: number;
  readonly f: number;
  readonly v: string;
  readonly k: string;
  readonly w: string;
  readonly r?: 1;
  readonly u?: UnknownCause;
  /**
   * What decided it (the verifier's VerdictEvidence): host, reply, source and when, for a check that went
   * online; none for one decided offline, or kept by a service from before evidence was kept.
   */
  readonly e?: readonly [host: string, reply: string, source: string, checkedAt: string];
}

/** What a new list is made of (E7). */
export interface NewList {
  readonly keyId: number;
  readonly name: string;
  readonly options: SubmitListParams;
  readonly services: readonly ListServiceKey[];
  readonly servicesExplicit: boolean;
  /** The upload, received whole and checked, in a temporary file of this node (moved or copied in). */
  readonly uploadPath: string;
  readonly sizeBytes: number;
  /** The bytes of the list's text (a zip's file uncompressed): what `--max-bytes-day` counts. */
  readonly textBytes: number;
  /** Its upload's ticket (beginUpload): it ends as the list is made, so that the key never counts both. */
  readonly upload?: UploadTicket;
  /** The input's file name inside the list (`input.csv`, `input.zip`, …). */
  readonly inputFile: string;
  /** Records reserved against the key's quota (counted before the list is accepted), or 0. */
  readonly reservedRecords: number;
  /** The usage period they were charged in (their refund or settlement goes back to it). */
  readonly chargedPeriod: string;
  /**
   * What the key may hold: the list is refused with ListLimitError (E7's 429) past it
   * (service/lists/backend/limits.ts).
   */
  readonly limits: ListLimits;
}

/** An upload E7 asks to let in, before it reads the body. */
export interface UploadClaim {
  readonly keyId: number;
  readonly limits: ListLimits;
  /** The least bytes its list will count against `--max-bytes-day` (from the declared Content-Length), or 0. */
  readonly leastBytes: number;
  /** Whether `leastBytes` is exactly what the list will count (a text/csv body's declared length). */
  readonly isExact: boolean;
}

/** An upload let in: counted against its key's `--max-uploads` until it ends. */
export interface UploadTicket {
  /** The upload has ended (its list made, or refused, or the client gone); later calls do nothing. */
  end(): void;
}

/** A part as its job reads it. */
export interface PartWork {
  readonly context: PartContext;
  readonly bounds: PartBounds;
  readonly online: PartOnlineState | null;
  readonly isDone: boolean;
  /** The list's online wait: when it began, and whether Finish now ended it. */
  readonly waitingSince: string | null;
  readonly isFinishedEarly: boolean;
  /**
   * Where the part's checks were cut between jobs (positions in the part's domain order), and the starts of the
   * ranges whose job has not ended (team server, issue 38; see cutPart). Absent or empty: one job asks them all.
   */
  readonly cuts?: readonly number[];
  readonly openRanges?: readonly number[];
}

/** What every part reported, for the list's completion. */
export interface PartReports {
  readonly reports: readonly ReportState[];
  readonly identity: readonly IdentityReportState[];
}

export interface ListCompletion {
  readonly records: number;
  readonly reporting: EmailValidationReporting;
  readonly services: readonly ListServiceKey[];
  readonly serviceReporting: Partial<Record<string, object>>;
  readonly isAwaitingPurchase: boolean;
}

/** A stored file to send: its size and a stream of it. */
export interface StoredBytes {
  readonly size: number;
  open(): Readable;
}

/** A run of a list, as its plan job takes it. */
export interface RunStart {
  readonly list: ListRecord;
  readonly run: number;
  /** The stored input, as a file on this node (the team server copies it out of the database). */
  readonly inputPath: string;
  /** A folder of this node for the plan's temporary files (the extracted text of a zip). */
  readonly workDir: string;
  /** Gives back what the run's start took on this node (the team server's copy of the input). */
  release?(): void;
}

/** A part's place among those a node works on at once (`parts`). */
export interface PartSlot {
  /**
   * The part now only waits on mail servers: the node may start another part in its place. Resolves when
   * the list's other parts are at that point too (or a few seconds have passed), so that they start checking
   * together, each domain asked by all of them at once.
   */
  release(): Promise<void>;
}

export interface ListJobHandlers {
  plan(listId: number, run: number): Promise<void>;
  /**
   * `slot`, where the backend gives one (the single node), may be released once the part's own work is done
   * and it waits on mail servers: all of a list's parts then check together (see Lanes, onlinePhase.ts).
   * `from`, where the part's checks were cut between jobs (cutPart): this job asks those from `from` to the
   * next cut only.
   */
  part(listId: number, run: number, part: number, slot?: PartSlot, from?: number): Promise<void>;
  finish(listId: number, run: number): Promise<void>;
  callback(listId: number): Promise<void>;
  /** A part failed every attempt (the queue gave up on it): the list gets Error with the reason. */
  failed(listId: number, run: number, reason: string): Promise<void>;
}

export interface ListBackend {
  /** `sqlite` (one node) or `postgres` (a team server). */
  readonly kind: 'sqlite' | 'postgres';

  // Records.
  getList(id: number): Promise<ListRecord | undefined>;
  /** The status document (E8), with the parts' progress summed. */
  document(list: ListRecord): Promise<ListResource>;
  /**
   * E7 before it reads a body: lets the upload in, counted against the key's `--max-uploads` (across API nodes
   * on a team server) until its ticket ends, or throws ListLimitError (429) when the key is at `--max-uploads`
   * or its list could not fit `--max-lists` or `--max-bytes-day` whatever the body holds.
   */
  beginUpload(claim: UploadClaim): Promise<UploadTicket>;
  /** Stores the input and the list, Pending, with its plan job, in one step: no half list is ever visible. */
  createList(list: NewList): Promise<number>;
  /** A report-only list is bought: a new run, with what was bought. Whether it was still awaiting purchase. */
  markPurchased(id: number, purchase: PurchaseRequest): Promise<boolean>;
  /** Finish now: the list's wait for retries ends (its waiting parts run at once). Whether it had online checks. */
  finishNow(id: number): Promise<boolean>;
  /** The results file (E10) of a list with Results. */
  results(list: ListRecord): Promise<StoredBytes | undefined>;
  /** The explain CSV of a list with online checks, once it has Results. */
  explain(list: ListRecord): Promise<StoredBytes | undefined>;
  deleteList(id: number): Promise<void>;

  // The plan job.
  /** Starts a run of a Pending (or interrupted) list; undefined when the run is no longer current. */
  startRun(listId: number, run: number): Promise<RunStart | undefined>;
  /** The checks level the run has (set as it starts). */
  setChecks(listId: number, run: number, level: 'offline' | 'dns' | 'smtp'): Promise<void>;
  planProgress(listId: number, run: number, records: number, completed: number): Promise<void>;
  setDelimiter(listId: number, delimiter: string): Promise<void>;
  setServices(listId: number, run: number, services: readonly ListServiceKey[]): Promise<void>;
  /** Keeps the plan and queues a job per part, in one step. */
  savePlan(listId: number, run: number, plan: PlanRecord): Promise<void>;
  /** Invalid (the file) or Error (the processing): ends the run, gives back its reserved records, announces it. */
  failRun(
    listId: number,
    run: number,
    status: 'Invalid' | 'Error',
    reason: string,
    records: number,
  ): Promise<void>;
  /** Whether the run's work is to be dropped (a later run began, or the list is gone). */
  isStale(listId: number, run: number): Promise<boolean>;

  // Part jobs.
  partWork(listId: number, run: number, part: number): Promise<PartWork | undefined>;
  /** The part's rows as stored (team server); undefined when they are kept in memory (one node). */
  partRows(listId: number, run: number, part: number): Promise<Uint8Array | undefined>;
  /** The part's bytes of the list's text (team server); undefined when read from the local file (one node). */
  partText(listId: number, run: number, bounds: PartBounds): Promise<Buffer | undefined>;
  /** Verdicts already known for a list's addresses (a retry, a part redone after a lost lease, a restart). */
  journal(listId: number, level: string, addresses: readonly string[]): Promise<Map<string, JournalEntry>>;
  addToJournal(listId: number, level: string, entries: readonly [string, JournalEntry][]): Promise<void>;
  partOnline(
    listId: number,
    run: number,
    part: number,
    state: PartOnlineState,
    completed: number,
  ): Promise<void>;
  /** The list's online wait begins (once): when it began. */
  beginWait(listId: number): Promise<string>;
  /**
   * Asks for the part again at `at` (a retry of temporary failures), or at once when `at` is undefined; `from`:
   * only the range of its checks from there (cutPart).
   */
  requeuePart(listId: number, run: number, part: number, at?: Date, from?: number): Promise<void>;
  /**
   * The job asking the part's checks from `from` keeps those before `cut` and hands those from `cut` on at once,
   * to a job of their own (a team node with room for only the first of a heavy domain's part, issue 38): both
   * ranges are open until their job ends (closeRange). False, nothing done, when the part is done already.
   */
  cutPart?(listId: number, run: number, part: number, from: number, cut: number): Promise<boolean>;
  /**
   * The job of the range from `from` has every check of it answered: the range is closed. True when no other
   * range of the part is open: this job, and no other, goes on to write the part (the ranges are forgotten).
   */
  closeRange?(listId: number, run: number, part: number, from: number): Promise<boolean>;
  /** Saves a part's results once; the last part's save queues the list's completion. */
  savePart(listId: number, run: number, part: number, result: PartResult): Promise<void>;

  // The finish job.
  partReports(listId: number, run: number): Promise<PartReports | undefined>;
  /** The head and every part's bytes, in order (for a zip list's archive, and the explain file). */
  partBytes(listId: number, run: number, what: 'results' | 'explain'): AsyncIterable<Uint8Array>;
  /** Stores the zip archive of a zip list's results, or the explain CSV. */
  saveAssembled(listId: number, run: number, what: 'results.zip' | 'explain', path: string): Promise<void>;
  /** Results (or Processed, awaiting purchase): the run is complete; its callback is queued. */
  completeRun(listId: number, run: number, completion: ListCompletion): Promise<void>;

  /**
   * Runs the queue's jobs on this node with these handlers (`parts`: part jobs at once; `plans`: plan jobs at
   * once, where the adapter can run more than one).
   */
  work(
    handlers: ListJobHandlers,
    options: { readonly parts: number; readonly plans?: number },
  ): Promise<void>;
  /** A folder of this node for temporary files. */
  readonly workRoot: string;
  /**
   * The file a part's results go to on this node (the single node's list folder): its pipeline worker writes
   * them there itself, and sends none of the bytes to the service's thread. Undefined: the bytes are sent.
   */
  partFile?(listId: number, run: number, part: number): string;
  /** How long a job is leased to a node (the team server's queue gives up on a job that runs longer). */
  readonly leaseMs?: number;
  close(): Promise<void>;
}
