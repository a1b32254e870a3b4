// The service's limit of 1,000,000 rows per list in the mapper (issue #23): said from the exact count only.
// The files are generated here: their first 256 KB (what the mapper's estimate reads) holds short rows and
// the rest longer ones, so the estimate overshoots the limit by far. One of exactly 1,000,000 records shows
// no split warning from first paint to Start cleaning; one of 1,000,001 shows it, with its exact count.
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NewJobPage } from './pages/newJob.js';
import { freshHome, launchChromium, openApp, startApp, type RunningApp } from '../helpers/browserApp.js';

/** Rows of the first 256 KB and more: ~13 bytes each, where the rest take ~27. */
const SHORT_ROWS = 25_000;
/** The exact count and its figures take a while for a million rows on a busy machine. */
const COUNTED_MS = 120_000;

/** Writes a list of `records` data rows under a header, streamed a batch at a time. */
async function writeList(path: string, records: number): Promise<void> {
  const out = createWriteStream(path);
  out.write('email,name\n');
  for (let start = 0; start < records; start += 10_000) {
    let batch = '';
    for (let i = start; i < Math.min(records, start + 10_000); i++)
      batch += i < SHORT_ROWS ? `a${i}@x.io,A\n` : `person${i}@example.org,Name\n`;
    if (!out.write(batch)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

const estimateOf = (words: string) => Number(/([\d,]+)/.exec(words)![1].replace(/,/g, ''));

describe('the row limit in the mapper', () => {
  let browser: Browser;
  let app: RunningApp;
  let dir: string;
  const home = freshHome();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailsieve-limit-'));
    [browser, app] = await Promise.all([launchChromium(), startApp(home.path)]);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    home.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows no split warning for exactly 1,000,000 rows, from first paint to Start cleaning', async () => {
    const path = join(dir, 'million.csv');
    await writeList(path, 1_000_000);
    const { context, page } = await openApp(browser, app);
    try {
      const newJob = new NewJobPage(page);
      await newJob.recordRowWords();
      await newJob.addList(path);
      // First paint: the estimate from the short rows is over the limit, and nothing warns of it.
      expect(await newJob.splitOption().count()).toBe(0);
      expect(await page.getByText(/rows per list/).count()).toBe(0);

      // The exact count: every figure is 1,000,000, and still no warning and no split option.
      expect(await newJob.precheck(COUNTED_MS)).toEqual({
        'Rows to send': '1,000,000',
        'Invalid by the offline check': '0',
        Duplicates: '0',
      });
      await page.getByText(/^1,000,000 rows · 1,000,000 to send · 0 invalid · 0 duplicates$/).waitFor();
      expect(await newJob.splitOption().count()).toBe(0);
      expect(await page.getByText(/rows per list/).count()).toBe(0);

      await newJob.startCleaning();
      await page.getByRole('heading', { name: 'Progress', level: 1 }).waitFor({ timeout: COUNTED_MS });
      const seen = await newJob.rowWordsSeen();
      // The premise: the mapper did show an estimate over the limit before the exact count came.
      expect(seen.estimates.map(estimateOf).some((rows) => rows > 1_000_000)).toBe(true);
      // And not one word of the limit was ever on screen.
      expect(seen.limit).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('warns of 1,000,001 rows with the exact count, and never from the estimate', async () => {
    const path = join(dir, 'million-and-one.csv');
    await writeList(path, 1_000_001);
    const { context, page } = await openApp(browser, app);
    try {
      const newJob = new NewJobPage(page);
      await newJob.recordRowWords();
      await newJob.addList(path);
      expect(await newJob.precheck(COUNTED_MS)).toMatchObject({ 'Rows to send': '1,000,001', Parts: '2' });
      const warning =
        '1,000,001 rows: the service takes at most 1,000,000 rows per list. Split the file into 2 parts to send every row.';
      await newJob.warnings().getByText(warning).waitFor();
      expect(await newJob.splitOption().isChecked()).toBe(true);
      expect(await newJob.splitOption().evaluate((box) => box.parentElement?.textContent)).toBe(
        'Split into 2 parts of up to 1,000,000 rows (one job each)',
      );
      const seen = await newJob.rowWordsSeen();
      expect(seen.estimates.map(estimateOf).some((rows) => rows > 1_000_001)).toBe(true);
      // Only ever the exact count's words.
      expect(seen.limit.sort()).toEqual(
        [warning, 'Split into 2 parts of up to 1,000,000 rows (one job each)'].sort(),
      );
    } finally {
      await context.close();
    }
  });
});
