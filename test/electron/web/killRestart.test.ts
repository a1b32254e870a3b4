// Issue 23, point 3, on the desktop: the app (browser mode, the built dist/desktop/web.js, in a process
// group of its own) killed with SIGKILL while a job downloads its results, and started again at once. The job
// resumes on the same engine as `mailsieve clean`; while the killed app's process id still answers (held
// unreaped, test/helpers/killable.ts) its temporaries are told stale by its lock on the job's results folder.
// The job completes with no `*.mailsieve-part*` file (nor lock file) in that folder, and the folder holds what
// an undisturbed job's holds, the results byte for byte.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail } from '../../../shared/desktop/contract.js';
import { ROOT } from '../../helpers/browserApp.js';
import { answers, startKillable, temporariesOf, type KillableProcess } from '../../helpers/killable.js';
import { startRecordingProxy, type RecordingProxy } from '../../helpers/recordingProxy.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

const ROWS = 15_000;
const E10 = /^\/v5\/list\/\d+\/results\/?$/;
const APP = join(ROOT, 'dist', 'desktop', 'web.js');
/** The files in `dir` and below, by relative path. */
const filesIn = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
const leftovers = (dir: string) =>
  filesIn(dir).filter((name) => /mailsieve-part|mailsieve-\d+\.lock/.test(name));
/** Results files carry the list's id. */
const sameNames = (names: readonly string[]) => names.map((name) => name.replace(/-\d+-/, '-N-')).sort();

/** The app started on `home`, and a session with it over its loopback contract. */
async function startApp(home: string): Promise<{
  app: KillableProcess;
  call: <T>(channel: string, input?: unknown) => Promise<T>;
}> {
  const app = await startKillable(APP, ['--no-open'], { MAILSIEVE_HOME: home, MAILSIEVE_NO_BROWSER: '1' });
  let launch: string | undefined;
  for await (const line of app.lines) {
    launch = /^MAILSIEVE_URL=(\S+)$/.exec(line)?.[1];
    if (launch) break;
  }
  if (!launch) throw new Error('The app stopped before it printed its address');
  const opened = await fetch(launch, { redirect: 'manual' });
  const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0];
  const origin = new URL(launch).origin;
  return {
    app,
    async call<T>(channel: string, input: unknown = {}) {
      const response = await fetch(`${origin}/api/call/${channel}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', 'x-mailsieve-request': '1' },
        body: JSON.stringify(input),
      });
      const reply = (await response.json()) as
        { ok: true; value: T } | { ok: false; error: { message: string } };
      if (!reply.ok) throw new Error(`${channel}: ${reply.error.message}`);
      return reply.value;
    },
  };
}

describe('the app killed while a job downloads, and started again at once', () => {
  let service: TestService;
  let proxy: RecordingProxy;
  let dir: ReturnType<typeof tempDir>;
  let key: string;
  let list: string;
  beforeAll(async () => {
    service = await startTestService();
    proxy = await startRecordingProxy(service.url);
    key = service.key({ services: ['validation', 'corrections'], rateLimit: 0 });
    dir = tempDir('mailsieve-app-kill-');
    list = join(dir.path, 'big.csv');
    const rows = Array.from({ length: ROWS }, (_, i) =>
      i % 9 === 0 ? `not an address ${i},P ${i}` : `p${i % 12_000}@example.com,P ${i}`,
    );
    writeFileSync(list, `email,name\n${rows.join('\n')}\n`);
  });
  afterAll(async () => {
    await proxy.close();
    await service.close();
    dir.remove();
  });

  it('resumes the job and leaves no temporary in its results folder', { timeout: 120_000 }, async () => {
    const home = join(dir.path, 'home');
    mkdirSync(home);
    const apps: KillableProcess[] = [];
    try {
      const first = await startApp(home);
      apps.push(first.app);
      await first.call('connection:set', { kind: 'provider', baseUrl: proxy.url, apiKey: key });
      const start = async () => {
        const staged = await first.call<{ fileId: string }>('files:add-path', { path: list });
        const started = await first.call<{ jobIds: number[] }>('jobs:start', {
          fileId: staged.fileId,
          mapping: { delimiter: ',', header: true, roles: ['email', 'ignore'] },
          options: { reportOnly: false, split: false },
        });
        return started.jobIds[0];
      };
      const finished = async (call: typeof first.call, jobId: number) => {
        for (;;) {
          const job = await call<JobDetail>('jobs:get', { jobId });
          if (!['queued', 'uploading', 'processing', 'downloading'].includes(job.status)) return job;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };

      // An undisturbed job: what the folder of the killed one must hold in the end.
      const undisturbed = await start();
      expect((await finished(first.call, undisturbed)).status).toBe('completed');
      const undisturbedDir = join(home, 'results', String(undisturbed));
      const expectedNames = sameNames(filesIn(undisturbedDir));
      expect(expectedNames).toEqual(['big-N-Validation.csv', 'prepared-export', 'prepared-export.json']);
      const expected = new Map(
        filesIn(undisturbedDir).map((name) => [
          sameNames([name])[0],
          readFileSync(join(undisturbedDir, name)),
        ]),
      );

      // 200 kB of the results go through; the rest waits at the proxy, so the download is under way.
      proxy.onAnswerChunk = (request, sent) => E10.test(request.path) && sent >= 200_000;
      const jobId = await start();
      const folder = join(home, 'results', String(jobId));
      const writing = await temporariesOf(folder, first.app.pid);
      expect(writing).not.toEqual([]);
      first.app.killGroup();
      proxy.onAnswerChunk = undefined;

      const second = await startApp(home);
      apps.push(second.app);
      const job = await finished(second.call, jobId);
      expect(answers(first.app.pid), 'the killed app was reaped').toBe(true);
      expect(job.status).toBe('completed');
      expect(leftovers(folder)).toEqual([]);
      expect(sameNames(filesIn(folder))).toEqual(expectedNames);
      // The results and the default export written with them (its note names this job's own files).
      for (const name of filesIn(folder).filter((name) => !name.endsWith('.json')))
        expect(readFileSync(join(folder, name)).equals(expected.get(sameNames([name])[0])!), name).toBe(true);
    } finally {
      proxy.onAnswerChunk = undefined;
      for (const app of apps) {
        app.killGroup();
        await app.reap();
      }
    }
  });
});
