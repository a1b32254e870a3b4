// The pipeline worker: runs lists one at a time, off the service's request thread, with its own pool of
// verify workers. Started by the list processor (processor.ts), which it answers with progress and outcomes.
import { parentPort, workerData } from 'node:worker_threads';
import { runPipeline } from './pipeline.js';
import type { PipelineMessage, PipelineRequest } from './types.js';
import { VerifierPool } from './verifierPool.js';

const port = parentPort;
if (!port) throw new Error('worker.js runs as a worker thread');
const { verifyThreads } = workerData as { verifyThreads: number };
const pool = new VerifierPool(verifyThreads);
pool.start();

const send = (message: PipelineMessage) => port.postMessage(message);
let queue = Promise.resolve();

port.on('message', (request: PipelineRequest) => {
  if (request.type !== 'run') return;
  const { job, isMoreQueued } = request;
  queue = queue.then(async () => {
    pool.start();
    const outcome = await runPipeline(
      job,
      pool,
      (records, inputCount, completedCount) =>
        send({ type: 'progress', listId: job.listId, records, inputCount, completedCount }),
      // With nothing queued behind this list, the verify workers' memory is given back before pass 2.
      isMoreQueued ? undefined : () => pool.close(),
    );
    send({ type: 'done', listId: job.listId, outcome });
  });
});
send({ type: 'ready' });
