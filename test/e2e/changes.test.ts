// "Changes since the last run" (issue 37, point 4) end to end in browser mode: one list cleaned with Mailboxes
// (SMTP) in a loopback mail world, the app stopped, then started again in the world a week later (a mailbox
// removed, a domain turned accept-all: test/helpers/changingWorld.ts) and the same file cleaned again. The new
// job's Results name the first job and list exactly the changed rows with both verdicts and both pieces of
// evidence in words, a page at a time; "Export changed rows" downloads only them; axe finds no violation in
// light and dark.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../helpers/axe.js';
import { freshHome, launchChromium, openApp, startApp, type RunningApp } from '../helpers/browserApp.js';
import { LIST_TEXT, startChangingWorld, type ChangingWorld } from '../helpers/changingWorld.js';
import { ChangesSection } from './pages/changes.js';
import { ConnectionPage } from './pages/connection.js';
import { HistoryPage } from './pages/history.js';
import { NewJobPage } from './pages/newJob.js';
import { ResultsPage } from './pages/results.js';

/** Addresses at acme refused before, accepted now as any address there is: 60 more changed rows (8 to 67). */
const EXTRA = Array.from({ length: 60 }, (_, i) => `extra${String(i + 1).padStart(2, '0')}@acme.example.net`);

let world: ChangingWorld;
let browser: Browser;
let listDir: string;
let listFile: string;

beforeAll(async () => {
  world = await startChangingWorld(35);
  browser = await launchChromium();
  listDir = mkdtempSync(join(tmpdir(), 'mailsieve-changes-'));
  listFile = join(listDir, 'people.csv');
  writeFileSync(listFile, LIST_TEXT + EXTRA.map((address, i) => `${address},Extra ${i + 1}\n`).join(''));
});
afterAll(async () => {
  await browser?.close();
  await world?.close();
  if (listDir) rmSync(listDir, { recursive: true, force: true });
});

async function cleanList(page: Page): Promise<ResultsPage> {
  const newJob = new NewJobPage(page);
  await newJob.open();
  await newJob.addList(listFile);
  await newJob.startCleaning();
  const results = new ResultsPage(page);
  await results.waitFor();
  return results;
}

/** How a check's evidence is dated in words (shared/outcomes.ts evidenceWords): the day it ran, today. */
const TODAY = new Date().toLocaleDateString('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
const ACCEPTED_BEFORE = (domain: string) => `250 Accepted from mx1.${domain} on ${TODAY}`;
const ACCEPTED_NOW = `250 Accepted from mx1.acme.example.net on ${TODAY}`;

describe('Changes since the last run', () => {
  it('on Results of a list cleaned again after its mail world changed: the changed rows in words, paged, exported; no axe violation', async () => {
    const home = freshHome();
    let app: RunningApp | undefined;
    try {
      // The first run, in the world as it was: nothing earlier to compare with.
      app = await startApp(home.path, world.before.env);
      {
        const { context, page } = await openApp(browser, app);
        try {
          const connection = new ConnectionPage(page);
          await connection.open();
          await connection.chooseMailboxes('probe.mailsieve.test', 'check@mailsieve.test');
          const results = await cleanList(page);
          await results.table('Status codes');
          expect(await new ChangesSection(page).region().count()).toBe(0);
        } finally {
          await context.close();
        }
      }
      await app.stop();

      // A week later: the app started again in the changed world, the same file cleaned again.
      app = await startApp(home.path, world.after.env);
      const { context, page } = await openApp(browser, app);
      try {
        await cleanList(page);
        const changes = new ChangesSection(page);
        await changes.waitFor();
        expect(await changes.headline()).toMatch(
          /^63 rows changed status since job 1 \(.+\)\. 65 addresses found in both runs were compared\.$/,
        );
        expect(
          await changes
            .region()
            .getByRole('list', { name: 'Changes by status' })
            .locator('li')
            .allTextContents(),
        ).toEqual(['Invalid → Valid: 61 rows', 'Valid → Invalid: 1 row', 'Valid → Valid: 1 row']);
        const first = await changes.rows();
        expect(first).toHaveLength(50);
        expect(first.slice(0, 4)).toEqual([
          [
            '2',
            'bob@shop.example.net',
            'Valid 50',
            'Invalid 400',
            ACCEPTED_BEFORE('shop.example.net'),
            `550 5.1.1 User unknown from mx1.shop.example.net on ${TODAY}`,
          ],
          [
            '4',
            'dan@acme.example.net',
            'Valid 50',
            'Valid 45',
            ACCEPTED_BEFORE('acme.example.net'),
            ACCEPTED_NOW,
          ],
          [
            '5',
            'zed@acme.example.net',
            'Invalid 400',
            'Valid 45',
            `550 5.1.1 User unknown from mx1.acme.example.net on ${TODAY}`,
            ACCEPTED_NOW,
          ],
          [
            '8',
            'extra01@acme.example.net',
            'Invalid 400',
            'Valid 45',
            `550 5.1.1 User unknown from mx1.acme.example.net on ${TODAY}`,
            ACCEPTED_NOW,
          ],
        ]);
        expect(first.at(-1)?.slice(0, 2)).toEqual(['54', 'extra47@acme.example.net']);
        expect(await changes.shown()).toBe('Rows 1–50 of 63');

        // The next page: the last 13 changed rows.
        await changes.next();
        await expect.poll(() => changes.shown()).toBe('Rows 51–63 of 63');
        const second = await changes.rows();
        expect(second.map((row) => row[1])).toEqual(EXTRA.slice(47));
        expect(await changes.region().getByRole('button', { name: 'Next rows' }).isDisabled()).toBe(true);

        // No axe violation with the section shown (light).
        expect(await axeViolations(page)).toEqual([]);

        // The export of only the changed rows.
        const exported = await changes.export();
        expect(exported.name).toBe('people-changed.csv');
        const lines = exported.text.trimEnd().split('\n');
        expect(lines).toHaveLength(64);
        expect(lines[0]).toBe(
          'Email,Before Status,Before Code,Before Evidence,After Status,After Code,After Evidence,Words',
        );
        expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual([
          'bob@shop.example.net',
          'dan@acme.example.net',
          'zed@acme.example.net',
          ...EXTRA,
        ]);
        expect(
          await changes
            .region()
            .getByRole('status')
            .filter({ hasText: /^Exported/ })
            .textContent(),
        ).toBe('Exported 63 changed rows to people-changed.csv.');
      } finally {
        await context.close();
      }

      // …and in dark, through History.
      const dark = await openApp(browser, app, { colorScheme: 'dark' });
      try {
        const history = new HistoryPage(dark.page);
        await history.open();
        await history.openJob('people.csv');
        await new ResultsPage(dark.page).waitFor();
        const changes = new ChangesSection(dark.page);
        await changes.waitFor();
        expect(await changes.shown()).toBe('Rows 1–50 of 63');
        expect(await axeViolations(dark.page)).toEqual([]);
      } finally {
        await dark.context.close();
      }
    } finally {
      await app?.stop();
      home.remove();
    }
  });
});
