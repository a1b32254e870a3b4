// The other screens end to end: History with 10,000 jobs (virtualised, searchable, filterable, sortable,
// deletable), the provider connection (the key is masked and never reaches the page), verifying one address,
// keyboard use, and accessible names on every control of every screen, in light and dark; the Export dialog
// with its bounce budget open (issue 37) passes axe-core in both.
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_DB_FILE, insertJob, openHistoryDb, setJobStatus } from '../../electron/core/history/db.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  freshHome,
  launchChromium,
  openApp,
  ROOT,
  startApp,
  type RunningApp,
} from '../helpers/browserApp.js';
import { axeViolations } from '../helpers/axe.js';
import { HistoryPage } from './pages/history.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';

const SAMPLE = join(ROOT, 'test', 'fixtures', 'lists', 'sample.csv');
const INTERACTIVE =
  /^\s*- (button|link|textbox|combobox|checkbox|radio|searchbox|spinbutton|slider|switch)( \[[^\]]*\])*:?\s*$/;

/** Lines of the accessibility tree naming an interactive control without an accessible name. */
async function unnamedControls(page: Page): Promise<string[]> {
  const snapshot = await page.locator('body').ariaSnapshot();
  return snapshot.split('\n').filter((line) => INTERACTIVE.test(line));
}

function seedHistory(home: string, count: number): void {
  const db = openHistoryDb(join(home, HISTORY_DB_FILE));
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = insertJob(db, {
        fileName: i === 4242 ? 'needle-in-haystack.csv' : `customers-${String(i).padStart(5, '0')}.csv`,
        filePath: `/nowhere/${i}.csv`,
        uploadName: `${i}.csv`,
        uploadHeader: true,
        fileSize: 100,
        fileSha256: null,
        fileFormat: 'csv',
        fileEncoding: 'utf-8',
        mapping: { delimiter: ',', header: true, roles: ['email'] },
        options: { reportOnly: false, split: false },
        connectionKind: 'embedded',
        connectionUrl: null,
        rows: i,
        createdAt: new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString(),
      });
      setJobStatus(db, id, i % 10 === 0 ? 'failed' : 'completed');
    }
  })();
  db.close();
}

