// `mailsieve clean` killed (a real child process, SIGKILL) during the upload, while its list is processing, and
// in the middle of the download (when the results and the exports are being written from it), then run again:
// no torn or truncated file under a final name, no temporary file left, and the list already submitted is
// taken up again rather than submitted anew (E7 requests counted at a recording proxy). E9 is never sent:
// the list ran to its results.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/recordingProxy.js';
import { startTestService, tempDir, type TestService } from '../helpers/service.js';

const ROWS = 120_000;
const E7 = /^\/v5\/list\/?$/;
const E8 = /^\/v5\/list\/\d+\/?$/;
const E9 = /^\/v5\/list\/\d+\/purchase\/?$/;
const E10 = /^\/v5\/list\/\d+\/results\/?$/;
const pathOf = (request: IncomingMessage) => (request.url ?? '').split('?')[0];
const OLD_EXPORT = 'an export of an earlier run, which a killed run must leave whole\n';

describe('mailsieve clean, killed and run again', () => {
  let service: TestService;
  let proxy: RecordingProxy;
  let key: string;
  let dir: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    service = await startTestService();
    key = service.key({ services: ['validation', 'corrections'], rateLimit: 0 });
    proxy = await startRecordingProxy(service.url);
    dir = tempDir('mailsieve-resume-');
  });
  afterAll(async () => {
    await proxy.close();
    await service.close();
    dir.remove();
  });

  const phases: {
    readonly phase: string;
    /** Arms the proxy to kill `kill()` at the phase. */
    readonly arm: (kill: () => void, temporaries: () => string[]) => void;
    /** E7 requests over both runs: the killed upload's, then the one that went through. */
    readonly uploads: number;
  }[] = [
    {
      phase: 'the upload',
      arm: (kill) => {
        proxy.onRequest = (request: IncomingMessage) => {
          if (request.method === 'POST' && E7.test(pathOf(request))) request.once('data', kill);
        };
      },
      uploads: 2,
    },
    {
      phase: 'processing',
      arm: (kill) => {
        proxy.onRequest = (request) => {
          if (request.method === 'GET' && E8.test(pathOf(request))) kill();
        };
      },
      uploads: 1,
    },
    {
      phase: 'the download and export',
      arm: (kill, temporaries) => {
        // A megabyte of the results goes through, the rest is held back; once the results file and both
        // exports are being written under their temporary names, the kill.
        proxy.onAnswerChunk = (request, sent) => {
          if (request.method !== 'GET' || !E10.test(request.path) || sent < 1_000_000) return false;
          void (async () => {
            for (let i = 0; i < 3000 && temporaries().length < 3; i++)
              await new Promise((resolve) => setTimeout(resolve, 10));
            kill();
          })();
          return true;
        };
      },
      uploads: 1,
    },
  ];

  for (const { phase, arm, uploads } of phases)
    it(`resumes after a kill during ${phase}`, { timeout: 120_000 }, async () => {
      const out = join(dir.path, phase.replaceAll(' ', '-'));
      const input = join(out, 'big.csv');
      mkdirSync(out, { recursive: true });
      writeFileSync(
        input,
        `email,name\n${Array.from({ length: ROWS }, (_, i) => `p${i}@example.com,P ${i}`).join('\n')}\n`,
      );
      writeFileSync(join(out, 'big-all.csv'), OLD_EXPORT);
      const args = ['clean', input, '--base-url', proxy.url, '--export', 'all', '--export', 'safe'];
      const env = { MAILSIEVE_API_KEY: key, MAILSIEVE_HOME: join(dir.path, 'home') };
      proxy.requests.length = 0;

      const first = spawnCli(args, env);
      let temporariesAtKill: string[] = [];
      const temporaries = () => readdirSync(out).filter((name) => name.endsWith('.mailsieve-part'));
      arm(() => {
        if (first.child.exitCode !== null || first.child.killed) return;
        temporariesAtKill = temporaries();
        first.child.kill('SIGKILL');
      }, temporaries);
      const killed = await first.done;
      proxy.onRequest = undefined;
      proxy.onAnswerChunk = undefined;
      expect(killed.code, killed.stdout + killed.stderr).toBe(-1);
      // Nothing torn under a final name: the earlier export is whole, no results file yet.
      expect(readFileSync(join(out, 'big-all.csv'), 'utf8')).toBe(OLD_EXPORT);
      expect(readdirSync(out).filter((name) => /-Validation\.csv$|-safe\.csv$/.test(name))).toEqual([]);
      if (phase === 'the download and export')
        // Killed while the results and both exports were being written (under temporary names).
        expect(temporariesAtKill).toHaveLength(3);
      if (phase !== 'the upload') expect(existsSync(join(out, 'big.csv.mailsieve-job.json'))).toBe(true);

      const second = await runCli(args, env);
      expect(second.code, second.stderr).toBe(0);
      expect(proxy.count('POST', E7)).toBe(uploads);
      expect(proxy.count('POST', E9)).toBe(0);
      if (uploads === 1) expect(second.stdout).toMatch(/Taking up list \d+, submitted by an earlier run/);
      const results = /Results: (\S+)/.exec(second.stdout)?.[1];
      expect(results).toMatch(/big-\d+-Validation\.csv$/);
      const text = readFileSync(results!, 'utf8');
      expect(text.split('\n')).toHaveLength(ROWS + 2);
      // The export of every row is the results file, whole; no temporary file and no state file are left.
      expect(readFileSync(join(out, 'big-all.csv'), 'utf8')).toBe(text);
      expect(readFileSync(join(out, 'big-safe.csv'), 'utf8').split('\n')).toHaveLength(2);
      expect(readdirSync(out).sort()).toEqual(
        ['big-all.csv', 'big-safe.csv', 'big.csv', results!.split('/').pop()!].sort(),
      );
    });
});
