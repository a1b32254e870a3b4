// The "Look up a person" screen: the way of looking up, its inputs, and the answer in words.
import type { Locator, Page } from 'playwright-core';

export class LookupPage {
  constructor(readonly page: Page) {}

  async open(): Promise<void> {
    await this.page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('button', { name: /^Look up a person/ })
      .click();
    await this.page.getByRole('heading', { name: 'Look up a person', level: 1 }).waitFor();
  }

  async byEmail(email: string): Promise<void> {
    await this.page.getByRole('radio', { name: 'Email address' }).check();
    await this.page.getByRole('textbox', { name: 'Email address' }).fill(email);
    await this.submit();
  }

  async byHash(hash: string): Promise<void> {
    await this.page.getByRole('radio', { name: /^Hash/ }).check();
    await this.page.getByRole('textbox', { name: 'MD5 or SHA-1 hash' }).fill(hash);
    await this.submit();
  }

  async byPostal(
    fields: Readonly<Record<'First name' | 'Last name' | 'Street' | 'ZIP code', string>>,
  ): Promise<void> {
    await this.page.getByRole('radio', { name: 'Name and postal address' }).check();
    for (const [label, value] of Object.entries(fields))
      await this.page.getByRole('textbox', { name: label, exact: true }).fill(value);
    await this.submit();
  }

  async submit(): Promise<void> {
    await this.page.getByRole('button', { name: 'Look up', exact: true }).click();
  }

  /** The answer region, headed by whom it is about. */
  answer(about: string | RegExp): Locator {
    return this.page.getByRole('region', { name: about });
  }

  error(): Locator {
    return this.page.getByRole('alert');
  }

  /** "Import people file" (or activity, bounces) and the file chooser it opens (browser mode). */
  async importFile(kind: 'people' | 'activity' | 'bounces', path: string): Promise<void> {
    const chooser = this.page.waitForEvent('filechooser');
    await this.page.getByRole('button', { name: `Import ${kind} file` }).click();
    await (await chooser).setFiles(path);
  }

  /** The outcome of the last import: counts, rejected rows by line, Save rejected rows. */
  importReport(): Locator {
    return this.page.getByRole('region', { name: 'Import report' });
  }
}
