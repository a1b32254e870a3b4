// `mailsieve clean --services/--fields/--report-only` (the built CLI, the embedded service): the list services
// beyond validation (docs/list-services.md) against reference data imported with `mailsieve data import`.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { readRows, seededFolder, VALIDATION } from './listServicesFixture.js';

/** Ann (known), Dan (unknown, but a Lee at the Lees' address: a household match), nobody (unknown). */
const LEADS = `email,first name,last name,street,city,state,zip
ann.lee@example.com,Ann,Lee,1 Main St,Springfield,IL,62701
dan.lee@example.org,Dan,Lee,1 Main St,Springfield,IL,62701
nobody@example.net,No,Body,5 Elm St,Dayton,OH,45402
`;
const LEADS_HEADER = LEADS.split('\n')[0].split(',');

/** The cells of a row by column name. */
const byName = (header: readonly string[], row: readonly string[]) =>
  Object.fromEntries(header.map((name, i) => [name, row[i]]));

describe('mailsieve clean with list services', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

  const seeded = () => seededFolder('mailsieve-services-', LEADS, cleanups);

  it('appends the intelligence columns after the validation columns, filled for known people only', async () => {
    const { dir, svc, leads } = await seeded();
    const result = await runCli([
      'clean',
      leads,
      '--services',
      'validation,intelligence',
      '--fields',
      'age,gender,interests',
      '--data-dir',
      svc,
    ]);
    expect(result.code, result.stderr).toBe(0);
    // The validation breakdown, then the intelligence match report: field, records matched, percent.
    expect(result.stdout).toMatch(/List 1 \(leads\.csv\): 3 records, status Results/);
    expect(result.stdout).toMatch(/statuses: +unknown 3/);
    expect(result.stdout).toMatch(/email intelligence: +\d+ fields matched/);
    expect(result.stdout).toMatch(/\n {4}age +1 record +33\.3%\n/);
    expect(result.stdout).toMatch(/\n {4}gender +1 record +33\.3%\n/);
    expect(result.stdout).not.toMatch(/email append/);

    const [header, ...rows] = readRows(join(dir, 'leads-1-Validation.csv'));
    expect(header.slice(0, LEADS_HEADER.length + VALIDATION.length)).toEqual([
      ...LEADS_HEADER,
      ...VALIDATION,
    ]);
    const appended = header.slice(LEADS_HEADER.length + VALIDATION.length);
    expect(appended.slice(0, 2)).toEqual(['age', 'gender']);
    expect(appended).toContain('interests.travel');
    expect(appended).toContain('interests.pets');
    // --fields limits the fields: no household_income, no postal address.
    expect(appended).not.toContain('household_income');
    expect(appended.some((name) => name.startsWith('postal_address.'))).toBe(false);
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toHaveLength(header.length);

    const ann = byName(header, rows[0]);
    expect(ann).toMatchObject({
      email: 'ann.lee@example.com',
      'Validation Status': 'unknown',
      age: '35-44',
      gender: 'Female',
      'interests.travel': 'true',
      'interests.pets': 'true',
      'interests.cooking': '',
    });
    // Unknown people get every column, the fields empty. (`eam` is the spec's default for an address
    // without activity, `now`, 0, 0, 0, when the service answers for it at all: not asserted here.)
    for (const row of rows.slice(1)) {
      const cells = byName(header, row);
      for (const name of appended.filter((column) => !column.startsWith('eam.')))
        expect(cells[name], `${row[0]}: ${name}`).toBe('');
    }
  });

  it('with --report-only prints the match reports and the purchase command, and downloads nothing', async () => {
    const { dir, svc, leads } = await seeded();
    const json = await runCli([
      'clean',
      leads,
      '--services',
      'all',
      '--report-only',
      '--json',
      '--data-dir',
      svc,
    ]);
    expect(json.code, json.stderr).toBe(0);
    const outcome = JSON.parse(json.stdout) as {
      list: {
        list_id: number;
        status: string;
        services: Record<string, { status: string; reporting?: Record<string, unknown> }>;
      };
      awaiting_purchase: boolean;
      purchase_command: string;
    };
    expect(outcome.awaiting_purchase).toBe(true);
    expect(outcome.list.status).toBe('Processed');
    expect(Object.keys(outcome.list.services).sort()).toEqual([
      'alternate_email_append',
      'email_append',
      'email_intelligence',
      'email_validation',
    ]);
    expect(outcome.list.services.email_intelligence.reporting).toMatchObject({
      age: { 'Total Count': 1 },
      gender: { 'Total Count': 1 },
      interests: { 'Total Count': 1 },
    });
    expect(outcome.list.services.email_append.reporting).toEqual({
      email_match_type: { 'Individual match': 1, 'Household match': 1 },
    });
    expect(outcome.list.services.alternate_email_append.reporting).toMatchObject({
      alternate_match_type: { 'Individual match': 1, 'Household match': 0 },
    });
    expect(outcome.purchase_command).toBe(
      `mailsieve purchase ${outcome.list.list_id} --data-dir ${svc} --out ${dir}`,
    );

    const text = await runCli(['clean', leads, '--services', 'all', '--report-only', '--data-dir', svc]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /List 2 \(leads\.csv\): 3 records, status Processed \(match reports ready, awaiting purchase\)/,
    );
    expect(text.stdout).toMatch(/statuses: +unknown 3/);
    expect(text.stdout).not.toMatch(/duplicates:/); // read from the results, which there are none of yet
    expect(text.stdout).toMatch(/\n {4}age +1 record +33\.3%\n/);
    expect(text.stdout).toMatch(/\n {2}email append: +individual match 1, household match 1\n/);
    expect(text.stdout).toMatch(/\n {2}alternate email append: individual match 1, household match 0\n/);
    expect(text.stdout).toContain(
      `Nothing was bought or downloaded. To buy list 2:\n  mailsieve purchase 2 --data-dir ${svc} --out ${dir}\n`,
    );
    // Nothing downloaded: no results, no partial file.
    expect(readdirSync(dir).sort()).toEqual(['leads.csv', 'people.csv', 'svc']);
  });

  it('runs email append on a file without an email column', async () => {
    const { dir, svc } = await seeded();
    const names = join(dir, 'names.csv');
    writeFileSync(
      names,
      'first name,last name,street,zip\nBob,Lee,1 Main St,62701\nZed,Nobody,1 Main St,62701\n',
    );
    const result = await runCli(['clean', names, '--services', 'email_append', '--data-dir', svc]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'names.csv: delimiter comma (detected), a header row (detected), no email column',
    );
    expect(result.stdout).toMatch(/List 1 \(names\.csv\): 2 records, status Results/);
    expect(result.stdout).not.toMatch(/statuses:/);
    expect(result.stdout).toMatch(/email append: +individual match 1, household match 0/);
    expect(readRows(join(dir, 'names-1-EmailAppend.csv'))).toEqual([
      ['first name', 'last name', 'street', 'zip', 'Appended Email', 'Email Match Type'],
      ['Bob', 'Lee', '1 Main St', '62701', 'bob.lee@example.com', 'Individual'],
      ['Zed', 'Nobody', '1 Main St', '62701', '', ''],
    ]);
  });

  it('refuses bad service options with one line and a non-zero exit', async () => {
    const dir = tempDir('mailsieve-services-');
    cleanups.push(() => dir.remove());
    const leads = join(dir.path, 'leads.csv');
    writeFileSync(leads, LEADS);
    const cases: [string[], RegExp][] = [
      [
        ['--services', 'validation,telepathy'],
        /^mailsieve: --services takes validation, intelligence, email_append, alternate_email or all \(comma-separated\); got 'telepathy'\.$/,
      ],
      [
        ['--report-only'],
        /^mailsieve: --report-only is for intelligence, email_append and alternate_email: /,
      ],
      [
        ['--services', 'intelligence', '--export', 'clean'],
        /^mailsieve: --export needs validation in --services: the exports sort rows by their validation status\.$/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['clean', leads, ...args, '--data-dir', join(dir.path, 'svc')]);
      expect(result.code, args.join(' ')).not.toBe(0);
      const lines = result.stderr.split('\n').filter((line) => line.startsWith('mailsieve:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(existsSync(join(dir.path, 'svc'))).toBe(false); // refused before the service was started
  });
});
