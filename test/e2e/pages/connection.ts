// The Connection screen's Checks setting (issue #11): the radio group named Checks, the network check beside
// it, the mailbox check settings and the SOCKS5 proxy; and the provider's fields, with "Allow plain HTTP on
// my network" (issue #14); the test call and what is left of the saved key's quota (issue #29).
import type { Locator, Page } from 'playwright-core';

export type ChecksTitle = 'Automatic' | 'Offline only' | 'Domains (DNS)' | 'Mailboxes (SMTP)';

export class ConnectionPage {
  constructor(readonly page: Page) {}

  /** Opens the screen; the Checks setting shows when the local service is the one chosen (the default). */
  async open(options: { isProviderSaved?: boolean } = {}): Promise<void> {
    await this.page.keyboard.press('Control+k');
    await this.page.getByRole('heading', { name: 'Connection', level: 1 }).waitFor();
    if (options.isProviderSaved) await this.page.getByLabel('Service address').waitFor();
    else await this.checksGroup().waitFor();
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

  /**
   * Chooses Mailboxes (SMTP) with a HELO name and a sender (the app asks for them when this computer's default
   * would be refused), saves them, and waits for the network check.
   */
  async chooseMailboxes(heloName: string, mailFrom: string): Promise<void> {
    await this.checksRadio('Mailboxes (SMTP)').check();
    await this.page.getByLabel('HELO name').fill(heloName);
    await this.page.getByLabel('MAIL FROM address').fill(mailFrom);
    await this.page.getByRole('button', { name: 'Save mailbox check settings' }).click();
    await this.page.getByRole('status').filter({ hasText: 'Mailbox check settings saved.' }).waitFor();
    await this.waitForNetworkCheck();
  }

  /** Chooses the provider's service and fills its address and key. */
  async fillProvider(baseUrl: string, apiKey: string): Promise<void> {
    await this.page.getByRole('radio', { name: /Provider’s service/ }).check();
    await this.page.getByLabel('Service address').fill(baseUrl);
    await this.page.getByLabel('API key').fill(apiKey);
  }

  plainHttpCheckbox(): Locator {
    return this.page.getByRole('checkbox', { name: 'Allow plain HTTP on my network' });
  }

  /** Saves the connection: the success status, or the alert in words when it was refused. */
  async save(): Promise<{ ok: true } | { ok: false; message: string }> {
    await this.page.getByRole('button', { name: 'Save' }).click();
    const saved = this.page.getByRole('status').filter({ hasText: 'Saved. New jobs use this connection.' });
    const alert = this.page.getByRole('alert');
    await saved.or(alert).first().waitFor();
    if (await saved.isVisible()) return { ok: true };
    return { ok: false, message: (await alert.textContent()) ?? '' };
  }

  /** "Test connection": the status in words once the call worked, or the alert when it did not. */
  async test(): Promise<{ ok: true; status: string } | { ok: false; message: string }> {
    await this.page.getByRole('button', { name: 'Test connection' }).click();
    const worked = this.page.getByRole('status').filter({ hasText: 'The test call worked' });
    const alert = this.page.getByRole('alert');
    await worked.or(alert).first().waitFor();
    if (await worked.isVisible()) return { ok: true, status: (await worked.textContent()) ?? '' };
    return { ok: false, message: (await alert.textContent()) ?? '' };
  }

  /** What is left of the saved key's quota (issue #29), shown when its service tells it. */
  savedQuota(): Locator {
    return this.page.getByRole('status', { name: 'Queries left' });
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
