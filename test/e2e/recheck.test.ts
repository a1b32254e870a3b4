// Re-check unknown rows (issue #11) in the app, end to end in browser mode against real loopback DNS and
// mail servers started here (MAILSIEVE_DNS_SERVERS / MAILSIEVE_SMTP_PORT): a list cleaned with Checks =
// Offline only is all unknown (code 10) on Results; with Checks = Domains (DNS), Re-check unknown rows on
// Results shows its progress, then what changed in words, the job's numbers from the new version and the
// versions of the results; History's Re-check says why it cannot run once no row is unknown.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';
import { freshHome, launchChromium, openApp, startApp } from '../helpers/browserApp.js';
import { ConnectionPage } from './pages/connection.js';
import { HistoryPage } from './pages/history.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';

/** Address → its code with domain checks (offline, each is 10 but the invalid syntax). */
const LIST: readonly (readonly [string, number])[] = [
  ['alice@users.example.net', 20],
  ['carol@users.example.net', 20],
  ['whoever@catchall.example.net', 20],
  ['someone@missing.example.net', 310],
  ['someone@nomail.example.net', 325],
  ['not-an-address', 150],
];

let dns: TestDnsServer;
let farm: MailFarm;
let browser: Browser;
let listDir: string;
let listFile: string;

beforeAll(async () => {
  farm = await startMailFarm(SERVERS, 12);
  dns = await startDnsServer(zones(farm));
  browser = await launchChromium();
  listDir = mkdtempSync(join(tmpdir(), 'mailsieve-recheck-'));
  listFile = join(listDir, 'people.csv');
  writeFileSync(listFile, ['Email,Name', ...LIST.map(([address], i) => `${address},Person ${i}`)].join('\n'));
});
afterAll(async () => {
  await browser?.close();
  await dns?.close();
  await farm?.close();
  if (listDir) rmSync(listDir, { recursive: true, force: true });
});

describe('Re-check unknown rows', () => {
  it('on Results: an offline job’s unknown rows checked with Domains (DNS), the change and the numbers shown', async () => {
    const home = freshHome();
    const app = await startApp(home.path, {
      MAILSIEVE_DNS_SERVERS: dns.address,
      MAILSIEVE_SMTP_PORT: String(farm.port),
    });
    try {
      const { context, page } = await openApp(browser, app);
      try {
        const connection = new ConnectionPage(page);
        await connection.open();
        await connection.chooseChecks('Offline only');
        const newJob = new NewJobPage(page);
        await newJob.open();
        await newJob.addList(listFile);
        await newJob.startCleaning();
        const results = new ResultsPage(page);
        await results.waitFor();
        expect(await results.table('Status codes')).toEqual({ '10': 5, '150': 1 });
        expect((await results.summary()).Invalid).toBe(1);
        // Nothing to compare yet: one version.
        expect(await page.getByRole('heading', { name: 'Versions of the results' }).count()).toBe(0);

        // Checks = Domains (DNS), then back to the job's Results through History.
        await connection.open();
        await connection.chooseChecks('Domains (DNS)');
        const history = new HistoryPage(page);
        await history.open();
        await history.openJob('people.csv');
        await results.waitFor();

        const recheck = page.getByRole('button', { name: 'Re-check unknown rows', exact: true });
        expect(await recheck.getAttribute('aria-disabled')).toBe('false');
        await recheck.click();
        const change = page.getByRole('status', { name: 'Re-check' }).filter({ hasText: /→/ });
        await change.waitFor({ timeout: 60_000 });
        expect(await change.textContent()).toBe(
          'Re-check (version 2, DNS): 5 unknown → 3 unknown, 2 invalid',
        );
        // The job's numbers are the new version's.
        await expect
          .poll(() => results.table('Status codes'))
          .toEqual({ '20': 3, '150': 1, '310': 1, '325': 1 });
        expect((await results.summary()).Invalid).toBe(3);
        const versions = page.getByRole('table', { name: 'Versions of the results' });
        const rows = await versions
          .locator('tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) => [...tr.querySelectorAll('th, td')].map((cell) => cell.textContent ?? '')),
          );
        expect(rows.map((row) => [row[0], row[2], row[3]])).toEqual([
          ['1', 'offline', 'First results'],
          ['2 (current)', 'DNS', '5 unknown → 3 unknown, 2 invalid'],
        ]);
        // The export reads the new version.
        const exported = await results.export('All rows with results');
        expect(exported.text).toContain('someone@missing.example.net,Person 3,invalid,310');
        // No row is unknown now (codes 5 and 10): the button says why it cannot run, here and in History.
        expect(await recheck.getAttribute('aria-disabled')).toBe('true');
        expect(await recheck.getAttribute('title')).toBe('This job has no unknown rows.');
        await history.open();
        const rowRecheck = history.grid().getByRole('button', { name: 'Re-check unknown rows' });
        await expect.poll(() => rowRecheck.getAttribute('aria-disabled')).toBe('true');
        expect(await rowRecheck.getAttribute('title')).toBe('This job has no unknown rows.');
      } finally {
        await context.close();
      }
    } finally {
      await app.stop();
      home.remove();
    }
  });
});
