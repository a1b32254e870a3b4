// Issue #11 in the app, end to end in browser mode against real loopback DNS and mail servers started here:
// the Checks setting on the Connection screen (chosen by role and name), MAILSIEVE_DNS_SERVERS and
// MAILSIEVE_SMTP_PORT pointing the app at them, a list giving the DNS codes (20, 310, 325) and the SMTP
// codes (50, 400, 410, 45) on the Results screen and in the results file, and Automatic falling back to
// offline checks within 5 s, saying why, when the resolver does not answer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedUdpPort, startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';
import { freshHome, launchChromium, openApp, startApp, type RunningApp } from '../helpers/browserApp.js';
import { ConnectionPage } from './pages/connection.js';
import { HistoryPage } from './pages/history.js';
import { NewJobPage } from './pages/newJob.js';
import { ProgressPage } from './pages/progress.js';
import { ResultsPage } from './pages/results.js';
import { Sidebar } from './pages/sidebar.js';

/** Address → the code each level must give it. */
const LIST: readonly (readonly [string, { dns: number; smtp: number }])[] = [
  ['alice@users.example.net', { dns: 20, smtp: 50 }],
  ['nobody@users.example.net', { dns: 20, smtp: 400 }],
  ['carol@users.example.net', { dns: 20, smtp: 410 }],
  ['whoever@catchall.example.net', { dns: 20, smtp: 45 }],
  ['someone@missing.example.net', { dns: 310, smtp: 310 }],
  ['someone@nomail.example.net', { dns: 325, smtp: 325 }],
];

let dns: TestDnsServer;
let farm: MailFarm;
let browser: Browser;
let listDir: string;
let listFile: string;

beforeAll(async () => {
  farm = await startMailFarm(SERVERS, 9);
  dns = await startDnsServer(zones(farm));
  browser = await launchChromium();
  listDir = mkdtempSync(join(tmpdir(), 'mailsieve-checks-'));
  listFile = join(listDir, 'people.csv');
  writeFileSync(listFile, ['Email,Name', ...LIST.map(([address], i) => `${address},Person ${i}`)].join('\n'));
});
afterAll(async () => {
  await browser?.close();
  await dns?.close();
  await farm?.close();
  if (listDir) rmSync(listDir, { recursive: true, force: true });
});

async function withApp(env: NodeJS.ProcessEnv, run: (page: Page, app: RunningApp) => Promise<void>) {
  const home = freshHome();
  const app = await startApp(home.path, env);
  try {
    const { context, page } = await openApp(browser, app);
    try {
      await run(page, app);
    } finally {
      await context.close();
    }
  } finally {
    await app.stop();
    home.remove();
  }
}

/** The codes of a CSV export's rows by address (the column of status codes is found by its header). */
function codesOf(text: string): Record<string, number> {
  const [header, ...rows] = text.split(/\r?\n/).filter((line) => line !== '');
  const cells = header.split(',');
  const codeColumn = cells.findIndex((cell) => /^Validation Code$/.test(cell));
  expect(codeColumn, `a status code column in ${header}`).toBeGreaterThan(-1);
  return Object.fromEntries(
    rows.map((row) => row.split(',')).map((row) => [row[0], Number(row[codeColumn])]),
  );
}

async function cleanList(page: Page): Promise<ResultsPage> {
  const newJob = new NewJobPage(page);
  await newJob.open();
  await newJob.addList(listFile);
  await newJob.startCleaning();
  const results = new ResultsPage(page);
  await results.waitFor();
  return results;
}

