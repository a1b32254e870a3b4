// Issue 12 end to end in browser mode: one truthful set of numbers and the drill-down. A generated list (typos
// that get corrected, bad syntax, duplicates in other case, role and disposable addresses, > 100 rows of one
// code) through the local service: the headline's Ready to mail equals the data rows of the export the Export
// dialog writes by default; a code and a domain type open their rows; the row view is virtualised (scrolling
// past row 100 shows the list's last rows while only a window of rows is drawn); Export these rows writes
// exactly the rows shown. The dialog's bounce budget (issue 37) plans the export with the risk measured from
// the history's campaign outcomes and says its expected rate and the rows it left out.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_DB_FILE, insertJob, openHistoryDb } from '../../electron/core/history/db.js';
import { rowMatches, type RowFilter } from '../../shared/rowFilter.js';
import { DOMAIN_TYPE_REPORT_KEYS } from '../../shared/vocabulary.js';
import { freshHome, launchChromium, openApp, startApp } from '../helpers/browserApp.js';
import { tempDir } from '../helpers/service.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';

const DOMAINS = ['example.com', 'gmail.com', 'yahoo.com', 'gmial.com', 'mailinator.com', 'acme-widgets.com'];

/** 360 rows: most of them plain (code 10 offline), with typos, bad syntax, role rows and repeats in other case. */
function generatedList(): string {
  const lines = ['Email,First Name,City'];
  for (let i = 1; i <= 360; i++) {
    let email = `person.${i}@${DOMAINS[i % DOMAINS.length]}`;
    if (i % 23 === 0) email = `broken${i}@@example.com`;
    else if (i % 19 === 0) email = `info@company${i}.com`;
    else if (i % 17 === 0) email = `PERSON.${i - 6}@${DOMAINS[(i - 6) % DOMAINS.length]}`.toUpperCase();
    lines.push(`${email},Name ${i},"City, ${i}"`);
  }
  return lines.join('\n') + '\n';
}

/** An earlier campaign's outcomes in the home's history: code 10 mailed 200 times, 3 hard bounces (1.5%). */
function seedOutcomes(home: string): void {
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
  db.prepare('INSERT INTO job_outcome_codes (job_id, code, sent, hard_bounced) VALUES (?, 10, 200, 3)').run(
    jobId,
  );
  db.close();
}

const parse = (text: string) =>
  Papa.parse<string[]>(text, { skipEmptyLines: true }).data.map((row) => row.map(String));

