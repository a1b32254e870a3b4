// The pipeline worker: runs lists one at a time, off the service's request thread, with its own pool of
// verify workers. Started by the list processor (processor.ts), which it answers with progress and outcomes.
import { parentPort, workerData } from 'node:worker_threads';
import { runPipeline } from './pipeline.js';
import type { OnlineVerdicts, PipelineMessage, PipelineRequest } from './types.js';
import { VerifierPool } from './verifierPool.js';

const port = parentPort;
if (!port) throw new Error('worker.js runs as a worker thread');
const { verifyThreads } = workerData as { verifyThreads: number };
const pool = new VerifierPool(verifyThreads);
pool.start();

const send = (message: PipelineMessage) => port.postMessage(message);
let queue = Promise.resolve();

/** The online checks asked of the main thread, by list: each gets its verdicts streamed back. */
const onlineRequests = new Map<number, { onVerdicts: (v: OnlineVerdicts) => void; done: () => void }>();

port.on('message', (request: PipelineRequest) => {
  if (request.type === 'online-verdicts') {
    const waiting = onlineRequests.get(request.listId);
    if (!waiting) return;
    waiting.onVerdicts(request.verdicts);
    if (request.isLast) {
      onlineRequests.delete(request.listId);
      waiting.done();
    }
    return;
  }
  if (request.type !== 'run') return;
  const { job, isMoreQueued } = request;
  queue = queue.then(async () => {
    pool.start();
    const outcome = await runPipeline(
      job,
      pool,
      (records, inputCount, completedCount, identityCompleted) =>
        send({
          type: 'progress',
          listId: job.listId,
          records,
          inputCount,
          completedCount,
          ...(identityCompleted !== undefined ? { identityCompleted } : {}),
        }),
      // With nothing queued behind this list, the verify workers' memory is given back before pass 2.
      isMoreQueued ? undefined : () => pool.close(),
      (addresses, rowCounts, onVerdicts) =>
        new Promise<void>((done) => {
          onlineRequests.set(job.listId, { onVerdicts, done });
          send({ type: 'online', listId: job.listId, addresses, rowCounts });
        }),
      (services) => send({ type: 'services', listId: job.listId, services }),
    );
    send({ type: 'done', listId: job.listId, outcome });
  });
});
send({ type: 'ready' });
