// The job runner of the desktop core and the CLI: a list file through the service, on the shared REST client
// whatever the service (the provider's, or the embedded one on loopback):
//
//   upload (E7, streamed multipart) → poll (E8, never faster than pollList allows) → purchase (E9)
//   → download (E10, streamed to disk) → exports (computed from the same stream, in one pass)
//
// A report-only list (E7 `report=true`, docs/list-services.md) stops after the poll, once it awaits its
// purchase; `purchaseListJob` later buys it (E9 with a field selection) and goes on from the poll.
//
// It answers a value, never throws for a failure of the job itself: `{ok: true, value}` or
// `{ok: false, error: {code, message}}`, the message one line for a person, without the key.
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { pollList, safeFileName, type ApiError, type Client } from '../../../shared/api/client.js';
import {
  isAwaitingPurchase,
  isFinalListStatus,
  listFileExtension,
  type ListResource,
  type PurchaseRequest,
  type SubmitListParams,
} from '../../../shared/api/list.js';
import { LIST_POLL_MIN_INTERVAL_MS } from '../../../shared/api/limits.js';
import {
  EXPORT_FORMAT_EXTENSIONS,
  defaultExportChoices,
  type ExportChoices,
  type ExportFormat,
} from '../../../shared/exportChoices.js';
import {
  BufferedFile,
  ResultsExporter,
  ResultsFormatError,
  targetOf,
  type ExportKind,
  type ExportRequest,
  type ResultsSummary,
} from './exports.js';
import { ResultsFormatFailure, ResultsSink } from './resultsSink.js';

export type JobEvent =
  | { readonly phase: 'uploading'; readonly sentBytes: number; readonly totalBytes: number }
  | { readonly phase: 'submitted'; readonly listId: number }
  /** E9 bought a report-only list (purchaseListJob): it runs again to its results. */
  | { readonly phase: 'purchased'; readonly listId: number }
  | { readonly phase: 'processing'; readonly list: ListResource }
  | {
      readonly phase: 'downloading';
      readonly receivedBytes: number;
      readonly totalBytes: number | undefined;
    };

export type JobErrorCode =
  | 'upload-failed'
  | 'list-invalid'
  | 'list-error'
  | 'poll-failed'
  | 'purchase-failed'
  | 'download-failed'
  | 'export-failed'
  | 'cancelled';

export interface JobError {
  readonly code: JobErrorCode;
  readonly message: string;
  /** The last status document, when the list got that far. */
  readonly list?: ListResource;
}

export interface ExportFileInfo {
  readonly kind: ExportKind;
  readonly path: string;
  readonly rows: number;
}

/** The list's results, downloaded (and the exports written). */
export interface ResultsOutcome {
  readonly stage: 'results';
  readonly list: ListResource;
  readonly resultsPath: string;
  readonly exports: readonly ExportFileInfo[];
  /** Rows and duplicates, read from the results for the exports; absent when validation did not run. */
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

export type JobResult =
  { readonly ok: true; readonly value: JobOutcome } | { readonly ok: false; readonly error: JobError };

export interface ListJobOptions {
  readonly client: Pick<Client, 'baseUrl' | 'submitList' | 'listStatus' | 'purchase' | 'results'>;
  /** The list file: .csv, .txt or .zip. */
  readonly file: string;
  /** E7's parameters; `name` defaults to the file's name. */
  readonly params: SubmitListParams;
  /** The list's delimiter, which the results keep (for reading them back for the exports). */
  readonly delimiter: string;
  /** Folder for the results and the exports. */
  readonly outDir: string;
  readonly exports: readonly ExportKind[];
  /** Exports for import (issue #12): how the exports are shaped and written; absent, copied as they are. */
  readonly exportShape?: ExportShape;
  /**
   * Stop once the list awaits its purchase (submit with `params.report`): the outcome is then
   * `awaiting-purchase`. A list that ends `Results` all the same (validation alone) is downloaded as usual.
   */
  readonly reportOnly?: boolean;
  /** Time between status requests; pollList raises it to 5 s for a remote service. Default 5 s. */
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: JobEvent) => void;
}

export interface PurchaseJobOptions {
  readonly client: Pick<Client, 'baseUrl' | 'listStatus' | 'purchase' | 'results'>;
  readonly listId: number;
  /** E9's body: the fields to buy and the email append match type. Undefined buys everything matched. */
  readonly purchase?: PurchaseRequest;
  /** Folder for the results and the exports (named after the list's name). */
  readonly outDir: string;
  readonly exports: readonly ExportKind[];
  /** Exports for import (issue #12): how the exports are shaped and written; absent, copied as they are. */
  readonly exportShape?: ExportShape;
  /** The list's delimiter when known; else read from the results' header (or, failing that, the name). */
  readonly delimiter?: string;
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: JobEvent) => void;
}

