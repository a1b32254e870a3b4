// The pre-check of a staged file, off the core's event loop: each run is one worker thread
// (precheckWorker.ts) that reads the file once, reports its progress (bytes and rows) and can be cancelled
// (an AbortSignal ends the thread). A spare worker is started when a file is staged, so the verification
// engine has loaded by the time the mapper asks. Answers are kept per file and layout, so asking again (the
// mapper, then Start) does not read the file again.
import { Worker } from 'node:worker_threads';
import type { Mapping, Precheck } from '../../../shared/desktop/contract.js';
import type { FileRef, PrecheckProgress } from './prepare.js';
import type { PrecheckWorkerReply, PrecheckWorkerRequest } from './precheckWorker.js';
import { workerScriptUrl } from '../../../service/workerUrl.js';

/** A cancelled pre-check (`code` is the reply's error code). */
export class FileWorkCancelled extends Error {
  readonly code = 'cancelled';
  constructor(message = 'The pre-check was cancelled.') {
    super(message);
  }
}

export function startPrecheckWorker(): Worker {
  const worker = new Worker(workerScriptUrl(import.meta.url, 'precheckWorker'));
  worker.unref();
  // A spare that fails to start is noticed by the run that takes it.
  worker.on('error', () => undefined);
  return worker;
}

/**
 * The one pre-check that reads a whole file: in a worker thread (`worker`, else a new one), with progress and
 * cancellation. Resolves to the figures, rejects with FileWorkCancelled when `signal` aborts.
 */
export function precheckOffThread(
  file: FileRef,
  mapping: Mapping,
  split: boolean,
  options: {
    readonly signal?: AbortSignal;
    readonly onProgress?: (progress: PrecheckProgress) => void;
    readonly partLimit?: number;
    readonly worker?: Worker;
  } = {},
): Promise<Precheck> {
  const { signal, onProgress } = options;
  if (signal?.aborted) {
    void options.worker?.terminate();
    return Promise.reject(new FileWorkCancelled());
  }
  const worker = options.worker ?? startPrecheckWorker();
  return new Promise<Precheck>((resolve, reject) => {
    let isSettled = false;
    const settle = (action: () => void) => {
      if (isSettled) return;
      isSettled = true;
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      action();
    };
    const onAbort = () => settle(() => reject(new FileWorkCancelled()));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (reply: PrecheckWorkerReply) => {
      if (reply.type === 'progress')
        onProgress?.({ bytesRead: reply.bytesRead, totalBytes: reply.totalBytes, rows: reply.rows });
      else if (reply.type === 'done') settle(() => resolve(reply.value));
      else if (reply.type === 'error')
        settle(() => reject(Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {})));
    });
    worker.on('error', (error) => settle(() => reject(error)));
    worker.on('exit', () => settle(() => reject(new Error('The pre-check stopped before it finished.'))));
    const request: PrecheckWorkerRequest = {
      file: {
        path: file.path,
        name: file.name,
        size: file.size,
        ...(file.sheet ? { sheet: file.sheet } : {}),
        ...(file.sheetCopyDir ? { sheetCopyDir: file.sheetCopyDir } : {}),
      },
      mapping,
      split,
      ...(options.partLimit !== undefined ? { partLimit: options.partLimit } : {}),
    };
    worker.postMessage(request);
  });
}

export interface FileCheckProgress extends PrecheckProgress {
  readonly fileId: string;
}

export interface FileChecks {
  /** Starts a spare worker (when a file is staged), so the next pre-check starts at once. */
  warm(): void;
  /** The pre-check of a staged file for a layout: the kept answer, the run under way, or a new run. */
  precheck(fileId: string, file: FileRef, mapping: Mapping, split: boolean): Promise<Precheck>;
  /** Cancels the file's run under way; false when there is none. */
  cancel(fileId: string): boolean;
  /** The latest answer for the file read with this delimiter and header row, if any. */
  answered(fileId: string, layout: Pick<Mapping, 'delimiter' | 'header'>): Precheck | undefined;
  close(): Promise<void>;
}

interface Run {
  readonly key: string;
  readonly controller: AbortController;
  readonly promise: Promise<Precheck>;
}

export function createFileChecks(onProgress: (progress: FileCheckProgress) => void): FileChecks {
  let spare: Worker | undefined;
  const runs = new Map<string, Run>();
  const answers = new Map<string, { key: string; layout: string; value: Precheck }>();
  const layoutKey = (mapping: Pick<Mapping, 'delimiter' | 'header'>) =>
    JSON.stringify([mapping.delimiter, mapping.header]);
  // The figures depend on the layout, the email column and the split only.
  const keyOf = (mapping: Mapping, split: boolean) =>
    JSON.stringify([mapping.delimiter, mapping.header, mapping.roles.indexOf('email'), split]);

  const checks: FileChecks = {
    warm() {
      spare ??= startPrecheckWorker();
    },
    precheck(fileId, file, mapping, split) {
      const key = keyOf(mapping, split);
      const answer = answers.get(fileId);
      if (answer?.key === key) return Promise.resolve(answer.value);
      const running = runs.get(fileId);
      if (running?.key === key) return running.promise;
      // A run for another mapping is of no use any more.
      running?.controller.abort();
      const controller = new AbortController();
      const worker = spare;
      spare = undefined;
      const promise = precheckOffThread(file, mapping, split, {
        signal: controller.signal,
        onProgress: (progress) => onProgress({ fileId, ...progress }),
        ...(worker ? { worker } : {}),
      }).then((value) => {
        answers.set(fileId, { key, layout: layoutKey(mapping), value });
        return value;
      });
      const run: Run = { key, controller, promise };
      runs.set(fileId, run);
      const forget = () => {
        if (runs.get(fileId) === run) runs.delete(fileId);
      };
      promise.then(forget, forget);
      return promise;
    },
    cancel(fileId) {
      const run = runs.get(fileId);
      if (!run) return false;
      run.controller.abort();
      runs.delete(fileId);
      return true;
    },
    answered(fileId, layout) {
      const answer = answers.get(fileId);
      return answer?.layout === layoutKey(layout) ? answer.value : undefined;
    },
    async close() {
      for (const run of runs.values()) run.controller.abort();
      runs.clear();
      await spare?.terminate();
      spare = undefined;
    },
  };
  return checks;
}
