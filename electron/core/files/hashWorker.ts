// The worker thread of sha256FileAside (hash.ts): the SHA-256 of the file named by its workerData, posted
// back as hex.
import { parentPort, workerData } from 'node:worker_threads';
import { sha256File } from './hash.js';

parentPort!.postMessage(await sha256File(workerData as string));
