// The mapper's edge cases in the real UI: no header row, two email columns, semicolons, a zip archive.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';
import {
  freshHome,
  launchChromium,
  openApp,
  ROOT,
  startApp,
  type RunningApp,
} from '../helpers/browserApp.js';

const LISTS = join(ROOT, 'test', 'fixtures', 'lists');

describe('the column mapper', () => {
  let browser: Browser;
  let app: RunningApp;
  let page: Page;
  const home = freshHome();

  beforeAll(async () => {
    [browser, app] = await Promise.all([launchChromium(), startApp(home.path)]);
    ({ page } = await openApp(browser, app));
  });
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    home.remove();
  });

  it('reads a file without a header row by position and marks the address column', async () => {
    const newJob = new NewJobPage(page);
    await newJob.addList(join(LISTS, 'no-header.csv'));
    expect(await newJob.headerCheckbox().isChecked()).toBe(false);
    expect(await newJob.columnNames()).toEqual(['Column 1', 'Column 2', 'Column 3']);
    expect(await newJob.roles()).toEqual(['email', 'ignore', 'ignore']);
    expect(await newJob.warnings().textContent()).toContain('no header row');
    // Every row is data: 4 rows to send, one of them fails the syntax check.
    expect(await newJob.precheck()).toMatchObject({
      'Rows to send': '4',
      'Invalid by the offline check': '1',
    });
    // Saying the first row is a header turns its cells into column names.
    await newJob.headerCheckbox().check();
    await expect.poll(() => newJob.columnNames()).toEqual(['jane.doe@example.com', 'Jane', 'Doe']);
    await newJob.headerCheckbox().uncheck();
    await expect.poll(() => newJob.columnNames()).toEqual(['Column 1', 'Column 2', 'Column 3']);
  });

  it('suggests one of two email columns, says so, and lets the user pick the other', async () => {
    const newJob = new NewJobPage(page);
    await newJob.open();
    await newJob.addList(join(LISTS, 'two-emails.csv'));
    expect(await newJob.roles()).toEqual(['full_name', 'email', 'ignore', 'ignore']);
    expect(await newJob.warnings().textContent()).toMatch(
      /2 columns hold email addresses \(“Work”, “Personal”\)/,
    );
    // Choosing the other column demotes the first: there is always one email column.
    await newJob.roleSelect('Personal').selectOption('email');
    expect(await newJob.roles()).toEqual(['full_name', 'ignore', 'email', 'ignore']);
    // One blank address (Ann Lee) is a row all the same; the typo domain is not a syntax error.
    expect(await newJob.precheck()).toMatchObject({ 'Rows to send': '4' });
    // Marking no column as Email disables starting.
    await newJob.roleSelect('Personal').selectOption('ignore');
    expect(await page.getByRole('button', { name: 'Start cleaning' }).isDisabled()).toBe(true);
    expect(await newJob.warnings().textContent()).toContain('No column is marked Email');
  });

  it('detects semicolons and reads localised header names by their contents', async () => {
    const newJob = new NewJobPage(page);
    await newJob.open();
    await newJob.addList(join(LISTS, 'semicolons.csv'));
    expect(await newJob.delimiterSelect().inputValue()).toBe(';');
    expect(await newJob.columnNames()).toEqual(['E-Mail', 'Vorname', 'Nachname', 'PLZ']);
    expect((await newJob.roles())[0]).toBe('email');
    // Read as commas instead, the file is one column and no email column is found by content.
    await newJob.delimiterSelect().selectOption(',');
    await expect.poll(() => newJob.columnNames()).toEqual(['E-Mail;Vorname;Nachname;PLZ']);
    await newJob.delimiterSelect().selectOption(';');
    await expect.poll(() => newJob.columnNames()).toHaveLength(4);
    expect(await newJob.precheck()).toMatchObject({
      'Rows to send': '3',
      'Invalid by the offline check': '1',
    });
  });

  it('opens a zip holding one list, cleans it, and exports from the zipped results', async () => {
    const zip = join(home.path, 'customers.zip');
    writeFileSync(
      zip,
      zipSync({
        'customers.csv': new TextEncoder().encode(
          'email,first name\njane.doe@example.com,Jane\nnot-an-address,Ann\ntemp@mailinator.com,Temp\n',
        ),
      }),
    );
    const newJob = new NewJobPage(page);
    await newJob.open();
    await newJob.addList(zip);
    await page.getByText(/customers\.zip \(holds customers\.csv\)/).waitFor();
    expect(await newJob.roles()).toEqual(['email', 'first_name']);
    await newJob.startCleaning();
    const results = new ResultsPage(page);
    await results.waitFor();
    expect(await results.table('Statuses')).toMatchObject({ Unknown: 1, Invalid: 1, Trap: 1 });
    const clean = await results.export(/^Clean/);
    expect(clean.name).toMatch(/\.csv$/);
    const lines = clean.text.trim().split('\n');
    expect(lines[0]).toBe(
      'email,first name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email,Original Email',
    );
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(['jane.doe@example.com']);
    // A custom set of statuses.
    const custom = await results.export('Custom set of statuses', ['Trap', 'Invalid']);
    expect(
      custom.text
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    ).toEqual(['not-an-address', 'temp@mailinator.com']);
  });
});
