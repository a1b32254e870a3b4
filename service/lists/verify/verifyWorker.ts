// A verify worker: receives batches of addresses from the pipeline worker and answers their verdicts, packed
// (see verdicts.ts). Several run side by side so that the engine, the costly part of a list, uses every core.
// Workers outlive a list (starting one costs the engine's word lists, ~0.2 s): each list first sends the
// policy of its key, then its batches; messages on a port arrive in order.
import { parentPort } from 'node:worker_threads';
import type { VerifyPolicy } from '../../engine/types.js';
import type { ListPolicy } from '../types.js';
import { toVerifyPolicy, verifyBatch, type BatchVerdicts } from '../verdicts.js';

export type VerifyRequest =
  | { readonly type: 'policy'; readonly policy: ListPolicy }
  | {
      readonly type: 'batch';
      readonly id: number;
      /** The batch's addresses, UTF-8, separated by NUL bytes (which list files cannot hold). */
      readonly bytes: Uint8Array;
    };

export type VerifyReply =
  { readonly type: 'ready' } | ({ readonly type: 'batch'; readonly id: number } & BatchVerdicts);

const port = parentPort;
if (!port) throw new Error('verifyWorker.js runs as a worker thread');
const decoder = new TextDecoder('utf-8');
let policy: ListPolicy = { corrections: false, allow: [], suppress: [], legacyAcceptAll: false };
let verifyPolicy: VerifyPolicy = toVerifyPolicy(policy);

port.on('message', (request: VerifyRequest) => {
  if (request.type === 'policy') {
    policy = request.policy;
    verifyPolicy = toVerifyPolicy(policy);
    return;
  }
  const addresses = decoder.decode(request.bytes).split('\0');
  const verdicts = verifyBatch(addresses, policy, verifyPolicy);
  const reply: VerifyReply = { type: 'batch', id: request.id, ...verdicts };
  port.postMessage(reply, [verdicts.codes.buffer, verdicts.flags.buffer, verdicts.hashes.buffer]);
});
port.postMessage({ type: 'ready' } satisfies VerifyReply);
