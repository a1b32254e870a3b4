// Quotas on the single-node service (its SQLite adapter of the usage port, service/store/usage.ts): the same
// rules as the team server's (test/pg/quotas.test.ts). Billable queries — E1 calls, E5 calls, E6 records and
// list records — are charged all or none; past the quota 403 in words; a list larger than what is left is
// refused at submission; a list found invalid gives its records back; `keys usage` reports each key's use.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodOf, quotaExceededMessage } from '../../../service/store/usage.js';
import { TRIAL_QUOTA } from '../../../service/store/keys.js';
import { keyInfoSchema } from '../../../shared/api/listServices.js';
import { runCli } from '../../helpers/cli.js';
import { startListService, submit, waitForList, type ListService } from '../lists/helpers.js';

let svc: ListService;

beforeAll(async () => {
  svc = await startListService();
});
afterAll(() => svc.close());

const ev = (key: string, email: string) =>
  fetch(`${svc.url}/v5/ev?email=${encodeURIComponent(email)}&api_key=${encodeURIComponent(key)}`).then(
    async (response) => ({ status: response.status, text: await response.text() }),
  );

const rows = (n: number) => ['email', ...Array.from({ length: n }, (_, i) => `p${i}@example.com`)].join('\n');

describe('quotas of the single-node service', () => {
  it('answers a key with a quota of 5 five times, then 403 in words', async () => {
    const key = svc.key({ quota: { limit: 5, period: 'total', isTrial: false } });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ev(key, `a${i}@example.com`)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(5);
    const refused = answers.filter((answer) => answer.status === 403);
    expect(refused).toHaveLength(3);
    expect(JSON.parse(refused[0].text)).toEqual({
      error_code: 403,
      error_msg: "Query limit exceeded: this key's quota of 5 queries is used up.",
    });
  });

  it('stops a trial key at 100', async () => {
    const key = svc.key({ quota: TRIAL_QUOTA });
    let ok = 0;
    for (let i = 0; i < 105; i++) if ((await ev(key, `t${i}@example.com`)).status === 200) ok++;
    expect(ok).toBe(100);
  });

  it('refuses a list larger than what is left at submission, and gives an invalid list its records back', async () => {
    const key = svc.key({ quota: { limit: 10, period: 'day', isTrial: false } });
    const big = await submit(svc.url, key, rows(11), { query: { header: 'true' }, as: 'text' });
    expect(big.status).toBe(403);
    expect(big.json<{ error_msg: string }>().error_msg).toBe(
      quotaExceededMessage({ limit: 10, period: 'day', isTrial: false }, 0, 11, 'records'),
    );
    // An invalid list (a row with a field too many) is charged at submission and given back when found invalid.
    const bad = await submit(svc.url, key, 'email\na@example.com\nb@example.com,extra\n', {
      query: { header: 'true' },
      as: 'text',
    });
    expect(bad.status).toBe(202);
    expect((await waitForList(svc.url, key, bad.json<{ list_id: number }>().list_id)).status).toBe('Invalid');
    const fits = await submit(svc.url, key, rows(10), { query: { header: 'true' }, as: 'text' });
    expect(fits.status).toBe(202);
    expect((await waitForList(svc.url, key, fits.json<{ list_id: number }>().list_id)).status).toBe(
      'Results',
    );
    expect((await ev(key, 'over@example.com')).status).toBe(403);
    const usage = await runCli(['keys', 'usage', '--data-dir', svc.dataDir, '--json']);
    expect(usage.code).toBe(0);
    const row = usage.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { key: string; used: number; period: string; left: number | null })
      .find((entry) => key.endsWith(entry.key.slice(1)));
    expect(row).toMatchObject({ used: 10, left: 0, period: periodOf('day') });
  });

  it('tells a key its quota through GET /v5/key (limit, used, left, period, renewal), without charging it', async () => {
    const keyInfo = async (key: string) => {
      const response = await fetch(`${svc.url}/v5/key`, { headers: { api_key: key } });
      expect(response.status).toBe(200);
      return keyInfoSchema.parse(await response.json());
    };
    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    const key = svc.key({ quota: { limit: 12, period: 'month', isTrial: false } });
    expect((await keyInfo(key)).quota).toEqual({
      limit: 12,
      used: 0,
      left: 12,
      period: 'month',
      renews_at: nextMonth,
      trial: false,
    });
    // Asking is not billable; E1 calls and a list's records are.
    for (let i = 0; i < 3; i++) await keyInfo(key);
    for (let i = 0; i < 2; i++) expect((await ev(key, `q${i}@example.com`)).status).toBe(200);
    expect((await keyInfo(key)).quota).toMatchObject({ used: 2, left: 10 });
    const list = await submit(svc.url, key, rows(7), { query: { header: 'true' }, as: 'text' });
    expect(list.status).toBe(202);
    expect((await keyInfo(key)).quota).toMatchObject({ used: 9, left: 3 });
    // A trial key: 100 in all, never renewed; the mode the key answers in is told as well.
    const trial = await keyInfo(svc.key({ quota: TRIAL_QUOTA, mode: 'email_validation' }));
    expect(trial.mode).toBe('email_validation');
    expect(trial.quota).toEqual({
      limit: 100,
      used: 0,
      left: 100,
      period: 'total',
      renews_at: null,
      trial: true,
    });
    // A key without a quota: nothing about one, though its calls are counted.
    const free = svc.key();
    expect((await ev(free, 'f@example.com')).status).toBe(200);
    const info = await keyInfo(free);
    expect(info.mode).toBe('safe_to_send');
    expect(info).not.toHaveProperty('quota');
  });

  it('answers GET /v5/key as docs/team-server.md shows it', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/team-server.md'), 'utf8');
    const block = /```json\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('GET /v5/key')));
    const example = keyInfoSchema.parse(JSON.parse(block![1]));
    expect(Object.keys(example.quota!).sort()).toEqual([
      'left',
      'limit',
      'period',
      'renews_at',
      'trial',
      'used',
    ]);
    expect(example.quota!.left).toBe(example.quota!.limit - example.quota!.used);
  });

  it('creates quota and trial keys from the command line, and says what is wrong in one line', async () => {
    const made = await runCli([
      'keys',
      'create',
      '--data-dir',
      svc.dataDir,
      '--quota',
      '1000',
      '--quota-period',
      'month',
    ]);
    expect(made.code).toBe(0);
    const listed = await runCli(['keys', 'list', '--data-dir', svc.dataDir]);
    expect(listed.stdout).toContain('quota 1,000/month');
    const trial = await runCli(['keys', 'create', '--data-dir', svc.dataDir, '--trial']);
    expect(trial.code).toBe(0);
    expect((await runCli(['keys', 'list', '--data-dir', svc.dataDir])).stdout).toContain(
      'trial: 100 queries',
    );
    for (const [args, message] of [
      [['--quota', 'lots'], "--quota takes a whole number from 0 to 9007199254740991; got 'lots'."],
      [['--quota', '5', '--quota-period', 'week'], "--quota-period takes day, month or total; got 'week'."],
      [['--quota-period', 'day'], '--quota-period goes with --quota N.'],
      [
        ['--trial', '--quota', '5'],
        '--trial sets the trial quota (100 queries in all): give it without --quota or --quota-period.',
      ],
    ] as const) {
      const refused = await runCli(['keys', 'create', '--data-dir', svc.dataDir, ...args]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(`mailsieve: ${message}\n`);
    }
  });
});
