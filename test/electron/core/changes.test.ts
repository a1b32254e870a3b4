// What changed since the last run (issue 37, point 4), through the desktop core and its real embedded service:
// one list cleaned with SMTP checks in a mail world, then again after the world changed (a mailbox removed, a
// domain turned accept-all: test/helpers/changingWorld.ts, loopback DNS and SMTP servers). The second job names
// the first as its earlier run and lists exactly the changed addresses with both verdicts and both pieces of
// evidence; the export holds only them; a re-checked job compares with its own previous version.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportInfo, JobDetail } from '../../../shared/desktop/contract.js';
import type { JobChanges } from '../../../shared/outcomes.js';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { getExport, openHistoryDb } from '../../../electron/core/history/db.js';
import {
  LIST_TEXT,
  startChangingWorld,
  type ChangingWorld,
  type World,
} from '../../helpers/changingWorld.js';
import { tempDir } from '../../helpers/service.js';

let world: ChangingWorld;
const saved = { dns: process.env.MAILSIEVE_DNS_SERVERS, port: process.env.MAILSIEVE_SMTP_PORT };

beforeAll(async () => {
  world = await startChangingWorld(31);
});
afterAll(async () => {
  for (const [name, value] of [
    ['MAILSIEVE_DNS_SERVERS', saved.dns],
    ['MAILSIEVE_SMTP_PORT', saved.port],
  ] as const)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  await world?.close();
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

/** A desktop core on `home` in `world` (the embedded service reads the world from the environment). */
function coreIn(home: string, at: World): DesktopCore {
  process.env.MAILSIEVE_DNS_SERVERS = at.env.MAILSIEVE_DNS_SERVERS;
  process.env.MAILSIEVE_SMTP_PORT = at.env.MAILSIEVE_SMTP_PORT;
  return createDesktopCore({
    home,
    secrets: new FileSecretStore(home),
    mode: 'browser',
    hasNativeDialogs: false,
    version: 'test',
    localPollIntervalMs: 50,
  });
}

/** Cleans the list (people.csv) and answers its completed job. */
async function clean(core: DesktopCore): Promise<JobDetail> {
  const target = core.stagingPathFor('people.csv');
  writeFileSync(target.path, LIST_TEXT);
  core.registerStaged(target.fileId, target.path, 'people.csv');
  const started = await call<{ jobIds: number[] }>(core, 'jobs:start', {
    fileId: target.fileId,
    mapping: { delimiter: ',', header: true, roles: ['email', 'ignore'] },
    options: { reportOnly: false, split: false },
  });
  const job = await until(core, started.jobIds[0], (j) => j.status === 'completed' || j.status === 'failed');
  expect(job.status, job.message ?? '').toBe('completed');
  return job;
}

const smtp = {
  step: 'smtp',
  source: 'default route',
  checkedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) as unknown,
};
/** How evidenceWords dates a check: the day it ran (today). */
const today = new Date().toLocaleDateString('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});

describe('What changed since the last run (desktop core)', () => {
  it('a list cleaned again after its mail world changed: exactly the changed rows, both verdicts and both pieces of evidence', async () => {
    const home = tempDir();
    try {
      // The first run, in the world as it was.
      let core = coreIn(home.path, world.before);
      let first: JobDetail;
      try {
        await call(core, 'checks:set', { choice: 'smtp', heloName: 'probe.mailsieve.test' });
        first = await clean(core);
        expect(first.checksRun?.level).toBe('smtp');
        // Nothing earlier to compare with.
        expect(await call<JobChanges>(core, 'jobs:changes', { jobId: first.id })).toEqual({
          jobId: first.id,
          earlierJobId: null,
          earlierVersion: null,
          earlierAt: null,
          compared: 0,
          changed: 0,
          byChange: [],
          rows: [],
        });
        const refused = await core.handle('jobs:export-changes', { jobId: first.id });
        expect(refused).toMatchObject({
          ok: false,
          error: {
            message: 'No earlier run of this list is in the history: there is nothing to compare with.',
          },
        });
      } finally {
        await core.close();
      }

      // A week later: the app started again in the changed world, the same file cleaned again.
      core = coreIn(home.path, world.after);
      try {
        const second = await clean(core);
        const changes = await call<JobChanges>(core, 'jobs:changes', {
          jobId: second.id,
          offset: 0,
          limit: 100,
        });
        expect(changes).toMatchObject({
          jobId: second.id,
          earlierJobId: first.id,
          earlierVersion: null,
          earlierAt: first.createdAt,
          // ann (twice), bob, cat, dan and zed: five addresses; not-an-address has none.
          compared: 5,
          changed: 3,
          byChange: [
            { before: 'invalid', after: 'valid', rows: 1 },
            { before: 'valid', after: 'invalid', rows: 1 },
            { before: 'valid', after: 'valid', rows: 1 },
          ],
        });
        expect(changes.rows.map((row) => [row.row, row.email, row.before.code, row.after.code])).toEqual([
          [2, 'bob@shop.example.net', 50, 400],
          [4, 'dan@acme.example.net', 50, 45],
          [5, 'zed@acme.example.net', 400, 45],
        ]);
        const [bob, dan, zed] = changes.rows;
        // bob: accepted by mx1 then, refused by it now (the mailbox was removed).
        expect(bob.before).toEqual({
          status: 'valid',
          code: 50,
          evidence: {
            ...smtp,
            host: 'mx1.shop.example.net',
            reply: '250 Accepted',
            why: 'mx1.shop.example.net: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)',
          },
        });
        expect(bob.after).toEqual({
          status: 'invalid',
          code: 400,
          evidence: {
            ...smtp,
            host: 'mx1.shop.example.net',
            reply: expect.stringMatching(/^550 5\.1\.1 /) as unknown,
            why: expect.stringMatching(/^mx1\.shop\.example\.net: 550 5\.1\.1 /) as unknown,
          },
        });
        expect(bob.words).toBe(
          `was 250 Accepted from mx1.shop.example.net on ${today}, now ${bob.after.evidence!.reply} from mx1.shop.example.net on ${today}`,
        );
        // dan: valid both times, but the domain now accepts any address (code 45).
        expect(dan.before.evidence?.why).toBe(
          'mx1.acme.example.net: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)',
        );
        expect(dan.after).toEqual({
          status: 'valid',
          code: 45,
          evidence: {
            ...smtp,
            host: 'mx1.acme.example.net',
            reply: '250 Accepted',
            why: 'mx1.acme.example.net: the mailbox was accepted; the domain accepts any address (a random one was accepted)',
          },
        });
        // zed: refused then, accepted now as any address at acme is.
        expect(zed.before).toMatchObject({
          status: 'invalid',
          code: 400,
          evidence: {
            ...smtp,
            host: 'mx1.acme.example.net',
            reply: expect.stringMatching(/^550 5\.1\.1 /) as unknown,
          },
        });
        expect(zed.after.evidence?.why).toBe(dan.after.evidence?.why);

        // A page of the kept rows.
        const page = await call<JobChanges>(core, 'jobs:changes', { jobId: second.id, offset: 1, limit: 1 });
        expect(page.rows).toEqual([dan]);
        const jobDir = join(home.path, 'results', String(second.id));
        expect(existsSync(join(jobDir, 'changes.json'))).toBe(true);

        // The export of only the changed rows, kept as the job's export of kind `changed`.
        const exported = await call<ExportInfo>(core, 'jobs:export-changes', { jobId: second.id });
        expect(exported).toMatchObject({
          jobId: second.id,
          kind: 'changed',
          rows: 3,
          fileName: 'people-changed.csv',
        });
        const db = openHistoryDb(join(home.path, 'history.sqlite'));
        const path = getExport(db, exported.id)!.path;
        db.close();
        const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
        expect(lines[0]).toBe(
          'Email,Before Status,Before Code,Before Evidence,After Status,After Code,After Evidence,Words',
        );
        expect(lines.slice(1).map((line) => line.split(',').slice(0, 2))).toEqual([
          ['bob@shop.example.net', 'valid'],
          ['dan@acme.example.net', 'valid'],
          ['zed@acme.example.net', 'invalid'],
        ]);
        expect(lines[2]).toBe(
          `dan@acme.example.net,valid,50,250 Accepted from mx1.acme.example.net on ${today},` +
            `valid,45,250 Accepted from mx1.acme.example.net on ${today},` +
            `"was valid (50), now valid (45 Domain is catch-all, validation unsupported): 250 Accepted from mx1.acme.example.net on ${today}"`,
        );
        expect(
          (await call<JobDetail>(core, 'jobs:get', { jobId: second.id })).exports.map((e) => e.kind),
        ).toContain('changed');

        // The same list cleaned offline, then its unknown rows re-checked with SMTP: first compared with the
        // job before it, then — re-checked — with its own first version.
        await call(core, 'checks:set', { choice: 'offline' });
        const third = await clean(core);
        const offline = await call<JobChanges>(core, 'jobs:changes', { jobId: third.id });
        expect(offline).toMatchObject({
          earlierJobId: second.id,
          earlierVersion: null,
          compared: 5,
          changed: 5,
        });
        expect(offline.rows[0]).toMatchObject({
          email: 'ann@shop.example.net',
          before: { status: 'valid', code: 50 },
          after: {
            status: 'unknown',
            code: 10,
            evidence: { step: 'syntax', host: '', why: 'decided offline: Syntax OK' },
          },
        });
        await call(core, 'checks:set', { choice: 'smtp', heloName: 'probe.mailsieve.test' });
        await call(core, 'jobs:recheck', { jobId: third.id });
        const rechecked = await until(core, third.id, (job) => job.recheck?.running === null);
        expect(rechecked.recheck?.error ?? null).toBeNull();
        const own = await call<JobChanges>(core, 'jobs:changes', { jobId: third.id });
        expect(own).toMatchObject({
          jobId: third.id,
          earlierJobId: third.id,
          earlierVersion: 1,
          compared: 5,
          changed: 5,
          byChange: [
            { before: 'unknown', after: 'valid', rows: 4 },
            { before: 'unknown', after: 'invalid', rows: 1 },
          ],
        });
        const bobAgain = own.rows.find((row) => row.email === 'bob@shop.example.net')!;
        expect(bobAgain.before.evidence).toMatchObject({ step: 'syntax', why: 'decided offline: Syntax OK' });
        // The re-check's evidence, read by address from its own explain file (explain-v2.csv).
        expect(bobAgain.after).toMatchObject({
          status: 'invalid',
          code: 400,
          evidence: {
            step: 'smtp',
            host: 'mx1.shop.example.net',
            reply: expect.stringMatching(/^550 5\.1\.1 /) as unknown,
          },
        });

        // Deleting the job deletes what was kept of its comparison with it.
        await call(core, 'jobs:delete', { jobId: second.id });
        expect(existsSync(jobDir)).toBe(false);
      } finally {
        await core.close();
      }
    } finally {
      home.remove();
    }
  }, 180_000);
});
