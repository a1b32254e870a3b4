// Exports for import (issue #12), end to end through the built CLI, and a differential test: for a generated
// list, `mailsieve clean --export` and the desktop's export of the same results (the Results screen's
// exportJobResults) write byte-identical files for every kind, choice and format.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { exportJobResults } from '../../electron/core/jobs/desktopExport.js';
import { defaultExportChoices, type ExportChoices } from '../../shared/exportChoices.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

/** A generated CRM list: accents, semicolons in fields, typo domains, duplicates in other case, role and
 * disposable addresses, bad syntax. */
function generatedList(): string {
  const rows = ['Email,Name,City'];
  for (let i = 0; i < 120; i++) {
    const kind = i % 8;
    const local = `person.number${i}`;
    const email =
      kind === 0
        ? `${local}@hotmial.com` // a typo domain: corrected
        : kind === 1
          ? `${local}@example.com`
          : kind === 2
            ? `${local.toUpperCase()}@EXAMPLE.com` // ...the same address as the row before, other case
            : kind === 3
              ? `info@company${i}.org` // role
              : kind === 4
                ? `${local}@mailinator.com` // disposable
                : kind === 5
                  ? `${local}.example.com` // no @
                  : kind === 6
                    ? `${local}@hotmail.com` // the correction of an earlier row, spelt right
                    : `zoë${i}@example.net`;
    const fixed =
      kind === 2
        ? `PERSON.NUMBER${i - 1}@EXAMPLE.com`
        : kind === 6
          ? `person.number${i - 6}@hotmail.com`
          : email;
    rows.push(`${fixed},"Zoë; ""Z"" ${i}",Köln`);
  }
  return `${rows.join('\n')}\n`;
}

