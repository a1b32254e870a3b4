// The exports of `mailsieve clean` (electron/core/jobs/exports.ts), against papaparse's reading of the same
// results, fed in chunks of every size: rows with quotes, delimiters and line breaks inside fields, a quoted
// Valid Email, CRLF, a byte-order mark, and a last row without a line break.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import { afterEach, describe, expect, it } from 'vitest';
import { EXPORT_KINDS, ResultsExporter, isExported } from '../../electron/core/jobs/exports.js';
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
      const targets = EXPORT_KINDS.map((kind) => ({ kind, path: join(dir.path, `${kind}.csv`) }));
      const exporter = await ResultsExporter.open(',', targets);
      for (let at = 0; at < bytes.length; at += chunkSize)
        await exporter.push(bytes.subarray(at, at + chunkSize));
      const summary = await exporter.finish();

      const parsed = Papa.parse<string[]>(text.slice(1), { delimiter: ',', newline: '\r\n' }).data;
      const statusAt = parsed[0].indexOf('Validation Status');
      expect(summary.rows).toBe(ROWS.length);
      expect(summary.duplicates).toBe(2);
      for (const { kind, path } of targets) {
        const expected = ROWS.filter((_, i) => isExported(kind, parsed[i + 1][statusAt].toLowerCase()));
        expect(readFileSync(path, 'utf8'), kind).toBe(
          `\uFEFF${HEADER}\r\n${expected.map((row) => `${row}\r\n`).join('')}`,
        );
        expect(summary.exported[kind]).toBe(expected.length);
      }
      expect(summary.exported).toEqual({ safe: 3, invalid: 1, clean: 5, all: 7 });
    });
  }
});
