// The one job engine of the desktop and the CLI: a list file through the service (the provider's, or the
// embedded one on loopback), as step functions that report each checkpoint through a port:
//
//   upload (E7, streamed multipart) → follow (E8, never faster than pollList allows; waits while the service
//   cannot be reached) → [purchase (E9), only when the user buys a report-only list] → download (E10,
//   streamed to disk) → exports (computed from the same bytes, in one pass)
//
// The port records where the job stands — the history DB for the desktop (jobs/scheduler.ts), a state file beside
// the output for the CLI (stateFile.ts) — so a job taken up again (`runJob` with its checkpoint) re-uses its
// submitted list instead of submitting it again, and fetches the results of a list that finished meanwhile.
// A list that ran to Results is downloaded without E9: only a report-only list awaiting purchase is bought.
//
// A busy service is waited for, never taken for a failure: an upload or a download the service refused before
// doing any work (429, 503 — a team server's key past its uploads or lists at once) is sent again when its
// Retry-After has passed, as often as it takes, and the job says in words what it waits for. A scheduler's jobs
// (the parts of a split file, sent together) take turns: at most UPLOADS_AT_ONCE uploads and DOWNLOADS_AT_ONCE
// downloads at once to one service, within a team server's defaults for a key.
//
// Failures are JobFailure errors: a code and one line for a person, without the key. Every file appears
// whole (outputs.ts): the results and each export under a temporary name, renamed once complete.
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { extname, join } from 'node:path';
import {
  isLoopbackUrl,
  isRefusedBeforeWork,
  pollList,
  safeFileName,
  type ApiError,
  type ApiResult,
  type Client,
  type ListResults,
  type SubmitListResult,
} from '../../../shared/api/client.js';
import {
  isAwaitingPurchase,
  isFinalListStatus,
  listFileExtension,
  type ListResource,
  type PurchaseRequest,
  type SubmitListParams,
} from '../../../shared/api/list.js';
import type { CountsRequest } from './counts.js';
import { ResultsProblem, exportResultsFile, type ExportRequest, type ResultsSummary } from './exports.js';
import { openListSource } from '../files/source.js';
import { holdOutputFolder } from './outputFolder.js';
import { BufferedFile, temporaryPathOf } from './outputs.js';
import { ResultsSink } from './resultsSink.js';

export type EngineClient = Pick<Client, 'baseUrl' | 'submitList' | 'listStatus' | 'purchase' | 'results'>;

export type JobEvent =
  | { readonly phase: 'uploading'; readonly sentBytes: number; readonly totalBytes: number }
  | { readonly phase: 'submitted'; readonly listId: number }
  /** E9 bought a report-only list: it runs again to its results. */
  | { readonly phase: 'purchased'; readonly listId: number }
  | { readonly phase: 'processing'; readonly list: ListResource }
  /** The job waits: for the service (it cannot be reached, or asked to wait), or for its turn. */
  | { readonly phase: 'waiting'; readonly message: string }
  | {
      readonly phase: 'downloading';
      readonly receivedBytes: number;
      readonly totalBytes: number | undefined;
    };

export type JobErrorCode =
  | 'upload-failed'
  | 'list-invalid'
  | 'list-error'
  | 'list-cancelled'
  | 'poll-failed'
  | 'purchase-failed'
  | 'download-failed'
  | 'export-failed'
  | 'cancelled';

export class JobFailure extends Error {
  constructor(
    readonly code: JobErrorCode,
    message: string,
    /** The last status document, when the list got that far. */
    readonly list?: ListResource,
  ) {
    super(message);
  }
}

export interface ExportFileInfo {
  /** The export's name (its kind, for the CLI's exports). */
  readonly kind: string;
  readonly path: string;
  readonly rows: number;
}

