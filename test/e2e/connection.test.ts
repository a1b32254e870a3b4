// Issue #14 on the Connection screen, in browser mode: a provider at an http:// address on another machine
// is refused in words (the API key would travel unencrypted) until "Allow plain HTTP on my network" is
// ticked, then saved and used. "Another machine" is this computer's own host name, which the system resolves
// to a loopback address: the app sees a host off loopback, while every byte stays on loopback.
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshHome, launchChromium, openApp, startApp } from '../helpers/browserApp.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { ConnectionPage } from './pages/connection.js';

let browser: Browser;
let service: TestService;
/** This computer's host name, when it resolves to loopback only; undefined otherwise. */
let loopbackAlias: string | undefined;

beforeAll(async () => {
  service = await startTestService();
  browser = await launchChromium();
  const name = hostname();
  const addresses = await lookup(name, { all: true }).catch(() => []);
  const isLoopbackOnly =
    addresses.length > 0 && addresses.every(({ address }) => address.startsWith('127.') || address === '::1');
  if (isLoopbackOnly && name !== 'localhost' && !name.startsWith('127.')) loopbackAlias = name;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('Allow plain HTTP on my network', () => {
  it('refuses an http:// address off loopback in words without it, and saves it with it', async (context) => {
    // Without a host name that resolves to loopback, the address would leave this machine.
    if (!loopbackAlias) context.skip();
    const port = new URL(service.url).port;
    const address = `http://${loopbackAlias}:${port}`;
    const key = service.key({ services: ['validation'] });
    const home = freshHome();
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const connection = new ConnectionPage(page);
      await connection.open();
      // On loopback plain HTTP needs no setting: the checkbox is not offered.
      await connection.fillProvider(service.url, key);
      expect(await connection.plainHttpCheckbox().count()).toBe(0);

      await page.getByLabel('Service address').fill(address);
      const checkbox = connection.plainHttpCheckbox();
      await checkbox.waitFor();
      expect(await checkbox.isChecked()).toBe(false);
      const warning = page.locator('#plain-http-warning');
      expect(await warning.textContent()).toContain('the API key travels unencrypted');
      expect(await warning.textContent()).toContain(`${loopbackAlias}:${port}`);

      const refused = await connection.save();
      expect(refused).toEqual({
        ok: false,
        message: expect.stringContaining('the API key would cross the network in clear text') as string,
      });
      expect(refused.ok === false && refused.message).toContain('Allow plain HTTP on my network');
      await expect
        .poll(() => page.getByRole('status', { name: 'Connection status' }).textContent())
        .toContain('Local service');

      await checkbox.check();
      expect(await connection.save()).toEqual({ ok: true });
      await expect
        .poll(() => page.getByRole('status', { name: 'Connection status' }).textContent())
        .toContain(`Provider: ${loopbackAlias}`);

      // The allowance is saved with the connection: a fresh page shows it ticked, and saving again keeps it.
      await page.reload();
      await page.locator('#root[data-app-state="ready"]').waitFor();
      await page.keyboard.press('Control+k');
      await page.getByRole('heading', { name: 'Connection', level: 1 }).waitFor();
      expect(await page.getByLabel('Service address').inputValue()).toBe(address);
      expect(await connection.plainHttpCheckbox().isChecked()).toBe(true);
      expect(await connection.save()).toEqual({ ok: true });
      // Unticked, the same address is refused again and the saved connection stays as it was.
      await connection.plainHttpCheckbox().uncheck();
      const again = await connection.save();
      expect(again.ok).toBe(false);
      await expect
        .poll(() => page.getByRole('status', { name: 'Connection status' }).textContent())
        .toContain(`Provider: ${loopbackAlias}`);
    } finally {
      await app.stop();
      home.remove();
    }
  });
});
