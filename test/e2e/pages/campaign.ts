// A job's Campaign results (on its Results): choosing or dropping the campaign's files, reading them, and the
// report's figures, tables and chart.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Locator, Page } from 'playwright-core';

export class CampaignResultsPage {
  constructor(readonly page: Page) {}

  region(): Locator {
    return this.page.getByRole('region', { name: 'Campaign results', exact: true });
  }

  /** "Choose bounce export" or "Choose sent list (optional)", and the file chooser it opens. */
  async choose(button: 'Choose bounce export' | 'Choose sent list (optional)', path: string): Promise<void> {
    const chooser = this.page.waitForEvent('filechooser');
    await this.region().getByRole('button', { name: button, exact: true }).click();
    await (await chooser).setFiles(path);
    await this.region().getByText(basename(path), { exact: true }).waitFor();
  }

  /** Drops the file on the drop zone of `button` (a drag from the desktop: a DataTransfer holding it). */
  async drop(button: 'Choose bounce export' | 'Choose sent list (optional)', path: string): Promise<void> {
    const zone = this.region()
      .locator('.drop-zone')
      .filter({ has: this.page.getByRole('button', { name: button, exact: true }) });
    const dataTransfer = await this.page.evaluateHandle(
      ({ name, text }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], name, { type: 'text/csv' }));
        return transfer;
      },
      { name: basename(path), text: readFileSync(path, 'utf8') },
    );
    await zone.dispatchEvent('dragover', { dataTransfer });
    await zone.dispatchEvent('drop', { dataTransfer });
    await this.region().getByText(basename(path), { exact: true }).waitFor();
  }

  /** "Read campaign results", then waits for what it should end in: the report read, or an error in words. */
  async read(outcome: 'read' | 'error'): Promise<void> {
    await this.region().getByRole('button', { name: 'Read campaign results' }).click();
    await (
      outcome === 'read' ? this.region().getByText('Campaign results read', { exact: false }) : this.error()
    )
      .waitFor({ timeout: 60_000 })
      .catch(async (error: unknown) => {
        // Say what the region showed instead (an error, the work still under way) rather than only "timeout".
        const shown = await this.region()
          .innerText({ timeout: 2_000 })
          .catch(() => '(no region)');
        throw new Error(`${String(error)}\nCampaign results showed:\n${shown.slice(0, 2_000)}`);
      });
  }

  error(): Locator {
    return this.region().getByRole('alert');
  }

  report(): Locator {
    return this.region().getByRole('region', { name: 'How right the job was' });
  }

  /** The report's figures: Rows mailed, Hard bounces, … as shown. */
  async figures(): Promise<Record<string, string>> {
    const list = this.region().locator('dl[aria-label="Campaign figures"]');
    await list.waitFor();
    const pairs = await list
      .locator('div')
      .evaluateAll((divs) =>
        divs.map(
          (div) =>
            [div.querySelector('dt')?.textContent ?? '', div.querySelector('dd')?.textContent ?? ''] as const,
        ),
      );
    return Object.fromEntries(pairs);
  }

  /** A table's body rows, cell texts (its row header first). */
  async tableRows(name: string): Promise<string[][]> {
    return this.region()
      .getByRole('table', { name, exact: true })
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('th, td')].map((cell) => (cell.textContent ?? '').trim())),
      );
  }

  /** A chart: the figure named by its caption, and its image (named by its figures in words). */
  chart(title: string): { figure: Locator; image: Locator } {
    const figure = this.region().getByRole('figure', { name: title, exact: true });
    return { figure, image: figure.getByRole('img') };
  }
}