describe('the Checks setting of the local service', () => {
  for (const level of ['dns', 'smtp'] as const) {
    it(`runs a list with ${level === 'dns' ? 'Domains (DNS)' : 'Mailboxes (SMTP)'} against the loopback world`, async () => {
      const env = { MAILSIEVE_DNS_SERVERS: dns.address, MAILSIEVE_SMTP_PORT: String(farm.port) };
      await withApp(env, async (page) => {
        const connection = new ConnectionPage(page);
        await connection.open();
        const title = level === 'dns' ? 'Domains (DNS)' : 'Mailboxes (SMTP)';
        if (level === 'dns') {
          await connection.chooseChecks(title);
          // Port 25 answers, but this computer's default identity is not one mail servers take: not "can run".
          expect(await connection.networkCheck().textContent()).toMatch(
            new RegExp(`^DNS answers; port ${farm.port} can be reached`),
          );
        } else {
          await connection.chooseMailboxes('probe.mailsieve.test', 'check@mailsieve.test');
          expect(await connection.networkCheck().textContent()).toMatch(
            new RegExp(`^DNS answers; port ${farm.port} can be reached: mailbox checks can run`),
          );
        }
        expect(await connection.checksRadio(title).isChecked()).toBe(true);
        if (level === 'smtp') {
          await expect.poll(() => page.getByLabel('HELO name').getAttribute('placeholder')).not.toBe('');
          expect(await page.getByRole('note').textContent()).toMatch(/home IP address/);
        }

        const results = await cleanList(page);
        const expected: Record<string, number> = {};
        for (const [, codes] of LIST)
          expected[String(codes[level])] = (expected[String(codes[level])] ?? 0) + 1;
        expect(await results.table('Status codes')).toEqual(expected);
        const note = page.getByRole('complementary', { name: 'About the checks' });
        expect(await note.textContent()).toContain(level === 'dns' ? 'domain checks' : 'mailbox checks');
        expect(await page.getByRole('complementary', { name: 'About offline checks' }).count()).toBe(0);

        // Why, per row (issue #11): the drill-down of a code shows what answered, saved with the job.
        const view = await results.drill(/^Code 310, Invalid: show/, 'Rows with code 310 and status Invalid');
        await expect
          .poll(async () => (await results.drawnRows(view))[0]?.cells.at(-1))
          .toContain('missing.example.net does not exist');

        const exported = await results.export('All rows with results');
        expect(codesOf(exported.text)).toEqual(
          Object.fromEntries(LIST.map(([address, codes]) => [address, codes[level]])),
        );

        // History says the level the job ran with.
        await page.keyboard.press('Control+h');
        await page.getByRole('heading', { name: 'History', level: 1 }).waitFor();
        await expect
          .poll(() => page.getByRole('gridcell', { name: `Local · ${level.toUpperCase()}` }).count())
          .toBe(1);
      });
    });
  }

  it('asks for a HELO name and a sender, with the reason, before Mailboxes (SMTP) can run with a refused default', async () => {
    const env = { MAILSIEVE_DNS_SERVERS: dns.address, MAILSIEVE_SMTP_PORT: String(farm.port) };
    await withApp(env, async (page) => {
      const connection = new ConnectionPage(page);
      await connection.open();
      await connection.chooseChecks('Domains (DNS)');
      // What is stored: the screen reads the setting again when it is opened again.
      const storedChoice = async () => {
        await page.keyboard.press('Control+h');
        await page.getByRole('heading', { name: 'History', level: 1 }).waitFor();
        await connection.open();
        for (const title of ['Domains (DNS)', 'Mailboxes (SMTP)'] as const)
          if (await connection.checksRadio(title).isChecked()) return title;
        return null;
      };
      // A dotless name, as this computer's name gives 'localhost' on a machine whose host name has no dot.
      await connection.checksRadio('Mailboxes (SMTP)').check();
      await page.getByLabel('HELO name').fill('mailsieve-box');
      await page.getByRole('button', { name: 'Save mailbox check settings' }).click();
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toMatch(
          /^Mailboxes \(SMTP\) needs a HELO name and a sender that mail servers accept: the HELO name 'mailsieve-box' is refused by many mail servers: it is not a fully-qualified domain name; the sender postmaster@mailsieve-box is refused by many mail servers: its domain is not fully-qualified\./,
        );
      // Not stored: a list started now runs at the level chosen before.
      expect(await storedChoice()).toBe('Domains (DNS)');
      await connection.chooseMailboxes('probe.mailsieve.test', 'check@mailsieve.test');
      expect(await storedChoice()).toBe('Mailboxes (SMTP)');
    });
  });

  it('Automatic with a resolver that does not answer falls back to offline checks within 5 s, and says why', async () => {
    const env = { MAILSIEVE_DNS_SERVERS: await closedUdpPort(), MAILSIEVE_SMTP_PORT: String(farm.port) };
    await withApp(env, async (page) => {
      const connection = new ConnectionPage(page);
      await connection.open();
      expect(await connection.checksRadio('Automatic').isChecked()).toBe(true);
      const started = Date.now();
      const words = await connection.waitForNetworkCheck();
      expect(Date.now() - started).toBeLessThan(5000);
      expect(words).toMatch(/^DNS does not answer .*: only offline checks can run/);

      const verifyStarted = Date.now();
      await page.keyboard.press('Control+e');
      await page.getByRole('heading', { name: 'Verify an address', level: 1 }).waitFor();
      await page.getByLabel('Email address').fill('alice@users.example.net');
      await page.getByRole('button', { name: 'Verify', exact: true }).click();
      const answer = page.getByRole('region', { name: /alice@users\.example\.net/ });
      await answer.waitFor();
      expect(Date.now() - verifyStarted).toBeLessThan(8000);
      expect(await answer.textContent()).toMatch(/auto: DNS does not answer.*checking offline/);
      expect(await answer.textContent()).toContain('Code 10');

      const results = await cleanList(page);
      expect(await results.table('Status codes')).toEqual({ '10': 6 });
      const note = page.getByRole('complementary', { name: 'About offline checks' });
      expect(await note.textContent()).toContain(
        'Offline checks confirm syntax only. No internet connection was found, so only syntax and lists were checked.',
      );
    });
  });

  it('says an offline run in plain words, and names the rows it could not check for what they are', async () => {
    // A resolver that answers but sees no internet (NXDOMAIN even for .com), as a machine without a network.
    const isolated = await startDnsServer({}, { mode: 'isolated' });
    try {
      await withApp({ MAILSIEVE_DNS_SERVERS: isolated.address }, async (page) => {
        const results = await cleanList(page);
        const text = (await results.offlineNote().textContent()) ?? '';
        expect(text).not.toMatch(/\d{1,3}(\.\d{1,3}){3}|auto:|:53\b/);
        // Whole sentences, each ended: nothing run together.
        expect(text.split(/(?<=[.!?])\s+/)).toEqual([
          'Offline checks confirm syntax only.',
          'No internet connection was found, so only syntax and lists were checked.',
          'A well-formed address reads unknown (code 10 “Syntax OK”) and its “Valid Email” column stays empty, so “Safe to send only” holds just the corrected addresses: export Clean for every row except invalid and risky.',
          'Re-check unknown rows once DNS or mailbox checks can run.',
        ]);

        // Every good address is unchecked: the headline says so, not "Unknown 0".
        const summary = await results.summary();
        expect(summary).not.toHaveProperty('Unknown');
        expect(summary['Not checked (offline)']).toBe(6);
        expect(summary['Ready to mail']).toBe(6);

        // The decision's own words stay in the job's details.
        await page.getByRole('button', { name: 'Summary', exact: true }).click();
        const details = page.getByRole('definition').filter({ hasText: /^auto: / });
        expect(await details.textContent()).toContain(`auto: ${isolated.address} answers, but says even`);
      });
    } finally {
      await isolated.close();
    }
  });
});

