// One reference-data import (a people, activity or bounces CSV file) in a worker thread: the same import as
// `mailsieve data import people|activity|bounces` (service/identity/import.ts), on its own connection to the local
// service's database, so the core's event loop (and the embedded service on it) never waits on the parsing
// and the SQLite writes. It posts its progress and its report; a `cancel` message stops it after the current
// chunk (the rows written so far stay, and the store keeps its indexes).
import { parentPort } from 'node:worker_threads';
import type { ImportProgress, ImportReport } from '../../../service/identity/import.js';

export interface ReferenceImportRequest {
  readonly kind: 'people' | 'activity' | 'bounces';
  readonly file: string;
  readonly dataDir: string;
  readonly maxErrors: number;
  readonly nativeBinding?: string;
}

export type ReferenceImportReply =
  | ({ readonly type: 'progress' } & ImportProgress)
  | { readonly type: 'done'; readonly report: ImportReport }
  | {
      readonly type: 'error';
      readonly message: string;
      /** The error concerns the file (unreadable, no usable header), not the app. */
      readonly isFileError: boolean;
      readonly progress: ImportProgress | null;
    };

const port = parentPort;
if (!port) throw new Error('referenceImportWorker.js runs as a worker thread');
const send = (reply: ReferenceImportReply) => port.postMessage(reply);
const abort = new AbortController();

port.on('message', (message: ReferenceImportRequest | 'cancel') => {
  if (message === 'cancel') {
    abort.abort();
    return;
  }
  void run(message);
});

async function run(request: ReferenceImportRequest): Promise<void> {
  let last: ImportProgress | null = null;
  try {
    const [{ importPeopleFile, importActivityFile, importBouncesFile }, { openServiceDb }] =
      await Promise.all([
        import('../../../service/identity/import.js'),
        import('../../../service/store/db.js'),
      ]);
    const db = openServiceDb(
      request.dataDir,
      request.nativeBinding ? { nativeBinding: request.nativeBinding } : {},
    );
    let report: ImportReport;
    try {
      const load = { people: importPeopleFile, activity: importActivityFile, bounces: importBouncesFile }[
        request.kind
      ];
      report = await load(db, request.file, {
        maxErrors: request.maxErrors,
        signal: abort.signal,
        onProgress: (_rows, progress) => {
          last = progress;
          send({ type: 'progress', ...progress });
        },
      });
    } finally {
      db.close();
    }
    send({ type: 'done', report });
  } catch (error) {
    const { ImportFileError } = await import('../../../service/identity/import.js');
    send({
      type: 'error',
      message: error instanceof Error ? error.message : String(error),
      isFileError: error instanceof ImportFileError,
      progress: last,
    });
  }
}
