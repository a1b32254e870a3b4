// The E6 clients of `npm run bench -- load`, in a worker thread of their own so that their JSON and sockets
// do not share an event loop with the E1 load generator: `concurrency` loops, each posting 5,000-record bodies
// back to back until told to stop, then answering every request's time.
import { parentPort, workerData } from 'node:worker_threads';

const { url, bodies, concurrency } = workerData as { url: string; bodies: string[]; concurrency: number };
const port = parentPort!;
let isStopping = false;
const times: number[] = [];
let failures = 0;
let sent = 0;
port.on('message', () => {
  isStopping = true;
});

async function loop(): Promise<void> {
  while (!isStopping) {
    const body = bodies[sent++ % bodies.length];
    const started = performance.now();
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await response.arrayBuffer();
      if (response.status === 200) times.push(performance.now() - started);
      else failures++;
    } catch {
      failures++;
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, loop));
port.postMessage({ times, failures });