describe('Results numbers and drill-down', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows Ready to mail as the default export holds it, and opens any code or domain type’s rows', async () => {
    const home = freshHome();
    const files = tempDir();
    const list = join(files.path, 'generated.csv');
    writeFileSync(list, generatedList());
    seedOutcomes(home.path);
    const app = await startApp(home.path);
    try {
      const { context, page } = await openApp(browser, app);
      const newJob = new NewJobPage(page);
      await newJob.addList(list);
      await newJob.precheck();
      await newJob.startCleaning();
      const results = new ResultsPage(page);
      await results.waitFor();
      await page
        .locator('dl[aria-label="Summary"] dt', { hasText: 'Ready to mail' })
        .waitFor({ timeout: 60_000 });

      // The headline: its names, and Ready to mail = the data rows of the Export dialog's default export.
      const summary = await results.summary();
      expect(Object.keys(summary)).toEqual([
        'Rows',
        'Ready to mail',
        'Invalid',
        'Risky',
        // The job ran offline: no row is unknown in the headline's sense, the rows not checked are.
        'Not checked (offline)',
        'Duplicates left out',
      ]);
      const byDefault = await results.exportDefault();
      const exported = parse(byDefault.text);
      expect(summary['Ready to mail']).toBe(exported.length - 1);
      expect(summary['Duplicates left out']).toBeGreaterThan(0);
      expect(summary.Rows).toBe(360);

      // Under a 1% budget: every row of this offline job is code 10, measured at 1.5%, so only the rows judged
      // safe (the corrected) are written, and the unknown rows the default export holds are left out.
      const budgeted = await results.exportWithBudget('1');
      const inBudget = parse(budgeted.text);
      const budgetStatusAt = inBudget[0].lastIndexOf('Validation Status');
      expect(inBudget.length).toBeGreaterThan(1);
      expect(inBudget.slice(1).every((row) => row[budgetStatusAt] === 'corrected')).toBe(true);
      expect(inBudget.slice(1)).toEqual(
        exported.slice(1).filter((row) => row[budgetStatusAt] === 'corrected'),
      );
      const leftOut = exported.length - inBudget.length;
      expect(budgeted.notice).toContain(
        `Expected bounce rate 1.50%, above the 1% budget (the rows judged safe alone expect more) — ${leftOut} accept-all and unknown rows left out.`,
      );
      expect(budgeted.notice).toContain('Risks measured from your own campaigns (Campaign results).');

      // The results file as it is: the reference for every drill-down.
      const all = parse((await results.export('All rows with results')).text);
      const header = all[0];
      const rows = all.slice(1);
      const matching = (filter: RowFilter) =>
        rows.filter((row) => rowMatches(filter, (name) => row[header.lastIndexOf(name)]));
      const statusOf = (row: string[]) => row[header.lastIndexOf('Validation Status')];
      expect(summary['Not checked (offline)']).toBe(
        rows.filter((row) => ['unknown', 'unverifiable'].includes(statusOf(row))).length,
      );
      expect(summary['Not checked (offline)']).toBeGreaterThan(150);
      // Corrected rows keep their code but count under Corrected, and the screen says how the invalid differ.
      const corrected = rows.filter((row) => statusOf(row) === 'corrected').length;
      expect(corrected).toBeGreaterThan(0);
      await page.getByText(`more were corrected`).first().waitFor();
      const pairs = await results.codeRows();
      expect(pairs.reduce((sum, pair) => sum + pair.rows, 0)).toBe(360);
      expect(pairs.some((pair) => pair.status === 'Corrected')).toBe(true);

      // Drill into the biggest code: every row of it, in a virtualised view.
      const biggest = pairs[0];
      const filter = { code: biggest.code, status: 'unknown' };
      const expected = matching(filter);
      expect(biggest.rows).toBe(expected.length);
      expect(expected.length).toBeGreaterThan(150);
      const title = `Rows with code ${biggest.code} and status ${biggest.status}`;
      const view = await results.drill(new RegExp(`^Code ${biggest.code}, ${biggest.status}: show`), title);
      const emailAt = header.indexOf('Email');
      const first = await results.drawnRows(view);
      expect(first[0].cells[1]).toBe(expected[0][emailAt]);
      // Far fewer rows are drawn than there are: the view is virtualised.
      expect(first.length).toBeLessThan(60);
      await view.evaluate((element) => (element.scrollTop = element.scrollHeight));
      // Its cells, not the one-cell "Reading…" row drawn while its page is read.
      await view
        .locator(`tbody tr[aria-rowindex="${expected.length + 1}"] td`)
        .nth(1)
        .waitFor();
      const last = await results.drawnRows(view);
      const lastRow = last.find((row) => row.index === expected.length + 1)!;
      expect(lastRow.cells[1]).toBe(expected.at(-1)![emailAt]);
      expect(last.every((row) => row.index > 101)).toBe(true);
      expect(last.length).toBeLessThan(60);
      // The code's meaning shows on each row; the offline job says what was checked.
      expect(lastRow.cells[3]).toBe(String(biggest.code));
      await page.getByText('Checked offline: syntax only').first().waitFor();

      // Export these rows: exactly the rows shown, as the results file has them.
      const these = parse((await results.exportTheseRows()).text);
      expect(these).toEqual([header, ...expected]);

      // A domain type: the free mail providers' rows.
      const freeisp = matching({ domainType: 'freeisp' });
      expect(freeisp.length).toBeGreaterThan(0);
      const typeName = DOMAIN_TYPE_REPORT_KEYS.freeisp;
      const typeView = await results.drill(
        new RegExp(`^${typeName}: show`),
        `Rows of domain type ${typeName}`,
      );
      const drawn = await results.drawnRows(typeView);
      expect(drawn.map((row) => row.cells[1])).toEqual(
        freeisp.slice(0, drawn.length).map((row) => row[emailAt]),
      );
      expect(drawn.length).toBe(Math.min(freeisp.length, drawn.length));
      expect(
        await typeView
          .locator('xpath=..')
          .getByText(/^\d[\d,]* rows?/)
          .textContent(),
      ).toMatch(new RegExp(`^${freeisp.length.toLocaleString('en-US')} rows?`));

      // Duplicates left out: the rows the default export leaves out as repeats, exactly as many as the headline.
      const repeatsView = await results.drill(
        /^Duplicates left out: /,
        'Duplicates the default export leaves out',
      );
      expect(
        await repeatsView
          .locator('xpath=..')
          .getByText(/^\d[\d,]* rows?/)
          .textContent(),
      ).toMatch(new RegExp(`^${summary['Duplicates left out']} rows?`));
      const repeats = parse((await results.exportTheseRows()).text);
      expect(repeats.length - 1).toBe(summary['Duplicates left out']);
      const exportedKeys = new Set(exported.slice(1).map((row) => row[0].toLowerCase()));
      // Each left-out row repeats an address the default export wrote.
      const mailed = (row: string[]) =>
        (statusOf(row) === 'corrected' ? row[header.lastIndexOf('Valid Email')] : row[emailAt]).toLowerCase();
      expect(repeats.slice(1).every((row) => exportedKeys.has(mailed(row)))).toBe(true);
      await context.close();
    } finally {
      await app.stop();
      home.remove();
      files.remove();
    }
  });
});
