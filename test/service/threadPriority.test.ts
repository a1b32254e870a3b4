// A worker's priority is set below its maker's, not to a fixed value: a node run under `nice` keeps its bulk
// and prepare workers the same steps below it. Run in threads of their own (the test's thread keeps its
// priority), with the compiled module (dist/, which `npm test` builds first): a worker thread runs plain
// JavaScript.
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { canLowerThreadPriority } from '../../service/threadPriority.js';

const MODULE = fileURLToPath(new URL('../../dist/service/threadPriority.js', import.meta.url));

/**
 * The nice value of a thread made by a thread `makerSteps` below the test's, after `lowerThisThread(steps)`;
 * and the maker's.
 */
function niceAfter(makerSteps: number, steps: number): Promise<{ maker: number; thread: number }> {
  const code = `
    const { getPriority, setPriority } = require('node:os');
    const { Worker, parentPort, workerData } = require('node:worker_threads');
    setPriority(Math.min(19, getPriority() + workerData.makerSteps));
    const maker = getPriority();
    const inner = new Worker(
      "import('node:worker_threads').then(async ({ parentPort, workerData }) => {" +
        "const { lowerThisThread } = await import(workerData.module);" +
        "lowerThisThread(workerData.steps);" +
        "parentPort.postMessage(require('node:os').getPriority());" +
      "});",
      { eval: true, workerData },
    );
    inner.once('message', (thread) => parentPort.postMessage({ maker, thread }));
    inner.once('error', (error) => { throw error; });
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { makerSteps, steps, module: MODULE } });
    worker.once('message', (answer: { maker: number; thread: number }) => {
      resolve(answer);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

describe.runIf(canLowerThreadPriority)('lowerThisThread', () => {
  it('puts a thread the given steps below its maker, whatever the maker’s priority', async () => {
    for (const makerSteps of [0, 3]) {
      const { maker, thread } = await niceAfter(makerSteps, 2);
      expect(thread).toBe(Math.min(19, maker + 2));
    }
    const atThree = await niceAfter(3, 2);
    const atZero = await niceAfter(0, 2);
    expect(atThree.thread - atZero.thread).toBe(3);
  });

  it('stops at the lowest priority, and leaves a thread as it is for 0 steps', async () => {
    const low = await niceAfter(15, 10);
    expect(low.thread).toBe(19);
    const none = await niceAfter(1, 0);
    expect(none.thread).toBe(none.maker);
  });
});
