// Campaign results in the app (issue 37, points 1 and 2): a small list cleaned offline on the local service,
// then History → the job → Campaign results: a file that is no bounce export is refused in words; SendGrid's
// bounce export dropped on its zone gives the report with its exact numbers (rows mailed, hard and soft
// bounces, measured against predicted rate), the chart and its tables, the verdicts that missed and the known
// bouncers added; the report is kept with the job (it shows when the job is opened again) and a new import,
// with a sent list, replaces it. axe finds no violation there in light and in dark. History's Ready to mail is
// the figure Results gives (issue 39).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshHome, launchChromium, openApp, startApp } from '../helpers/browserApp.js';
import { axeViolations } from '../helpers/axe.js';
import { tempDir } from '../helpers/service.js';
import { CampaignResultsPage } from './pages/campaign.js';
import { HistoryPage } from './pages/history.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';

/**
 * Nine rows: six plain addresses (code 10 offline, all in Ready to mail), a syntax error and a repeat of the
 * first in other case (both left out of Ready to mail), and a disposable address (code 525, risky).
 */
const LIST = [
  'Email,First Name',
  'ann.lee@example.com,Ann',
  'bob.stone@example.org,Bob',
  'carol.diaz@gmail.com,Carol',
  'dan.ford@outlook.com,Dan',
  'erin.wu@yahoo.com,Erin',
  'frank.ho@example.net,Frank',
  'broken@@example.com,Broken',
  'nobody-at-all,Nobody',
  'ANN.LEE@example.com,Ann again',
  'temp.box@mailinator.com,Temp',
  '',
].join('\n');

const DAY_S = 86_400;

/**
 * SendGrid's bounces export (test/fixtures/bounces/sendgrid-bounces.csv's shape): two hard bounces of the
 * list's mailed rows (Bob, Dan), one soft (Erin), and a hard bounce of an address the list does not hold.
 */
function sendgridExport(nowS: number): string {
  return [
    'email,created,status,reason',
    `bob.stone@example.org,${nowS - 5 * DAY_S},5.1.1,"550 5.1.1 The email account that you tried to reach does not exist."`,
    `dan.ford@outlook.com,${nowS - 4 * DAY_S},5.1.10,"550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup"`,
    `erin.wu@yahoo.com,${nowS - 3 * DAY_S},4.2.2,"452 4.2.2 The email account that you tried to reach is over quota."`,
    `broken@example.com,${nowS - 4 * DAY_S},5.1.1,"550 5.1.1 No such user"`,
    `someone.else@another-shop.com,${nowS - 2 * DAY_S},5.1.1,"550 5.1.1 No such user"`,
    '',
  ].join('\n');
}

