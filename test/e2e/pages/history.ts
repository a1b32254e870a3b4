// The History screen: the virtualised job list, its search and filters.
import type { Locator, Page } from 'playwright-core';

export class HistoryPage {
  constructor(readonly page: Page) {}

  async open(): Promise<void> {
    await this.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('button', { name: /^History/ })
      .click();
    await this.page.getByRole('heading', { name: 'History', level: 1 }).waitFor();
  }

  grid(): Locator {
    return this.page.getByRole('grid', { name: 'Jobs' });
  }

  count(): Locator {
    return this.page.getByRole('status').filter({ hasText: /\d+ jobs?$/ });
  }

  async search(text: string): Promise<void> {
    await this.page.getByRole('searchbox', { name: 'Search history' }).fill(text);
  }

  async openJob(fileName: string): Promise<void> {
    await this.grid()
      .getByRole('button', { name: new RegExp(`^Open ${fileName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) })
      .first()
      .click();
  }

  /** The text of a job's cell under the column named `column` (the first job of that file name). */
  async cell(fileName: string, column: string): Promise<string> {
    const headers = await this.grid().getByRole('columnheader').allTextContents();
    const at = headers.findIndex((text) => text.replace(/[▲▼]/g, '').trim() === column);
    if (at < 0) throw new Error(`History has no column ${column} (${headers.join(', ')})`);
    const row = this.grid()
      .getByRole('row')
      .filter({
        has: this.page.getByRole('button', {
          name: new RegExp(`^Open ${fileName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
        }),
      })
      .first();
    return ((await row.getByRole('gridcell').nth(at).textContent()) ?? '').trim();
  }
}
