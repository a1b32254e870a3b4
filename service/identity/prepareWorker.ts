// The worker that prepares answers (prepared.ts) in the background: its own connection to the service
// database, a lower OS priority where a thread can have its own (Linux), small transactions with a pause
// between them so that the service's own writes get the database. Ends when nothing is left, or when told.
import Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { prepareAnswers } from './prepared.js';
import { lowerThisThread } from '../threadPriority.js';

export interface PrepareWorkerData {
  readonly dbPath: string;
  readonly nativeBinding?: string | undefined;
  /** Steps of nice below its maker this thread takes (Linux; service/threadPriority.ts), 0 for none. */
  readonly nice: number;
}
/** What the worker posts: how many it prepared in all, once it ends. */
export interface PrepareReply {
  readonly prepared: number;
}

/** People (and addresses) per transaction, and the pause after each, in ms. */
const BATCH = 1_000;
const PAUSE_MS = 5;

const port = parentPort;
if (!port) throw new Error('prepareWorker.js runs as a worker thread');
const { dbPath, nativeBinding, nice } = workerData as PrepareWorkerData;
lowerThisThread(nice);
const db = new Database(dbPath, { fileMustExist: true, ...(nativeBinding ? { nativeBinding } : {}) });
db.pragma('busy_timeout = 5000');
let isStopping = false;
const stop = () => (isStopping = true);
port.on('message', stop);
let prepared = 0;
try {
  for (;;) {
    const done = prepareAnswers(db, BATCH);
    prepared += done;
    if (done === 0 || isStopping) break;
    await sleep(PAUSE_MS);
  }
} finally {
  db.close();
}
// Listening no more lets the thread end once its reply is sent.
port.off('message', stop);
port.postMessage({ prepared } satisfies PrepareReply);