describe('Campaign results of a job', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('reads a dropped bounce export against the job: its numbers, chart and missed verdicts, kept with the job', async () => {
    const home = freshHome();
    const files = tempDir();
    const list = join(files.path, 'campaign.csv');
    writeFileSync(list, LIST);
    const bounces = join(files.path, 'sendgrid-bounces.csv');
    writeFileSync(bounces, sendgridExport(Math.floor(Date.now() / 1000)));
    const notBounces = join(files.path, 'prices.csv');
    writeFileSync(notBounces, 'product,price\nwidget,3\n');
    const sent = join(files.path, 'delivered.csv');
    writeFileSync(sent, 'Recipient\nann.lee@example.com\nbob.stone@example.org\ncarol.diaz@gmail.com\n');
    const app = await startApp(home.path);
    try {
      const { context, page } = await openApp(browser, app);
      const newJob = new NewJobPage(page);
      await newJob.addList(list);
      await newJob.precheck();
      await newJob.startCleaning();
      const results = new ResultsPage(page);
      await results.waitFor();
      expect(await results.summary()).toMatchObject({ Rows: 10, 'Ready to mail': 7 });

      const history = new HistoryPage(page);
      await history.open();
      // History says the Ready to mail figure Results says (issue 39): the rows the default export writes,
      // the repeat of Ann left out, not the valid and corrected rows with duplicates.
      await expect.poll(() => history.cell('campaign.csv', 'Ready to mail')).toBe('7');
      await history.openJob('campaign.csv');
      await results.waitFor();
      const campaign = new CampaignResultsPage(page);
      await campaign.region().getByText('No campaign results yet for this job.').waitFor();

      // A file that is no bounce export: refused in words, nothing kept.
      await campaign.choose('Choose bounce export', notBounces);
      await campaign.read('error');
      expect(await campaign.error().textContent()).toMatch(/prices\.csv|email/i);
      expect(await campaign.report().count()).toBe(0);

      // SendGrid's export, dropped on its zone.
      await campaign.drop('Choose bounce export', bounces);
      await campaign.read('read');
      await campaign.report().waitFor();
      expect(
        await campaign
          .report()
          .getByText(/^Of \d/)
          .textContent(),
      ).toBe(
        'Of 7 rows mailed (the Ready to mail export), 3 hard-bounced: 42.86% measured against 23.14% the verdicts predicted.',
      );
      expect(await campaign.figures()).toEqual({
        'Rows mailed': '7',
        'Hard bounces': '3',
        'Soft bounces': '1',
        'Measured bounce rate': '42.86%',
        'Predicted bounce rate': '23.14%',
      });
      expect(await campaign.report().textContent()).toContain(
        'sendgrid-bounces.csv held 4 hard bounces, 1 soft bounce, 0 other rows and 0 unreadable rows. ' +
          '1 address in it matches no row of this job in the Ready to mail export: it is not counted above.',
      );
      expect(await campaign.tableRows('By status code')).toEqual([
        ['10 Syntax OK', '6', '2', '33.33%', '12.00%'],
        ['155 More than one @ sign', '1', '1', '100.00%', '90.00%'],
      ]);
      expect(await campaign.tableRows('By mail provider')).toEqual([
        ['Google', '1', '0', '0.00%', '12.00%'],
        ['Microsoft', '1', '1', '100.00%', '12.00%'],
        ['Yahoo/AOL', '1', '0', '0.00%', '12.00%'],
        ['Other', '4', '2', '50.00%', '31.50%'],
      ]);
      const byCode = campaign.chart('Bounce rate by status code');
      await byCode.image.waitFor();
      expect(await byCode.image.getAttribute('aria-label')).toBe(
        'Bounce rate by status code. 10 Syntax OK: 33.33% measured, 12.00% predicted; ' +
          '155 More than one @ sign: 100.00% measured, 90.00% predicted.',
      );
      expect(await campaign.chart('Bounce rate by mail provider').image.getAttribute('aria-label')).toBe(
        'Bounce rate by mail provider. Google: 0.00% measured, 12.00% predicted; Microsoft: 100.00% measured, ' +
          '12.00% predicted; Yahoo/AOL: 0.00% measured, 12.00% predicted; Other: 50.00% measured, 31.50% predicted.',
      );
      // The bars are drawn to scale: Microsoft's measured bar is the longest (100%), Google's is empty.
      const widths = await campaign
        .chart('Bounce rate by mail provider')
        .figure.locator('.bar-fill.tone-measured')
        .evaluateAll((rects) => rects.map((rect) => Number(rect.getAttribute('width'))));
      expect(widths).toEqual([0, 100, 0, 50]);
      expect(await campaign.tableRows('Verdicts that missed')).toEqual([
        [
          '7',
          'broken@@example.com',
          '155 Corrected',
          'decided offline: More than one @ sign',
          'Only the address itself was checked (offline): the mailbox was never asked.',
        ],
      ]);
      expect(await campaign.report().textContent()).toContain(
        'Known bouncers: 4 addresses added, 0 updated.',
      );
      expect(await axeViolations(page)).toEqual([]);
      await context.close();

      // Dark, in a new window: the report is kept with the job and shows when it is opened.
      const dark = await openApp(browser, app, { colorScheme: 'dark' });
      await dark.page.emulateMedia({ colorScheme: 'dark' });
      const darkHistory = new HistoryPage(dark.page);
      await darkHistory.open();
      await darkHistory.openJob('campaign.csv');
      const darkCampaign = new CampaignResultsPage(dark.page);
      await darkCampaign.report().waitFor();
      expect((await darkCampaign.figures())['Rows mailed']).toBe('7');
      expect(await axeViolations(dark.page)).toEqual([]);

      // A new import, with the platform's sent list, replaces the report.
      await darkCampaign.choose('Choose bounce export', bounces);
      await darkCampaign.choose('Choose sent list (optional)', sent);
      await darkCampaign.read('read');
      await expect.poll(async () => (await darkCampaign.figures())['Rows mailed']).toBe('3');
      expect(await darkCampaign.figures()).toEqual({
        'Rows mailed': '3',
        'Hard bounces': '1',
        'Soft bounces': '0',
        'Measured bounce rate': '33.33%',
        'Predicted bounce rate': '12.00%',
      });
      expect(
        await darkCampaign
          .report()
          .getByText(/^Of \d/)
          .textContent(),
      ).toBe(
        'Of 3 rows mailed (the sent list (delivered.csv)), 1 hard-bounced: 33.33% measured against 12.00% the verdicts predicted.',
      );
      const replaced = await darkCampaign.report().textContent();
      expect(replaced).toContain(
        '4 addresses in it match no row of this job on the sent list: they are not counted above.',
      );
      expect(replaced).toContain('Verdicts that missedNone: no row called valid or accept-all hard-bounced.');
      expect(replaced).toContain('Known bouncers: 0 addresses added, 0 updated.');
      expect(await axeViolations(dark.page)).toEqual([]);
      await dark.context.close();
    } finally {
      await app.stop();
      home.remove();
      files.remove();
    }
  });
});
