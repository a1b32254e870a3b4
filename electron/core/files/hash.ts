// The SHA-256 of a list file, as the job history keeps it (a job's `file_sha256`: the same list is known
// again by it). On this thread (sha256File) or, for a run that has other work meanwhile, on a thread of its
// own (sha256FileAside): hashing an 80 MB list takes ~65 ms of CPU, which `mailsieve clean` spent after its
// exports while nothing else ran; begun with the run, it is done long before the history is written. The
// desktop's `jobs:start` begins it beside the upload's preparation, off the thread that serves the window.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { workerScriptUrl } from '../../../service/workerUrl.js';

/** SHA-256 of a file, hex. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * sha256File on a worker thread (hashWorker.ts), begun now; the same hex. The worker does not keep the
 * process alive, and a rejection is the caller's only when it awaits the answer (an unused one is dropped).
 */
export function sha256FileAside(path: string): Promise<string> {
  const answer = new Promise<string>((resolve, reject) => {
    const worker = new Worker(workerScriptUrl(import.meta.url, 'hashWorker'), {
      workerData: path,
      resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 32 },
    });
    worker.unref();
    worker.once('message', (hex: string) => resolve(hex));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the hashing thread stopped (exit code ${code})`)));
  });
  answer.catch(() => undefined);
  return answer;
}