/** What following a list to its results needs, from a list job or a purchase. */
interface FollowOptions {
  readonly client: Pick<Client, 'baseUrl' | 'listStatus' | 'purchase' | 'results'>;
  readonly listId: number;
  /** The list's name at the service: the fallback results name, and whether the results are zipped. */
  readonly name: string;
  /** The file the exports are named after (`<stem>-<kind>.<ext>`). */
  readonly exportStem: string;
  readonly delimiter: string | undefined;
  readonly outDir: string;
  readonly exports: readonly ExportKind[];
  /** Exports for import (issue #12): how the exports are shaped and written; absent, copied as they are. */
  readonly exportShape?: ExportShape;
  readonly reportOnly: boolean;
  /** E9 was called already (with the buyer's selection): a second call without a body would buy everything. */
  readonly isPurchased: boolean;
  readonly pollIntervalMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly emit: (event: JobEvent) => void;
}

/**
 * How `clean --export` shapes its exports: the choices beside each kind's defaults (Remove duplicates is on
 * for clean and safe unless `dedupe` says otherwise), the format, and the list's email column (0-based).
 */
export interface ExportShape {
  /** `all` is the results as they are unless export choices were given. */
  readonly isAllShaped: boolean;
  readonly dedupe?: boolean;
  readonly dropRole: boolean;
  readonly dropDisposable: boolean;
  readonly format: ExportFormat;
  readonly emailIndex: number;
}

/** The choices of one export kind under `shape`. */
export function choicesFor(kind: ExportKind, shape: ExportShape): ExportChoices {
  return {
    ...defaultExportChoices(kind),
    ...(shape.dedupe !== undefined ? { dedupe: shape.dedupe } : {}),
    dropRole: shape.dropRole,
    dropDisposable: shape.dropDisposable,
    format: shape.format,
  };
}

/** Where an export of `file` goes: `<out>/<name>-<kind>.<ext of the list's text>`. */
export function exportPath(outDir: string, file: string, kind: ExportKind, textExtension: string): string {
  const stem = basename(file, extname(file));
  return join(outDir, `${stem}-${kind}${textExtension}`);
}

const fail = (code: JobErrorCode, message: string, list?: ListResource): JobResult => ({
  ok: false,
  error: { code, message, ...(list ? { list } : {}) },
});

/** A client error in the service's words: `List 7 not found. (HTTP 404)` rather than the request line. */
function serviceWords(error: ApiError): string {
  const match = /^[A-Z]+ \S+: HTTP (\d+) (.+)$/.exec(error.message);
  return match ? `${match[2]} (HTTP ${match[1]})` : error.message;
}

/** Whether the results have the validation columns the exports sort rows by. */
const hasValidation = (list: ListResource) => list.services.email_validation !== undefined;

const NO_VALIDATION_EXPORTS =
  'no exports were written: the list ran without validation, and the exports sort rows by validation status';

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
    const text = Buffer.concat(head).toString('utf8');
    await use(resultsDelimiter(text) ?? delimiterOfName(name));
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

/**
 * A file as a web stream that reads a chunk only when the consumer pulls one. (Readable.toWeb would take the
 * file stream's byte highWaterMark for a count of chunks and read the whole file ahead into memory.)
 */
export function fileStream(path: string, chunkBytes = 1 << 20): ReadableStream<Uint8Array> {
  let handle: FileHandle | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        handle ??= await open(path, 'r');
        const chunk = Buffer.allocUnsafe(chunkBytes);
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

/** The text file inside a results zip, streamed. */
async function zipEntryStream(path: string): Promise<{ name: string; stream: Readable }> {
  const zip = await yauzl.openPromise(path, { autoClose: true });
  const entry = await new Promise<yauzl.Entry>((resolve, reject) => {
    zip.on('entry', (e: yauzl.Entry) => (e.fileName.endsWith('/') ? zip.readEntry() : resolve(e)));
    zip.once('end', () => reject(new Error('the results archive holds no file')));
    zip.once('error', reject);
    zip.readEntry();
  });
  return { name: entry.fileName, stream: await zip.openReadStreamPromise(entry) };
}

export async function runListJob(options: ListJobOptions): Promise<JobResult> {
  const { client, file, signal } = options;
  const emit = options.onEvent ?? (() => undefined);
  const name = options.params.name ?? basename(file);

  // Upload, streamed from disk.
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return fail('upload-failed', `Cannot read ${file}.`);
  }
  emit({ phase: 'uploading', sentBytes: 0, totalBytes: size });
  const body = fileStream(file);
  const submitted = await client.submitList(
    { name, body, size },
    { ...options.params, name },
    {
      mode: 'multipart',
      onProgress: (sent) => emit({ phase: 'uploading', sentBytes: sent, totalBytes: size }),
      ...(signal ? { signal } : {}),
      // A stall, not the whole upload: the timeout restarts with every chunk sent.
      timeoutMs: 120_000,
    },
  );
  if (!submitted.ok) {
    if (submitted.error.kind === 'aborted') return fail('cancelled', 'Cancelled while uploading.');
    return fail('upload-failed', `The upload was refused: ${submitted.error.message}`);
  }
  const listId = submitted.value.list_id;
  emit({ phase: 'submitted', listId });
  return followAndSave({
    client,
    listId,
    name,
    exportStem: file,
    delimiter: options.delimiter,
    outDir: options.outDir,
    exports: options.exports,
    ...(options.exportShape ? { exportShape: options.exportShape } : {}),
    reportOnly: options.reportOnly ?? false,
    isPurchased: false,
    pollIntervalMs: options.pollIntervalMs,
    signal,
    emit,
  });
}

