// The Results screen: its figures, the preview of a status's rows, and exports (downloads in browser mode).
import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';

function toNumber(text: string): number {
  return Number(text.replace(/[^\d]/g, ''));
}

export class ResultsPage {
  constructor(readonly page: Page) {}

  async waitFor(): Promise<void> {
    await this.page
      .getByRole('heading', { name: 'Results', level: 1 })
      .waitFor({ timeout: 60_000 })
      .catch(async (error: unknown) => {
        // Say what the app showed instead (a failed job, a dialog, a message) rather than only "timeout".
        const shown = await this.page
          .locator('main')
          .innerText({ timeout: 2_000 })
          .catch(() => '(no main)');
        throw new Error(`${String(error)}\nThe app showed:\n${shown.slice(0, 2_000)}`);
      });
  }

  /** Rows per label of one of the bar tables ("Statuses", "Invalid categories", "Domain types", "Status codes"). */
  async table(name: string): Promise<Record<string, number>> {
    const table = this.page.getByRole('table', { name });
    // The numbers show once counted from the results file.
    await table.waitFor({ timeout: 60_000 });
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

  /** The note on Results of a job that ran offline. */
  offlineNote(): Locator {
    return this.page.getByRole('complementary', { name: 'About offline checks' });
  }

  async summary(): Promise<Record<string, number>> {
    await this.page.locator('dl[aria-label="Summary"]').waitFor({ timeout: 60_000 });
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

  /** The status-code table's rows: (code, status) pairs with their rows. */
  async codeRows(): Promise<{ code: number; status: string; rows: number }[]> {
    await this.page.getByRole('table', { name: 'Status codes' }).waitFor({ timeout: 60_000 });
    return this.page
      .getByRole('table', { name: 'Status codes' })
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => ({
          code: Number(tr.querySelector('th')?.textContent ?? ''),
          status: tr.querySelector('.badge')?.textContent ?? '',
          rows: Number((tr.querySelector('td.num')?.textContent ?? '').replace(/[^\d]/g, '')),
        })),
      );
  }

  /** The drill-down's row view (a region named after its title). */
  rowsView(title: string): Locator {
    return this.page.getByRole('region', {
      name: `Table of ${title.charAt(0).toLowerCase()}${title.slice(1)}`,
    });
  }

  /** Opens a drill-down by its control's name and answers its row view once rows show. */
  async drill(control: string | RegExp, title: string): Promise<Locator> {
    await this.page.getByRole('button', { name: control }).click();
    const view = this.rowsView(title);
    // The first row's cells, not the one-cell "Reading…" row drawn while its page is read.
    await view.locator('tbody tr:not(.spacer)').first().locator('td').nth(1).waitFor();
    return view;
  }

  /** The rows the view has drawn now: their place (aria-rowindex: 2 is the first row) and cells. */
  async drawnRows(view: Locator): Promise<{ index: number; cells: string[] }[]> {
    return view.locator('tbody tr:not(.spacer)').evaluateAll((trs) =>
      trs.map((tr) => ({
        index: Number(tr.getAttribute('aria-rowindex')),
        cells: [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
      })),
    );
  }

  async previewStatus(label: string): Promise<string[][]> {
    const view = await this.drill(new RegExp(`^${label}: show`), `Rows with status ${label}`);
    return (await this.drawnRows(view)).map((row) => row.cells);
  }

  /** "Export these rows" of the open drill-down: the downloaded file's text. */
  async exportTheseRows(): Promise<{ name: string; text: string }> {
    const download = this.page.waitForEvent('download');
    await this.page.getByRole('button', { name: 'Export these rows' }).click();
    const file = await download;
    const path = await file.path();
    await this.page
      .getByRole('status')
      .filter({ hasText: /^Exported/ })
      .waitFor();
    return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8') };
  }

  /** Exports with the dialog's defaults (the kind and choices it opens with). */
  async exportDefault(): Promise<{ name: string; text: string }> {
    await this.page.getByRole('button', { name: 'Export', exact: true }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Export' });
    const download = this.page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Save export' }).click();
    const file = await download;
    const path = await file.path();
    await dialog.getByRole('status').filter({ hasText: 'Exported' }).waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8') };
  }

  /**
   * Exports the dialog's default kind under a bounce budget (issue 37): the checkbox, the percent typed, then
   * Save. Answers the downloaded file's text and the dialog's notice.
   */
  async exportWithBudget(percent: string): Promise<{ name: string; text: string; notice: string }> {
    await this.page.getByRole('button', { name: 'Export', exact: true }).click();
    const dialog = this.page.getByRole('dialog', { name: 'Export' });
    await dialog.getByRole('checkbox', { name: 'Keep the expected bounce rate under a budget' }).check();
    const budget = dialog.getByRole('spinbutton', { name: 'Keep the expected bounce rate under (%)' });
    if ((await budget.inputValue()) !== '2') throw new Error('The budget does not start at 2%.');
    await budget.fill(percent);
    const download = this.page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Save export' }).click();
    const file = await download;
    const path = await file.path();
    const status = dialog.getByRole('status').filter({ hasText: 'Exported' });
    await status.waitFor();
    const notice = (await status.innerText()).replace(/\s+/g, ' ').trim();
    await dialog.getByRole('button', { name: 'Close' }).click();
    return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8'), notice };
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
