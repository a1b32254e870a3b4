// Issue 23, point 3: `mailsieve clean` killed (SIGKILL to its process group) during the download and run again
// at once, five times over. Each rerun starts while the killed process's id still answers (the helper holds it
// unreaped, test/helpers/killable.ts), so only what the dead process cannot keep, its lock on the output
// folder, tells that its temporaries are stale. Once the last rerun completes, no `*.mailsieve-part*` file
// (nor lock file) is left, and the outputs are those of an undisturbed run, byte for byte.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, runCli } from '../helpers/cli.js';
import { answers, startKillable, temporariesOf, type KillableProcess } from '../helpers/killable.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/recordingProxy.js';
import { startTestService, tempDir, type TestService } from '../helpers/service.js';

const ROWS = 15_000;
const KILLS = 5;
const E10 = /^\/v5\/list\/\d+\/results\/?$/;
/** Results files carry the list's id: `big-<id>-Validation.csv`. */
const sameNames = (names: readonly string[]) =>
  names.map((name) => name.replace(/^big-\d+-Validation\.csv$/, 'big-N-Validation.csv')).sort();
const leftovers = (dir: string) =>
  readdirSync(dir).filter((name) => /mailsieve-part|mailsieve-\d+\.lock/.test(name));

describe('mailsieve clean killed during the download and run again at once', () => {
  let service: TestService;
  let proxy: RecordingProxy;
  let dir: ReturnType<typeof tempDir>;
  let env: NodeJS.ProcessEnv;
  let input: string;
  const argsFor = (out: string) => [
    'clean',
    input,
    '--base-url',
    proxy.url,
    '--out',
    out,
    '--export',
    'clean',
  ];
  beforeAll(async () => {
    service = await startTestService();
    proxy = await startRecordingProxy(service.url);
    dir = tempDir('mailsieve-kill-rerun-');
    env = {
      MAILSIEVE_API_KEY: service.key({ services: ['validation', 'corrections'], rateLimit: 0 }),
      MAILSIEVE_HOME: join(dir.path, 'home'),
    };
    input = join(dir.path, 'big.csv');
    const rows = Array.from({ length: ROWS }, (_, i) =>
      i % 9 === 0 ? `not an address ${i},P ${i}` : `p${i % 12_000}@example.com,P ${i}`,
    );
    writeFileSync(input, `email,name\n${rows.join('\n')}\n`);
  });
  afterAll(async () => {
    await proxy.close();
    await service.close();
    dir.remove();
  });

  it(
    `leaves no temporary after ${KILLS} kills during the download, each followed at once by a rerun`,
    { timeout: 120_000 },
    async () => {
      const undisturbed = join(dir.path, 'undisturbed');
      const reference = await runCli(argsFor(undisturbed), env);
      expect(reference.code, reference.stderr).toBe(0);
      const expectedNames = sameNames(readdirSync(undisturbed));
      expect(expectedNames).toEqual(['big-N-Validation.csv', 'big-clean.csv']);
      const expected = new Map(
        readdirSync(undisturbed).map((name) => [sameNames([name])[0], readFileSync(join(undisturbed, name))]),
      );

      // Run after run is killed during its download and the next is started at once: the first submits the
      // list, each rerun takes it up, the last one completes.
      const out = join(dir.path, 'out');
      mkdirSync(out);
      const killed: KillableProcess[] = [];
      try {
        for (let kill = 1; kill <= KILLS; kill++) {
          // 200 kB of the results go through; the rest waits at the proxy, so the download is under way.
          proxy.onAnswerChunk = (request, sent) => E10.test(request.path) && sent >= 200_000;
          const run = await startKillable(CLI, argsFor(out), env);
          killed.push(run);
          // The download is under way once the results file and the export are being written.
          const writing = await temporariesOf(out, run.pid, 2);
          expect(writing, `run ${kill}`).toEqual([
            expect.stringMatching(/^big-\d+-Validation\.csv\.\d+\.mailsieve-part$/),
            `big-clean.csv.${run.pid}.mailsieve-part`,
          ]);
          run.killGroup();
          proxy.onAnswerChunk = undefined;
        }
        const last = await runCli(argsFor(out), env);
        // The killed runs' process ids answered all along, as they do while a killed process exits.
        for (const run of killed) expect(answers(run.pid), `killed run ${run.pid} was reaped`).toBe(true);
        expect(last.code, last.stdout + last.stderr).toBe(0);
        expect(last.stdout).toMatch(/Taking up list \d+, submitted by an earlier run/);
      } finally {
        proxy.onAnswerChunk = undefined;
        for (const run of killed) await run.reap();
      }
      expect(leftovers(out)).toEqual([]);
      expect(sameNames(readdirSync(out))).toEqual(expectedNames);
      for (const name of readdirSync(out))
        expect(readFileSync(join(out, name)).equals(expected.get(sameNames([name])[0])!), name).toBe(true);
    },
  );
});
