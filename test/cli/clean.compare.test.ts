// `mailsieve clean FILE --compare-with JOB` (issue 37, "What changed since the last run"), through the built
// CLI: a list cleaned by the app (the desktop core, in this process) in a mail world as it was, then by the CLI
// after the world changed (a mailbox removed, a domain turned accept-all: test/helpers/changingWorld.ts), its
// results compared with the app's job — the counts exact, the changed rows in words and in
// `<results>.changed.csv`; a JOB that cannot be compared is one line on stderr before any work is done.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { createDesktopCore, type DesktopCore } from '../../electron/core/desktop.js';
import { FileSecretStore } from '../../electron/core/secrets.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { LIST_TEXT, startChangingWorld, type ChangingWorld } from '../helpers/changingWorld.js';

let world: ChangingWorld;
let dir: ReturnType<typeof tempDir>;
let home: string;
let jobId: number;
const saved = { dns: process.env.MAILSIEVE_DNS_SERVERS, port: process.env.MAILSIEVE_SMTP_PORT };

async function call<T>(core: DesktopCore, channel: string, input: unknown): Promise<T> {
  const reply = await core.handle(channel, input);
  if (!reply.ok) throw new Error(`${channel}: ${reply.error.message}`);
  return reply.value as T;
}

// The app's job: people.csv cleaned with SMTP checks in the world as it was.
beforeAll(async () => {
  world = await startChangingWorld(33);
  dir = tempDir('mailsieve-compare-');
  home = join(dir.path, 'home');
  process.env.MAILSIEVE_DNS_SERVERS = world.before.env.MAILSIEVE_DNS_SERVERS;
  process.env.MAILSIEVE_SMTP_PORT = world.before.env.MAILSIEVE_SMTP_PORT;
  const core = createDesktopCore({
    home,
    secrets: new FileSecretStore(home),
    mode: 'browser',
    hasNativeDialogs: false,
    version: 'test',
    localPollIntervalMs: 50,
  });
  try {
    await call(core, 'checks:set', { choice: 'smtp', heloName: 'probe.mailsieve.test' });
    const target = core.stagingPathFor('people.csv');
    writeFileSync(target.path, LIST_TEXT);
    core.registerStaged(target.fileId, target.path, 'people.csv');
    const started = await call<{ jobIds: number[] }>(core, 'jobs:start', {
      fileId: target.fileId,
      mapping: { delimiter: ',', header: true, roles: ['email', 'ignore'] },
      options: { reportOnly: false, split: false },
    });
    jobId = started.jobIds[0];
    for (let i = 0; ; i++) {
      const job = await call<JobDetail>(core, 'jobs:get', { jobId });
      if (job.status === 'completed' && existsSync(join(home, 'results', String(jobId), 'explain.csv.gz')))
        break;
      if (job.status === 'failed' || i > 1200) throw new Error(`job ${jobId}: ${job.status} ${job.message}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await core.close();
  }
}, 120_000);
afterAll(async () => {
  for (const [name, value] of [
    ['MAILSIEVE_DNS_SERVERS', saved.dns],
    ['MAILSIEVE_SMTP_PORT', saved.port],
  ] as const)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  await world?.close();
  dir?.remove();
});

/** The list under a name of its own, for one CLI run (its results are written beside it). */
function listNamed(name: string): string {
  const input = join(dir.path, `${name}.csv`);
  writeFileSync(input, LIST_TEXT);
  return input;
}

const SMTP = [
  '--checks',
  'smtp',
  '--helo-name',
  'probe.mailsieve.test',
  '--mail-from',
  'check@mailsieve.test',
];

describe('mailsieve clean --compare-with', () => {
  it('compares the results with the job’s after the world changed: the counts exact, the changed rows in words and in a CSV', async () => {
    const input = listNamed('again');
    const env = { MAILSIEVE_HOME: home, ...world.after.env };
    const run = await runCli(
      ['clean', input, '--compare-with', String(jobId), '--json', ...SMTP, ...world.after.args],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { results: string; changes: unknown };
    expect(out.results).toMatch(/\/again-\d+-Validation\.csv$/);
    const file = out.results.replace(/\.csv$/, '.changed.csv');
    expect(out.changes).toEqual({
      earlierJobId: jobId,
      compared: 5,
      changed: 3,
      byChange: [
        { before: 'invalid', after: 'valid', rows: 1 },
        { before: 'valid', after: 'invalid', rows: 1 },
        { before: 'valid', after: 'valid', rows: 1 },
      ],
      file,
    });
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe(
      'Email,Before Status,Before Code,Before Evidence,After Status,After Code,After Evidence,Words',
    );
    expect(lines.slice(1).map((line) => line.split(',').slice(0, 6))).toEqual([
      [
        'bob@shop.example.net',
        'valid',
        '50',
        expect.stringMatching(/^250 Accepted from mx1\.shop\.example\.net on \d+ \w+ \d{4}$/),
        'invalid',
        '400',
      ],
      [
        'dan@acme.example.net',
        'valid',
        '50',
        expect.stringMatching(/^250 Accepted from mx1\.acme\.example\.net on \d+ \w+ \d{4}$/),
        'valid',
        '45',
      ],
      [
        'zed@acme.example.net',
        'invalid',
        '400',
        expect.stringMatching(/^550 5\.1\.1 .* from mx1\.acme\.example\.net on \d+ \w+ \d{4}$/),
        'valid',
        '45',
      ],
    ]);
    // This run's evidence (its explain, downloaded for the comparison) is the after side: bob's 550.
    expect(lines[1]).toMatch(/,invalid,400,550 5\.1\.1 [^,]* from mx1\.shop\.example\.net on \d+ \w+ \d{4},/);
    // No temporary is left beside the results.
    expect(readdirSync(dir.path).filter((name) => /mailsieve-part|\.explain\.csv$/.test(name))).toEqual([]);

    // In words: the headline and the changed rows.
    const words = await runCli(
      ['clean', input, '--compare-with', String(jobId), ...SMTP, ...world.after.args],
      env,
    );
    expect(words.code, words.stderr).toBe(0);
    expect(words.stdout).toContain(`3 of 5 addresses changed status since job ${jobId}:\n`);
    expect(words.stdout).toMatch(
      /^ {2}row 4 {2}dan@acme\.example\.net {2}valid 50 → valid 45: was valid \(50\), now valid \(45 Domain is catch-all, validation unsupported\): 250 Accepted from mx1\.acme\.example\.net on \d+ \w+ \d{4}$/m,
    );
    const results = /^Results: (.+)$/m.exec(words.stdout)![1];
    expect(words.stdout.trimEnd().split('\n').at(-1)).toBe(
      `Changed rows: ${results.replace(/\.csv$/, '.changed.csv')}`,
    );
  }, 120_000);

  it('refuses a job it cannot compare with in one line, before any work is done', async () => {
    const input = listNamed('refused');
    const env = { MAILSIEVE_HOME: home, ...world.after.env };
    const missing = await runCli(['clean', input, '--compare-with', '999', ...world.after.args], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`mailsieve: --compare-with: job 999 is not in the history at ${home}.\n`);
    const bad = await runCli(['clean', input, '--compare-with', 'last'], env);
    expect(bad.stderr).toBe(
      "mailsieve: --compare-with takes a whole number from 1 to 2147483648; got 'last'.\n",
    );
    const nowhere = await runCli(['clean', input, '--compare-with', '1'], {
      MAILSIEVE_HOME: join(dir.path, 'no-home'),
    });
    expect(nowhere.stderr).toBe(
      `mailsieve: No job history at ${join(dir.path, 'no-home')} (set MAILSIEVE_HOME to the app home that holds history.sqlite).\n`,
    );
    // Nothing was cleaned: no results beside the list.
    expect(readdirSync(dir.path).filter((name) => name.startsWith('refused-'))).toEqual([]);
  }, 60_000);
});
