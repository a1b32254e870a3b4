// The job runner of the desktop core and the CLI: a list file through the service, on the shared REST client
// whatever the service (the provider's, or the embedded one on loopback):
//
//   upload (E7, streamed multipart) → poll (E8, never faster than pollList allows) → purchase (E9)
//   → download (E10, streamed to disk) → exports (computed from the same stream, in one pass)
//
// It answers a value, never throws for a failure of the job itself: `{ok: true, value}` or
// `{ok: false, error: {code, message}}`, the message one line for a person, without the key.
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { pollList, safeFileName, type Client } from '../../../shared/api/client.js';
import {
  isFinalListStatus,
  listFileExtension,
  type ListResource,
  type SubmitListParams,
} from '../../../shared/api/list.js';
import { LIST_POLL_MIN_INTERVAL_MS } from '../../../shared/api/limits.js';
import {
  BufferedFile,
  ResultsExporter,
  ResultsFormatError,
  type ExportKind,
  type ExportTarget,
  type ResultsSummary,
} from './exports.js';
import { ResultsFormatFailure, ResultsSink } from './resultsSink.js';

export type JobEvent =
  | { readonly phase: 'uploading'; readonly sentBytes: number; readonly totalBytes: number }
  | { readonly phase: 'submitted'; readonly listId: number }
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

export interface JobOutcome {
  readonly list: ListResource;
  readonly resultsPath: string;
  readonly exports: readonly ExportFileInfo[];
  readonly summary: ResultsSummary;
}

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
  /** Time between status requests; pollList raises it to 5 s for a remote service. Default 5 s. */
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: JobEvent) => void;
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
  const isZip = listFileExtension(name) === '.zip';

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
  return followAndSave(options, listId, name, isZip);
}

async function followAndSave(
  options: ListJobOptions,
  listId: number,
  name: string,
  isZip: boolean,
): Promise<JobResult> {
  const { client, file, outDir, signal } = options;
  const emit = options.onEvent ?? (() => undefined);

  // Poll until the list is final.
  const polled = await pollList(client, listId, {
    intervalMs: options.pollIntervalMs ?? LIST_POLL_MIN_INTERVAL_MS,
    onUpdate: (list) => emit({ phase: 'processing', list }),
    ...(signal ? { signal } : {}),
  });
  if (!polled.ok) {
    if (polled.error.kind === 'aborted')
      return fail('cancelled', `Cancelled while list ${listId} was processing.`);
    return fail('poll-failed', `Could not follow list ${listId}: ${polled.error.message}`);
  }
  const list = polled.value;
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
  const purchased = await client.purchase(listId, undefined, signal ? { signal } : {});
  if (!purchased.ok)
    return fail('purchase-failed', `Could not purchase list ${listId}: ${purchased.error.message}`, list);

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
  let exporter: ResultsExporter | undefined;
  let sink: ResultsSink | undefined;
  let used: ExportTarget[] = [];
  const targets = (extension: string): ExportTarget[] =>
    (used = options.exports.map((kind) => ({ kind, path: exportPath(outDir, file, kind, extension) })));
  try {
    let received = 0;
    let summary: ResultsSummary;
    const body = results.value.body as unknown as AsyncIterable<Uint8Array>;
    const check = () => {
      if (results.value.contentLength !== undefined && received !== results.value.contentLength)
        throw new Error(`the download stopped after ${received} of ${results.value.contentLength} bytes`);
    };
    if (!isZip) {
      // A text result: written and exported by the export worker from the same bytes, as they arrive.
      // (Started only now: a worker started earlier would add its memory to the processing's peak.)
      sink = ResultsSink.spawn().begin(partPath, options.delimiter, targets(textExtension));
      for await (const chunk of body) {
        await sink.push(chunk);
        received += chunk.length;
        emit({ phase: 'downloading', receivedBytes: received, totalBytes: results.value.contentLength });
      }
      check();
      summary = await sink.finish();
      renameSync(partPath, resultsPath);
    } else {
      // A zipped result is saved whole, then its file read back for the exports.
      const out = await BufferedFile.create(partPath);
      try {
        for await (const chunk of body) {
          await out.write(chunk);
          received += chunk.length;
          emit({ phase: 'downloading', receivedBytes: received, totalBytes: results.value.contentLength });
        }
      } finally {
        await out.close();
      }
      check();
      renameSync(partPath, resultsPath);
      const entry = await zipEntryStream(resultsPath);
      exporter = await ResultsExporter.open(options.delimiter, targets(extname(entry.name) || '.csv'));
      for await (const chunk of entry.stream as AsyncIterable<Buffer>) await exporter.push(chunk);
      summary = await exporter.finish();
    }
    const exports = used.map(({ kind, path }) => ({ kind, path, rows: summary.exported[kind] ?? 0 }));
    return { ok: true, value: { list, resultsPath, exports, summary } };
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