/** The list's results, downloaded (and the exports written). */
export interface ResultsOutcome {
  readonly stage: 'results';
  readonly list: ListResource;
  readonly resultsPath: string;
  /** The results file's name: the service's (Content-Disposition), `<name>-<list id>-<Service>.<ext>`. */
  readonly resultsName: string;
  readonly exports: readonly ExportFileInfo[];
  /** Rows and duplicates, read from the results; absent when validation did not run. */
  readonly summary?: ResultsSummary;
  /** Why the exports asked for were not written (results without validation columns). */
  readonly exportsSkipped?: string;
}

/** A report-only list whose match reports are in `list`: nothing bought, nothing downloaded. */
export interface AwaitingPurchaseOutcome {
  readonly stage: 'awaiting-purchase';
  readonly list: ListResource;
}

export type JobOutcome = ResultsOutcome | AwaitingPurchaseOutcome;

/** Where a job stands, as its checkpoints recorded it. */
export interface JobCheckpoint {
  /** The list E7 created; null until the upload is done. */
  readonly listId: number | null;
  /** E9 went through: a report-only list is followed to its results, not to its match reports. */
  readonly isPurchased: boolean;
}

/** Where a job stands while it waits: for its turn (`queued`), or to send its upload, poll or download again. */
export type WaitingStep = 'queued' | 'uploading' | 'processing' | 'downloading';

/** Where a job's checkpoints are recorded. Each call returns once the checkpoint is durable. */
export interface CheckpointPort {
  /** The upload starts (again). */
  uploading(): void;
  /** E7 answered: the list to follow from now on. */
  submitted(listId: number): void;
  /** A status document of the list (every poll). */
  followed(list: ListResource): void;
  /**
   * The job waits, `message` saying for what: the service could not be reached or asked to wait (the step is
   * tried again after a pause), or the job waits for its turn to upload or download.
   */
  waiting(message: string, step: WaitingStep): void;
  /** A report-only list's match reports are in: it waits to be bought. */
  awaitingPurchase(list: ListResource): void;
  /** E9 went through (or its lost answer is known to have). */
  purchased(listId: number): void;
  /** The list has its results: the download starts. */
  downloading(list: ListResource): void;
  /** The results (and exports) are on disk under their final names. */
  completed(outcome: ResultsOutcome): void;
}

/** The upload of a job: the file and E7's parameters (`name`: the list's name at the service). */
export interface UploadSpec {
  readonly file: string;
  readonly params: SubmitListParams & { readonly name: string };
  /** A stall, not the whole upload: the timeout restarts with every chunk sent. Default 120 s. */
  readonly timeoutMs?: number;
}

export interface JobSpec {
  readonly client: EngineClient;
  /** What to submit; needed only while the checkpoint has no list. */
  readonly upload?: UploadSpec;
  /** The results' delimiter (the list's); undefined: read from the results' header, else the name's. */
  readonly delimiter: string | undefined;
  /** Folder of the results file and the exports. */
  readonly outDir: string;
  /** The exports to compute from the download, given the extension of the results' text. */
  readonly exports?: (textExtension: string) => readonly ExportRequest[];
  /** Count the Results screen's numbers in the same pass (the desktop: ready when the job completes). */
  readonly counts?: CountsRequest;
  /** Stop once the list awaits its purchase (a list submitted with `report=true`, not bought yet). */
  readonly reportOnly: boolean;
  /** Least time between status requests; pollList raises it to 5 s for a remote service. */
  readonly pollIntervalMs: number;
  /**
   * How long to wait before following again when the service cannot be reached, and before sending again an
   * upload or download it refused without a Retry-After (doubled after each refusal, up to a minute). Default 5 s.
   */
  readonly retryDelayMs?: number;
  /** Turns shared by a scheduler's jobs (ServiceSlots); absent, the job takes no turns (the CLI's one job). */
  readonly turns?: { readonly uploads: ServiceSlots; readonly downloads: ServiceSlots };
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: JobEvent) => void;
}

// ---------------------------------------------------------------------------------------------------------
// Words

