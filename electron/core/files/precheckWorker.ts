// The offline pre-check of a list file, in a worker thread: it reads every row (a million-row file takes a
// second or more of verification work), so it must not run on the core's event loop. It is started before a
// file is asked about (the engine's modules load meanwhile), runs one pre-check, posts its progress at most
// every PROGRESS_MS and its answer, and is ended by the core (a cancel terminates it).
import { parentPort } from 'node:worker_threads';
import type { Mapping, Precheck } from '../../../shared/desktop/contract.js';
import type { FileRef, PrecheckProgress } from './prepare.js';

export interface PrecheckWorkerRequest {
  readonly file: FileRef;
  readonly mapping: Mapping;
  readonly split: boolean;
  readonly partLimit?: number;
}

export type PrecheckWorkerReply =
  | { readonly type: 'ready' }
  | ({ readonly type: 'progress' } & PrecheckProgress)
  | { readonly type: 'done'; readonly value: Precheck }
  | { readonly type: 'error'; readonly message: string; readonly code?: string };

const PROGRESS_MS = 100;

const port = parentPort;
if (!port) throw new Error('precheckWorker.js runs as a worker thread');
const send = (reply: PrecheckWorkerReply) => port.postMessage(reply);

// The verification engine loads now, while the file's sample is read on the core's thread.
const loading = import('./prepare.js');
void loading.then(
  () => send({ type: 'ready' }),
  () => undefined,
);

port.once('message', (request: PrecheckWorkerRequest) => {
  void (async () => {
    try {
      const { precheck } = await loading;
      let last = 0;
      const value = await precheck(
        request.file,
        request.mapping,
        request.split,
        request.partLimit,
        (progress) => {
          const now = Date.now();
          if (now - last < PROGRESS_MS) return;
          last = now;
          send({ type: 'progress', ...progress });
        },
        // A second thread checks addresses too: the core's own thread has nothing to do meanwhile.
        { helper: true },
      );
      send({ type: 'done', value });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      send({
        type: 'error',
        message: error instanceof Error ? error.message : String(error),
        ...(typeof code === 'string' ? { code } : {}),
      });
    }
  })();
});
