// Reading a downloaded results file offline (previews) and exporting it again (the exporter over a stored
// file): the status of each row is found past the columns the list services append (quoted when a value
// holds the delimiter), and a file without a status column (a job that ran no validation) is previewed and
// exported whole.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { previewRows, ResultsProblem } from '../../../electron/core/results.js';
import { exportResultsFile, ResultsFormatError } from '../../../electron/core/jobs/exports.js';
import { tempDir } from '../../helpers/service.js';

const HEADER =
  'email,name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email,age,postal_address.address,Appended Email';

describe('results files', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());
  const write = (name: string, text: string) => {
    const path = join(dir.path, name);
    writeFileSync(path, text);
    return path;
  };

  it('finds each row’s status past appended columns, quoted ones included', async () => {
    const path = write(
      'results.csv',
      [
        HEADER,
        'a@example.com,"Lee, Ann",valid,50,paid,,,a@example.com,35-44,"1 Main St, Apt 2",',
        'b@example.com,Bo,invalid,300,,,true,,,"Elm ""Old"" Rd, 3",b2@example.com',
        'c@example.com,"Cy ""C"", Jr",unknown,10,free,,true,,,,',
      ].join('\n') + '\n',
    );
    const valid = await previewRows(path, 'results.csv', ',', 'valid', 10);
    expect(valid.rows.map((row) => row[0])).toEqual(['a@example.com']);
    expect((await previewRows(path, 'results.csv', ',', 'invalid', 10)).rows.map((r) => r[0])).toEqual([
      'b@example.com',
    ]);
    expect((await previewRows(path, 'results.csv', ',', 'unknown', 10)).rows.map((r) => r[0])).toEqual([
      'c@example.com',
    ]);
    const out = join(dir.path, 'clean.csv');
    const written = await exportResultsFile(path, 'results.csv', ',', [
      { name: 'clean', path: out, spec: { kind: 'clean' } },
    ]);
    expect(written).toEqual({ rows: 3, duplicates: 2, exported: { clean: 2 } });
    expect(readFileSync(out, 'utf8').split('\n')[2]).toMatch(/^c@example\.com/);
  });

  it('previews and exports every row of a file without a status column; other exports are refused', async () => {
    const path = write(
      'append.csv',
      'first name,last name,street,zip,Appended Email,Email Match Type\nAnn,Lee,1 Main St,10001,ann@demo.example.com,Individual\nBo,Li,2 Oak,10002,,\n',
    );
    const preview = await previewRows(path, 'append.csv', ',', null, 10);
    expect(preview.rows).toHaveLength(2);
    expect(preview.columns.at(-1)).toBe('Email Match Type');
    await expect(previewRows(path, 'append.csv', ',', 'valid', 10)).rejects.toBeInstanceOf(ResultsProblem);
    const out = join(dir.path, 'all.csv');
    const all = (path: string, out: string, columnNames?: string[]) =>
      exportResultsFile(path, 'append.csv', ',', [
        { name: 'all', path: out, spec: { kind: 'all', columnNames: columnNames ?? null } },
      ]);
    expect(await all(path, out)).toMatchObject({ rows: 2, duplicates: 0, exported: { all: 2 } });
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(path, 'utf8'));
    // The file sent renamed the user's columns: their own names come back, quoted where needed.
    const own = ['Vorname', 'Nachname', 'Straße, Nr.', 'PLZ'];
    expect((await previewRows(path, 'append.csv', ',', null, 1, own)).columns).toEqual([
      ...own,
      'Appended Email',
      'Email Match Type',
    ]);
    const renamed = join(dir.path, 'renamed.csv');
    await all(path, renamed, own);
    expect(readFileSync(renamed, 'utf8').split('\n')[0]).toBe(
      'Vorname,Nachname,"Straße, Nr.",PLZ,Appended Email,Email Match Type',
    );
    await expect(
      exportResultsFile(path, 'append.csv', ',', [
        { name: 'safe', path: join(dir.path, 'x.csv'), spec: { kind: 'safe' } },
      ]),
    ).rejects.toBeInstanceOf(ResultsFormatError);
  });
});
