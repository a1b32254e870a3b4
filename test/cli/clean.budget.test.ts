// `mailsieve clean FILE --export safe --max-bounce-rate X` (the built CLI, issue 37) against a real service
// whose key allows one domain (code 55, valid) and checks the rest offline (code 10, syntax only): the safe
// export planned against the budget, with the stated defaults when the app home has no history, and with the
// risk measured from the history's campaign outcomes when it holds enough rows of a code. The printed summary
// and --json say the expected rate and the rows left out; a bad budget is one line and a non-zero exit.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_DB_FILE, insertJob, openHistoryDb } from '../../electron/core/history/db.js';
import { runCli } from '../helpers/cli.js';
import { startTestService, tempDir, type TestService } from '../helpers/service.js';

const rowsOf = (path: string) =>
  readFileSync(path, 'utf8')
    .replace(/\r?\n$/, '')
    .split(/\r?\n/);

/** 40 allowed addresses (code 55) and 60 checked offline (code 10), interleaved; then two repeats. */
function writeList(path: string): { allowed: string[]; plain: string[] } {
  const allowed = Array.from({ length: 40 }, (_, i) => `a${i + 1}@trusted-partner.com`);
  const plain = Array.from({ length: 60 }, (_, i) => `p${i + 1}@example.com`);
  const emails: string[] = [];
  for (let i = 0; i < 60; i++) {
    if (i < 40) emails.push(allowed[i]);
    emails.push(plain[i]);
  }
  emails.push('P3@EXAMPLE.COM', 'P50@EXAMPLE.COM');
  writeFileSync(path, `email,name\n${emails.map((email, i) => `${email},Person ${i + 1}`).join('\n')}\n`);
  return { allowed, plain };
}

/** An app home whose history holds a campaign's outcomes: code 10 mailed 200 times, 8 hard bounces (4%). */
function homeWithOutcomes(home: string): void {
  const db = openHistoryDb(join(home, HISTORY_DB_FILE));
  const jobId = insertJob(db, {
    fileName: 'earlier.csv',
    filePath: '/nowhere/earlier.csv',
    uploadName: 'earlier.csv',
    uploadHeader: true,
    fileSize: 100,
    fileSha256: null,
    fileFormat: 'csv',
    fileEncoding: 'utf-8',
    mapping: { delimiter: ',', header: true, roles: ['email'] },
    options: { reportOnly: false, split: false, services: ['email_validation'] },
    connectionKind: 'embedded',
    connectionUrl: null,
  });
  db.prepare('INSERT INTO job_outcome_codes (job_id, code, sent, hard_bounced) VALUES (?, 10, 200, 8)').run(
    jobId,
  );
  db.close();
}

describe('mailsieve clean --max-bounce-rate', () => {
  let service: TestService;
  let key: string;
  const dirs: { remove(): void }[] = [];
  beforeAll(async () => {
    service = await startTestService();
    key = service.key({ allow: ['trusted-partner.com'], rateLimit: 0 });
  });
  afterAll(async () => {
    await service?.close();
    for (const dir of dirs) dir.remove();
  });
  const workspace = () => {
    const dir = tempDir('mailsieve-budget-');
    dirs.push(dir);
    return dir.path;
  };

  it('plans the safe export with the stated defaults when the app home has no history', async () => {
    const dir = workspace();
    const input = join(dir, 'people.csv');
    const { allowed, plain } = writeList(input);
    const result = await runCli(
      ['clean', input, '--base-url', service.url, '--export', 'safe', '--max-bounce-rate', '2'],
      { MAILSIEVE_API_KEY: key, MAILSIEVE_HOME: join(dir, 'home') },
    );
    expect(result.code, result.stderr).toBe(0);
    const safe = join(dir, 'people-safe.csv');
    // 40 at 0.5% (code 55) = 0.2; code 10 at its default 12%: 6 rows bring the file to 0.92 over 46 rows, 2%.
    expect(result.stdout).toContain(`Export safe    ${safe} (46 rows; left out 2 duplicates)`);
    expect(result.stdout).toContain(
      '  Bounce budget 2%: Expected bounce rate 2.00% — 54 accept-all and unknown rows left out. Risks are the stated defaults: import campaign results to measure your own.',
    );
    const rows = rowsOf(safe).slice(1);
    const expected = [...allowed, ...plain.slice(0, 6)];
    expect(rows.map((row) => row.split(',')[0]).sort()).toEqual(expected.sort());
  });

  it('takes the risk measured from the history’s outcomes over the default, and says it in --json', async () => {
    const dir = workspace();
    const input = join(dir, 'people.csv');
    const { allowed, plain } = writeList(input);
    const home = join(dir, 'home');
    homeWithOutcomes(home);
    const result = await runCli(
      [
        'clean',
        input,
        '--base-url',
        service.url,
        '--export',
        'safe,invalid',
        '--max-bounce-rate',
        '2',
        '--json',
      ],
      { MAILSIEVE_API_KEY: key, MAILSIEVE_HOME: home },
    );
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as {
      exports: { kind: string; path: string; rows: number }[];
      budget: Record<string, unknown>;
    };
    // Code 10 measured at 4%: (0.8 − 0.2) / (0.04 − 0.02) = 30 rows fit, 0.2 + 1.2 = 1.4 over 70 rows: 2%.
    expect(json.budget).toEqual({
      safe: { maxRatePercent: 2, expectedRatePercent: 2, written: 70, leftOut: 30, riskSource: 'mixed' },
    });
    expect(json.exports).toEqual([
      { kind: 'invalid', path: join(dir, 'people-invalid.csv'), rows: 0 },
      { kind: 'safe', path: join(dir, 'people-safe.csv'), rows: 70 },
    ]);
    // The first 30 code-10 rows in the list's order, and every allowed row, in file order.
    const order = readFileSync(input, 'utf8')
      .split('\n')
      .slice(1, -1)
      .map((line) => line.split(',')[0]);
    const kept = new Set([...allowed, ...plain.slice(0, 30)]);
    expect(
      rowsOf(join(dir, 'people-safe.csv'))
        .slice(1)
        .map((row) => row.split(',')[0]),
    ).toEqual(order.filter((email) => kept.has(email)));
  });

  it('refuses a budget that is not a percent, or without the safe or clean export, in one line', async () => {
    const dir = workspace();
    const input = join(dir, 'people.csv');
    writeList(input);
    const env = { MAILSIEVE_HOME: join(dir, 'home') };
    for (const [args, message] of [
      [
        ['--export', 'safe', '--max-bounce-rate', 'two'],
        "--max-bounce-rate takes a percent from 0 to 100; got 'two'.",
      ],
      [
        ['--export', 'safe', '--max-bounce-rate', '101'],
        "--max-bounce-rate takes a percent from 0 to 100; got '101'.",
      ],
      [
        ['--max-bounce-rate', '2'],
        '--max-bounce-rate goes with --export safe or --export clean: it plans those exports.',
      ],
      [
        ['--export', 'invalid', '--max-bounce-rate', '2'],
        '--max-bounce-rate goes with --export safe or --export clean: it plans those exports.',
      ],
    ] as const) {
      const result = await runCli(['clean', input, ...args], env);
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim()).toBe(`mailsieve: ${message}`);
    }
  });
});
