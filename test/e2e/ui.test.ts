// Issue 15 end to end: every screen passes axe-core (WCAG 2.2 A and AA) in light and dark; at 1024×640 Start
// cleaning and every History column are in view; History and Ctrl+O work from the keyboard alone; a
// 300,000-row file shows its pre-check moving and can be cancelled; Cancel asks first and a cancelled job
// runs again.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_DB_FILE, insertJob, openHistoryDb, setJobStatus } from '../../electron/core/history/db.js';
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

const SAMPLE = join(ROOT, 'test', 'fixtures', 'lists', 'sample.csv');
function seedHistory(home: string, count: number): void {
  const db = openHistoryDb(join(home, HISTORY_DB_FILE));
  const statuses = ['completed', 'failed', 'cancelled'] as const;
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = insertJob(db, {
        fileName: `customers-${String(i).padStart(3, '0')}.csv`,
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
        rows: 10 + i,
        createdAt: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
      });
      setJobStatus(db, id, statuses[i % statuses.length]);
    }
  })();
  db.close();
}

async function nav(page: Page, label: RegExp): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: label }).click();
}

/** Whether an element lies wholly inside the viewport. */
function isInView(page: Page, box: { x: number; y: number; width: number; height: number } | null): boolean {
  const size = page.viewportSize();
  return (
    box !== null &&
    size !== null &&
    box.x >= 0 &&
    box.y >= 0 &&
    box.x + box.width <= size.width + 0.5 &&
    box.y + box.height <= size.height + 0.5
  );
}

