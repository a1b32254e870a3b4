// `mailsieve purchase LIST_ID` (the built CLI, the embedded service): buying a list `clean --report-only`
// left awaiting purchase, with a field selection and the email append match type (docs/list-services.md).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { readRows, seededFolder, VALIDATION } from './listServicesFixture.js';

/**
 * Semicolons in a .csv: the purchase reads the delimiter back from the results for the exports. Ann is known
 * (an Individual email match), Dan a Lee at the Lees' address (a Household match), the last row invalid.
 */
const LEADS = `email;first name;last name;street;city;state;zip
ann.lee@example.com;Ann;Lee;1 Main St;Springfield;IL;62701
dan.lee@example.org;Dan;Lee;1 Main St;Springfield;IL;62701
not-an-address;No;Body;5 Elm St;Dayton;OH;45402
`;
const LEADS_HEADER = LEADS.split('\n')[0].split(';');

/** The one `mailsieve:` line of a failed run, after checking it failed without a stack trace. */
function failure(result: { code: number; stderr: string }): string {
  expect(result.code).not.toBe(0);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  const lines = result.stderr.split('\n').filter((line) => line.startsWith('mailsieve:'));
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('mailsieve purchase', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

  const seeded = () => seededFolder('mailsieve-purchase-', LEADS, cleanups);

  it('buys the fields asked for and Individual email matches only, then downloads results and exports', async () => {
    const { dir, svc, leads } = await seeded();
    const report = await runCli(['clean', leads, '--services', 'all', '--report-only', '--data-dir', svc]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).toMatch(/email append: +individual match 1, household match 1/);
    // The command printed is the one to run (it names the data folder and the list's folder).
    const command = /\n {2}(mailsieve purchase 1 [^\n]*)\n/.exec(report.stdout)?.[1];
    expect(command).toBe(`mailsieve purchase 1 --data-dir ${svc} --out ${dir}`);
    const args = command!.split(' ').slice(1);

    const bought = await runCli([
      ...args,
      '--fields',
      'age,email_append',
      '--match-type',
      'I',
      '--export',
      'clean',
    ]);
    expect(bought.code, bought.stderr).toBe(0);
    expect(bought.stdout).toMatch(/List 1 \(leads\.csv\): 3 records, status Results/);
    expect(bought.stdout).toMatch(/statuses: +invalid 1, unknown 2/);
    expect(bought.stdout).toMatch(/duplicates: +0 rows/);
    const results = join(dir, 'leads-1-Validation.csv');
    expect(bought.stdout).toContain(`Results: ${results}`);
    expect(bought.stdout).toMatch(/Export clean +\S+leads-clean\.csv \(2 rows\)/);

    // Only what was bought: age of the intelligence fields, email append whole; no alternate emails.
    const rows = readRows(results, ';');
    expect(rows[0]).toEqual([...LEADS_HEADER, ...VALIDATION, 'age', 'Appended Email', 'Email Match Type']);
    const appended = rows.slice(1).map((row) => row.slice(LEADS_HEADER.length + VALIDATION.length));
    expect(appended).toEqual([
      ['35-44', 'ann.lee@example.com', 'Individual'],
      ['', '', ''], // Dan's household match was not bought (match type I)
      ['', '', ''],
    ]);
    // The export, shaped for import (a comma CSV, the address to mail, `Original Email` last): every row
    // but the invalid one.
    const exported = readRows(join(dir, 'leads-clean.csv'), ',');
    expect(exported[0]).toEqual([...rows[0], 'Original Email']);
    expect(exported.slice(1).map((row) => row.slice(0, -1))).toEqual(rows.slice(1, 3));

    // Bought once: a second purchase downloads the same results and buys nothing.
    // It can write the zip of every status and the report CSVs too, as clean does.
    const again = await runCli([...args, '--fields', 'gender', '--export', 'zip', '--report-csv']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(
      'List 1 had its results already: nothing was bought (--fields and --match-type left unused).',
    );
    expect(readRows(results, ';')[0]).not.toContain('gender');
    expect(again.stdout).toMatch(/Export zip +\S+leads-statuses\.zip \(3 rows\)/);
    const zip = unzipSync(readFileSync(join(dir, 'leads-statuses.zip')));
    expect(Object.keys(zip).sort()).toEqual(['leads-invalid.csv', 'leads-unknown.csv']);
    expect(again.stdout).toMatch(/Report match-report +\S+leads-match-report\.csv/);
    expect(readFileSync(join(dir, 'leads-match-report.csv'), 'utf8')).toMatch(
      /^field,records matched,percent\r?\n/,
    );
    expect(existsSync(join(dir, 'leads-chart-data.csv'))).toBe(true);
  });

  it('buys a list that ran without validation, and refuses exports for it before buying', async () => {
    const { dir, svc, leads } = await seeded();
    const report = await runCli([
      'clean',
      leads,
      '--services',
      'intelligence',
      '--report-only',
      '--data-dir',
      svc,
    ]);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout).not.toMatch(/statuses:/);
    expect(failure(await runCli(['purchase', '1', '--export', 'safe', '--data-dir', svc]))).toBe(
      'mailsieve: List 1 ran without validation, so its results have no validation status to export: purchase it without --export.',
    );

    const bought = await runCli([
      'purchase',
      '1',
      '--fields',
      'gender',
      '--out',
      dir,
      '--json',
      '--data-dir',
      svc,
    ]);
    expect(bought.code, bought.stderr).toBe(0);
    const outcome = JSON.parse(bought.stdout) as Record<string, unknown>;
    expect(outcome).toMatchObject({
      list: { list_id: 1, status: 'Results' },
      purchased: { fields: ['gender'] },
      // An intelligence-only list is named for the service it ran, not Validation.
      results: join(dir, 'leads-1-Intelligence.csv'),
      duplicates: null,
      exports: [],
    });
    expect(readRows(join(dir, 'leads-1-Intelligence.csv'), ';')).toEqual([
      [...LEADS_HEADER, 'gender'],
      ['ann.lee@example.com', 'Ann', 'Lee', '1 Main St', 'Springfield', 'IL', '62701', 'Female'],
      ['dan.lee@example.org', 'Dan', 'Lee', '1 Main St', 'Springfield', 'IL', '62701', ''],
      ['not-an-address', 'No', 'Body', '5 Elm St', 'Dayton', 'OH', '45402', ''],
    ]);
  });

  it('fails with one line and a non-zero exit, never a stack trace', async () => {
    const { dir, svc, leads } = await seeded();
    const ragged = join(dir, 'ragged.csv');
    writeFileSync(ragged, 'email,first name,last name\nann.lee@example.com,Ann,Lee\nbob@example.org,Bob\n');
    // List 1 is Invalid; list 2 awaits purchase.
    expect(
      (
        await runCli([
          'clean',
          ragged,
          '--services',
          'validation,intelligence',
          '--report-only',
          '--data-dir',
          svc,
        ])
      ).code,
    ).not.toBe(0);
    const report = await runCli(['clean', leads, '--services', 'all', '--report-only', '--data-dir', svc]);
    expect(report.code, report.stderr).toBe(0);

    const purchase = (...args: string[]) => runCli(['purchase', ...args, '--data-dir', svc, '--out', dir]);
    expect(failure(await purchase('99'))).toBe(
      'mailsieve: Could not purchase list 99: List 99 not found. (HTTP 404)',
    );
    expect(failure(await purchase('1'))).toMatch(
      /^mailsieve: List 1 is not awaiting purchase \(status Invalid\): Line 3 has 2 fields where the header has 3/,
    );
    expect(failure(await purchase('two'))).toBe(
      "mailsieve: LIST_ID is the list's number (as clean --report-only printed it); got 'two'.",
    );
    expect(failure(await purchase('2', '--match-type', 'X'))).toBe(
      "mailsieve: --match-type takes I (Individual matches only) or H (Individual and Household matches); got 'X'.",
    );
    expect(failure(await purchase('2', '--export', 'best'))).toBe(
      "mailsieve: --export takes safe, invalid, clean, all, zip; got 'best'.",
    );
    expect(failure(await purchase('2', '--fields', 'shoe_size'))).toMatch(
      /^mailsieve: Could not purchase list 2: .*shoe_size.* \(HTTP 400\)$/,
    );
    expect(failure(await runCli(['purchase', '2', '--api-key', 'k', '--data-dir', svc]))).toBe(
      'mailsieve: --api-key goes with --base-url.',
    );
    // Nothing was bought or downloaded by any of them.
    expect(readdirSync(dir).sort()).toEqual(['leads.csv', 'people.csv', 'ragged.csv', 'svc']);
  });
});
