// The sidebar: the main navigation, the jobs running and the connection's status.
import type { Locator, Page } from 'playwright-core';

export class Sidebar {
  constructor(readonly page: Page) {}

  /** "Local service: running (mailbox checks)", "Provider: host", … */
  connectionStatus(): Locator {
    return this.page.getByRole('status', { name: 'Connection status' });
  }
}