/**
 * Buys a report-only list (E9 with `options.purchase`), waits for it to run again to `Results`, and
 * downloads the results and the exports as `runListJob` does. A list that has its results already is
 * downloaded without buying anything; a list in any other state than awaiting purchase is refused.
 */
export async function purchaseListJob(options: PurchaseJobOptions): Promise<JobResult> {
  const { client, listId, signal } = options;
  const emit = options.onEvent ?? (() => undefined);
  const call = signal ? { signal } : {};
  const status = await client.listStatus(listId, call);
  if (!status.ok) {
    if (status.error.kind === 'aborted') return fail('cancelled', 'Cancelled.');
    return fail('purchase-failed', `Could not purchase list ${listId}: ${serviceWords(status.error)}`);
  }
  const list = status.value;
  const isDone = list.status === 'Results';
  if (!isDone && !isAwaitingPurchase(list)) {
    const why = list.reason
      ? `: ${list.reason}`
      : isFinalListStatus(list.status)
        ? '.'
        : ': it is still running; try again once it stops.';
    return fail(
      'purchase-failed',
      `List ${listId} is not awaiting purchase (status ${list.status})${why}`,
      list,
    );
  }
  // Refused before buying: exports need the validation columns.
  if (options.exports.length > 0 && !hasValidation(list))
    return fail(
      'export-failed',
      `List ${listId} ran without validation, so its results have no validation status to export: purchase it without --export.`,
      list,
    );
  if (!isDone) {
    const purchased = await client.purchase(listId, options.purchase, call);
    if (!purchased.ok) {
      if (purchased.error.kind === 'aborted') return fail('cancelled', 'Cancelled.', list);
      return fail(
        'purchase-failed',
        `Could not purchase list ${listId}: ${serviceWords(purchased.error)}`,
        list,
      );
    }
    emit({ phase: 'purchased', listId });
  }
  return followAndSave({
    client,
    listId,
    name: list.name,
    exportStem: list.name,
    delimiter: options.delimiter,
    outDir: options.outDir,
    exports: options.exports,
    ...(options.exportShape ? { exportShape: options.exportShape } : {}),
    reportOnly: false,
    // A list with results needs no purchase; one just bought must not be bought again (without a selection).
    isPurchased: true,
    pollIntervalMs: options.pollIntervalMs,
    signal,
    emit,
  });
}

