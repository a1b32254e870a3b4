// The New job screen: adding a list, reading and changing the mapping, starting.
import type { Locator, Page } from 'playwright-core';

export class NewJobPage {
  constructor(readonly page: Page) {}

  async open(): Promise<void> {
    await this.page.getByRole('button', { name: /^New job/ }).click();
    await this.page.getByRole('heading', { name: 'New job', level: 1 }).waitFor();
  }

  /** "Add list" and the file chooser it opens. */
  async addList(path: string): Promise<void> {
    const chooser = this.page.waitForEvent('filechooser');
    await this.page.getByRole('button', { name: 'Add list' }).click();
    await (await chooser).setFiles(path);
    await this.page.getByRole('heading', { name: 'Map the columns' }).waitFor();
  }

  roleSelect(columnName: string): Locator {
    return this.page.getByRole('combobox', { name: `Role of column “${columnName}”` });
  }

  /** The role chosen for each column, in order. */
  async roles(): Promise<string[]> {
    const selects = this.page.getByRole('combobox', { name: /^Role of column/ });
    return selects.evaluateAll((elements) => elements.map((element) => (element as HTMLSelectElement).value));
  }

  async columnNames(): Promise<string[]> {
    const selects = this.page.getByRole('combobox', { name: /^Role of column/ });
    return selects.evaluateAll((elements) =>
      elements.map((element) => /“(.*)”/.exec(element.getAttribute('aria-label') ?? '')?.[1] ?? ''),
    );
  }

  headerCheckbox(): Locator {
    return this.page.getByRole('checkbox', { name: 'First row is a header' });
  }

  delimiterSelect(): Locator {
    return this.page.getByRole('combobox', { name: 'Delimiter' });
  }

  warnings(): Locator {
    return this.page.getByRole('region', { name: 'Warnings' });
  }

  /** The pre-check figures once they are in (`timeout`: for a big file's, in ms). */
  async precheck(timeout?: number): Promise<Record<string, string>> {
    const region = this.page.getByRole('region', { name: 'Before sending' });
    await region.getByText('Rows to send').waitFor(timeout !== undefined ? { timeout } : {});
    return region
      .locator('dl div')
      .evaluateAll((items) =>
        Object.fromEntries(
          items.map((item) => [
            item.querySelector('dt')?.textContent ?? '',
            item.querySelector('dd')?.textContent ?? '',
          ]),
        ),
      );
  }

  /** A list service's checkbox ("Validation", "Email intelligence", …), offered when the connection allows it. */
  service(title: string): Locator {
    return this.page
      .getByRole('group', { name: 'Services', exact: true })
      .getByRole('checkbox', { name: title, exact: true });
  }

  /** Ticks exactly these services. */
  async chooseServices(titles: readonly string[]): Promise<void> {
    const boxes = this.page.getByRole('group', { name: 'Services', exact: true }).getByRole('checkbox');
    for (const box of await boxes.all()) {
      const name = (await box.evaluate((element) => element.parentElement?.textContent ?? '')).trim();
      await box.setChecked(titles.includes(name));
    }
  }

  /** "Split into N parts of up to … rows (one job each)", offered for a file over the row limit. */
  splitOption(): Locator {
    return this.page.getByRole('checkbox', { name: /^Split into/ });
  }

  /**
   * From now on, records every row count the mapper gives as an estimate ("about N rows") and every sentence
   * of the page about the row limit (the split warning, the split option), as each first appears: a
   * MutationObserver sees what was shown however briefly. Read them with `rowWordsSeen`.
   */
  async recordRowWords(): Promise<void> {
    await this.page.evaluate(() => {
      const seen = { estimates: [] as string[], limit: [] as string[] };
      (window as unknown as { __rowWords: typeof seen }).__rowWords = seen;
      const patterns = [
        [/about ([\d,]+) rows?/gi, seen.estimates],
        [
          /[\d,]+ rows?: the service takes at most [^.]*\.[^.]*\.|Split into \d+ parts[^)]*\)|split the file/gi,
          seen.limit,
        ],
      ] as const;
      const look = () => {
        const text = document.body.textContent ?? '';
        for (const [pattern, into] of patterns)
          for (const match of text.matchAll(pattern)) if (!into.includes(match[0])) into.push(match[0]);
      };
      look();
      new MutationObserver(look).observe(document.body, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
  }

  async rowWordsSeen(): Promise<{ estimates: string[]; limit: string[] }> {
    return this.page.evaluate(
      () => (window as unknown as { __rowWords: { estimates: string[]; limit: string[] } }).__rowWords,
    );
  }

  reportOnly(): Locator {
    return this.page.getByRole('checkbox', { name: /^Report only/ });
  }

  startButton(): Locator {
    return this.page.getByRole('button', { name: 'Start cleaning' });
  }

  /**
   * What Start cleaning is described by (its aria-describedby): the words of a list with more rows than the
   * key has queries left (issue #29); null when nothing describes it.
   */
  async startDescription(): Promise<string | null> {
    const ids = await this.startButton().getAttribute('aria-describedby');
    if (!ids) return null;
    const texts = await Promise.all(
      ids.split(/\s+/).map((id) => this.page.locator(`[id="${id}"]`).textContent()),
    );
    return texts.join(' ');
  }

  async startCleaning(): Promise<void> {
    await this.page.getByRole('button', { name: 'Start cleaning' }).click();
  }
}
