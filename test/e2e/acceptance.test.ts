// The acceptance run of issue 4, end to end in browser mode: add a list, see the suggested mapping, start
// cleaning, watch progress, read Results equal to the service's own reporting, export the safe rows, restart,
// find the job in History and export again with the service stopped.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, pollList } from '../../shared/api/client.js';
import { SERVICE_NAMES } from '../../shared/api/services.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { HistoryPage } from './pages/history.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';
import { freshHome, headingsSeen, launchChromium, openApp, ROOT, startApp } from '../helpers/browserApp.js';

const SAMPLE = join(ROOT, 'test', 'fixtures', 'lists', 'sample.csv');

/** The same list through a separate service with the embedded key's configuration: the reference figures. */
async function referenceRun(service: TestService) {
  const key = service.key({ mode: 'safe_to_send', services: SERVICE_NAMES, rateLimit: 0 });
  const client = createClient({ baseUrl: service.url, apiKey: key });
  const body = readFileSync(SAMPLE);
  const submitted = await client.submitList(
    { name: 'sample.csv', body: new Blob([body]), size: body.length },
    // Validation, as the app's mapper chooses by default (the key would run every service the file allows).
    { name: 'sample.csv', header: true, delimiter: ',', email_column: 1, services: ['email_validation'] },
  );
  if (!submitted.ok) throw new Error(submitted.error.message);
  const done = await pollList(client, submitted.value.list_id, { intervalMs: 100 });
  if (!done.ok) throw new Error(done.error.message);
  const results = await client.results(submitted.value.list_id);
  if (!results.ok) throw new Error(results.error.message);
  const text = await new Response(results.value.body).text();
  return { reporting: done.value.services.email_validation!.reporting!, text };
}

function rowsWithStatus(text: string, statuses: string[]): string[] {
  const [header, ...rows] = text.split(/\r?\n/).filter((line) => line !== '');
  const index = header.split(',').indexOf('Validation Status');
  return [
    header,
    ...rows.filter((row) => statuses.includes(row.split(',').at(index - header.split(',').length) ?? '')),
  ];
}

