// Importing reference data from the app (Look up a person): a people, activity or bounces CSV file into the
// local service's store, by the same import as `mailsieve data import people|activity|bounces`, run in a worker thread
// (importWorker.ts) with progress events and cancel. One import at a time.
import { rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative } from 'node:path';
import { Worker } from 'node:worker_threads';
import type {
  ReferenceImport,
  ReferenceImportProgress,
  ReferenceKind,
} from '../../../shared/desktop/contract.js';
import type { ReferenceImportReply, ReferenceImportRequest } from './importWorker.js';
import { ReplyFailure } from '../channels/context.js';
import { workerScriptUrl } from '../../../service/workerUrl.js';

/** Rejected rows listed in the app's report (all are counted); the CLI's default lists 20. */
export const APP_MAX_ERRORS = 1000;

export interface ReferenceImportFile {
  readonly path: string;
  readonly name: string;
  /** A copy the app made (a browser-mode upload): removed once imported. */
  readonly isCopy: boolean;
}

export interface ReferenceImports {
  /** Imports `file` into the store in `dataDir`; rejects with a ReplyFailure in words. */
  run(
    kind: ReferenceKind,
    file: ReferenceImportFile,
    dataDir: string,
    onProgress: (progress: ReferenceImportProgress) => void,
  ): Promise<ReferenceImport>;
  /** Stops the import under way after its current chunk; false when none runs. */
  cancel(): boolean;
  /** Stops the import under way and waits for its worker to end. */
  close(): Promise<void>;
}

export function createReferenceImports(options: { readonly nativeBinding?: string }): ReferenceImports {
  let running: { worker: Worker; isCancelled: boolean; ended: Promise<void> } | undefined;

  return {
    run(kind, file, dataDir, onProgress) {
      if (running)
        return Promise.reject(
          new ReplyFailure('busy', 'An import is under way: wait for it to finish, or cancel it.'),
        );
      try {
        if (!statSync(file.path).isFile()) throw new Error('not a file');
      } catch {
        return Promise.reject(new ReplyFailure('file-unreadable', `“${file.name}” cannot be read.`));
      }
      const worker = new Worker(workerScriptUrl(import.meta.url, 'importWorker'));
      const state = {
        worker,
        isCancelled: false,
        ended: new Promise<void>((resolve) => worker.once('exit', () => resolve())),
      };
      running = state;
      const fileName = file.name;
      return new Promise<ReferenceImport>((resolve, reject) => {
        let isSettled = false;
        const settle = (action: () => void) => {
          if (isSettled) return;
          isSettled = true;
          if (running === state) running = undefined;
          void worker.terminate();
          if (file.isCopy) rmSync(dirname(file.path), { recursive: true, force: true });
          action();
        };
        worker.on('message', (reply: ReferenceImportReply) => {
          if (reply.type === 'progress') {
            const { rows, imported, rejected, bytesRead, totalBytes } = reply;
            onProgress({ kind, fileName, rows, imported, rejected, bytesRead, totalBytes });
          } else if (reply.type === 'done') {
            const { report } = reply;
            settle(() =>
              resolve({
                kind,
                fileName,
                status: 'done',
                rows: report.rows,
                imported: report.imported,
                rejected: report.rejected,
                errors: report.errors.map((error) => ({ line: error.line, message: error.message })),
                warnings: [...report.warnings],
                added: report.added,
                updated: report.updated,
                seconds: report.seconds,
                ...(report.bounces
                  ? {
                      bounces: {
                        hard: report.bounces.hard,
                        soft: report.bounces.soft,
                        other: report.bounces.other,
                      },
                    }
                  : {}),
              }),
            );
          } else if (state.isCancelled) {
            const progress = reply.progress;
            settle(() =>
              resolve({
                kind,
                fileName,
                status: 'cancelled',
                rows: progress?.rows ?? 0,
                imported: progress?.imported ?? 0,
                rejected: progress?.rejected ?? 0,
                errors: [],
                warnings: [],
                added: 0,
                updated: 0,
                seconds: 0,
              }),
            );
          } else {
            // The import's own words name the file by the path it read; the user knows it by its name.
            const message = reply.message.split(file.path).join(`“${fileName}”`);
            settle(() =>
              reject(
                new ReplyFailure(
                  reply.isFileError ? 'file-unreadable' : 'import-failed',
                  reply.isFileError ? message : `The import stopped: ${message}`,
                ),
              ),
            );
          }
        });
        worker.on('error', (error) =>
          settle(() => reject(new ReplyFailure('import-failed', `The import stopped: ${error.message}`))),
        );
        worker.on('exit', () =>
          settle(() => reject(new ReplyFailure('import-failed', 'The import stopped before it finished.'))),
        );
        const request: ReferenceImportRequest = {
          kind,
          file: file.path,
          dataDir,
          maxErrors: APP_MAX_ERRORS,
          ...(options.nativeBinding ? { nativeBinding: options.nativeBinding } : {}),
        };
        worker.postMessage(request);
      });
    },
    cancel() {
      if (!running || running.isCancelled) return false;
      running.isCancelled = true;
      running.worker.postMessage('cancel');
      return true;
    },
    async close() {
      const current = running;
      if (!current) return;
      current.isCancelled = true;
      current.worker.postMessage('cancel');
      // The import stops after its chunk and rebuilds the store's indexes; a stuck one is ended.
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
      await Promise.race([current.ended, timeout]);
      await current.worker.terminate();
    },
  };
}

/** Whether `path` lies inside `folder`. */
export function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