async function followAndSave(options: FollowOptions): Promise<JobResult> {
  const { client, listId, name, outDir, signal, emit } = options;
  const isZip = listFileExtension(name) === '.zip';

  // Poll until the list is final (or, report-only, awaits its purchase).
  const polled = await pollList(client, listId, {
    intervalMs: options.pollIntervalMs ?? LIST_POLL_MIN_INTERVAL_MS,
    onUpdate: (list) => emit({ phase: 'processing', list }),
    ...(options.reportOnly
      ? { isDone: (list: ListResource) => isFinalListStatus(list.status) || isAwaitingPurchase(list) }
      : {}),
    ...(signal ? { signal } : {}),
  });
  if (!polled.ok) {
    if (polled.error.kind === 'aborted')
      return fail('cancelled', `Cancelled while list ${listId} was processing.`);
    return fail('poll-failed', `Could not follow list ${listId}: ${polled.error.message}`);
  }
  const list = polled.value;
  if (options.reportOnly && isAwaitingPurchase(list))
    return { ok: true, value: { stage: 'awaiting-purchase', list } };
  if (list.status === 'Invalid')
    return fail(
      'list-invalid',
      `The service could not read the list: ${list.reason ?? 'improper format or header.'}`,
      list,
    );
  if (list.status !== 'Results' || !isFinalListStatus(list.status))
    return fail(
      'list-error',
      `List ${listId} ended with status ${list.status}${list.reason ? `: ${list.reason}` : '.'}`,
      list,
    );

  // Purchase: for a validation-only list the service answers with the status document.
  if (!options.isPurchased) {
    const purchased = await client.purchase(listId, undefined, signal ? { signal } : {});
    if (!purchased.ok)
      return fail('purchase-failed', `Could not purchase list ${listId}: ${purchased.error.message}`, list);
  }

  // Download, and the exports from the same bytes.
  const results = await client.results(listId, signal ? { signal } : {});
  if (!results.ok)
    return fail(
      'download-failed',
      `Could not download the results of list ${listId}: ${results.error.message}`,
      list,
    );
  const fallbackName = `${basename(name, extname(name))}-${listId}-Validation${listFileExtension(name) ?? '.csv'}`;
  const resultsPath = join(outDir, safeFileName(results.value.fileName) ?? fallbackName);
  const partPath = `${resultsPath}.part`;
  const textExtension = isZip ? '' : (listFileExtension(name) ?? '.csv');
  // Without validation there is no status to sort rows by: the results are saved as they come, no exports.
  const isExportable = hasValidation(list);
  const exportsSkipped = !isExportable && options.exports.length > 0 ? NO_VALIDATION_EXPORTS : undefined;
  let exporter: ResultsExporter | undefined;
  let sink: ResultsSink | undefined;
  let used: ExportRequest[] = [];
  const shape = options.exportShape;
  const targets = (extension: string): ExportRequest[] =>
    (used = options.exports.map((kind) => ({
      name: kind,
      spec:
        shape && (kind !== 'all' || shape.isAllShaped)
          ? { kind, choices: choicesFor(kind, shape), emailIndex: shape.emailIndex }
          : { kind },
      path: exportPath(
        outDir,
        options.exportStem,
        kind,
        shape && shape.format !== 'csv' ? EXPORT_FORMAT_EXTENSIONS[shape.format] : extension,
      ),
    })));
  try {
    let received = 0;
    let summary: ResultsSummary | undefined;
    const body = results.value.body as unknown as AsyncIterable<Uint8Array>;
    const counted = async function* (): AsyncIterable<Uint8Array> {
      for await (const chunk of body) {
        received += chunk.length;
        yield chunk;
        emit({ phase: 'downloading', receivedBytes: received, totalBytes: results.value.contentLength });
      }
    };
    const check = () => {
      if (results.value.contentLength !== undefined && received !== results.value.contentLength)
        throw new Error(`the download stopped after ${received} of ${results.value.contentLength} bytes`);
    };
    if (!isZip && isExportable) {
      // A text result: written and exported by the export worker from the same bytes, as they arrive.
      // (Started only now: a worker started earlier would add its memory to the processing's peak.)
      const chunks = withDelimiter(counted(), options.delimiter, name, (delimiter) => {
        sink = ResultsSink.spawn().begin(partPath, delimiter, targets(textExtension));
      });
      for await (const chunk of chunks) await sink!.push(chunk);
      check();
      summary = await sink!.finish();
      renameSync(partPath, resultsPath);
    } else {
      // A zipped result (or one without validation columns) is saved whole; a zipped one with validation
      // is then read back for the exports.
      const out = await BufferedFile.create(partPath);
      try {
        for await (const chunk of counted()) await out.write(chunk);
      } finally {
        await out.close();
      }
      check();
      renameSync(partPath, resultsPath);
      if (isExportable) {
        const entry = await zipEntryStream(resultsPath);
        const chunks = withDelimiter(
          entry.stream as AsyncIterable<Buffer>,
          options.delimiter,
          entry.name,
          async (delimiter) => {
            exporter = await ResultsExporter.open(
              delimiter,
              targets(extname(entry.name) || '.csv').map(targetOf),
            );
          },
        );
        for await (const chunk of chunks) await exporter!.push(chunk);
        summary = await exporter!.finish();
      }
    }
    const exports = used.map(({ spec, name, path }) => ({
      kind: spec.kind as ExportKind,
      path,
      rows: summary?.exported[name] ?? 0,
    }));
    return {
      ok: true,
      value: {
        stage: 'results',
        list,
        resultsPath,
        exports,
        ...(summary ? { summary } : {}),
        ...(exportsSkipped ? { exportsSkipped } : {}),
      },
    };
  } catch (error) {
    await exporter?.abort();
    await sink?.abort();
    if (existsSync(partPath)) rmSync(partPath, { force: true });
    for (const { path } of used) rmSync(path, { force: true });
    if (signal?.aborted) return fail('cancelled', 'Cancelled while downloading the results.', list);
    const message = error instanceof Error ? error.message : String(error);
    return fail(
      error instanceof ResultsFormatError || error instanceof ResultsFormatFailure
        ? 'export-failed'
        : 'download-failed',
      `Could not save the results: ${message}`,
      list,
    );
  }
}