/** A mail server that greylists for longer than any test waits (only a retry minutes later would pass). */
async function withGreylisting(run: (env: NodeJS.ProcessEnv, file: string) => Promise<void>): Promise<void> {
  const greyFarm = await startMailFarm(
    {
      slow: {
        kind: 'smtp',
        domains: ['slowgrey.example.net'],
        users: ['gina@slowgrey.example.net', 'ok@slowgrey.example.net'],
        greylistMs: 600_000,
      },
    },
    11,
  );
  const greyDns = await startDnsServer({
    'slowgrey.example.net': { mx: [[10, 'mx.slowgrey.example.net']] },
    'mx.slowgrey.example.net': { a: [greyFarm.ip('slow')] },
    'gmail.com': { mx: [[5, 'mx.slowgrey.example.net']] },
  });
  const dir = mkdtempSync(join(tmpdir(), 'mailsieve-grey-'));
  const file = join(dir, 'grey.csv');
  writeFileSync(file, 'Email\ngina@slowgrey.example.net\n');
  try {
    await run({ MAILSIEVE_DNS_SERVERS: greyDns.address, MAILSIEVE_SMTP_PORT: String(greyFarm.port) }, file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await greyDns.close();
    await greyFarm.close();
  }
}

/** Chooses Mailboxes (SMTP), starts cleaning `file` and waits until the job waits for a retry. */
async function startGreylistedJob(page: Page, file: string): Promise<Locator> {
  const connection = new ConnectionPage(page);
  await connection.open();
  await connection.chooseMailboxes('probe.mailsieve.test', 'check@mailsieve.test');
  const newJob = new NewJobPage(page);
  await newJob.open();
  await newJob.addList(file);
  await newJob.startCleaning();
  const wait = page.getByRole('status', { name: 'Retry wait' });
  await wait.waitFor({ timeout: 60_000 });
  return wait;
}

describe('a job with mailbox checks under way', () => {
  it('shows the rows waiting for a retry, and Finish now leaves a greylisted row unknown', async () => {
    await withGreylisting(async (env, file) => {
      await withApp(env, async (page) => {
        const wait = await startGreylistedJob(page, file);
        expect(await wait.textContent()).toMatch(/^1 row waiting for a retry at \d\d:\d\d/);
        await wait.getByRole('button', { name: 'Finish now' }).click();
        const results = new ResultsPage(page);
        await results.waitFor();
        expect(await results.table('Status codes')).toEqual({ '5': 1 });
        // Why it is unknown, grouped by cause (E8's online.unknown_causes).
        expect(await page.getByRole('region', { name: 'Unknown rows by cause' }).textContent()).toContain(
          '1 unknown: mx.slowgrey.example.net still deferred them (greylisting or busy) when the retries ended',
        );
      });
    });
  });

  it('is named by the level the service runs at: in the sidebar, on Progress and in History', async () => {
    await withGreylisting(async (env, file) => {
      await withApp(env, async (page) => {
        const sidebar = new Sidebar(page);
        await startGreylistedJob(page, file);
        // The job runs (it waits for a retry of its mailbox check) on a service started at Mailboxes (SMTP).
        expect(await sidebar.connectionStatus().textContent()).toBe(
          'Local service: running (mailbox checks)',
        );
        const progress = new ProgressPage(page);
        expect(await progress.heading().count()).toBe(1);
        expect(await progress.fact('Checks').textContent()).toBe('mailbox checks');
        const history = new HistoryPage(page);
        await history.open();
        await expect
          .poll(() => history.grid().getByRole('gridcell', { name: 'Local · SMTP' }).count())
          .toBe(1);
        expect(await history.grid().getByText('Processing').count()).toBe(1);
        expect(await sidebar.connectionStatus().textContent()).toBe(
          'Local service: running (mailbox checks)',
        );
      });
    });
  });
});
