// `mailsieve clean` keeps its run in the app home's history, and `mailsieve outcomes import|report` measures
// that job against a campaign's bounce export (the built CLI, a real offline clean); the app, opened on the
// same home, reads the same numbers for the same job.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDesktopCore } from '../../electron/core/desktop.js';
import { FileSecretStore } from '../../electron/core/secrets.js';
import { outcomesReportSchema } from '../../shared/outcomes.js';
import type { ChannelOutput } from '../../shared/desktop/contract.js';

type JobList = ChannelOutput<'jobs:list'>;
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

describe('mailsieve outcomes', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('measures a cleaned job against its bounces; the app reads the same report', async () => {
    const dir = tempDir('mailsieve-outcomes-');
    cleanups.push(() => dir.remove());
    const home = join(dir.path, 'home');
    const env = { MAILSIEVE_HOME: home };
    const input = join(dir.path, 'campaign.csv');
    writeFileSync(
      input,
      [
        'email,name',
        'ann.hale@example.com,Ann',
        'bo.ng@example.org,Bo',
        'cy.ortiz@example.net,Cy',
        'dee.park@example.com,Dee',
        'not an address,Eli',
        'ANN.HALE@example.com,Ann again',
      ].join('\n') + '\n',
    );
    const cleaned = await runCli(['clean', input, '--checks', 'offline', '--json'], env);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    const jobId = (JSON.parse(cleaned.stdout) as { job: number }).job;
    expect(jobId).toBe(1);

    const bounces = join(dir.path, 'bounces.csv');
    writeFileSync(
      bounces,
      [
        'email,created,status,reason',
        'Ann.Hale@example.com,1777976000,5.1.1,"550 5.1.1 no such user"',
        'cy.ortiz@example.net,1778062400,4.2.2,"452 4.2.2 over quota"',
        'zed@example.com,1778062400,5.1.1,"550 5.1.1 no such user"',
      ].join('\n') + '\n',
    );
    const imported = await runCli(['outcomes', 'import', bounces, '--job', String(jobId), '--json'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const report = outcomesReportSchema.parse(JSON.parse(imported.stdout));
    // Offline: the clean export is mailed (every row but the invalid one, the duplicate removed): 4 rows.
    expect([report.sent, report.hardBounced, report.softBounced]).toEqual([4, 1, 1]);
    expect(report.measuredRate).toBe(0.25);
    expect(report.exportRows).toEqual({ hard: 2, soft: 1, other: 0, rejected: 0, unmatched: 1 });
    expect(report.knownBouncers).toEqual({ added: 2, updated: 0 });
    // Offline verdicts read unknown (code 10): nothing was called valid, so no verdict missed.
    expect(report.missedTotal).toBe(0);

    const text = await runCli(['outcomes', 'report', '--job', String(jobId)], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      'Of 4 rows mailed (the Ready to mail export), 1 hard-bounced: 25.00% measured against 12.00% the verdicts predicted.',
    );
    expect(text.stdout).toMatch(
      /By status code:\n {2}10 Syntax OK +4 mailed +1 hard +25\.00% \(predicted 12\.00%\)/,
    );
    const json = await runCli(['outcomes', 'report', '--job', String(jobId), '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(imported.stdout));

    // The app on the same home: the job is in History, and its Campaign results are the CLI's.
    const core = createDesktopCore({
      home,
      secrets: new FileSecretStore(home),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
      isResumeDeferred: true,
    });
    cleanups.push(() => core.close());
    const listed = await core.handle('jobs:list', {});
    const items = listed.ok ? (listed.value as JobList).items : [];
    expect(items.map((job) => [job.id, job.fileName, job.status])).toEqual([
      [1, 'campaign.csv', 'completed'],
    ]);
    // The list's SHA-256 (hashed on a thread of its own while the clean ran) is the file's.
    const detail = await core.handle('jobs:get', { jobId });
    expect(detail.ok && (detail.value as ChannelOutput<'jobs:get'>).file.sha256).toBe(
      createHash('sha256').update(readFileSync(input)).digest('hex'),
    );
    const got = await core.handle('outcomes:get', { jobId });
    expect(got).toEqual({ ok: true, value: report });

    // The hard bounces are known bouncers now: the same list cleaned again says 520 for Ann.
    const again = await runCli(['clean', input, '--checks', 'offline', '--json', '--no-history'], env);
    expect(again.code, again.stderr).toBe(0);
    const outcome = JSON.parse(again.stdout) as { job?: number; results: string };
    expect(outcome.job).toBeUndefined();
    expect(readFileSync(outcome.results, 'utf8')).toMatch(/ann\.hale@example\.com,Ann,invalid,520,/);
  });

  it('says in one line what is wrong: no job, no such job, no report yet', async () => {
    const dir = tempDir('mailsieve-outcomes-');
    cleanups.push(() => dir.remove());
    const env = { MAILSIEVE_HOME: join(dir.path, 'home') };
    const bounces = join(dir.path, 'b.csv');
    writeFileSync(bounces, 'email\nx@example.com\n');
    const noHistory = await runCli(['outcomes', 'report', '--job', '3'], env);
    expect(noHistory.code).toBe(1);
    expect(noHistory.stderr).toMatch(/^mailsieve: No job history at .* \(set MAILSIEVE_HOME/);
    const input = join(dir.path, 'l.csv');
    writeFileSync(input, 'email\nann.hale@example.com\n');
    expect((await runCli(['clean', input, '--checks', 'offline'], env)).code).toBe(0);
    const missing = await runCli(['outcomes', 'import', bounces, '--job', '7'], env);
    expect(missing.stderr).toMatch(/^mailsieve: Job 7 is not in the history at /);
    const noReport = await runCli(['outcomes', 'report', '--job', '1'], env);
    expect(noReport.stderr).toBe(
      'mailsieve: Job 1 has no campaign results yet: import them with `mailsieve outcomes import FILE --job 1`.\n',
    );
    const noFile = await runCli(['outcomes', 'import', join(dir.path, 'nope.csv'), '--job', '1'], env);
    expect(noFile.stderr).toMatch(/^mailsieve: FILE: .*nope\.csv does not exist\.\n$/);
    const noJob = await runCli(['outcomes', 'import', bounces], env);
    expect(noJob.stderr).toMatch(/^mailsieve: --job takes the id of a job in the history/);
  });
});
