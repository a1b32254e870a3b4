// The key's quota where a person works (issue #29), in browser mode against our own service with a trial key
// (100 queries in all): the Connection screen's test call tells the quota and spends no query (the service's
// count is the same before and after, and after Save, which tests again); the saved connection shows what is
// left, and shows it again after queries are spent elsewhere; New job says, beside Start cleaning, by how
// many rows a list goes past what is left, and says nothing for a list that fits.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIAL_QUOTA } from '../../service/store/keys.js';
import { keyInfoSchema } from '../../shared/api/listServices.js';
import { freshHome, launchChromium, openApp, startApp } from '../helpers/browserApp.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { ConnectionPage } from './pages/connection.js';
import { NewJobPage } from './pages/newJob.js';

let browser: Browser;
let service: TestService;

beforeAll(async () => {
  [service, browser] = await Promise.all([startTestService(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** The key's use as the service counts it (`GET /v5/key` is not billable). */
async function usedBy(key: string): Promise<number> {
  const response = await fetch(`${service.url}/v5/key`, { headers: { api_key: key } });
  return keyInfoSchema.parse(await response.json()).quota?.used ?? 0;
}

/** `n` E1 calls with the key, as another program using it would make. */
async function spend(key: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const response = await fetch(`${service.url}/v5/ev?email=other${i}@example.com&api_key=${key}`);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  }
}

function writeList(path: string, rows: number): string {
  writeFileSync(path, ['email', ...Array.from({ length: rows }, (_, i) => `p${i}@example.com`)].join('\n'));
  return path;
}

describe('the key’s quota in the app', () => {
  it('shows the quota after the test call and on the saved connection, spends no query testing, and warns in New job', async () => {
    const key = service.key({ quota: TRIAL_QUOTA, rateLimit: 0 });
    const home = freshHome();
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const connection = new ConnectionPage(page);
      await connection.open();
      await connection.fillProvider(service.url, key);

      // The test call tells the quota, and testing a trial key does not spend one of its queries.
      expect(await usedBy(key)).toBe(0);
      const tested = await connection.test();
      expect(tested.ok).toBe(true);
      expect(tested.ok && tested.status).toContain('This trial key has 100 of its 100 queries left.');
      expect(await usedBy(key)).toBe(0);

      // Saved (Save tests it again): the saved connection shows what is left; still nothing spent.
      expect(await connection.save()).toEqual({ ok: true });
      await expect
        .poll(() => connection.savedQuota().textContent())
        .toBe('This trial key has 100 of its 100 queries left.');
      expect(await usedBy(key)).toBe(0);

      // Queries spent elsewhere show when the screen is opened again.
      await spend(key, 30);
      await page.getByRole('button', { name: /^New job/ }).click();
      await connection.open({ isProviderSaved: true });
      await expect
        .poll(() => connection.savedQuota().textContent())
        .toBe('This trial key has 70 of its 100 queries left.');

      // New job: a list of 95 rows is 25 more than the 70 left, said beside Start cleaning.
      const newJob = new NewJobPage(page);
      await newJob.open();
      await newJob.addList(writeList(join(home.path, 'ninety-five.csv'), 95));
      await expect
        .poll(() => newJob.startDescription())
        .toContain('This list has 95 rows, 25 more than the 70 queries left on this key');
      expect(await page.getByText(/25 more than the 70 queries left/).isVisible()).toBe(true);
      // A list that fits: nothing said.
      await page.getByRole('button', { name: 'Choose another file' }).click();
      await newJob.addList(writeList(join(home.path, 'sixty.csv'), 60));
      await page
        .getByText(/^60 rows/)
        .first()
        .waitFor();
      expect(await newJob.startDescription()).toBeNull();
      expect(await page.getByText(/more than the \d+ queries left/).count()).toBe(0);
      expect(await usedBy(key)).toBe(30);
      expect(await page.content()).not.toContain(key);

      // A key with a monthly quota: what is left this month, and when it renews (in local time).
      const monthly = service.key({ quota: { limit: 5000, period: 'month', isTrial: false } });
      await connection.open({ isProviderSaved: true });
      await page.getByLabel('API key').fill(monthly);
      const monthlyTest = await connection.test();
      expect(monthlyTest.ok && monthlyTest.status).toMatch(
        /This key has 5,000 of its 5,000 queries left this month; it renews on \S.*\.$/,
      );
      expect(await usedBy(monthly)).toBe(0);
    } finally {
      await app.stop();
      home.remove();
    }
  });
});