/** A client error in the service's words: `List 7 not found. (HTTP 404)` rather than the request line. */
export function serviceWords(error: ApiError): string {
  const match = /^[A-Z]+ \S+: HTTP (\d+) (.+)$/.exec(error.message);
  return match ? `${match[2]} (HTTP ${match[1]})` : error.message;
}

const NO_VALIDATION_EXPORTS =
  'no exports were written: the list ran without validation, and the exports sort rows by validation status';

/** Whether the results have the validation columns the exports sort rows by. */
export const hasValidation = (list: ListResource): boolean => list.services.email_validation !== undefined;

/** The word the service names results by: Validation when it ran, else the first service run. */
function serviceWord(list: ListResource): string {
  if (list.services.email_validation) return 'Validation';
  if (list.services.email_intelligence) return 'Intelligence';
  if (list.services.email_append) return 'EmailAppend';
  if (list.services.alternate_email_append) return 'AlternateEmail';
  return 'Validation';
}

/**
 * The results file's name: the service's (Content-Disposition), else the same rule made here,
 * `<name>-<list id>-<Service>.<ext>`.
 */
export function resultsFileName(list: ListResource, given: string | undefined): string {
  const safe = safeFileName(given);
  if (safe) return safe;
  const extension = listFileExtension(list.name) ?? '.csv';
  const stem = list.name.slice(0, list.name.length - extname(list.name).length) || 'list';
  return `${stem}-${list.list_id}-${serviceWord(list)}${extension}`;
}

// ---------------------------------------------------------------------------------------------------------
// Files

/**
 * The buffers a file stream reads into, in turn. A new buffer a chunk made an upload's garbage: freed
 * only when V8 next collected (after some 64 MB of them), and the C allocator's heap kept the pages after:
 * 70–90 MB of the 1,000,000-row clean's peak memory (docs/lists.md). A buffer comes round again only
 * FILE_STREAM_RING pulls later, and a stream's consumer pulls a chunk only when it has room for one: fetch
 * writes each to its socket, and waits for the socket to drain, before it reads the next. Three are in flight
 * in an upload (the one being written, one queued in this stream and one in the client's): a ring of 3 loses
 * bytes, of 4 does not (test/electron/core/fileStream.test.ts sends 40 chunks through the client's upload to a
 * slow reader and compares what arrived); 16 leaves room for a consumer that queues more.
 */
export const FILE_STREAM_RING = 16;

/**
 * The bytes of a file stream's chunk. The ring stays alive as long as its stream, which V8 collects late (the
 * main thread allocates little after an upload), and its buffers come from the main C heap, which keeps its
 * pages: 16 chunks of 1 MiB were 16 MB of the 1,000,000-row clean's memory through its processing, at the
 * peak (issue 38). A chunk of 256 KiB is still written to the socket in one call.
 */
export const FILE_STREAM_CHUNK = 256 * 1024;

/**
 * A file as a web stream that reads a chunk only when the consumer pulls one. (Readable.toWeb would take the
 * file stream's byte highWaterMark for a count of chunks and read the whole file ahead into memory.) Its
 * chunks are views of FILE_STREAM_RING buffers used in turn, each made when first needed (a small file
 * takes one).
 */
export function fileStream(path: string, chunkBytes = FILE_STREAM_CHUNK): ReadableStream<Uint8Array> {
  let handle: FileHandle | undefined;
  const ring: Buffer[] = [];
  let turn = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        handle ??= await open(path, 'r');
        const slot = turn++ % FILE_STREAM_RING;
        const chunk = (ring[slot] ??= Buffer.allocUnsafe(chunkBytes));
        const { bytesRead } = await handle.read(chunk, 0, chunkBytes, null);
        if (bytesRead === 0) {
          await handle.close();
          controller.close();
          return;
        }
        controller.enqueue(bytesRead === chunkBytes ? chunk : chunk.subarray(0, bytesRead));
      },
      async cancel() {
        await handle?.close();
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * The delimiter of a results file, from its header: the character between the appended `Validation Status`
 * and `Validation Code`. Undefined when the header does not show it.
 */
export function resultsDelimiter(header: string): string | undefined {
  return /Validation Status"?([^"\r\n])"?Validation Code/u.exec(header)?.[1];
}