describe('screens', () => {
  let browser: Browser;
  let service: TestService;
  beforeAll(async () => {
    [browser, service] = await Promise.all([launchChromium(), startTestService()]);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('History shows 10,000 jobs in a virtualised list, searches, filters, sorts and deletes', async () => {
    const home = freshHome();
    seedHistory(home.path, 10_000);
    const app: RunningApp = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const history = new HistoryPage(page);
      await history.open();
      await expect.poll(() => history.count().textContent()).toBe('10,000 jobs');
      expect(await history.grid().getAttribute('aria-rowcount')).toBe('10001');
      // Only the rows in view are in the DOM.
      const domRows = await page.locator('.history-viewport [role="row"]').count();
      expect(domRows).toBeGreaterThan(5);
      expect(domRows).toBeLessThan(60);
      // Newest first; scrolling to the end shows the oldest.
      expect(
        await history
          .grid()
          .getByRole('button', { name: /^Open / })
          .first()
          .textContent(),
      ).toBe('customers-09999.csv');
      await page
        .locator('.history-viewport')
        .evaluate((element) => (element.scrollTop = element.scrollHeight));
      await history.grid().getByRole('button', { name: 'Open customers-00000.csv, job 1' }).waitFor();
      // Search by file name.
      await history.search('needle');
      await expect.poll(() => history.count().textContent()).toBe('1 job');
      await history.search('');
      // Filter by status and by date.
      await page.getByRole('combobox', { name: 'Status' }).selectOption('failed');
      await expect.poll(() => history.count().textContent()).toBe('1,000 jobs');
      await page.getByRole('combobox', { name: 'Status' }).selectOption('');
      await page.getByLabel('From', { exact: true }).fill('2025-01-02');
      await page.getByLabel('To', { exact: true }).fill('2025-01-02');
      await expect.poll(() => history.count().textContent()).toBe('24 jobs');
      await page.getByLabel('From', { exact: true }).fill('');
      await page.getByLabel('To', { exact: true }).fill('');
      await expect.poll(() => history.count().textContent()).toBe('10,000 jobs');
      // Sort by file name, ascending; the column says so.
      await page.getByRole('button', { name: 'File' }).click();
      await expect
        .poll(() => page.getByRole('columnheader', { name: 'File' }).getAttribute('aria-sort'))
        .toBe('ascending');
      await expect
        .poll(() =>
          history
            .grid()
            .getByRole('button', { name: /^Open / })
            .first()
            .textContent(),
        )
        .toBe('customers-00000.csv');
      // Delete a job (with its files) after confirming.
      await history.search('needle');
      await expect.poll(() => history.count().textContent()).toBe('1 job');
      await page.getByRole('button', { name: /^Delete job 4243/ }).click();
      await page
        .getByRole('dialog', { name: 'Delete this job?' })
        .getByRole('button', { name: 'Delete job' })
        .click();
      await expect.poll(() => history.count().textContent()).toBe('0 jobs');
      await page.getByText('No job matches these filters.').waitFor();
    } finally {
      await app.stop();
      home.remove();
    }
  });

  it('connects to a provider after a test call, shows only the key’s last 4 characters, and clears it', async () => {
    const home = freshHome();
    const app = await startApp(home.path);
    const key = service.key({ services: ['validation', 'corrections'] });
    try {
      const { page } = await openApp(browser, app);
      await page.keyboard.press('Control+k');
      await page.getByRole('heading', { name: 'Connection', level: 1 }).waitFor();
      await page.getByRole('radio', { name: /Provider’s service/ }).check();
      await page.getByLabel('Service address').fill(service.url);
      // A wrong key fails the test call and nothing is saved.
      await page.getByLabel('API key').fill('wrong-key-0000');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('alert').filter({ hasText: 'refused the API key' }).waitFor();
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByRole('status').filter({ hasText: 'The test call worked' }).waitFor();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      await page
        .getByText(`••••${key.slice(-4)}`)
        .first()
        .waitFor();
      expect(await page.getByLabel('API key').inputValue()).toBe('');
      expect(await page.content()).not.toContain(key);
      await expect
        .poll(() => page.getByRole('status', { name: 'Connection status' }).textContent())
        .toContain('Provider: 127.0.0.1');
      // Verify one address through the provider, explained in words.
      await page.keyboard.press('Control+e');
      await page.getByLabel('Email address').fill('john.smith@gmial.com');
      await page.getByRole('button', { name: 'Verify', exact: true }).click();
      const answer = page.getByRole('region', { name: /john\.smith@gmial\.com/ });
      await answer.waitFor();
      expect(await answer.textContent()).toContain('Did you mean john.smith@gmail.com?');
      expect(await answer.textContent()).toContain('Code 10: Syntax OK.');
      expect(await answer.textContent()).toContain('provider’s service');
      // Clear the key: back to the local service.
      await page.keyboard.press('Control+k');
      await page.getByRole('button', { name: 'Clear key' }).click();
      await expect
        .poll(() => page.getByRole('status', { name: 'Connection status' }).textContent())
        .toContain('Local service');
      expect(await page.content()).not.toContain(key.slice(0, -4));
    } finally {
      await app.stop();
      home.remove();
    }
  });

  for (const colorScheme of ['light', 'dark'] as const) {
    it(`names every control on every screen and works from the keyboard (${colorScheme})`, async () => {
      const home = freshHome();
      const app = await startApp(home.path);
      try {
        const { page } = await openApp(browser, app, { colorScheme });
        const background = await page.evaluate(
          () => getComputedStyle(document.documentElement).backgroundColor,
        );
        expect(background).toBe(colorScheme === 'dark' ? 'rgb(20, 23, 29)' : 'rgb(246, 247, 249)');
        expect(await unnamedControls(page)).toEqual([]);
        // Tab to "Add list" and open the chooser with Enter.
        const focused: string[] = [];
        for (let i = 0; i < 20 && focused.at(-1) !== 'Add list'; i++) {
          await page.keyboard.press('Tab');
          focused.push(await page.evaluate(() => document.activeElement?.textContent ?? ''));
        }
        expect(focused.at(-1), `focus went through ${focused.join(' → ')}`).toBe('Add list');
        const chooser = page.waitForEvent('filechooser');
        await page.keyboard.press('Enter');
        await (await chooser).setFiles(SAMPLE);
        const newJob = new NewJobPage(page);
        await page.getByRole('heading', { name: 'Map the columns' }).waitFor();
        await newJob.precheck();
        expect(await unnamedControls(page)).toEqual([]);
        // A role chosen with the keyboard.
        await newJob.roleSelect('City').focus();
        await newJob.roleSelect('City').selectOption('ignore');
        await page.getByRole('button', { name: 'Start cleaning' }).focus();
        await page.keyboard.press('Enter');
        const results = new ResultsPage(page);
        await results.waitFor();
        expect(await unnamedControls(page)).toEqual([]);
        await page.getByRole('button', { name: 'Export', exact: true }).click();
        expect(await unnamedControls(page)).toEqual([]);
        // The bounce budget: its percent shows once asked for, named; a budget out of range says why.
        const exportDialog = page.getByRole('dialog', { name: 'Export' });
        await exportDialog
          .getByRole('checkbox', { name: 'Keep the expected bounce rate under a budget' })
          .check();
        const percent = exportDialog.getByRole('spinbutton', {
          name: 'Keep the expected bounce rate under (%)',
        });
        expect(await percent.inputValue()).toBe('2');
        expect(await unnamedControls(page)).toEqual([]);
        expect(await axeViolations(page)).toEqual([]);
        await percent.fill('150');
        await exportDialog.getByText('The budget is a percent from 0 to 100.').waitFor();
        expect(await exportDialog.getByRole('button', { name: 'Save export' }).isDisabled()).toBe(true);
        expect(await axeViolations(page)).toEqual([]);
        await page.keyboard.press('Escape');
        await page.getByRole('dialog', { name: 'Export' }).waitFor({ state: 'detached' });
        for (const [shortcut, heading] of [
          ['Control+h', 'History'],
          ['Control+e', 'Verify an address'],
          ['Control+l', 'Look up a person'],
          ['Control+k', 'Connection'],
          ['Control+n', 'New job'],
        ] as const) {
          await page.keyboard.press(shortcut);
          await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
          expect(await unnamedControls(page)).toEqual([]);
        }
      } finally {
        await app.stop();
        home.remove();
      }
    });
  }
});
