// Known bouncers in the app (issue 22): a Postmark bounces export imported with Import bounces file on Look up
// a person, then a list cleaned on the local service: its hard bounces read "Bounced before" (code 520,
// Invalid) on Results, in the status-code table and in their rows; the soft bounce and a fresh address do not.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshHome, launchChromium, openApp, startApp } from '../helpers/browserApp.js';
import { axeViolations } from '../helpers/axe.js';
import { tempDir } from '../helpers/service.js';
import { daysAgo } from '../service/identity/fixture.js';
import { LookupPage } from './pages/lookup.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';

/** Postmark's bounces export: two hard bounces this month, one soft. */
function postmarkExport(): string {
  return [
    'ID,Type,TypeCode,Name,Description,Details,Email,From,BouncedAt,Inactive',
    `1001,HardBounce,1,Hard bounce,"Unknown user",smtp;550 5.1.1 no such user,gone.one@example.com,news@shop.example.com,${daysAgo(20)},true`,
    `1002,HardBounce,1,Hard bounce,"Unknown user",smtp;550 5.1.1 no such user,Gone.Two@example.org,news@shop.example.com,${daysAgo(3)},true`,
    `1003,SoftBounce,4096,Soft bounce,"Mailbox full",smtp;452 4.2.2 mailbox full,full.box@example.net,news@shop.example.com,${daysAgo(2)},false`,
  ].join('\n');
}

describe('bounces imported in the app', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('imports a bounces file, and a list then shows its hard bounces as "Bounced before"', async () => {
    const home = freshHome();
    const files = tempDir();
    const bounces = join(files.path, 'postmark-bounces.csv');
    writeFileSync(bounces, `${postmarkExport()}\n`);
    const list = join(files.path, 'newsletter.csv');
    writeFileSync(
      list,
      [
        'Email,First Name',
        'gone.one@example.com,One',
        'gone.two@example.org,Two',
        'full.box@example.net,Full',
        'still.here@example.com,Here',
        '',
      ].join('\n'),
    );
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const lookup = new LookupPage(page);
      await lookup.open();
      await lookup.importFile('bounces', bounces);
      const report = lookup.importReport();
      await report.waitFor();
      const text = await report.textContent();
      expect(text).toContain(
        'Imported 2 of 3 rows from postmark-bounces.csv (hard bounces: 2 addresses added, 0 updated; ignored: 1 soft bounce, 0 rows not a bounce).',
      );
      expect(text).toContain(
        "Note: Read addresses from 'Email'; dates from 'BouncedAt'; hard or soft from 'Type'",
      );
      expect(await axeViolations(page)).toEqual([]);

      const newJob = new NewJobPage(page);
      await newJob.open();
      await newJob.addList(list);
      await newJob.precheck();
      await newJob.startCleaning();
      const results = new ResultsPage(page);
      await results.waitFor();
      const codes = await results.codeRows();
      expect(codes).toContainEqual({ code: 520, status: 'Invalid', rows: 2 });
      expect(codes.reduce((sum, row) => sum + row.rows, 0)).toBe(4);
      const table = page.getByRole('table', { name: 'Status codes' });
      await expect
        .poll(() => table.locator('tbody tr', { hasText: '520' }).locator('td').first().textContent())
        .toBe('Bounced before');
      expect(await table.textContent()).not.toContain('Matched to known bouncers');

      const view = await results.drill(/^Code 520, Invalid: show/, 'Rows with code 520 and status Invalid');
      const rows = await results.drawnRows(view);
      expect(rows.map((row) => [row.cells[1], row.cells[2], row.cells[3], row.cells[4]])).toEqual([
        ['gone.one@example.com', 'Invalid', '520', 'Bounced before'],
        ['gone.two@example.org', 'Invalid', '520', 'Bounced before'],
      ]);
    } finally {
      await app.stop();
      home.remove();
      files.remove();
    }
  });
});
