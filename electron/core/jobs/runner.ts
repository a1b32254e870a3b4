// The CLI's jobs on the engine (engine.ts): `mailsieve clean` (runListJob) with its checkpoints in a state file
// beside the output, so an interrupted clean resumes its submitted list, and `mailsieve purchase`
// (purchaseListJob), which buys a report-only list and downloads it.
//
// It answers a value, never throws for a failure of the job itself: `{ok: true, value}` or
// `{ok: false, error: {code, message}}`, the message one line for a person, without the key.
import { basename, join } from 'node:path';
import {
  isAwaitingPurchase,
  isFinalListStatus,
  type ListResource,
  type PurchaseRequest,
  type SubmitListParams,
} from '../../../shared/api/list.js';
import { LIST_POLL_MIN_INTERVAL_MS } from '../../../shared/api/limits.js';
import type { ExportKind } from '../../../shared/exports.js';
import {
  EXPORT_FORMAT_EXTENSIONS,
  defaultExportChoices,
  type ExportChoices,
  type ExportFormat,
} from '../../../shared/exportChoices.js';
import {
  JobFailure,
  downloadResults,
  followList,
  hasValidation,
  purchaseList,
  runJob,
  serviceWords,
  type CheckpointPort,
  type EngineClient,
  type JobErrorCode,
  type JobEvent,
  type JobOutcome,
  type JobSpec,
} from './engine.js';
import { exportFileName, type ExportRequest } from './exports.js';
import { removeStaleTemporaries } from './outputFolder.js';
import { JobStateFile, stateFilePath } from './stateFile.js';

export type { JobEvent, JobOutcome, ResultsOutcome, ExportFileInfo } from './engine.js';

export interface JobError {
  readonly code: JobErrorCode;
  readonly message: string;
  /** The last status document, when the list got that far. */
  readonly list?: ListResource;
}

export type JobResult =
  { readonly ok: true; readonly value: JobOutcome } | { readonly ok: false; readonly error: JobError };

export interface ListJobOptions {
  readonly client: EngineClient;
  /** The list file: .csv, .txt or .zip. */
  readonly file: string;
  /** E7's parameters; `name` defaults to the file's name. */
  readonly params: SubmitListParams;
  /** The list's delimiter, which the results keep (for reading them back for the exports). */
  readonly delimiter: string;
  /** Folder for the results, the exports and the state file. */
  readonly outDir: string;
  readonly exports: readonly ExportKind[];
  /** Exports for import (issue #12): how the exports are shaped and written; absent, copied as they are. */
  readonly exportShape?: ExportShape;
  /** Where the list lives (a provider's base URL, the embedded service's data folder): part of the state. */
  readonly service: string;
  /**
   * Stop once the list awaits its purchase (submit with `params.report`): the outcome is then
   * `awaiting-purchase`. A list that ends `Results` all the same (validation alone) is downloaded as usual.
   */
  readonly reportOnly?: boolean;
  /** Time between status requests; pollList raises it to 5 s for a remote service. Default 5 s. */
  readonly pollIntervalMs?: number;
  /** Wait before following again when the service cannot be reached. Default 5 s. */
  readonly retryDelayMs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: JobEvent) => void;
  /** Told when the run takes up a list an earlier, interrupted run submitted. */
  readonly onResume?: (listId: number) => void;
}

export interface PurchaseJobOptions {
  readonly client: EngineClient;
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
  readonly retryDelayMs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: JobEvent) => void;
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

/** The exports of `file`: `<out>/<name>-<kind><ext of the list's text, or of the export format>`. */
export function exportsOf(
  outDir: string,
  file: string,
  kinds: readonly ExportKind[],
  shape: ExportShape | undefined,
): (textExtension: string) => ExportRequest[] {
  return (textExtension) =>
    kinds.map((kind) => ({
      name: kind,
      spec:
        shape && (kind !== 'all' || shape.isAllShaped)
          ? { kind, choices: choicesFor(kind, shape), emailIndex: shape.emailIndex }
          : { kind },
      path: join(
        outDir,
        exportFileName(
          file,
          kind,
          shape && shape.format !== 'csv' ? EXPORT_FORMAT_EXTENSIONS[shape.format] : textExtension,
        ),
      ),
    }));
}

const failed = (error: unknown): JobResult => {
  if (error instanceof JobFailure)
    return {
      ok: false,
      error: { code: error.code, message: error.message, ...(error.list ? { list: error.list } : {}) },
    };
  throw error;
};