describe('exports for import through the CLI', () => {
  const dir = tempDir('mailsieve-exports-');
  const input = join(dir.path, 'crm.csv');
  let resultsPath = '';
  const outOf = (name: string) => join(dir.path, name);

  beforeAll(async () => {
    writeFileSync(input, generatedList());
    const result = await runCli(
      ['clean', input, '--out', dir.path, '--json', '--export', 'clean,safe,invalid,all,zip', '--report-csv'],
      { MAILSIEVE_HOME: join(dir.path, 'home') },
    );
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as {
      results: string;
      checks: { level: string };
      reports: unknown[];
    };
    resultsPath = json.results;
    // clean --json says the level the job ran with, and lists the report CSVs.
    expect(json.checks.level).toMatch(/^(offline|dns|smtp)$/);
    expect(json.reports).toHaveLength(2);
  }, 120_000);
  afterAll(() => dir.remove());

  const parse = (path: string) =>
    Papa.parse<string[]>(readFileSync(path, 'utf8'), { skipEmptyLines: true }).data;

  it('clean holds corrected addresses in the address column, one row per address', () => {
    const [header, ...rows] = parse(outOf('crm-clean.csv'));
    expect(header.at(-1)).toBe('Original Email');
    const emails = rows.map((row) => row[0]);
    expect(emails.some((email) => email.endsWith('@hotmial.com'))).toBe(false);
    expect(emails).toContain('person.number0@hotmail.com');
    expect(rows.find((row) => row[0] === 'person.number0@hotmail.com')?.at(-1)).toBe(
      'person.number0@hotmial.com',
    );
    const keys = emails.map((email) => email.normalize('NFC').toLowerCase());
    expect(new Set(keys).size).toBe(keys.length);
    // Role addresses stay unless asked; disposable ones are risky, so clean leaves them out anyway.
    expect(emails.some((email) => email.startsWith('info'))).toBe(true);
    expect(rows.some((row) => row[1].startsWith('Zoë; "Z"'))).toBe(true);
  });

  it('honours --drop-role, --no-dedupe and --export-format', async () => {
    const out = join(dir.path, 'choices');
    const result = await runCli(
      [
        'clean',
        input,
        '--out',
        out,
        '--export',
        'clean',
        '--drop-role',
        '--no-dedupe',
        '--export-format',
        'xlsx',
      ],
      { MAILSIEVE_HOME: join(dir.path, 'home') },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /Export clean +\S+crm-clean\.xlsx \(\d+ rows; left out 15 role addresses\)/,
    );
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(join(out, 'crm-clean.xlsx'));
    const emails: string[] = [];
    workbook.worksheets[0].eachRow((row, n) => {
      if (n > 1) emails.push(row.getCell(1).text);
    });
    expect(emails.some((email) => email.startsWith('info'))).toBe(false);
    // Without dedupe the corrected and the correctly spelt copies are both there.
    expect(emails.filter((email) => email === 'person.number0@hotmail.com')).toHaveLength(2);
  }, 120_000);

  const desktopExport = async (kind: 'clean' | 'safe' | 'invalid' | 'all' | 'zip', choices?: ExportChoices) =>
    exportJobResults(
      {
        id: 1,
        uploadName: 'crm.csv',
        mapping: { delimiter: ',', header: true, roles: ['email', 'ignore', 'ignore'] },
        originalHeader: null,
      },
      { path: resultsPath, name: resultsPath.split('/').at(-1)! },
      kind,
      [],
      join(dir.path, 'desktop'),
      choices,
    );

  it('writes byte for byte what the desktop writes, for every kind', async () => {
    for (const kind of ['clean', 'safe', 'invalid', 'all'] as const) {
      const written = await desktopExport(kind);
      expect(readFileSync(written.path).equals(readFileSync(outOf(`crm-${kind}.csv`))), kind).toBe(true);
    }
  });

  it('writes byte for byte what the desktop writes, with choices and formats', async () => {
    const out = join(dir.path, 'excel');
    const result = await runCli(
      [
        'clean',
        input,
        '--out',
        out,
        '--export',
        'clean',
        '--drop-disposable',
        '--export-format',
        'csv-excel',
      ],
      { MAILSIEVE_HOME: join(dir.path, 'home') },
    );
    expect(result.code, result.stderr).toBe(0);
    const written = await desktopExport('clean', {
      ...defaultExportChoices('clean'),
      dropDisposable: true,
      format: 'csv-excel',
    });
    const cli = readFileSync(join(out, 'crm-clean.csv'));
    expect([...cli.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(readFileSync(written.path).equals(cli)).toBe(true);
  }, 120_000);

  it('writes a zip of every status, one file per status, byte for byte what the desktop writes', async () => {
    const zipPath = outOf('crm-statuses.zip');
    const cli = readFileSync(zipPath);
    const written = await desktopExport('zip');
    expect(written.fileName).toMatch(/-statuses\.zip$/);
    expect(readFileSync(written.path).equals(cli)).toBe(true);
    const files = unzipSync(new Uint8Array(cli));
    const results = parse(resultsPath);
    const statusAt = results[0].lastIndexOf('Validation Status');
    const statuses = new Set(results.slice(1).map((row) => row[statusAt].toLowerCase()));
    expect(Object.keys(files).sort()).toEqual([...statuses].map((status) => `crm-${status}.csv`).sort());
    let total = 0;
    for (const [name, bytes] of Object.entries(files)) {
      const [header, ...rows] = Papa.parse<string[]>(new TextDecoder().decode(bytes), {
        skipEmptyLines: true,
      }).data;
      const at = header.lastIndexOf('Validation Status');
      const status = name.slice('crm-'.length, -'.csv'.length);
      expect(
        rows.every((row) => row[at].toLowerCase() === status),
        name,
      ).toBe(true);
      total += rows.length;
    }
    // Remove duplicates is off for the zip by default: every row is in one file.
    expect(total).toBe(results.length - 1);
    expect(written.rows).toBe(total);
  });

  it('writes the spec’s match report and chart data CSVs (--report-csv), counted from the results', () => {
    const results = parse(resultsPath);
    const statusAt = results[0].lastIndexOf('Validation Status');
    const rows = results.slice(1);
    const [reportHeader, ...report] = parse(outOf('crm-match-report.csv'));
    expect(reportHeader).toEqual(['field', 'records matched', 'percent']);
    const validEmail = rows.filter((row) => ['valid', 'corrected'].includes(row[statusAt].toLowerCase()));
    expect(report.find((row) => row[0] === 'Valid Email')).toEqual([
      'Valid Email',
      String(validEmail.length),
      ((100 * validEmail.length) / rows.length).toFixed(2),
    ]);
    expect(report.find((row) => row[0] === 'Validation Status')?.[1]).toBe(String(rows.length));
    const [chartHeader, ...chart] = parse(outOf('crm-chart-data.csv'));
    expect(chartHeader).toEqual(['field', 'value', 'count']);
    for (const status of ['Valid', 'Invalid', 'Risky', 'Unknown', 'Unverifiable', 'Corrected']) {
      const n = rows.filter((row) => row[statusAt].toLowerCase() === status.toLowerCase()).length;
      expect(chart.find((row) => row[0] === 'Validation Status' && row[1] === status)?.[2], status).toBe(
        String(n),
      );
    }
    const codeAt = results[0].lastIndexOf('Validation Code');
    const codes = chart.filter((row) => row[0] === 'Validation Code');
    expect(codes.reduce((sum, row) => sum + Number(row[2]), 0)).toBe(rows.length);
    for (const [, code, n] of codes)
      expect(rows.filter((row) => row[codeAt] === code).length, code).toBe(Number(n));
  });
});