describe('the desktop app in browser mode', () => {
  let browser: Browser;
  let reference: Awaited<ReturnType<typeof referenceRun>>;
  let service: TestService;

  beforeAll(async () => {
    [browser, service] = await Promise.all([launchChromium(), startTestService()]);
    reference = await referenceRun(service);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('cleans a list, shows the service’s figures, exports, and re-exports from History after a restart', async () => {
    const home = freshHome();
    let app = await startApp(home.path);
    try {
      const { context, page } = await openApp(browser, app);
      // The local service starts only when needed.
      await expect
        .poll(() => page.getByRole('status', { name: 'Connection status' }).textContent())
        .toContain('stopped');

      // Add list → suggested mapping.
      const newJob = new NewJobPage(page);
      await newJob.addList(SAMPLE);
      expect(await newJob.columnNames()).toEqual(['Email', 'First Name', 'Last Name', 'City', 'Zip']);
      expect(await newJob.roles()).toEqual(['email', 'first_name', 'last_name', 'city', 'zip']);
      expect(await newJob.headerCheckbox().isChecked()).toBe(true);
      expect(await newJob.delimiterSelect().inputValue()).toBe(',');
      // Before sending: 12 rows; 4 fail the syntax check offline; jane.doe twice = 2 duplicates.
      expect(await newJob.precheck()).toMatchObject({
        'Rows to send': '12',
        'Invalid by the offline check': '4',
        Duplicates: '2',
      });

      // Start cleaning → Progress → Results.
      await newJob.startCleaning();
      const results = new ResultsPage(page);
      await results.waitFor();
      const headings = await headingsSeen(page);
      expect(headings.indexOf('Progress')).toBeGreaterThan(-1);
      expect(headings.indexOf('Progress')).toBeLessThan(headings.indexOf('Results'));

      // The figures equal the service's reporting.
      const statuses = await results.table('Statuses');
      expect(statuses).toEqual({
        Valid: reference.reporting.statuses?.Valid,
        Corrected: reference.reporting.statuses?.Corrected,
        Unknown: reference.reporting.statuses?.Unknown,
        // The local service's key answers in safe_to_send mode: its words (shared/vocabulary.ts).
        'Catch-all': reference.reporting.statuses?.Unverifiable,
        Trap: reference.reporting.statuses?.Risky,
        Invalid: reference.reporting.statuses?.Invalid,
      });
      expect(await results.table('Invalid categories')).toEqual(reference.reporting.invalid_categories);
      // Codes are counted under the status the rows ended in: per code, the pairs add up to the service's.
      const codes: Record<string, number> = {};
      for (const { code, rows } of await results.codeRows()) codes[code] = (codes[code] ?? 0) + rows;
      expect(codes).toEqual(reference.reporting.status_codes);
      const summary = await results.summary();
      expect(summary.Rows).toBe(12);
      // The headline parts the rows: ready to mail, invalid, risky, and duplicates left out. Offline, the rows
      // only the syntax check passed are in Ready to mail, and counted beside it for what they are.
      expect(
        summary['Ready to mail'] + summary.Invalid + summary.Risky + summary['Duplicates left out'],
      ).toBe(12);
      expect(summary).not.toHaveProperty('Unknown');
      expect(summary['Not checked (offline)']).toBe(
        (reference.reporting.statuses?.Unknown ?? 0) + (reference.reporting.statuses?.Unverifiable ?? 0),
      );
      expect(summary.Invalid).toBe(reference.reporting.statuses?.Invalid);
      expect(await page.getByRole('button', { name: /^Role accounts: / }).textContent()).toBe(
        `Role accounts: ${reference.reporting.role_accounts}`,
      );
      const marked = reference.text.split(/\r?\n/).filter((line) => line.split(',').at(-2) === 'true').length;
      expect(await page.getByRole('button', { name: /^Rows marked duplicate/ }).textContent()).toMatch(
        new RegExp(`: ${marked}$`),
      );
      await expect
        .poll(() => page.getByRole('complementary', { name: 'About offline checks' }).textContent())
        .toContain('code 10');

      // Click a status to preview its rows.
      const invalidRows = await results.previewStatus('Invalid');
      // The row view: row number, email, status, code, meaning, corrected address.
      expect(invalidRows.map((row) => row[1])).toEqual(
        rowsWithStatus(reference.text, ['invalid'])
          .slice(1)
          .map((row) => row.split(',')[0]),
      );

      // Export: safe to send only has the safe rows (valid and corrected), shaped for import: each row's
      // address to mail (its Valid Email) in the email column, once per address (duplicates left out).
      const safe = await results.export('Safe to send only');
      const [safeHeader, ...safeRows] = safe.text.split(/\r?\n/).filter((line) => line !== '');
      const [referenceHeader, ...referenceSafe] = rowsWithStatus(reference.text, ['valid', 'corrected']);
      expect(safeHeader).toBe(`${referenceHeader},Original Email`);
      const toMail = [...new Set(referenceSafe.map((row) => (row.split(',').at(-1) ?? '').toLowerCase()))];
      expect(safeRows.map((row) => row.split(',')[0].toLowerCase())).toEqual(toMail);
      await context.close();

      // Restart the app: the job is in History; re-export works with the service stopped.
      await app.stop();
      app = await startApp(home.path);
      const second = await openApp(browser, app);
      const history = new HistoryPage(second.page);
      await history.open();
      await expect.poll(() => history.count().textContent()).toBe('1 job');
      await history.openJob('sample.csv');
      const again = new ResultsPage(second.page);
      await again.waitFor();
      const all = await again.export('All rows with results');
      expect(all.text).toBe(reference.text);
      const badge = second.page.getByRole('status', { name: 'Connection status' });
      expect(await badge.textContent()).toContain('stopped');
      await second.context.close();
    } finally {
      await app.stop();
      home.remove();
    }
  });
});
