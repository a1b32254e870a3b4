// Re-check unknown rows in the app (issue #11), through the desktop core and its real embedded service
// against a loopback DNS server and mail farm started here (MAILSIEVE_DNS_SERVERS / MAILSIEVE_SMTP_PORT, as
// the app takes them): a job run with Checks = Offline only has unknown rows (code 10); with Checks = Domains
// (DNS) the re-check updates them in place — same rows, same order, every other field byte for byte — records
// version 2 beside version 1, makes it the job's results (numbers, preview, History columns), and deleting
// the job removes both versions' files.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Papa from 'papaparse';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { JobDetail, JobList, JobProgress } from '../../../shared/desktop/contract.js';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { getJob } from '../../../electron/core/history/db.js';
import { jobEvidenceOf, readEvidence } from '../../../electron/core/results/evidence.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../../helpers/smtpServer.js';
import { tempDir } from '../../helpers/service.js';
import { SERVERS, zones } from '../../service/engine/online/fixture.js';

/** Address → its code offline, and with domain checks. */
const LIST: readonly (readonly [string, string, string])[] = [
  ['alice@users.example.net', '10', '20'],
  ['not-an-address', '150', '150'],
  ['someone@missing.example.net', '10', '310'],
  ['abuse@users.example.net', '500', '500'],
  ['someone@nomail.example.net', '10', '325'],
  ['alice@users.example.net', '10', '20'],
  ['someone@servfail.example.net', '10', '5'],
];

let dns: TestDnsServer;
let farm: MailFarm;
const saved = { dns: process.env.MAILSIEVE_DNS_SERVERS, port: process.env.MAILSIEVE_SMTP_PORT };

beforeAll(async () => {
  farm = await startMailFarm(SERVERS, 11);
  dns = await startDnsServer(zones(farm));
  process.env.MAILSIEVE_DNS_SERVERS = dns.address;
  process.env.MAILSIEVE_SMTP_PORT = String(farm.port);
});
afterAll(async () => {
  for (const [name, value] of [
    ['MAILSIEVE_DNS_SERVERS', saved.dns],
    ['MAILSIEVE_SMTP_PORT', saved.port],
  ] as const)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  await dns?.close();
  await farm?.close();
});

async function call<T>(core: DesktopCore, channel: string, input: unknown): Promise<T> {
  const reply = await core.handle(channel, input);
  if (!reply.ok) throw new Error(`${channel}: ${reply.error.message}`);
  return reply.value as T;
}

