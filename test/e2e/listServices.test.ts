// List services end to end in browser mode (issue 6): on the embedded service with demo reference data, the
// mapper offers every service; a job with email intelligence shows its match report and its results carry
// the intelligence columns; a report-only job awaits purchase with its counts (across a restart), is bought
// with a field selection and ends in results with only those fields.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTELLIGENCE_FIELDS } from '../../shared/api/intelligence.js';
import { runCli } from '../helpers/cli.js';
import { HistoryPage } from './pages/history.js';
import { NewJobPage } from './pages/newJob.js';
import { PurchasePage } from './pages/purchase.js';
import { ResultsPage } from './pages/results.js';
import { freshHome, launchChromium, openApp, startApp, type RunningApp } from '../helpers/browserApp.js';

const PEOPLE = 40;
const SEED = 11;

const VALIDATION_COLUMNS = [
  'Validation Status',
  'Validation Code',
  'Domain Type',
  'Role Account',
  'Duplicate',
  'Valid Email',
];

function rowsOf(text: string): string[][] {
  return Papa.parse<string[]>(text, { skipEmptyLines: true }).data;
}

describe('list services in the desktop app', () => {
  let browser: Browser;
  let app: RunningApp;
  let page: Page;
  const home = freshHome();
  /** A list of the demo's people (email, names, street, ZIP) and one stranger: header, then rows. */
  let list: string;
  let knownPeople = 0;

  beforeAll(async () => {
    // Reference data in the app home's service folder before the app starts, and the same people as CSV.
    const csvDir = join(home.path, 'demo-csv');
    mkdirSync(csvDir);
    const [loaded, written] = await Promise.all([
      runCli([
        'data',
        'demo',
        '--people',
        String(PEOPLE),
        '--seed',
        String(SEED),
        '--data-dir',
        join(home.path, 'service'),
      ]),
      runCli(['data', 'demo', '--people', String(PEOPLE), '--seed', String(SEED), '--csv', csvDir]),
    ]);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(written.code, written.stderr).toBe(0);
    const [header, ...people] = rowsOf(readFileSync(join(csvDir, 'people.csv'), 'utf8'));
    const at = (name: string) => header.indexOf(name);
    const withEmail = people.filter((person) => person[at('email')] !== '');
    knownPeople = withEmail.length;
    // "Family Name" and "Postcode" are no header synonyms the service knows: the mapping names them.
    list = join(home.path, 'leads.csv');
    writeFileSync(
      list,
      [
        'Email,First Name,Family Name,Address,Postcode',
        ...withEmail.map((person) =>
          ['email', 'first name', 'last name', 'street', 'zip'].map((name) => person[at(name)]).join(','),
        ),
        'stranger@example.com,No,Body,1 Nowhere Rd,99999',
      ].join('\n') + '\n',
    );
    [browser, app] = await Promise.all([launchChromium(), startApp(home.path)]);
    ({ page } = await openApp(browser, app));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    home.remove();
  });

  it('runs email intelligence: the match report is shown and the results carry its columns', async () => {
    const newJob = new NewJobPage(page);
    await newJob.addList(list);
    // The embedded service allows every list service; Validation is chosen by default.
    for (const title of ['Validation', 'Email intelligence', 'Email append', 'Alternate email append'])
      await newJob.service(title).waitFor();
    expect(await newJob.service('Validation').isChecked()).toBe(true);
    expect(await newJob.service('Email intelligence').isChecked()).toBe(false);
    await newJob.roleSelect('Family Name').selectOption('last_name');
    await newJob.roleSelect('Postcode').selectOption('zip');
    await newJob.chooseServices(['Validation', 'Email intelligence']);
    await newJob.startCleaning();

    const results = new ResultsPage(page);
    await results.waitFor();
    const report = results.matchReport('Email intelligence');
    await expect.poll(() => report.textContent()).toMatch(/Data was found for \d+ fields/);
    const matches = await results.table('Email intelligence matches');
    // Every known person is matched by address; the stranger is not.
    expect(matches.Age).toBeGreaterThan(0);
    expect(matches.Age).toBeLessThanOrEqual(knownPeople);
    expect(await report.textContent()).toContain(`of ${knownPeople + 1} records`);
    // Validation's breakdown is there too.
    expect((await results.summary()).Rows).toBe(knownPeople + 1);

    const all = await results.export('All rows with results');
    const [header, ...rows] = rowsOf(all.text);
    expect(header.slice(0, 5 + VALIDATION_COLUMNS.length)).toEqual([
      'Email',
      'First Name',
      'Family Name',
      'Address',
      'Postcode',
      ...VALIDATION_COLUMNS,
    ]);
    const appended = header.slice(5 + VALIDATION_COLUMNS.length);
    for (const field of INTELLIGENCE_FIELDS.filter((name) => name !== 'interests'))
      expect(appended).toContain(field);
    expect(appended).toContain('interests.travel');
    const age = header.indexOf('age');
    expect(rows.filter((row) => row[age] !== '').length).toBe(matches.Age);
    expect(rows.at(-1)?.[age]).toBe('');
  });

  it('keeps a report-only job awaiting purchase with its counts, then buys only the fields chosen', async () => {
    const newJob = new NewJobPage(page);
    await newJob.open();
    await newJob.addList(list);
    // The same header: the mapping used last time comes back.
    expect(await newJob.roles()).toEqual(['email', 'first_name', 'last_name', 'street', 'zip']);
    await newJob.chooseServices(['Validation', 'Email intelligence', 'Email append']);
    await newJob.reportOnly().check();
    await newJob.startCleaning();

    const purchase = new PurchasePage(page);
    await purchase.waitFor();
    await purchase.status().waitFor();
    const matches = await new ResultsPage(page).table('Email intelligence matches');
    expect(matches.Age).toBeGreaterThan(0);
    const append = await new ResultsPage(page).table('Email append matches');
    expect(append.Individual).toBeGreaterThan(0);
    const offered = await purchase.offered();
    expect(offered).toContain(`Age · ${matches.Age} records`);
    expect(offered.some((label) => label.startsWith('Email append ·'))).toBe(true);

    // The job survives a restart, awaiting purchase in History.
    await page.context().close();
    await app.stop();
    app = await startApp(home.path);
    ({ page } = await openApp(browser, app));
    const history = new HistoryPage(page);
    await history.open();
    await expect.poll(() => history.count().textContent()).toBe('2 jobs');
    await expect.poll(() => history.grid().getByText('Awaiting purchase', { exact: true }).count()).toBe(1);
    await history.openJob('leads.csv');
    const again = new PurchasePage(page);
    await again.waitFor();
    expect((await new ResultsPage(page).table('Email intelligence matches')).Age).toBe(matches.Age);

    await again.buy(['Age', 'Gender', 'Email append'], 'Individual matches only');
    const results = new ResultsPage(page);
    await results.waitFor();
    await expect
      .poll(() => page.getByText(/^Bought after the match report/).textContent())
      .toContain('Age, Gender, Email append');
    // The match reports stay on Results.
    expect((await results.table('Email intelligence matches')).Age).toBe(matches.Age);
    const all = await results.export('All rows with results');
    const [header, ...rows] = rowsOf(all.text);
    expect(header).toEqual([
      'Email',
      'First Name',
      'Family Name',
      'Address',
      'Postcode',
      ...VALIDATION_COLUMNS,
      'age',
      'gender',
      'Appended Email',
      'Email Match Type',
    ]);
    expect(rows.filter((row) => row[header.indexOf('age')] !== '').length).toBe(matches.Age);
    // Individual matches only were bought.
    const types = new Set(rows.map((row) => row[header.indexOf('Email Match Type')]));
    expect(types.has('Household')).toBe(false);
    expect(types.has('Individual')).toBe(true);

    // History keeps the finished job with its match reports.
    await history.open();
    await expect.poll(() => history.grid().getByText('Completed', { exact: true }).count()).toBe(2);
    await history.openJob('leads.csv');
    await results.waitFor();
    expect((await results.table('Email append matches')).Individual).toBe(append.Individual);
    expect((await results.table('Email intelligence matches')).Age).toBe(matches.Age);
  });
});