describe('the app at every size, from the keyboard (issue 15)', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('has no axe-core violations on any screen, in light and in dark', async () => {
    const home = freshHome();
    seedHistory(home.path, 6);
    const app: RunningApp = await startApp(home.path);
    try {
      for (const scheme of ['light', 'dark'] as const) {
        const { context, page } = await openApp(browser, app, { colorScheme: scheme });
        await page.emulateMedia({ colorScheme: scheme });
        const found: Record<string, string[]> = {};
        const check = async (screen: string) => {
          const violations = await axeViolations(page);
          if (violations.length > 0) found[`${scheme} ${screen}`] = violations;
        };
        await check('New job');
        const newJob = new NewJobPage(page);
        await newJob.addList(SAMPLE);
        await newJob.precheck();
        await check('New job, mapping');
        if (scheme === 'light') {
          // A real job on the local service: Results.
          await newJob.startCleaning();
          await page.getByRole('heading', { name: 'Results', level: 1 }).waitFor({ timeout: 60_000 });
        } else {
          const history = new HistoryPage(page);
          await history.open();
          await history.openJob('sample.csv');
          await page.getByRole('heading', { name: 'Results', level: 1 }).waitFor();
        }
        await check('Results');
        // The drill-down's virtualised row view (RowsPreview).
        await page.getByRole('button', { name: /^Invalid: show/ }).click();
        await page
          .getByRole('region', { name: 'Table of rows with status Invalid' })
          .locator('tbody tr:not(.spacer) td')
          .first()
          .waitFor();
        await check('Results, rows of a status');
        const history = new HistoryPage(page);
        await history.open();
        await expect.poll(() => history.count().textContent()).toBe('7 jobs');
        await check('History');
        await page.getByRole('button', { name: /^Delete job \d+ \(customers-000.csv\)/ }).click();
        await page.getByRole('dialog', { name: 'Delete this job?' }).waitFor();
        await check('History, delete dialog');
        await page.getByRole('button', { name: 'Keep it' }).click();
        await history.openJob('customers-001.csv');
        await page.getByRole('heading', { name: 'The job failed' }).waitFor();
        await check('Failed job');
        await history.open();
        await history.openJob('customers-002.csv');
        await page.getByRole('heading', { name: 'The job was cancelled' }).waitFor();
        await check('Cancelled job');
        await nav(page, /^Verify an address/);
        await page.getByRole('heading', { level: 1, name: /Verify/ }).waitFor();
        await check('Verify');
        await nav(page, /^Look up a person/);
        await page.getByRole('heading', { level: 1, name: /Look up/ }).waitFor();
        await check('Look up a person');
        await nav(page, /^Connection/);
        await page.getByRole('heading', { level: 1, name: 'Connection' }).waitFor();
        await check('Connection');
        expect(found).toEqual({});
        await context.close();
      }
    } finally {
      await app.stop();
      home.remove();
    }
  });

  it('at 1024×640 shows Start cleaning and every History column without scrolling', async () => {
    const home = freshHome();
    seedHistory(home.path, 3);
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      await page.setViewportSize({ width: 1024, height: 640 });
      const newJob = new NewJobPage(page);
      await newJob.addList(SAMPLE);
      await newJob.precheck();
      const start = page.getByRole('button', { name: 'Start cleaning' });
      expect(isInView(page, await start.boundingBox())).toBe(true);
      // Not covered by anything: a click at its centre lands on it.
      await start.click({ trial: true, timeout: 2000 });

      const history = new HistoryPage(page);
      await history.open();
      const headers = history.grid().getByRole('columnheader');
      const names = (await headers.allTextContents()).map((text) => text.replace(/[▲▼]/g, '').trim());
      expect(names).toEqual([
        'File',
        'Date',
        'Status',
        'Rows',
        'Ready to mail',
        'Invalid',
        'Connection',
        'Actions',
      ]);
      for (const header of await headers.all()) expect(isInView(page, await header.boundingBox())).toBe(true);
      const firstRow = history.grid().getByRole('row').nth(1);
      for (const cell of await firstRow.getByRole('gridcell').all())
        expect(isInView(page, await cell.boundingBox())).toBe(true);
      const remove = firstRow.getByRole('button', { name: /^Delete job/ });
      await remove.click({ trial: true, timeout: 2000 });
      // Controls are at least 24×24 px.
      const box = await remove.boundingBox();
      expect(box!.width).toBeGreaterThanOrEqual(24);
      expect(box!.height).toBeGreaterThanOrEqual(24);
      // Nor do they overflow at the widths between the narrow layout and a wide one (the sidebar is wider there).
      for (const width of [1200, 1280, 1366]) {
        await page.setViewportSize({ width, height: 720 });
        for (const header of await headers.all())
          expect(isInView(page, await header.boundingBox()), `${width} px`).toBe(true);
        await remove.click({ trial: true, timeout: 2000 });
        const recheck = firstRow.getByRole('button', { name: 'Re-check unknown rows' });
        expect(isInView(page, await recheck.boundingBox()), `${width} px`).toBe(true);
      }
    } finally {
      await app.stop();
      home.remove();
    }
  });

  it('History works from the keyboard: arrows, Enter, Delete with confirmation', async () => {
    const home = freshHome();
    seedHistory(home.path, 5);
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      await page.keyboard.press('Control+h');
      await page.getByRole('heading', { name: 'History', level: 1 }).waitFor();
      // Focus moved to the screen's heading.
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('History');
      const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
      // Tab reaches the grid once: its first row's Open control (newest first).
      for (let i = 0; i < 25 && !(await focused()).startsWith('Open '); i++) await page.keyboard.press('Tab');
      expect(await focused()).toBe('Open customers-004.csv, job 5');
      await page.keyboard.press('ArrowDown');
      expect(await focused()).toBe('Open customers-003.csv, job 4');
      await page.keyboard.press('ArrowRight');
      // Re-check unknown rows: focusable with its reason when it cannot run (this job failed).
      expect(await focused()).toBe('Re-check unknown rows');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-disabled') ?? '')).toBe(
        'true',
      );
      await page.keyboard.press('ArrowRight');
      expect(await focused()).toBe('Delete job 4 (customers-003.csv)');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowUp');
      expect(await focused()).toBe('Open customers-004.csv, job 5');
      // One Tab stop: Tab leaves the grid.
      await page.keyboard.press('Tab');
      expect(await focused()).not.toMatch(/^(Open|Delete) /);
      await page.keyboard.press('Shift+Tab');
      expect(await focused()).toBe('Open customers-004.csv, job 5');
      // Enter opens the job; its heading takes focus.
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'The job failed', level: 1 }).waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
      // Back to History; Delete asks first.
      await page.keyboard.press('Control+h');
      await page.getByRole('heading', { name: 'History', level: 1 }).waitFor();
      for (let i = 0; i < 25 && !(await focused()).startsWith('Open '); i++) await page.keyboard.press('Tab');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Delete');
      const dialog = page.getByRole('dialog', { name: 'Delete this job?' });
      await dialog.waitFor();
      await expect(dialog.textContent()).resolves.toContain('customers-003.csv');
      // Escape keeps it.
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await expect.poll(() => new HistoryPage(page).count().textContent()).toBe('5 jobs');
      // Focus goes back to the job's row once the dialog has closed (a busy machine can take a moment).
      await expect.poll(focused).toMatch(/^Open customers-003\.csv/);
      await page.keyboard.press('Delete');
      await dialog.waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Delete job');
      await page.keyboard.press('Enter');
      await expect.poll(() => new HistoryPage(page).count().textContent()).toBe('4 jobs');
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('History');
      expect(await page.getByRole('button', { name: /customers-003\.csv/ }).count()).toBe(0);

      // Ready to mail and Invalid sort.
      for (const column of ['Ready to mail', 'Invalid', 'Rows']) {
        const button = new HistoryPage(page).grid().getByRole('button', { name: column, exact: true });
        await button.click();
        await expect
          .poll(() =>
            new HistoryPage(page)
              .grid()
              .getByRole('columnheader', { name: column })
              .getAttribute('aria-sort'),
          )
          .toMatch(/ascending|descending/);
      }
    } finally {
      await app.stop();
      home.remove();
    }
  });

  it('Ctrl+O opens the file picker from every screen', async () => {
    const home = freshHome();
    seedHistory(home.path, 1);
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const screens: [RegExp, string][] = [
        [/^New job/, 'New job'],
        [/^History/, 'History'],
        [/^Verify an address/, 'Verify an address'],
        [/^Look up a person/, 'Look up a person'],
        [/^Connection/, 'Connection'],
      ];
      for (const [label] of screens) {
        await nav(page, label);
        const chooser = page.waitForEvent('filechooser', { timeout: 5000 });
        await page.keyboard.press('Control+o');
        const picked = await chooser;
        await picked.setFiles(SAMPLE);
        await page.getByRole('heading', { name: 'Map the columns' }).waitFor();
      }
    } finally {
      await app.stop();
      home.remove();
    }
  });

  it('a 300,000-row file shows its pre-check moving, and Cancel stops it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsieve-big-'));
    const path = join(dir, 'big-300k.csv');
    const lines = ['email,first_name,last_name,city'];
    for (let i = 0; i < 300_000; i++) lines.push(`person${i}@example${i % 113}.com,Ann${i},Lee,Lyon`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    const home = freshHome();
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const newJob = new NewJobPage(page);
      await newJob.addList(path);
      // The mapper shows from the sample, the count an estimate until the pre-check has read the file.
      const bar = page.getByRole('progressbar', { name: 'Checking the file offline' });
      await bar.waitFor();
      await expect
        .poll(
          async () =>
            Number(
              (await bar.getAttribute('aria-valuenow')) ??
                (await bar.evaluate((e) => (e as HTMLProgressElement).value)),
            ),
          { interval: 20, timeout: 60_000 },
        )
        .toBeGreaterThan(0);
      const region = page.getByRole('region', { name: 'Before sending' });
      await region.getByRole('button', { name: 'Cancel' }).click();
      await region.getByText('The pre-check was cancelled').waitFor();
      expect(await page.getByText(/about [\d,]+ rows/).count()).toBeGreaterThan(0);
      // Asked again, it runs to the exact count.
      await region.getByRole('button', { name: 'Check the file' }).click();
      expect(await newJob.precheck()).toMatchObject({ 'Rows to send': '300,000' });
      await page.getByText('300,000 rows · 4 columns').waitFor();
    } finally {
      await app.stop();
      home.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
