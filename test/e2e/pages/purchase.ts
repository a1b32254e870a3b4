// A report-only job awaiting purchase: its match reports, and the "Buy results" dialog (fields, match type).
import type { Locator, Page } from 'playwright-core';

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class PurchasePage {
  constructor(readonly page: Page) {}

  async waitFor(): Promise<void> {
    await this.page.getByRole('heading', { name: 'Match reports', level: 1 }).waitFor({ timeout: 60_000 });
  }

  /** The sentence that says nothing is bought yet. */
  status(): Locator {
    return this.page.getByRole('status').filter({ hasText: 'Nothing is bought yet' });
  }

  /** Opens "Buy results", ticks exactly `fields` (by their labels), picks the match type and buys. */
  async buy(fields: readonly string[], matchType?: string | RegExp): Promise<void> {
    await this.page.getByRole('button', { name: 'Buy results' }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Buy results' });
    const group = dialog.getByRole('group', { name: 'Fields to buy' });
    for (const box of await group.getByRole('checkbox').all()) await box.uncheck();
    for (const field of fields)
      await group.getByRole('checkbox', { name: new RegExp(`^${escape(field)} ·`) }).check();
    if (matchType !== undefined) await dialog.getByRole('radio', { name: matchType }).check();
    await dialog.getByRole('button', { name: 'Buy', exact: true }).click();
  }

  /** The labels offered in the dialog, with their record counts. */
  async offered(): Promise<string[]> {
    await this.page.getByRole('button', { name: 'Buy results' }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Buy results' });
    const labels = await dialog
      .getByRole('group', { name: 'Fields to buy' })
      .locator('label')
      .evaluateAll((items) => items.map((item) => item.textContent ?? ''));
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    return labels;
  }
}
