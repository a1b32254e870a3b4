// Issue #12 in browser mode: the Export dialog's formats (.xlsx read back with exceljs) and its zip of every
// status (one file per status, read with fflate), and the printable summary with the spec's match report and
// chart data CSVs, all against the job's own results file (the "All rows" export).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { unzipSync } from 'fflate';
import Papa from 'papaparse';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshHome, launchChromium, openApp, ROOT, startApp } from '../helpers/browserApp.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';

const SAMPLE = join(ROOT, 'test', 'fixtures', 'lists', 'sample.csv');

const parse = (text: string) => Papa.parse<string[]>(text, { skipEmptyLines: true }).data;

/** Saves an export from the dialog with a format; answers the downloaded bytes and name. */
async function exportWith(page: Page, option: string | RegExp, format?: string) {
  await page.getByRole('button', { name: 'Export', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Export' });
  await dialog.getByRole('radio', { name: option }).check();
  if (format) await dialog.getByLabel('File format').selectOption(format);
  const download = page.waitForEvent('download');
  await dialog.getByRole('button', { name: 'Save export' }).click();
  const file = await download;
  const bytes = readFileSync(await file.path());
  const status = dialog.getByRole('status').filter({ hasText: 'Exported' });
  await status.waitFor();
  const words = (await status.textContent()) ?? '';
  await dialog.getByRole('button', { name: 'Close' }).click();
  return { name: file.suggestedFilename(), bytes, words };
}

async function download(page: Page, button: string) {
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: button }).click();
  const file = await download;
  return { name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
}

describe('exports and the printable summary in browser mode', () => {
  let browser: Browser;
  const home = freshHome();
  let app: Awaited<ReturnType<typeof startApp>>;
  let page: Page;
  let all: string[][] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    app = await startApp(home.path);
    ({ page } = await openApp(browser, app));
    const newJob = new NewJobPage(page);
    await newJob.addList(SAMPLE);
    await newJob.startCleaning();
    await new ResultsPage(page).waitFor();
    const results = await exportWith(page, 'All rows with results');
    all = parse(results.bytes.toString('utf8'));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    home.remove();
  });

  it('exports .xlsx whose rows equal the CSV export of the same choice, and says the checks level', async () => {
    const csv = await exportWith(page, 'Clean (all but invalid and risky)');
    const xlsx = await exportWith(page, 'Clean (all but invalid and risky)', 'xlsx');
    expect(xlsx.name).toMatch(/\.xlsx$/);
    expect(xlsx.words).toMatch(/Checks: offline checks/);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.bytes as unknown as ArrayBuffer);
    const rows: string[][] = [];
    const sheet = workbook.worksheets[0];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      for (let i = 1; i <= sheet.columnCount; i++) cells.push(row.getCell(i).text);
      rows.push(cells);
    });
    const expected = parse(csv.bytes.toString('utf8'));
    expect(rows.length).toBeGreaterThan(1);
    expect(rows).toEqual(expected);
  });

  it('exports a zip of every status: one file per status the results hold, each with its rows', async () => {
    const zip = await exportWith(page, 'Zip of every status (one file per status)');
    expect(zip.name).toMatch(/-statuses\.zip$/);
    const files = unzipSync(new Uint8Array(zip.bytes));
    const [header, ...rows] = all;
    const statusAt = header.lastIndexOf('Validation Status');
    const statuses = [...new Set(rows.map((row) => row[statusAt].toLowerCase()))].sort();
    expect(Object.keys(files).sort()).toEqual(statuses.map((status) => `sample-${status}.csv`));
    for (const status of statuses) {
      const [fileHeader, ...fileRows] = parse(new TextDecoder().decode(files[`sample-${status}.csv`]));
      expect(fileHeader.slice(0, header.length)).toEqual(header);
      expect(fileRows).toHaveLength(rows.filter((row) => row[statusAt].toLowerCase() === status).length);
      expect(fileRows.every((row) => row[statusAt].toLowerCase() === status)).toBe(true);
    }
  });

  it('shows a printable summary and saves the match report and chart data CSVs', async () => {
    await page.getByRole('button', { name: 'Summary', exact: true }).click();
    await page.getByRole('heading', { name: 'Summary of sample.csv', level: 1 }).waitFor();
    const summary = page.getByRole('article');
    expect(await summary.textContent()).toContain('offline checks');
    const [header, ...rows] = all;
    const statusAt = header.lastIndexOf('Validation Status');
    const codeAt = header.lastIndexOf('Validation Code');
    // The code table holds every code of the results, with its meaning.
    const codeTable = page.getByRole('table', { name: 'Status codes' });
    for (const code of new Set(rows.map((row) => row[codeAt])))
      expect(
        await codeTable
          .getByRole('row')
          .filter({ hasText: new RegExp(`^${code}`) })
          .count(),
      ).toBe(1);

    const report = await download(page, 'Save match report CSV');
    expect(report.name).toBe('sample-match-report.csv');
    const [reportHeader, ...reportRows] = parse(report.text);
    expect(reportHeader).toEqual(['field', 'records matched', 'percent']);
    const safe = rows.filter((row) => ['valid', 'corrected'].includes(row[statusAt].toLowerCase())).length;
    expect(reportRows.find((row) => row[0] === 'Valid Email')?.[1]).toBe(String(safe));
    await page.getByRole('status').filter({ hasText: 'sample-match-report.csv' }).waitFor();

    const chart = await download(page, 'Save chart data CSV');
    const [chartHeader, ...chartRows] = parse(chart.text);
    expect(chartHeader).toEqual(['field', 'value', 'count']);
    for (const row of chartRows.filter(([field]) => field === 'Validation Code'))
      expect(rows.filter((r) => r[codeAt] === row[1]).length, row[1]).toBe(Number(row[2]));

    // Browser mode prints the page; printed, only the summary shows (no sidebar, no buttons).
    await page.evaluate(() => {
      (window as unknown as { printed: number }).printed = 0;
      window.print = () => void ((window as unknown as { printed: number }).printed += 1);
    });
    await page.getByRole('button', { name: 'Print summary' }).click();
    expect(await page.evaluate(() => (window as unknown as { printed: number }).printed)).toBe(1);
    await page.emulateMedia({ media: 'print' });
    expect(await page.getByRole('button', { name: 'Save chart data CSV' }).isVisible()).toBe(false);
    expect(await page.getByRole('heading', { name: 'Summary of sample.csv' }).isVisible()).toBe(true);
    await page.emulateMedia({ media: 'screen' });
  });

  it('offers the sheets of a two-sheet workbook, reads the first by default and the one chosen', async () => {
    const path = join(home.path, 'two-sheets.xlsx');
    const workbook = new ExcelJS.Workbook();
    const first = workbook.addWorksheet('Notes');
    first.addRow(['Email', 'Owner']);
    first.addRow(['first@sheet.example.com', 'sam']);
    first.addRow(['second@sheet.example.com', 'kim']);
    const second = workbook.addWorksheet('Contacts');
    second.addRow(['Email', 'Name']);
    for (let i = 0; i < 7; i++) second.addRow([`person${i}@example.com`, `Person ${i}`]);
    await workbook.xlsx.writeFile(path);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: /^New/ }).click();
    const newJob = new NewJobPage(page);
    await newJob.addList(path).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await page.locator('main').innerText()}`);
    });
    const sheet = page.getByRole('combobox', { name: 'Sheet' });
    expect(await sheet.inputValue()).toBe('Notes');
    expect(await sheet.locator('option').allTextContents()).toEqual(['Notes', 'Contacts']);
    expect(await newJob.columnNames()).toEqual(['Email', 'Owner']);
    await sheet.selectOption('Contacts');
    await expect.poll(() => newJob.columnNames()).toEqual(['Email', 'Name']);
    await expect.poll(async () => (await newJob.precheck())['Rows to send'], { timeout: 20_000 }).toBe('7');
    await newJob.startCleaning();
    await new ResultsPage(page).waitFor();
    const results = await exportWith(page, 'All rows with results');
    const [header, ...rows] = parse(results.bytes.toString('utf8'));
    expect(header.slice(0, 2)).toEqual(['Email', 'Name']);
    expect(rows.map((row) => row[0])).toEqual(Array.from({ length: 7 }, (_, i) => `person${i}@example.com`));
  }, 120_000);
});
