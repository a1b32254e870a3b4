// The worker thread of the cluster benchmark's mail world (clusterWorld.ts): starts the servers, then answers
// `summary`, `reset`, `stall` and `close` from the thread that started it.
import { parentPort, workerData } from 'node:worker_threads';
import {
  runClusterWorld,
  type ClusterWorldConfig,
  type ClusterWorldReply,
  type ClusterWorldRequest,
} from './clusterWorld.js';

const port = parentPort!;
const post = (reply: ClusterWorldReply) => port.postMessage(reply);
try {
  const world = await runClusterWorld(workerData as ClusterWorldConfig);
  port.on('message', (request: ClusterWorldRequest) => {
    const { id, op } = request;
    void (async () => {
      try {
        if (op === 'summary') post({ id, value: world.summary() });
        else if (op === 'reset') post({ id, value: world.reset() });
        else if (op === 'stall') {
          post({ id });
          // NOTE: blocks this thread on purpose (a busy server): nothing is read or answered meanwhile.
          const until = performance.now() + request.ms;
          while (performance.now() < until);
        } else {
          await world.close();
          post({ id });
          port.close();
        }
      } catch (error) {
        post({ id, error: error instanceof Error ? error.message : String(error) });
      }
    })();
  });
  post({ ready: { dns: world.dns, smtpPort: world.smtpPort, hosts: world.hosts } });
} catch (error) {
  post({ failed: error instanceof Error ? error.message : String(error) });
}