/** The delimiter to read results by when the header does not tell: the name's (`.csv` comma, else tab). */
const delimiterOfName = (name: string) => (listFileExtension(name) === '.csv' ? ',' : '\t');

const HEAD_BYTES = 64 * 1024;
const LINE_FEED = 0x0a;

/**
 * Passes `chunks` on after `use` was called with the delimiter: the given one at once, else the one the
 * results' header shows (its first line, or the first 64 KiB), else the name's.
 */
async function* withDelimiter(
  chunks: AsyncIterable<Uint8Array>,
  given: string | undefined,
  name: string,
  use: (delimiter: string) => void | Promise<void>,
): AsyncIterable<Uint8Array> {
  if (given !== undefined) {
    await use(given);
    yield* chunks;
    return;
  }
  const head: Uint8Array[] = [];
  let size = 0;
  let isKnown = false;
  const learn = async () => {
    await use(resultsDelimiter(Buffer.concat(head).toString('utf8')) ?? delimiterOfName(name));
    isKnown = true;
  };
  for await (const chunk of chunks) {
    if (isKnown) {
      yield chunk;
      continue;
    }
    head.push(chunk);
    size += chunk.length;
    if (size < HEAD_BYTES && !chunk.includes(LINE_FEED)) continue;
    await learn();
    yield* head;
  }
  if (!isKnown) {
    await learn();
    yield* head;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new JobFailure('cancelled', 'Cancelled.'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new JobFailure('cancelled', 'Cancelled.'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const callOf = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

// ---------------------------------------------------------------------------------------------------------
// A busy service

/**
 * The longest Retry-After a job waits for. A longer one fails the job with the service's words: a key past its
 * bytes of the day is told to come back after midnight UTC, hours away, and such a job is better run again then
 * (the desktop's Run again, `mailsieve clean` again) than left waiting unseen. Within the last minutes of the
 * day the same refusal is waited for.
 */
export const LONGEST_WAIT_MS = 5 * 60_000;

/**
 * Uploads (E7) and downloads (E10) a scheduler's jobs send one service at once: within a team server's defaults
 * for a key (`--max-uploads` 2; 4 downloads at once), whatever the number of parts.
 */
export const UPLOADS_AT_ONCE = 2;
export const DOWNLOADS_AT_ONCE = 2;

/**
 * Turns at a service (its base URL): at most `limit` at once; the others wait, first come first served. One for
 * uploads and one for downloads are shared by a scheduler's jobs.
 */
export class ServiceSlots {
  private readonly services = new Map<string, { held: number; readonly queue: (() => void)[] }>();

  constructor(readonly limit: number) {}

  /**
   * A turn at `service`: answers its end (call it once; later calls do nothing). `onWait` is told, once, when
   * the turn must wait for another to end. A JobFailure `cancelled` when `signal` aborts while it waits.
   */
  async take(service: string, signal: AbortSignal | undefined, onWait: () => void): Promise<() => void> {
    let state = this.services.get(service);
    if (!state) {
      state = { held: 0, queue: [] };
      this.services.set(service, state);
    }
    const held = state;
    const end = () => {
      let isEnded = false;
      return () => {
        if (isEnded) return;
        isEnded = true;
        // The turn passes on to the first in line, or is given back.
        const next = held.queue.shift();
        if (next) next();
        else if (--held.held === 0) this.services.delete(service);
      };
    };
    if (held.held < this.limit) {
      held.held++;
      return end();
    }
    if (signal?.aborted) throw new JobFailure('cancelled', 'Cancelled.');
    onWait();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = held.queue.indexOf(grant);
        if (at >= 0) held.queue.splice(at, 1);
        reject(new JobFailure('cancelled', 'Cancelled.'));
      };
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      held.queue.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return end();
  }
}

/**
 * How long to wait before sending again a request the service refused before doing any work (429, 503): what
 * its Retry-After asks, never less, plus up to a tenth of it and a second, so that jobs refused together do not
 * all come back at the same moment; without a Retry-After, `baseDelayMs` doubled after each refusal, up to a
 * minute. Undefined: not a refusal to wait out (another error, or a Retry-After past LONGEST_WAIT_MS).
 */
export function refusalWait(
  error: ApiError,
  refusals: number,
  baseDelayMs: number,
  random: () => number = Math.random,
): number | undefined {
  if (!isRefusedBeforeWork(error)) return undefined;
  const asked = error.retryAfterMs ?? Math.min(60_000, baseDelayMs * 2 ** Math.min(refusals, 10));
  if (asked > LONGEST_WAIT_MS) return undefined;
  return asked + Math.floor(random() * (asked / 10 + 1000));
}

const secondsOf = (ms: number) => `${Math.ceil(ms / 1000)} s`;

/** Tells the port and the caller that the job waits, and why. */
function sayWaiting(spec: JobSpec, port: CheckpointPort, step: WaitingStep, message: string): void {
  port.waiting(message, step);
  spec.onEvent?.({ phase: 'waiting', message });
}

/** A turn from `slots` (none to take without them), the wait told in words. */
function turnAt(
  spec: JobSpec,
  slots: ServiceSlots | undefined,
  step: WaitingStep,
  port: CheckpointPort,
): Promise<() => void> {
  if (!slots) return Promise.resolve(() => undefined);
  const what =
    step === 'downloading'
      ? `download: this app fetches ${slots.limit} results files at once from a service`
      : `upload: this app sends ${slots.limit} files at once to a service`;
  return slots.take(spec.client.baseUrl, spec.signal, () =>
    sayWaiting(spec, port, step, `Waiting for its turn to ${what}; the others are under way.`),
  );
}

/**
 * After a refusal of `error` (the `refusals`th in a row): waits as long as `refusalWait` says, telling why,
 * and answers true; false when the refusal is not one to wait out.
 */
async function waitOutRefusal(
  spec: JobSpec,
  port: CheckpointPort,
  step: WaitingStep,
  error: ApiError,
  refusals: number,
  again: string,
): Promise<boolean> {
  const waitMs = refusalWait(error, refusals, spec.retryDelayMs ?? 5000);
  if (waitMs === undefined) return false;
  sayWaiting(
    spec,
    port,
    step,
    `Waiting for the service: ${serviceWords(error)} ${again} in ${secondsOf(waitMs)}.`,
  );
  await sleep(waitMs, spec.signal);
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// The steps

/** E7: the file, streamed from disk. Answers the list id (recorded by the port before anything else). */
export async function uploadList(spec: JobSpec, port: CheckpointPort): Promise<number> {
  const { client, signal } = spec;
  const emit = spec.onEvent ?? (() => undefined);
  const upload = spec.upload;
  if (!upload) throw new JobFailure('upload-failed', 'The job has no file to upload.');
  let size: number;
  try {
    size = statSync(upload.file).size;
  } catch {
    throw new JobFailure('upload-failed', `Cannot read ${upload.file}.`);
  }
  // The spec recommends multipart for large files, and a zip must be one. Our own service on this machine
  // takes a text list as a text/csv body, which it stores without a multipart parser's pass.
  const mode =
    isLoopbackUrl(client.baseUrl) && listFileExtension(upload.params.name) !== '.zip' ? 'text' : 'multipart';
  for (let refusals = 0; ; refusals++) {
    const endTurn = await turnAt(spec, spec.turns?.uploads, refusals === 0 ? 'queued' : 'uploading', port);
    let submitted: ApiResult<SubmitListResult>;
    try {
      port.uploading();
      emit({ phase: 'uploading', sentBytes: 0, totalBytes: size });
      submitted = await client.submitList(
        // Opened for each attempt: a refused upload is sent again from the file's first byte.
        { name: upload.params.name, body: () => fileStream(upload.file), size },
        upload.params,
        {
          mode,
          onProgress: (sent, total) =>
            emit({ phase: 'uploading', sentBytes: sent, totalBytes: total ?? size }),
          ...callOf(signal),
          timeoutMs: upload.timeoutMs ?? 120_000,
          // Each wait is this loop's, told in words (the client's own retries would wait unseen).
          retries: 0,
        },
      );
    } finally {
      endTurn();
    }
    if (submitted.ok) {
      const listId = submitted.value.list_id;
      emit({ phase: 'uploading', sentBytes: size, totalBytes: size });
      port.submitted(listId);
      emit({ phase: 'submitted', listId });
      return listId;
    }
    if (submitted.error.kind === 'aborted' || signal?.aborted)
      throw new JobFailure('cancelled', 'Cancelled while uploading.');
    // Refused before its body was read (uploads or lists at once, a busy node): the same file, again.
    if (!(await waitOutRefusal(spec, port, 'uploading', submitted.error, refusals, 'Uploading again')))
      throw new JobFailure('upload-failed', `The upload failed: ${serviceWords(submitted.error)}`);
  }
}

/** Errors of E8 that following again will not cure. */
const isLasting = (error: ApiError) =>
  error.kind === 'http' && error.status !== undefined && error.status < 500 && error.status !== 429;

/**
 * E8 until the list has its results (or, `isReportPhase`, its match reports): the last status document.
 * While the service cannot be reached the job waits (`retryDelayMs`) and follows again; a list that ends
 * otherwise (Invalid, Error, Cancelled) is a JobFailure.
 */
export async function followList(
  spec: JobSpec,
  listId: number,
  isReportPhase: boolean,
  port: CheckpointPort,
): Promise<ListResource> {
  const { client, signal } = spec;
  const emit = spec.onEvent ?? (() => undefined);
  const isDone = (list: ListResource) =>
    isFinalListStatus(list.status) || (isReportPhase && isAwaitingPurchase(list));
  for (;;) {
    const polled = await pollList(client, listId, {
      intervalMs: spec.pollIntervalMs,
      onUpdate: (list) => {
        port.followed(list);
        emit({ phase: 'processing', list });
      },
      isDone,
      ...callOf(signal),
    });
    if (signal?.aborted || (!polled.ok && polled.error.kind === 'aborted'))
      throw new JobFailure('cancelled', `Cancelled while list ${listId} was processing.`);
    if (!polled.ok) {
      if (isLasting(polled.error))
        throw new JobFailure('poll-failed', `Following list ${listId} failed: ${serviceWords(polled.error)}`);
      sayWaiting(spec, port, 'processing', `Waiting for the service: ${serviceWords(polled.error)}`);
      await sleep(spec.retryDelayMs ?? 5000, signal);
      continue;
    }
    const list = polled.value;
    if (isReportPhase && isAwaitingPurchase(list)) {
      port.awaitingPurchase(list);
      return list;
    }
    if (list.status === 'Results') {
      port.downloading(list);
      return list;
    }
    if (list.status === 'Invalid')
      throw new JobFailure(
        'list-invalid',
        `The service could not read the list: ${list.reason ?? 'improper format or header.'}`,
        list,
      );
    if (list.status === 'Cancelled')
      throw new JobFailure('list-cancelled', `The service cancelled list ${listId}.`, list);
    throw new JobFailure(
      'list-error',
      `List ${listId} ended with status ${list.status}${list.reason ? `: ${list.reason}` : '.'}`,
      list,
    );
  }
}

/**
 * E9: buys a report-only list awaiting purchase (`body`: the fields and the email append match type). A
 * purchase whose answer was lost (a timeout, a restart) went through when the list has moved on: that
 * counts as bought. Anything else the service refuses is a JobFailure `purchase-failed`.
 */
export async function purchaseList(
  client: Pick<Client, 'listStatus' | 'purchase'>,
  listId: number,
  body: PurchaseRequest | undefined,
  port: Pick<CheckpointPort, 'purchased'>,
  options: { readonly signal?: AbortSignal; readonly timeoutMs?: number } = {},
): Promise<void> {
  const result = await client.purchase(listId, body, {
    ...callOf(options.signal),
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  if (!result.ok) {
    if (result.error.kind === 'aborted') throw new JobFailure('cancelled', 'Cancelled.');
    const isRefused = result.error.kind === 'http' && isLasting(result.error);
    const status = isRefused ? undefined : await client.listStatus(listId, callOf(options.signal));
    const hasMovedOn = status?.ok === true && !isAwaitingPurchase(status.value);
    if (!hasMovedOn)
      throw new JobFailure(
        'purchase-failed',
        `Could not purchase list ${listId}: ${serviceWords(result.error)}`,
      );
  }
  port.purchased(listId);
}

/** E10: the results streamed to disk, and the exports computed from the same bytes. */
export async function downloadResults(
  spec: JobSpec,
  list: ListResource,
  port: CheckpointPort,
): Promise<ResultsOutcome> {
  const { client, signal } = spec;
  const listId = list.list_id;
  for (let refusals = 0; ; refusals++) {
    // The turn is held until the file is read to its end: a download runs as long as that.
    const endTurn = await turnAt(spec, spec.turns?.downloads, 'downloading', port);
    let error: ApiError;
    try {
      const results = await client.results(listId, callOf(signal));
      if (results.ok) return await saveResults(spec, list, results.value, port);
      error = results.error;
    } finally {
      endTurn();
    }
    if (error.kind === 'aborted' || signal?.aborted) throw new JobFailure('cancelled', 'Cancelled.', list);
    // Still refused after the client's own retries (downloads at once or a minute, a busy node): later, again.
    if (!(await waitOutRefusal(spec, port, 'downloading', error, refusals, 'Downloading again')))
      throw new JobFailure(
        'download-failed',
        `Downloading the results of list ${listId} failed: ${serviceWords(error)}`,
        list,
      );
  }
}

/** The results E10 answered, streamed to disk, and the exports computed from the same bytes. */
async function saveResults(
  spec: JobSpec,
  list: ListResource,
  results: ListResults,
  port: CheckpointPort,
): Promise<ResultsOutcome> {
  const { signal, outDir } = spec;
  const emit = spec.onEvent ?? (() => undefined);
  mkdirSync(outDir, { recursive: true });
  const resultsName = resultsFileName(list, results.fileName);
  const resultsPath = join(outDir, resultsName);
  const partPath = temporaryPathOf(resultsPath);
  const isZip = listFileExtension(resultsName) === '.zip';
  // Without validation there is no status to sort rows by: the results are saved as they come, no exports.
  const isExportable = hasValidation(list);
  // The list's records size the exports' sets of addresses (ExportRequest.rows).
  const wanted = (extension: string): readonly ExportRequest[] =>
    isExportable
      ? (spec.exports?.(extension) ?? []).map((request) => ({ ...request, rows: list.records }))
      : [];
  const exportsSkipped =
    !isExportable && (spec.exports?.('.csv').length ?? 0) > 0 ? NO_VALIDATION_EXPORTS : undefined;
  let sink: ResultsSink | undefined;
  let used: readonly ExportRequest[] = [];
  // Held while the results and the exports are written; letting go sweeps the folder again, for the
  // temporaries of a run killed just before this one (outputFolder.ts).
  const release = holdOutputFolder(outDir);
  try {
    let received = 0;
    let summary: ResultsSummary | undefined;
    const total = results.contentLength;
    const body = results.body as unknown as AsyncIterable<Uint8Array>;
    const counted = async function* (): AsyncIterable<Uint8Array> {
      for await (const chunk of body) {
        received += chunk.length;
        yield chunk;
        emit({ phase: 'downloading', receivedBytes: received, totalBytes: total });
      }
    };
    const check = () => {
      if (total !== undefined && received !== total)
        throw new Error(`the download stopped after ${received} of ${total} bytes`);
    };
    if (!isZip && isExportable) {
      // A text result: written and exported by the export worker from the same bytes, as they arrive.
      const textExtension = listFileExtension(resultsName) ?? '.csv';
      const chunks = withDelimiter(counted(), spec.delimiter, resultsName, (delimiter) => {
        used = wanted(textExtension);
        sink = ResultsSink.spawn().begin(partPath, delimiter, used, spec.counts);
      });
      for await (const chunk of chunks) await sink!.push(chunk);
      check();
      summary = await sink!.finish();
      renameSync(partPath, resultsPath);
    } else {
      // A zipped result (or one without validation columns) is saved whole; a zipped one with validation is
      // then read back for the exports and the duplicates.
      const out = await BufferedFile.create(partPath);
      try {
        for await (const chunk of counted()) await out.write(chunk);
      } finally {
        await out.close();
      }
      check();
      renameSync(partPath, resultsPath);
      if (isExportable)
        summary = await exportResultsFileWithDelimiter(
          resultsPath,
          resultsName,
          spec.delimiter,
          (ext) => {
            used = wanted(ext);
            return used;
          },
          spec.counts,
        );
    }
    const exports = used.map(({ name, path }) => ({ kind: name, path, rows: summary?.exported[name] ?? 0 }));
    const outcome: ResultsOutcome = {
      stage: 'results',
      list,
      resultsPath,
      resultsName,
      exports,
      ...(summary ? { summary } : {}),
      ...(exportsSkipped ? { exportsSkipped } : {}),
    };
    port.completed(outcome);
    return outcome;
  } catch (error) {
    await sink?.abort();
    rmSync(partPath, { force: true });
    if (error instanceof JobFailure) throw error;
    if (signal?.aborted) throw new JobFailure('cancelled', 'Cancelled while downloading the results.', list);
    const message = error instanceof Error ? error.message : String(error);
    throw new JobFailure(
      error instanceof ResultsProblem ? 'export-failed' : 'download-failed',
      `Could not save the results: ${message}`,
      list,
    );
  } finally {
    release();
  }
}

/** A stored zip's results exported: the delimiter given, or read from the text's header. */
async function exportResultsFileWithDelimiter(
  path: string,
  name: string,
  delimiter: string | undefined,
  exports: (textExtension: string) => readonly ExportRequest[],
  counts?: CountsRequest,
): Promise<ResultsSummary> {
  const source = await openListSource(path, name, statSync(path).size);
  let known = delimiter;
  if (known === undefined) {
    const stream = await source.open();
    const head: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      head.push(chunk);
      size += chunk.length;
      if (size >= HEAD_BYTES || chunk.includes(LINE_FEED)) break;
    }
    stream.destroy();
    known = resultsDelimiter(Buffer.concat(head).toString('utf8')) ?? delimiterOfName(source.textName);
  }
  return exportResultsFile(path, name, known, exports(extname(source.textName) || '.csv'), counts);
}

/**
 * Runs a job from its checkpoint to its end: uploads when no list was submitted yet, follows the list, and
 * downloads its results; a report-only list not bought yet stops at its match reports.
 */
export async function runJob(
  spec: JobSpec,
  checkpoint: JobCheckpoint,
  port: CheckpointPort,
): Promise<JobOutcome> {
  const listId = checkpoint.listId ?? (await uploadList(spec, port));
  const isReportPhase = spec.reportOnly && !checkpoint.isPurchased;
  const list = await followList(spec, listId, isReportPhase, port);
  if (list.status !== 'Results') return { stage: 'awaiting-purchase', list };
  return downloadResults(spec, list, port);
}