async function until(core: DesktopCore, jobId: number, done: (job: JobDetail) => boolean) {
  for (let i = 0; i < 1200; i++) {
    const job = await call<JobDetail>(core, 'jobs:get', { jobId });
    if (done(job)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${jobId} did not get there`);
}

function rowsOf(path: string): string[][] {
  return Papa.parse<string[]>(readFileSync(path, 'utf8'), { skipEmptyLines: true }).data;
}

describe('Re-check unknown rows (desktop core)', () => {
  let home: ReturnType<typeof tempDir>;
  let core: DesktopCore;
  beforeEach(() => {
    home = tempDir();
    core = createDesktopCore({
      home: home.path,
      secrets: new FileSecretStore(home.path),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
      localPollIntervalMs: 50,
    });
  });
  afterEach(async () => {
    await core.close();
    home.remove();
  });

  it('an offline job’s unknown rows re-checked with domain checks: in place, in order, version 2 recorded', async () => {
    await call(core, 'checks:set', { choice: 'offline' });
    const target = core.stagingPathFor('people.csv');
    writeFileSync(
      target.path,
      ['email,name,note', ...LIST.map(([address], i) => `${address},Person ${i},"a, b ""c"""`)].join('\r\n'),
    );
    core.registerStaged(target.fileId, target.path, 'people.csv');
    const started = await call<{ jobIds: number[] }>(core, 'jobs:start', {
      fileId: target.fileId,
      mapping: { delimiter: ',', header: true, roles: ['email', 'ignore', 'ignore'] },
      options: { reportOnly: false, split: false },
    });
    const jobId = started.jobIds[0];
    const first = await until(core, jobId, (job) => job.status === 'completed' || job.status === 'failed');
    expect(first.status, first.message ?? '').toBe('completed');
    expect(first.checksRun?.level).toBe('offline');
    expect(first.recheck).toMatchObject({ unknownRows: 5, running: null, versions: [] });
    expect(first.reporting?.statuses).toMatchObject({ Invalid: 2, Unknown: 5 });
    const jobDir = join(home.path, 'results', String(jobId));
    const v1Path = join(jobDir, first.resultsName!);
    const before = readFileSync(v1Path, 'utf8');
    const beforeRows = rowsOf(v1Path);
    const codeAt = beforeRows[0].indexOf('Validation Code');
    expect(beforeRows.slice(1).map((row) => row[codeAt])).toEqual(LIST.map(([, offline]) => offline));
    const listed = await call<JobList>(core, 'jobs:list', {});
    expect(listed.items[0]).toMatchObject({ id: jobId, unknown: 5, hasResults: true });

    // Checks = Domains (DNS); the re-check runs with it, its progress in words on job:progress.
    await call(core, 'checks:set', { choice: 'dns' });
    const progress: JobProgress[] = [];
    core.on((event, payload) => {
      if (event === 'job:progress') progress.push(payload as JobProgress);
    });
    const running = await call<JobDetail>(core, 'jobs:recheck', { jobId });
    expect(running.recheck?.running).toMatch(/re-check|Reading/);
    const again = await core.handle('jobs:recheck', { jobId });
    expect(again).toMatchObject({ ok: false, error: { code: 'busy' } });
    const after = await until(core, jobId, (job) => job.recheck?.running === null);
    expect(after.recheck?.error ?? null).toBeNull();
    const words = progress.filter((p) => p.jobId === jobId).map((p) => p.recheck?.words ?? '');
    expect(words.some((w) => /^Sending 5 rows to check \(4 distinct addresses\)/.test(w))).toBe(true);
    expect(words.some((w) => /^Checking (\d+ of )?4 addresses/.test(w))).toBe(true);
    expect(words.some((w) => w === 'Writing version 2 of the results…')).toBe(true);

    // Version 1 (the first results, offline) and version 2 (the re-check, DNS), the new one current.
    const versions = after.recheck!.versions;
    expect(versions.map((v) => [v.version, v.checks.level, v.isCurrent])).toEqual([
      [1, 'offline', false],
      [2, 'dns', true],
    ]);
    expect(versions[0].change).toBeNull();
    expect(versions[1].change).toBe('5 unknown → 2 unknown, 2 invalid, 1 still unknown');
    expect(after.resultsName).toBe(versions[1].resultsName);
    expect(after.resultsName).toMatch(/-v2\.csv$/);
    // The job's level is its current results': Results' note and History's column say domain checks.
    expect(after.checksRun?.level).toBe('dns');

    // The new version: same rows, same order, only the re-checked rows' verdict columns changed.
    const v2Path = join(jobDir, after.resultsName!);
    const afterRows = rowsOf(v2Path);
    expect(afterRows.map((row) => row[0])).toEqual(beforeRows.map((row) => row[0]));
    expect(afterRows.slice(1).map((row) => row[codeAt])).toEqual(LIST.map(([, , dnsCode]) => dnsCode));
    const verdictColumns = [
      'Validation Status',
      'Validation Code',
      'Domain Type',
      'Role Account',
      'Valid Email',
    ];
    const kept = beforeRows[0].flatMap((name, i) => (verdictColumns.includes(name) ? [] : [i]));
    afterRows.forEach((row, r) => expect(kept.map((i) => row[i])).toEqual(kept.map((i) => beforeRows[r][i])));
    // Rows not re-checked are byte for byte what they were (and the line breaks of the file are kept).
    const beforeLines = before.split('\r\n');
    const afterLines = readFileSync(v2Path, 'utf8').split('\r\n');
    expect(afterLines).toHaveLength(beforeLines.length);
    expect(afterLines[0]).toBe(beforeLines[0]);
    expect(afterLines[2]).toBe(beforeLines[2]);
    expect(afterLines[4]).toBe(beforeLines[4]);
    // …and the re-checked rows' own fields too, up to the verdict columns the service appends.
    for (const i of [1, 3, 5, 6, 7]) {
      const own = beforeLines[i].slice(0, beforeLines[i].indexOf(',unknown,10,'));
      expect(own).toMatch(/,"a, b ""c"""$/);
      expect(afterLines[i].startsWith(`${own},`)).toBe(true);
    }
    // The first version is kept as it was.
    expect(readFileSync(v1Path, 'utf8')).toBe(before);

    // The job's numbers are the new version's, counted from it.
    expect(after.reporting?.status_codes).toEqual({
      '20': 2,
      '150': 1,
      '310': 1,
      '325': 1,
      '500': 1,
      '5': 1,
    });
    expect(after.reporting?.statuses).toMatchObject({ Invalid: 4, Unknown: 3 });
    expect(after.recheck?.unknownRows).toBe(1);
    // Counted from the new version's columns as the service counts: roles as they were, and the domain
    // type DNS gave alice's domain (two rows) beside the rows without one.
    expect(after.reporting?.role_accounts).toBe(first.reporting?.role_accounts);
    expect(first.reporting?.domain_type).toMatchObject({ Business: 0, Unknown: 7 });
    expect(after.reporting?.domain_type).toMatchObject({ Business: 2, Unknown: 5 });
    const relisted = await call<JobList>(core, 'jobs:list', {});
    expect(relisted.items[0]).toMatchObject({ id: jobId, unknown: 1, invalid: 4 });
    // Previews read the new version.
    const invalid = await call<{ rows: string[][] }>(core, 'jobs:preview', { jobId, status: 'invalid' });
    expect(JSON.stringify(invalid)).toContain('someone@missing.example.net');
    // The why of a re-checked row is the re-check's (kept with version 2), not the offline run's.
    const whys = await call<{ rows: string[][]; whys: string[] | null }>(core, 'jobs:preview', {
      jobId,
      filter: { status: 'invalid' },
      offset: 0,
      limit: 100,
    });
    const missing = whys.rows.findIndex((row) =>
      row.some((field) => field === 'someone@missing.example.net'),
    );
    expect(missing).toBeGreaterThanOrEqual(0);
    expect(whys.whys?.[missing]).toMatch(/missing\.example\.net/);
    // The re-check's evidence is kept compact beside version 2 (evidence.ts), and is each re-checked row's
    // evidence: the first run kept none (offline), so the rows are found by their address in the results.
    expect(existsSync(join(jobDir, 'explain-v2.csv.gz'))).toBe(true);
    const evidence = await readEvidence(
      jobEvidenceOf(core.db, join(home.path, 'results'), getJob(core.db, jobId)!),
      [1, 2, 3, 4, 5, 6, 7],
    );
    const dns = (host: string, reply: string) => ({ step: 'dns', host, reply, source: 'default route' });
    expect(
      [...evidence].map(([row, found]) => [
        row,
        { step: found.step, host: found.host, reply: found.reply, source: found.source },
      ]),
    ).toEqual([
      [1, dns('users.example.net', 'MX mx.users.example.net')],
      [3, dns('missing.example.net', 'NXDOMAIN')],
      [5, dns('nomail.example.net', 'no MX and no address')],
      [6, dns('users.example.net', 'MX mx.users.example.net')],
      [7, dns('servfail.example.net', '')],
    ]);
    expect(evidence.get(3)?.why).toBe('DNS: missing.example.net does not exist (NXDOMAIN)');

    // Deleting the job removes every version's file.
    await call(core, 'jobs:delete', { jobId });
    expect(existsSync(v1Path)).toBe(false);
    expect(existsSync(v2Path)).toBe(false);
    expect(existsSync(jobDir)).toBe(false);
  }, 120_000);

  it('keeps a job’s evidence compact; a re-checked row’s evidence is the latest re-check’s', async () => {
    await call(core, 'checks:set', { choice: 'dns' });
    const target = core.stagingPathFor('evidence.csv');
    writeFileSync(
      target.path,
      'email\nalice@users.example.net\nsomeone@servfail.example.net\nsomeone@missing.example.net\nabuse@users.example.net\n',
    );
    core.registerStaged(target.fileId, target.path, 'evidence.csv');
    const started = await call<{ jobIds: number[] }>(core, 'jobs:start', {
      fileId: target.fileId,
      mapping: { delimiter: ',', header: true, roles: ['email'] },
      options: { reportOnly: false, split: false },
    });
    const jobId = started.jobIds[0];
    const first = await until(core, jobId, (job) => job.status === 'completed' || job.status === 'failed');
    expect(first.status, first.message ?? '').toBe('completed');
    expect(first.checksRun?.level).toBe('dns');
    // The list's explain CSV is kept with the job as its evidence: gzip, the CSV to any gunzip.
    const jobDir = join(home.path, 'results', String(jobId));
    const kept = join(jobDir, 'explain.csv.gz');
    for (let i = 0; i < 200 && !existsSync(kept); i++) await new Promise((r) => setTimeout(r, 50));
    const csv = gunzipSync(readFileSync(kept)).toString('utf8').trim().split('\n');
    expect(csv[0]).toBe('Row,Email,Status Code,Checked,Why,Step,Host,Reply,Source,Checked At');
    expect(csv.slice(1).map((row) => row.slice(0, row.lastIndexOf(',')))).toEqual([
      '1,alice@users.example.net,20,dns,DNS: users.example.net MX mx.users.example.net; the mailbox was not asked,dns,users.example.net,MX mx.users.example.net,default route',
      expect.stringMatching(
        /^2,someone@servfail\.example\.net,5,dns,.*SERVFAIL.*,dns,servfail\.example\.net,,default route$/,
      ),
      '3,someone@missing.example.net,310,dns,DNS: missing.example.net does not exist (NXDOMAIN),dns,missing.example.net,NXDOMAIN,default route',
      '4,abuse@users.example.net,500,offline,decided offline: Usernames of this kind not accepted,syntax,,,',
    ]);
    const firstWhys = await call<{ whys: string[] | null }>(core, 'jobs:preview', {
      jobId,
      filter: {},
      offset: 0,
      limit: 10,
    });
    expect(firstWhys.whys?.[2]).toBe('DNS: missing.example.net does not exist (NXDOMAIN)');

    // The next day the domain answers: the app (and its service, with no cache of the failure) starts again,
    // and the unknown row is re-checked.
    dns.setZone('servfail.example.net', { mx: [[10, 'mx.users.example.net']] });
    try {
      await core.close();
      core = createDesktopCore({
        home: home.path,
        secrets: new FileSecretStore(home.path),
        mode: 'browser',
        hasNativeDialogs: false,
        version: 'test',
        localPollIntervalMs: 50,
      });
      await call(core, 'jobs:recheck', { jobId });
      const after = await until(core, jobId, (job) => job.recheck?.running === null);
      expect(after.recheck?.error ?? null).toBeNull();
      expect(after.recheck?.versions.map((v) => v.version)).toEqual([1, 2]);
    } finally {
      dns.setZone('servfail.example.net', { servfail: true });
    }
    expect(existsSync(join(jobDir, 'explain-v2.csv.gz'))).toBe(true);
    const job = getJob(core.db, jobId)!;
    const evidence = await readEvidence(
      jobEvidenceOf(core.db, join(home.path, 'results'), job),
      [1, 2, 3, 4],
    );
    // Row 2 is the re-check's; the others are the first run's.
    expect(evidence.get(2)).toMatchObject({
      step: 'dns',
      host: 'servfail.example.net',
      reply: 'MX mx.users.example.net',
      source: 'default route',
      why: 'DNS: servfail.example.net MX mx.users.example.net; the mailbox was not asked',
    });
    expect(Date.parse(evidence.get(2)!.checkedAt)).toBeGreaterThanOrEqual(
      Date.parse(evidence.get(1)!.checkedAt),
    );
    expect(evidence.get(1)).toMatchObject({ host: 'users.example.net', reply: 'MX mx.users.example.net' });
    expect(evidence.get(3)).toMatchObject({ host: 'missing.example.net', reply: 'NXDOMAIN' });
    expect(evidence.get(4)).toMatchObject({ step: 'syntax', host: '', reply: '', source: '' });
    const whys = await call<{ whys: string[] | null }>(core, 'jobs:preview', {
      jobId,
      filter: {},
      offset: 0,
      limit: 10,
    });
    expect(whys.whys).toEqual([
      'DNS: users.example.net MX mx.users.example.net; the mailbox was not asked',
      'DNS: servfail.example.net MX mx.users.example.net; the mailbox was not asked',
      'DNS: missing.example.net does not exist (NXDOMAIN)',
      'decided offline: Usernames of this kind not accepted',
    ]);
  }, 120_000);

  it('a re-check stopped under way leaves the results, the numbers and the versions as they were', async () => {
    await call(core, 'checks:set', { choice: 'offline' });
    const target = core.stagingPathFor('slow.csv');
    // Mailboxes behind a server that never answers: the re-check is still asking when it is stopped.
    writeFileSync(target.path, 'email\nann@stall.example.net\nbob@stall.example.net\n');
    core.registerStaged(target.fileId, target.path, 'slow.csv');
    const started = await call<{ jobIds: number[] }>(core, 'jobs:start', {
      fileId: target.fileId,
      mapping: { delimiter: ',', header: true, roles: ['email'] },
      options: { reportOnly: false, split: false },
    });
    const jobId = started.jobIds[0];
    const first = await until(core, jobId, (job) => job.status === 'completed' || job.status === 'failed');
    expect(first.recheck?.unknownRows).toBe(2);
    await call(core, 'checks:set', { choice: 'smtp', heloName: 'probe.mailsieve.test' });
    await call(core, 'jobs:recheck', { jobId });
    await until(core, jobId, (job) => /^Checking/.test(job.recheck?.running ?? ''));
    const stopped = await call<JobDetail>(core, 'jobs:recheck-cancel', { jobId });
    expect(stopped.recheck).toMatchObject({
      running: null,
      error: 'The re-check was stopped: the results are as they were.',
      versions: [],
      unknownRows: 2,
    });
    expect(stopped.resultsName).toBe(first.resultsName);
    expect(stopped.reporting).toEqual(first.reporting);
    // Nothing half-written is left in the job's folder: no new version, no temporary, no work folder (the
    // job's own input and its default export, prepared as it completed, stay).
    const jobDir = join(home.path, 'results', String(jobId));
    const own = new Set(['input', 'prepared-export', 'prepared-export.json']);
    expect(readdirSync(jobDir).filter((name) => !own.has(name))).toEqual([first.resultsName]);
  }, 120_000);
});