/** Codes after which the list will never have results: the next run submits the file again. */
const ENDS_THE_LIST: readonly JobErrorCode[] = ['list-invalid', 'list-error', 'list-cancelled'];

export async function runListJob(options: ListJobOptions): Promise<JobResult> {
  const name = options.params.name ?? basename(options.file);
  const params = { ...options.params, name };
  removeStaleTemporaries(options.outDir);
  const state = new JobStateFile(
    stateFilePath(options.outDir, options.file),
    options.file,
    params,
    options.service,
  );
  const checkpoint = state.load();
  if (checkpoint.listId !== null) options.onResume?.(checkpoint.listId);
  const spec: JobSpec = {
    client: options.client,
    upload: { file: options.file, params },
    delimiter: options.delimiter,
    outDir: options.outDir,
    exports: exportsOf(options.outDir, options.file, options.exports, options.exportShape),
    reportOnly: options.reportOnly ?? false,
    pollIntervalMs: options.pollIntervalMs ?? LIST_POLL_MIN_INTERVAL_MS,
    ...(options.retryDelayMs !== undefined ? { retryDelayMs: options.retryDelayMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  };
  try {
    const outcome = await runJob(spec, checkpoint, state);
    // A list parked awaiting purchase is `mailsieve purchase`'s from now on: nothing to take up.
    if (outcome.stage === 'awaiting-purchase') state.remove();
    return { ok: true, value: outcome };
  } catch (error) {
    if (error instanceof JobFailure && ENDS_THE_LIST.includes(error.code)) state.remove();
    return failed(error);
  }
}

/** A port for a purchase by list id: nothing to record beyond telling the caller. */
const noCheckpoints = (onPurchased: () => void): CheckpointPort => ({
  uploading: () => undefined,
  submitted: () => undefined,
  followed: () => undefined,
  waiting: () => undefined,
  awaitingPurchase: () => undefined,
  purchased: onPurchased,
  downloading: () => undefined,
  completed: () => undefined,
});

/**
 * Buys a report-only list (E9 with `options.purchase`), waits for it to run again to `Results`, and
 * downloads the results and the exports as `runListJob` does. A list that has its results already is
 * downloaded without buying anything; a list in any other state than awaiting purchase is refused.
 */
export async function purchaseListJob(options: PurchaseJobOptions): Promise<JobResult> {
  const { client, listId, signal } = options;
  const emit = options.onEvent ?? (() => undefined);
  const status = await client.listStatus(listId, signal ? { signal } : {});
  if (!status.ok) {
    if (status.error.kind === 'aborted') return failed(new JobFailure('cancelled', 'Cancelled.'));
    return failed(
      new JobFailure('purchase-failed', `Could not purchase list ${listId}: ${serviceWords(status.error)}`),
    );
  }
  const list = status.value;
  const isDone = list.status === 'Results';
  if (!isDone && !isAwaitingPurchase(list)) {
    const why = list.reason
      ? `: ${list.reason}`
      : isFinalListStatus(list.status)
        ? '.'
        : ': it is still running; try again once it stops.';
    return failed(
      new JobFailure(
        'purchase-failed',
        `List ${listId} is not awaiting purchase (status ${list.status})${why}`,
        list,
      ),
    );
  }
  // Refused before buying: exports need the validation columns.
  if (options.exports.length > 0 && !hasValidation(list))
    return failed(
      new JobFailure(
        'export-failed',
        `List ${listId} ran without validation, so its results have no validation status to export: purchase it without --export.`,
        list,
      ),
    );
  const port = noCheckpoints(() => emit({ phase: 'purchased', listId }));
  const spec: JobSpec = {
    client,
    delimiter: options.delimiter,
    outDir: options.outDir,
    exports: exportsOf(options.outDir, list.name, options.exports, options.exportShape),
    reportOnly: false,
    pollIntervalMs: options.pollIntervalMs ?? LIST_POLL_MIN_INTERVAL_MS,
    ...(options.retryDelayMs !== undefined ? { retryDelayMs: options.retryDelayMs } : {}),
    ...(signal ? { signal } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  };
  try {
    removeStaleTemporaries(options.outDir);
    if (!isDone) await purchaseList(client, listId, options.purchase, port, signal ? { signal } : {});
    const results = isDone ? list : await followList(spec, listId, false, port);
    return { ok: true, value: await downloadResults(spec, results, port) };
  } catch (error) {
    return failed(error);
  }
}
