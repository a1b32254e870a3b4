// The Connection screen's Checks setting (issue #11): the radio group named Checks, the network check beside
// it, the mailbox check settings and the SOCKS5 proxy.
import type { Locator, Page } from 'playwright-core';

export type ChecksTitle = 'Automatic' | 'Offline only' | 'Domains (DNS)' | 'Mailboxes (SMTP)';

export class ConnectionPage {
  constructor(readonly page: Page) {}

  async open(): Promise<void> {
    await this.page.keyboard.press('Control+k');
    await this.page.getByRole('heading', { name: 'Connection', level: 1 }).waitFor();
    await this.checksGroup().waitFor();
  }

  checksGroup(): Locator {
    return this.page.getByRole('radiogroup', { name: 'Checks' });
  }

  checksRadio(title: ChecksTitle): Locator {
    const escaped = title.replace(/[()]/g, '\\$&');
    return this.checksGroup().getByRole('radio', { name: new RegExp(`^${escaped}`) });
  }

  /** Chooses a level and waits until the setting is stored (the radio checked) and the network checked. */
  async chooseChecks(title: ChecksTitle): Promise<void> {
    await this.checksRadio(title).check();
    await this.page
      .getByRole('status')
      .filter({ hasText: `Checks: ${title}.` })
      .waitFor();
    await this.waitForNetworkCheck();
  }

  networkCheck(): Locator {
    return this.page.getByRole('status', { name: 'Network check' });
  }

  async waitForNetworkCheck(): Promise<string> {
    const status = this.networkCheck();
    await status.filter({ hasNotText: /Checking the network|not been checked/ }).waitFor();
    return (await status.textContent()) ?? '';
  }
}
