// The Progress screen of a job under way: its heading and its facts (Status, Rate, Time left, Checks, …).
import type { Locator, Page } from 'playwright-core';

export class ProgressPage {
  constructor(readonly page: Page) {}

  heading(): Locator {
    return this.page.getByRole('heading', { name: 'Progress', level: 1 });
  }

  /** The value beside a fact's term ("Checks" → "mailbox checks"). */
  fact(term: string): Locator {
    return this.page
      .locator('dl > div')
      .filter({ has: this.page.getByRole('term').filter({ hasText: new RegExp(`^${term}$`) }) })
      .getByRole('definition');
  }
}
