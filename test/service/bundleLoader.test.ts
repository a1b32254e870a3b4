// The bundle loader (service/bundleLoader.ts): the CLI and the list workers run from V8 code caches the build
// made, each used only for the chunk it was made from and only when V8 accepts it. Runs the built loader
// (dist/, which `npm test` builds first) in processes of their own, as bin/mailsieve.js does.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/browserApp.js';

const run = promisify(execFile);
const LOADER = pathToFileURL(join(ROOT, 'dist', 'service', 'bundleLoader.js')).href;
const MAKE = 'MAILSIEVE_MAKE_CODE_CACHE';

/** Runs `entry` through the loader in a process of its own; its output, and the loader's report at exit. */
async function runThroughLoader(
  dir: string,
  entry: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<{ stdout: string; loaded: string[]; fromCache: string[] }> {
  const script = join(dir, 'run.mjs');
  writeFileSync(
    script,
    `import { writeFileSync } from 'node:fs';
import { runBundle } from ${JSON.stringify(LOADER)};
process.argv = [process.argv[0], ${JSON.stringify(entry)}, ...${JSON.stringify(args)}];
const report = runBundle(${JSON.stringify(entry)});
process.on('exit', () => writeFileSync(${JSON.stringify(join(dir, 'report.json'))}, JSON.stringify(report)));
`,
  );
  const { stdout } = await run(process.execPath, [script], { env: { ...process.env, ...env } });
  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as {
    loaded: string[];
    fromCache: string[];
  };
  return { stdout, ...report };
}

describe('a bundle run with its code caches', () => {
  let dir: string;
  let entry: string;
  let chunk: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailsieve-bundle-'));
    entry = join(dir, 'main.cjs');
    chunk = join(dir, 'chunk-a.cjs');
    writeFileSync(
      entry,
      `const { join } = require('node:path');
const a = require('./chunk-a.cjs');
console.log(a.greet(join('x', 'y')), __filename === ${JSON.stringify(entry)}, typeof module.exports);
`,
    );
    writeFileSync(chunk, `exports.greet = (name) => 'hello ' + name;\n`);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a cache for each chunk it loads, and then runs from them', async () => {
    const made = await runThroughLoader(dir, entry, [], { [MAKE]: '1' });
    expect(made.stdout).toBe('hello x/y true object\n');
    expect(made.fromCache).toEqual([]);
    expect(existsSync(`${entry}.cache`) && existsSync(`${chunk}.cache`)).toBe(true);

    const again = await runThroughLoader(dir, entry);
    expect(again.stdout).toBe('hello x/y true object\n');
    expect(again.loaded).toEqual([entry, chunk]);
    expect(again.fromCache).toEqual([entry, chunk]);
  });

  it('compiles a chunk changed since its cache was made without the cache', async () => {
    await runThroughLoader(dir, entry, [], { [MAKE]: '1' });
    writeFileSync(chunk, `exports.greet = (name) => 'bye ' + name;\n`);
    const later = new Date(Date.now() + 5000);
    utimesSync(chunk, later, later);

    const changed = await runThroughLoader(dir, entry);
    expect(changed.stdout).toBe('bye x/y true object\n');
    expect(changed.fromCache).toEqual([entry]);
  });

  it('does not use a cache V8 refuses, and runs the chunk all the same', async () => {
    await runThroughLoader(dir, entry, [], { [MAKE]: '1' });
    const cache = readFileSync(`${chunk}.cache`);
    // The same chunk's stamp at its head, then bytes that are no V8 code cache.
    writeFileSync(
      `${chunk}.cache`,
      Buffer.concat([cache.subarray(0, 16), Buffer.alloc(cache.length - 16, 7)]),
    );

    const refused = await runThroughLoader(dir, entry);
    expect(refused.stdout).toBe('hello x/y true object\n');
    expect(refused.fromCache).toEqual([entry]);
  });
});

describe("the build's code caches", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailsieve-bundle-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('start every chunk of the CLI that a command loads', async () => {
    const cli = await runThroughLoader(dir, join(ROOT, 'dist', 'cli', 'mailsieve.cjs'), ['--help']);
    expect(cli.stdout).toContain('Usage: mailsieve');
    expect(cli.loaded.length).toBeGreaterThan(1);
    expect(cli.fromCache).toEqual(cli.loaded);
  });

  it.each(['pipelineWorker', 'verifyWorker', 'exportWorker'])(
    'start every chunk of the %s thread',
    async (name) => {
      const script = join(dir, 'thread.mjs');
      writeFileSync(
        script,
        `import { MessageChannel, Worker } from 'node:worker_threads';
// What each thread is given: the pipeline its verify threads, the export thread its role and port.
const { port1 } = new MessageChannel();
const worker = new Worker(${JSON.stringify(`import { parentPort } from 'node:worker_threads';
import { runBundle } from ${JSON.stringify(LOADER)};
parentPort.postMessage({ report: runBundle(${JSON.stringify(join(ROOT, 'dist', 'workers', `${name}.cjs`))}) });`)}, {
  eval: true,
  workerData: { verifyThreads: 1, role: 'frame', port: port1 },
  transferList: [port1],
});
worker.on('message', (message) => {
  if (!message || !message.report) return;
  console.log(JSON.stringify(message.report));
  void worker.terminate();
});
worker.on('error', (error) => { console.error(error); process.exit(1); });
`,
      );
      const { stdout } = await run(process.execPath, [script]);
      const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
        loaded: string[];
        fromCache: string[];
      };
      expect(report.loaded.length).toBeGreaterThan(0);
      expect(report.fromCache).toEqual(report.loaded);
    },
  );
});
