// The Results screen: its figures, the preview of a status's rows, and exports (downloads in browser mode).
import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';

function toNumber(text: string): number {
  return Number(text.replace(/[^\d]/g, ''));
}

export class ResultsPage {
  constructor(readonly page: Page) {}

  async waitFor(): Promise<void> {
    await this.page.getByRole('heading', { name: 'Results', level: 1 }).waitFor({ timeout: 60_000 });
  }

  /** Rows per label of one of the bar tables ("Statuses", "Invalid categories", "Domain types", "Status codes"). */
  async table(name: string): Promise<Record<string, number>> {
    const table = this.page.getByRole('table', { name });
    const rows = await table.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => {
        const header = tr.querySelector('th');
        const label = header?.querySelector('button')?.textContent ?? header?.firstChild?.textContent ?? '';
        const numbers = [...tr.querySelectorAll('td.num')].map((td) => td.textContent ?? '');
        return [label.trim(), numbers[0] ?? ''] as const;
      }),
    );
    return Object.fromEntries(rows.map(([label, value]) => [label, toNumber(value)]));
  }

  /** A service's match report (the region headed by the service's title). */
  matchReport(title: string): Locator {
    return this.page.getByRole('region', { name: title, exact: true });
  }

  async summary(): Promise<Record<string, number>> {
    const pairs = await this.page
      .locator('dl[aria-label="Summary"] div')
      .evaluateAll((divs) =>
        divs.map(
          (div) =>
            [div.querySelector('dt')?.textContent ?? '', div.querySelector('dd')?.textContent ?? ''] as const,
        ),
      );
    return Object.fromEntries(pairs.map(([label, value]) => [label, toNumber(value)]));
  }

  async previewStatus(label: string): Promise<string[][]> {
    await this.page.getByRole('button', { name: new RegExp(`^${label}: show`) }).click();
    const region = this.page.getByRole('region', { name: `Table of rows with status ${label}` });
    await region.waitFor();
    return region
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
      );
  }

  /** Exports through the dialog and answers the downloaded file's text. */
  async export(option: string | RegExp, statuses: string[] = []): Promise<{ name: string; text: string }> {
    await this.page.getByRole('button', { name: 'Export', exact: true }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Export' });
    await dialog.getByRole('radio', { name: option }).check();
    for (const status of statuses) await dialog.getByRole('checkbox', { name: status, exact: true }).check();
    const download = this.page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Save export' }).click();
    const file = await download;
    const path = await file.path();
    await dialog.getByRole('status').filter({ hasText: 'Exported' }).waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8') };
  }
}
