// Looking up one person (E5) on the embedded service: reference data imported with the built CLI into a
// fresh MAILSIEVE_HOME, then a known address, its hash and its name + postal address answer in words; an
// unknown address reads "No match"; a malformed one shows the service's per-record error.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshHome, launchChromium, openApp, startApp } from '../helpers/browserApp.js';
import { axeViolations } from '../helpers/axe.js';
import { runCli } from '../helpers/cli.js';
import { LookupPage } from './pages/lookup.js';

const PEOPLE = [
  'email,first name,last name,street,city,state,zip,age,gender,household_income,net_worth,home_owner_status,occupation,interests',
  'jane.doe@example.com,Jane,Doe,12 Main St,Springfield,IL,62701-1234,35-44,Female,75k-100k,100k-250k,Own,Teacher,travel;cooking',
  'bob.roe@example.com,Bob,Roe,3 Elm Ave,Portland,OR,97201,65+,Male,25k-35k,,Rent,Retired,pets',
].join('\n');

const DAY_MS = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

/** Jane was seen at a sign-up 10 days ago and opened a newsletter 5 days ago: two sources, two events. */
function activityCsv(): string {
  return [
    'email,source,event,occurred_at',
    `jane.doe@example.com,signup-form,seen,${daysAgo(10).toISOString()}`,
    `jane.doe@example.com,newsletter,open,${daysAgo(5).toISOString()}`,
  ].join('\n');
}

describe('look up a person', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('answers a known person in words and an unknown address with "No match"', async () => {
    const home = freshHome();
    const csv = join(home.path, 'people.csv');
    writeFileSync(csv, `${PEOPLE}\n`);
    const imported = await runCli([
      'data',
      'import',
      'people',
      csv,
      '--data-dir',
      join(home.path, 'service'),
    ]);
    expect(imported.code, imported.stderr).toBe(0);
    const activity = join(home.path, 'activity.csv');
    writeFileSync(activity, `${activityCsv()}\n`);
    const events = await runCli([
      'data',
      'import',
      'activity',
      activity,
      '--data-dir',
      join(home.path, 'service'),
    ]);
    expect(events.code, events.stderr).toBe(0);
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const lookup = new LookupPage(page);
      await lookup.open();

      await lookup.byEmail('jane.doe@example.com');
      const jane = lookup.answer('jane.doe@example.com');
      await jane.waitFor();
      const janeText = await jane.textContent();
      expect(janeText).toContain(
        'Age 35–44, female, household income $75k–100k, owns the home, interests: cooking, travel.',
      );
      expect(janeText).toContain('Net worth $100k–250k.');
      expect(janeText).toContain('Occupation: teacher.');
      expect(janeText).toContain('Postal address: Jane Doe, 12 Main St, Springfield, IL 62701-1234.');
      expect(janeText).not.toContain('No match');
      // The activity metrics explained.
      const opened = daysAgo(5);
      const month = opened.toLocaleDateString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
      expect(janeText).toContain(`First seen on ${daysAgo(10).toISOString().slice(0, 10)}.`);
      expect(janeText).toContain('Longevity 1 of 3: its first known activity was within the last month.');
      expect(janeText).toContain('Velocity 2 of 10');
      expect(janeText).toContain('Popularity 2 of 10');
      expect(janeText).toContain(`Last opened or clicked a message in ${month}.`);

      // The same person by the MD5 of the address, and by name and postal address.
      const md5 = createHash('md5').update('jane.doe@example.com').digest('hex');
      await lookup.byHash(md5);
      await lookup.answer(`MD5 ${md5}`).filter({ hasText: 'Age 35–44, female' }).waitFor();
      await lookup.byPostal({
        'First name': 'Bob',
        'Last name': 'Roe',
        Street: '3 Elm Ave',
        'ZIP code': '97201',
      });
      await lookup
        .answer(/^Bob Roe, 3 Elm Ave/)
        .filter({ hasText: 'Age 65+, male, household income $25k–35k, rents the home, interests: pets.' })
        .waitFor();

      await lookup.byEmail('nobody@example.com');
      const nobody = lookup.answer('nobody@example.com');
      await nobody.waitFor();
      expect(await nobody.textContent()).toContain('No match in the reference data.');
      expect(await nobody.textContent()).not.toContain('Age');

      // A per-record error reads the service's message.
      await lookup.byEmail('not an address');
      await expect.poll(() => lookup.error().textContent()).toMatch(/invalid/i);
    } finally {
      await app.stop();
      home.remove();
    }
  });
});

describe('import reference data from Look up a person', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('imports a people file with one bad line, lists the rejection by line, and finds a person in it', async () => {
    const home = freshHome();
    const csv = join(home.path, 'my-people.csv');
    // Line 3 names no one (no email, no name with a postal address); line 4 has a bad state.
    writeFileSync(
      csv,
      [
        'email,first name,last name,street,city,state,zip,age',
        'ann.lee@example.com,Ann,Lee,5 Oak Rd,Austin,TX,73301-0001,25-34',
        ',,,,,,,45-54',
        'carl.ito@example.com,Carl,Ito,9 Pine St,Boise,ID,83702,35-44',
        '',
      ].join('\n'),
    );
    const app = await startApp(home.path);
    try {
      const { page } = await openApp(browser, app);
      const lookup = new LookupPage(page);
      await lookup.open();

      // Nobody is known before the import; the answer says how to import.
      await lookup.byEmail('ann.lee@example.com');
      const before = lookup.answer('ann.lee@example.com');
      await before.waitFor();
      expect(await before.textContent()).toContain('use Import people file below');

      await lookup.importFile('people', csv);
      const report = lookup.importReport();
      await report.waitFor();
      const text = await report.textContent();
      expect(text).toContain('Imported 2 of 3 rows from my-people.csv (2 people added, 0 updated).');
      expect(text).toContain('Rejected 1 row');
      expect(text).toContain(
        'line 3: the row names no one: give an email, or a first and last name with a postal address',
      );

      // The rejections saved as a text file.
      const download = page.waitForEvent('download');
      await report.getByRole('button', { name: 'Save rejected rows' }).click();
      const saved = await download;
      expect(saved.suggestedFilename()).toBe('my-people-rejected-rows.txt');
      const savedPath = join(home.path, 'rejected.txt');
      await saved.saveAs(savedPath);
      const savedText = readFileSync(savedPath, 'utf8');
      expect(savedText).toContain('Rejected rows of my-people.csv (people import): 1');
      expect(savedText).toContain('line 3: the row names no one');
      // The report, its list and its buttons pass axe-core.
      expect(await axeViolations(page)).toEqual([]);

      // A person of the file answers now, from the local service.
      await lookup.byEmail('ann.lee@example.com');
      await lookup
        .answer('ann.lee@example.com')
        .filter({ hasText: 'Postal address: Ann Lee, 5 Oak Rd, Austin, TX 73301-0001.' })
        .waitFor();
      expect(await lookup.answer('ann.lee@example.com').textContent()).not.toContain('No match');

      // Switching the way of looking up clears the old answer.
      await page.getByRole('radio', { name: /^Hash/ }).check();
      expect(await lookup.answer('ann.lee@example.com').count()).toBe(0);

      // A file that is not a people file: its header is refused in words, nothing imported.
      const wrong = join(home.path, 'wrong.csv');
      writeFileSync(wrong, 'colour,size\nred,9\n');
      await lookup.importFile('people', wrong);
      await expect
        .poll(() => lookup.error().textContent())
        .toContain('wrong.csv: The header names no email column');
    } finally {
      await app.stop();
      home.remove();
    }
  });
});
