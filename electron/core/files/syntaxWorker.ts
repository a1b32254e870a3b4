// The pre-check's helper thread: it checks the batches of addresses the pre-check hands it (addressCheck.ts),
// so that a million-row pre-check uses both cores. Answers each batch with its figures, the hashes transferred.
import { parentPort } from 'node:worker_threads';
import { checkAddresses } from './addressCheck.js';

export interface SyntaxWorkerRequest {
  readonly id: number;
  readonly values: readonly string[];
}

export type SyntaxWorkerReply =
  | { readonly type: 'ready' }
  | { readonly type: 'batch'; readonly id: number; readonly invalid: number; readonly hashes: Float64Array };

const port = parentPort;
if (!port) throw new Error('syntaxWorker.js runs as a worker thread');
port.postMessage({ type: 'ready' } satisfies SyntaxWorkerReply);
port.on('message', (request: SyntaxWorkerRequest) => {
  const { invalid, hashes } = checkAddresses(request.values);
  // A copy of exactly its length, so the whole buffer can be transferred.
  const exact = hashes.slice();
  port.postMessage({ type: 'batch', id: request.id, invalid, hashes: exact } satisfies SyntaxWorkerReply, [
    exact.buffer,
  ]);
});
