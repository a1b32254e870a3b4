// Exports for import (issue #12): the address to mail in the address column, duplicates, role and disposable
// rows left out on request, four formats, the zip of every status. Real files, read back with the same
// libraries a user's tools use (exceljs for .xlsx, fflate for the zip).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { unzipSync } from 'fflate';
import Papa from 'papaparse';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultExportChoices, type ExportChoices } from '../../../../shared/exportChoices.js';
import type { ExportChoice } from '../../../../shared/exports.js';
import { openRowWriter, XLSX_SHEET_ROWS } from '../../../../electron/core/exports/formats.js';
import { writeStatusZip } from '../../../../electron/core/exports/statusZip.js';
import { sheetCsv, sheetNames } from '../../../../electron/core/files/xlsx.js';
import { exportResultsFile, type ExportRequest } from '../../../../electron/core/jobs/exports.js';
import { tempDir } from '../../../helpers/service.js';

// A results file as the service writes it: the input's columns, then the six appended columns.
const RESULTS = [
  'Name;Email;City;Validation Status;Validation Code;Domain Type;Role Account;Duplicate;Valid Email',
  'Zoë;zoe@example.com;Köln;unknown;10;;;true;',
  'Ann;ann@hotmial.com;Paris;corrected;10;freeisp;;;ann@hotmail.com',
  'Zoe again;ZOE@Example.com;Berlin;unknown;10;;;true;',
  'Info;info@example.com;Rome;unknown;10;;true;;',
  'Temp;x@mailinator.com;Oslo;risky;525;disposable;;;',
  'Temp2;y@guerrillamail.com;Oslo;unknown;10;disposable;;;',
  'Bad;not-an-address;Nice;invalid;150;;;;',
  'Ann2;ann@hotmail.com;Lyon;valid;50;freeisp;;;ann@hotmail.com',
  '"Quoted; name";"q@example.com";"line',
  'break";unknown;10;;;;',
].join('\r\n');

