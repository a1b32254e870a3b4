// "Changes since the last run" on a job's Results (issue 37): the section, its headline, the changed rows of
// the page shown, the pager and "Export changed rows" (a download in browser mode).
import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';

export class ChangesSection {
  constructor(readonly page: Page) {}

  region(): Locator {
    return this.page.getByRole('region', { name: 'Changes since the last run' });
  }

  async waitFor(): Promise<void> {
    await this.region().waitFor({ timeout: 60_000 });
  }

  /** The headline: "N rows changed status since job J (date). M addresses … were compared." */
  async headline(): Promise<string> {
    return (await this.region().locator('p').first().textContent()) ?? '';
  }

  /** The changed rows shown: row, address, before, after, evidence before, evidence after. */
  async rows(): Promise<string[][]> {
    return this.region()
      .getByRole('table', { name: 'Changed rows' })
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].map((cell) => (cell.textContent ?? '').trim())),
      );
  }

  /** "Rows 1–50 of 63". */
  async shown(): Promise<string> {
    return (await this.region().getByRole('status', { name: 'Changed rows shown' }).textContent()) ?? '';
  }

  async next(): Promise<void> {
    await this.region().getByRole('button', { name: 'Next rows' }).click();
  }

  async previous(): Promise<void> {
    await this.region().getByRole('button', { name: 'Previous rows' }).click();
  }

  /** "Export changed rows": the downloaded file's name and text. */
  async export(): Promise<{ name: string; text: string }> {
    const download = this.page.waitForEvent('download');
    await this.region().getByRole('button', { name: 'Export changed rows' }).click();
    const file = await download;
    const path = await file.path();
    await this.region()
      .getByRole('status')
      .filter({ hasText: /^Exported/ })
      .waitFor();
    return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8') };
  }
}
