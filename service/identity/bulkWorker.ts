// A bulk worker: answers E4/E6 requests (bulkWork.ts) over its own read-only connection to the service
// database, so that the request thread only receives bodies and sends the finished JSON (bulkPool.ts).
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { answerBulk, type BulkOutcome, type BulkTask } from './bulkWork.js';
import { IdentityStore } from './store.js';
import { lowerThisThread } from '../threadPriority.js';

export interface BulkWorkerData {
  readonly dbPath: string;
  readonly nativeBinding?: string | undefined;
  /** Steps of nice below its maker this thread takes (Linux; bulkPool.ts BULK_WORKER_NICE), 0 for none. */
  readonly nice: number;
}
export type BulkRequest = { readonly id: number; readonly task: BulkTask };
export type BulkReply =
  { readonly id: number; readonly outcome: BulkOutcome } | { readonly id: number; readonly failure: string };

const port = parentPort;
if (!port) throw new Error('bulkWorker.js runs as a worker thread');
const { dbPath, nativeBinding, nice } = workerData as BulkWorkerData;
// The calling thread only, on Linux; left as it is elsewhere (service/threadPriority.ts).
lowerThisThread(nice);
const db = new Database(dbPath, {
  readonly: true,
  fileMustExist: true,
  ...(nativeBinding ? { nativeBinding } : {}),
});
// As the request thread's connection (identity.ts): E6 reads thousands of random pages per request.
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -131072');
db.pragma('mmap_size = 2147483648');
const store = new IdentityStore(db);

port.on('message', ({ id, task }: BulkRequest) => {
  let reply: BulkReply;
  try {
    reply = { id, outcome: answerBulk(store, task) };
  } catch (error) {
    reply = { id, failure: error instanceof Error ? error.message : String(error) };
  }
  const transfer = 'outcome' in reply && reply.outcome.ok ? [reply.outcome.json.buffer as ArrayBuffer] : [];
  port.postMessage(reply, transfer);
});