describe('exports for import', () => {
  let dir: ReturnType<typeof tempDir>;
  let results: string;
  beforeEach(() => {
    dir = tempDir();
    results = join(dir.path, 'list-1-Service.csv');
    writeFileSync(results, `${RESULTS}\r\n`);
  });
  afterEach(() => dir.remove());

  /** An export for import through the one exporter. */
  const request = (
    kind: ExportChoice,
    path: string,
    choices: Partial<ExportChoices> = {},
    emailIndex = 1,
  ): ExportRequest => ({
    name: path,
    path,
    spec: { kind, choices: { ...defaultExportChoices(kind), ...choices }, emailIndex },
  });
  const run = async (kind: 'clean' | 'safe' | 'all', choices: Partial<ExportChoices> = {}) => {
    const path = join(dir.path, `${kind}.csv`);
    const summary = await exportResultsFile(results, 'results.csv', ';', [request(kind, path, choices)]);
    const parsed = Papa.parse<string[]>(readFileSync(path, 'utf8'), { skipEmptyLines: true });
    const result = { rows: summary.exported[path], leftOut: summary.leftOut?.[path] };
    return { result, header: parsed.data[0], rows: parsed.data.slice(1) };
  };

  it('clean by default: corrected addresses in the address column, one row per address', async () => {
    const { result, header, rows } = await run('clean');
    expect(header).toEqual([
      'Name',
      'Email',
      'City',
      'Validation Status',
      'Validation Code',
      'Domain Type',
      'Role Account',
      'Duplicate',
      'Valid Email',
      'Original Email',
    ]);
    const emails = rows.map((row) => row[1]);
    expect(emails).toEqual([
      'zoe@example.com',
      'ann@hotmail.com',
      'info@example.com',
      'y@guerrillamail.com',
      'q@example.com',
    ]);
    // The corrected row keeps its original beside it; the later valid ann@hotmail.com is its duplicate.
    expect(rows[1][9]).toBe('ann@hotmial.com');
    expect(rows[0][9]).toBe('');
    expect(rows[4][2]).toBe('line\r\nbreak');
    expect(new Set(emails.map((e) => e.toLowerCase())).size).toBe(emails.length);
    expect(result.rows).toBe(5);
    expect(result.leftOut).toEqual({ duplicates: 2, role: 0, disposable: 0 });
  });

  it('honours each choice', async () => {
    const kept = await run('clean', { dedupe: false });
    expect(kept.rows.map((row) => row[1])).toContain('ZOE@Example.com');
    expect(kept.rows).toHaveLength(7);
    const noRole = await run('clean', { dropRole: true });
    expect(noRole.rows.map((row) => row[1])).not.toContain('info@example.com');
    expect(noRole.result.leftOut?.role).toBe(1);
    const noDisposable = await run('clean', { dropDisposable: true });
    expect(noDisposable.rows.map((row) => row[1])).not.toContain('y@guerrillamail.com');
    expect(noDisposable.result.leftOut?.disposable).toBe(1);
    // Safe: valid and corrected, deduplicated by default (the corrected Ann comes first).
    const safe = await run('safe');
    expect(safe.rows.map((row) => row[1])).toEqual(['ann@hotmail.com']);
    // All: nothing left out by default.
    expect((await run('all')).rows).toHaveLength(9);
  });

  it('treats NFC and NFD spellings of an address as one', async () => {
    const nfc = 'jos\u00e9@example.com';
    const nfd = 'jose\u0301@example.com';
    writeFileSync(
      results,
      `Email,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email\n${nfc},unknown,10,,,true,\n${nfd.toUpperCase()},unknown,10,,,true,\n`,
    );
    const path = join(dir.path, 'nfc.csv');
    const summary = await exportResultsFile(results, 'results.csv', ',', [request('clean', path, {}, 0)]);
    expect(summary.exported[path]).toBe(1);
  });

  it('writes Excel-friendly CSV with a BOM and CRLF, and TSV with tabs', async () => {
    const excel = join(dir.path, 'excel.csv');
    const tsv = join(dir.path, 'list.tsv');
    await exportResultsFile(results, 'results.csv', ';', [
      request('clean', excel, { format: 'csv-excel' }),
      request('clean', tsv, { format: 'tsv' }),
    ]);
    const bytes = readFileSync(excel);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8').slice(1);
    expect(text.split('\r\n')[1]).toBe('Zoë,zoe@example.com,Köln,unknown,10,,,true,,');
    expect(text.replaceAll('\r\n', '').includes('\n')).toBe(false);
    const tsvLines = readFileSync(tsv, 'utf8').split('\n');
    expect(tsvLines[0].split('\t')).toHaveLength(10);
    expect(tsvLines[1]).toBe('Zoë\tzoe@example.com\tKöln\tunknown\t10\t\t\ttrue\t\t');
  });

  it('goes on in a next sheet under the header again when a sheet is full (Excel’s 1,048,576 rows)', async () => {
    expect(XLSX_SHEET_ROWS).toBe(1_048_576);
    const path = join(dir.path, 'long.xlsx');
    const name = `A very long list name ${'x'.repeat(20)}`;
    const writer = await openRowWriter(path, 'xlsx', name, 3);
    await writer.writeRow(['Email', 'Name']);
    for (let i = 0; i < 7; i++) await writer.writeRow([`p${i}@example.com`, `P ${i}`]);
    await writer.close();
    const sheets = await sheetNames(path);
    expect(sheets).toEqual([
      name.slice(0, 31),
      `${name.slice(0, 27)} (2)`,
      `${name.slice(0, 27)} (3)`,
      `${name.slice(0, 27)} (4)`,
    ]);
    const rows: string[] = [];
    for (const sheet of sheets) {
      let text = '';
      for await (const chunk of sheetCsv(path, sheet)) text += chunk;
      const [header, ...body] = text.trimEnd().split('\n');
      expect(header).toBe('Email,Name');
      expect(body.length).toBeLessThanOrEqual(2);
      rows.push(...body);
    }
    expect(rows).toEqual(Array.from({ length: 7 }, (_, i) => `p${i}@example.com,P ${i}`));
  });

  it('writes .xlsx that reads back as the same rows', async () => {
    const csv = join(dir.path, 'same.csv');
    const xlsx = join(dir.path, 'same.xlsx');
    await exportResultsFile(results, 'results.csv', ';', [
      request('clean', csv),
      request('clean', xlsx, { format: 'xlsx' }),
    ]);
    // Cells keep their line breaks as \n (Excel's way).
    const expected = Papa.parse<string[]>(readFileSync(csv, 'utf8'), { skipEmptyLines: true }).data.map(
      (row) => row.map((cell) => cell.replaceAll('\r\n', '\n')),
    );
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(xlsx);
    const sheet = workbook.worksheets[0];
    const actual: string[][] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      for (let c = 1; c <= expected[0].length; c++) {
        const value = row.getCell(c).value;
        cells.push(
          typeof value === 'string'
            ? value
            : value === null || value === undefined
              ? ''
              : JSON.stringify(value),
        );
      }
      actual.push(cells);
    });
    expect(actual).toEqual(expected);
  });

  it('zips one file per status', async () => {
    const path = join(dir.path, 'statuses.zip');
    const zip = await writeStatusZip(
      { path: results, name: 'results.csv', delimiter: ';' },
      { destination: path, choices: defaultExportChoices('all'), emailIndex: 1, stem: 'list' },
    );
    const entries = unzipSync(readFileSync(path));
    expect(Object.keys(entries).sort()).toEqual([
      'list-corrected.csv',
      'list-invalid.csv',
      'list-risky.csv',
      'list-unknown.csv',
      'list-valid.csv',
    ]);
    const unknown = Papa.parse<string[]>(new TextDecoder().decode(entries['list-unknown.csv']), {
      skipEmptyLines: true,
    }).data;
    expect(unknown.slice(1).map((row) => row[1])).toEqual([
      'zoe@example.com',
      'ZOE@Example.com',
      'info@example.com',
      'y@guerrillamail.com',
      'q@example.com',
    ]);
    expect(zip.files.find((file) => file.name === 'list-unknown.csv')?.rows).toBe(5);
  });

  it('copies rows as they were only when a writer would write the same bytes', async () => {
    // Comma results with \n breaks: rows copied as bytes, rows quoted otherwise than a writer quotes (a
    // needless quote, a quote inside an unquoted field, a lone \r) written again from their fields.
    writeFileSync(
      results,
      [
        'Name,Email,Street,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email',
        'Ann,ann@example.com,"1 Main St, Apt 2",unknown,10,,,,',
        '"Bob",bob@example.com,2 Elm St,unknown,10,,,,',
        'Cy "C",cy@example.com,3 Oak St,unknown,10,,,,',
        'Di,di@example.com,4 Ash\rSt,unknown,10,,,,',
        '"Ed ""E""",ed@example.com,"5 Fir\nSt",unknown,10,,,,',
        'Fay,fay@gmial.com,6 Elm St,corrected,10,,,,fay@gmail.com',
        'Gus,gus@example.com,7 Yew St,unknown,10,,,',
        'Ann again, ANN@Example.COM ,8 Elm St,unknown,10,,,true,',
        'Zoë,zoë@example.com,9 Elm St,unknown,10,,,,',
        'Zoe,ZOË@example.com,9 Elm St,unknown,10,,,true,',
        '',
      ].join('\n'),
    );
    const path = join(dir.path, 'copied.csv');
    const summary = await exportResultsFile(results, 'results.csv', ',', [request('clean', path, {}, 1)]);
    expect(readFileSync(path, 'utf8').split('\n')).toEqual([
      'Name,Email,Street,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email,Original Email',
      'Ann,ann@example.com,"1 Main St, Apt 2",unknown,10,,,,,',
      'Bob,bob@example.com,2 Elm St,unknown,10,,,,,',
      '"Cy ""C""",cy@example.com,3 Oak St,unknown,10,,,,,',
      'Di,di@example.com,"4 Ash\rSt",unknown,10,,,,,',
      '"Ed ""E""",ed@example.com,"5 Fir',
      'St",unknown,10,,,,,',
      'Fay,fay@gmail.com,6 Elm St,corrected,10,,,,fay@gmail.com,fay@gmial.com',
      'Gus,gus@example.com,7 Yew St,unknown,10,,,,,',
      'Zoë,zoë@example.com,9 Elm St,unknown,10,,,,,',
      '',
    ]);
    expect(summary.leftOut?.[path]).toEqual({ duplicates: 2, role: 0, disposable: 0 });
  });
});
