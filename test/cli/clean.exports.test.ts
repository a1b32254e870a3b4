// The one exporter (electron/core/jobs/exports.ts), against papaparse's reading of the same results, fed in
// chunks of every size: rows with quotes, delimiters and line breaks inside fields, a quoted Valid Email, CRLF,
// a byte-order mark, and a last row without a line break. Then its seam (a rule that reshapes rows), its
// temporary names, and a stored (zipped) results file exported again.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import { afterEach, describe, expect, it } from 'vitest';
import { strToU8, zipSync } from 'fflate';
import {
  EXPORT_KINDS,
  ResultsExporter,
  ResultsProblem,
  exportResultsFile,
  targetOf,
  type ExportTarget,
} from '../../electron/core/jobs/exports.js';
import { exportKeepsStatus } from '../../shared/exports.js';
import { tempDir } from '../helpers/service.js';

const HEADER = 'email,note,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';
const ROWS = [
  'jane@example.com,plain,unknown,10,,,true,',
  '"x,y@example.com","a ""quoted"" note",invalid,110,,,,',
  'jo@gmial.com,"two\r\nlines",corrected,10,,,,jo@gmail.com',
  'odd@example.com,note,corrected,10,,,,"odd,one@example.com"',
  'temp@mailinator.com,,risky,525,disposable,,true,',
  'info@example.org,"ends with ""quote""",unknown,10,org,true,,',
  'VALID@example.com,caps,Valid,50,,,,VALID@example.com',
];

describe('ResultsExporter', () => {
  const dirs: { remove(): void }[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => dir.remove()));

  for (const chunkSize of [1, 7, 64, 1 << 20]) {
    it(`writes each export as papaparse reads the results (chunks of ${chunkSize} bytes)`, async () => {
      const dir = tempDir();
      dirs.push(dir);
      const text = `\uFEFF${HEADER}\r\n${ROWS.join('\r\n')}`; // no line break after the last row
      const bytes = Buffer.from(text);
      const targets = EXPORT_KINDS.map((kind) =>
        targetOf({ name: kind, spec: { kind }, path: join(dir.path, `${kind}.csv`) }),
      );
      const exporter = await ResultsExporter.open(',', targets);
      for (let at = 0; at < bytes.length; at += chunkSize)
        await exporter.push(bytes.subarray(at, at + chunkSize));
      const summary = await exporter.finish();

      const parsed = Papa.parse<string[]>(text.slice(1), { delimiter: ',', newline: '\r\n' }).data;
      const statusAt = parsed[0].indexOf('Validation Status');
      expect(summary.rows).toBe(ROWS.length);
      expect(summary.duplicates).toBe(2);
      for (const { name: kind, path } of targets) {
        const expected = ROWS.filter((_, i) =>
          exportKeepsStatus(kind as (typeof EXPORT_KINDS)[number], parsed[i + 1][statusAt].toLowerCase()),
        );
        expect(readFileSync(path, 'utf8'), kind).toBe(
          `\uFEFF${HEADER}\r\n${expected.map((row) => `${row}\r\n`).join('')}`,
        );
        expect(summary.exported[kind]).toBe(expected.length);
      }
      expect(summary.exported).toEqual({ safe: 3, invalid: 1, clean: 5, all: 7 });
    });
  }

  it('hands rules each row with its columns: a rule may reshape rows and the header', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const text = `${HEADER}\n${ROWS.join('\n')}\n`;
    const seen: { status: string; isDuplicate: boolean; email: string | undefined }[] = [];
    const reshaped: ExportTarget = {
      name: 'shaped',
      path: join(dir.path, 'shaped.csv'),
      rule: {
        needsStatus: true,
        header: (columns) => [columns[0], 'Status'],
        row: (row) => {
          seen.push({ status: row.status, isDuplicate: row.isDuplicate, email: row.column('Valid Email') });
          if (row.status === 'invalid') return false;
          return [row.column('Valid Email') || row.fields()[0], row.status];
        },
      },
    };
    const exporter = await ResultsExporter.open(',', [reshaped]);
    await exporter.push(Buffer.from(text));
    // Nothing under the final name until the export is complete.
    expect(existsSync(reshaped.path)).toBe(false);
    const summary = await exporter.finish();
    expect(seen.map((row) => row.status)).toEqual([
      'unknown',
      'invalid',
      'corrected',
      'corrected',
      'risky',
      'unknown',
      'valid',
    ]);
    expect(seen.filter((row) => row.isDuplicate)).toHaveLength(2);
    expect(seen[3].email).toBe('odd,one@example.com');
    expect(summary.exported.shaped).toBe(6);
    expect(readFileSync(reshaped.path, 'utf8')).toBe(
      [
        'email,Status',
        'jane@example.com,unknown',
        'jo@gmail.com,corrected',
        '"odd,one@example.com",corrected',
        'temp@mailinator.com,risky',
        'info@example.org,unknown',
        'VALID@example.com,valid',
        '',
      ].join('\n'),
    );
    expect(readdirSync(dir.path)).toEqual(['shaped.csv']);
  });

  it('leaves no file behind when an export fails, and keeps the one already there', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const path = join(dir.path, 'safe.csv');
    writeFileSync(path, 'the export of an earlier run\n');
    const exporter = await ResultsExporter.open(',', [
      targetOf({ name: 'safe', path, spec: { kind: 'safe' } }),
    ]);
    await exporter.push(Buffer.from('email,note\na@example.com,x\n'));
    await expect(exporter.finish()).rejects.toBeInstanceOf(ResultsProblem);
    expect(readdirSync(dir.path)).toEqual(['safe.csv']);
    expect(readFileSync(path, 'utf8')).toBe('the export of an earlier run\n');
  });

  it('exports a stored results file again, zipped or not', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const text = `${HEADER}\n${ROWS.join('\n')}\n`;
    const plain = join(dir.path, 'list-7-Validation.csv');
    writeFileSync(plain, text);
    const zipped = join(dir.path, 'list-8-Validation.zip');
    writeFileSync(zipped, zipSync({ 'list-8-Validation.csv': strToU8(text) }));
    const outputs: string[] = [];
    for (const [path, name] of [
      [plain, 'list-7-Validation.csv'],
      [zipped, 'list-8-Validation.zip'],
    ] as const) {
      const out = join(dir.path, `${name}-clean.csv`);
      const summary = await exportResultsFile(path, name, ',', [
        { name: 'clean', path: out, spec: { kind: 'clean' } },
      ]);
      expect(summary).toEqual({ rows: 7, duplicates: 2, exported: { clean: 5 } });
      outputs.push(readFileSync(out, 'utf8'));
    }
    expect(outputs[0]).toMatch(/^email,note,Validation Status/);
    expect(outputs[1]).toBe(outputs[0]);
  });
});
