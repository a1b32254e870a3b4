// File inspection, the offline pre-check and upload preparation, on real files.
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectFile, headerSignature } from '../../../electron/core/files/inspect.js';
import { headerFor, precheck, prepareUpload } from '../../../electron/core/files/prepare.js';
import { fieldText, walkRows } from '../../../electron/core/files/count.js';
import Papa from 'papaparse';
import { tempDir } from '../../helpers/service.js';
import type { Mapping } from '../../../shared/desktop/contract.js';

/** The bytes of a text in chunks of `size`, as a file's stream arrives. */
function chunksOf(text: string, size: number): AsyncIterable<Buffer> {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks) as AsyncIterable<Buffer>;
}

describe('list files', () => {
  let dir: ReturnType<typeof tempDir>;
  const write = (name: string, content: string | Uint8Array) => {
    const path = join(dir.path, name);
    writeFileSync(path, content);
    return { path, name, size: Buffer.byteLength(content) };
  };
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('reads rows by the service’s row scanner: line breaks outside quotes, across chunk borders', async () => {
    const text = 'a,b\r\n"x\r\ny",2\r\n"q""uote",3\r\n , \r\nlast,4';
    for (const size of [1, 2, 3, 7, 100]) {
      const rows: { fields: string[]; isBlank: boolean }[] = [];
      let lineBreak = '';
      await walkRows(
        chunksOf(text, size),
        { delimiter: ',', onLineBreak: (sequence) => (lineBreak = sequence) },
        (buf, scanner, isBlank) => {
          const fields = Array.from({ length: scanner.fields }, (_, f) => fieldText(buf, scanner, f));
          rows.push({ fields, isBlank });
        },
      );
      expect(lineBreak).toBe('\r\n');
      expect(rows).toEqual([
        { fields: ['a', 'b'], isBlank: false },
        { fields: ['x\r\ny', '2'], isBlank: false },
        { fields: ['q"uote', '3'], isBlank: false },
        { fields: [' ', ' '], isBlank: true },
        { fields: ['last', '4'], isBlank: false },
      ]);
    }
  });

  it('copies rows to the parts as their bytes, quoted line breaks and rows across 1 MiB windows intact', async () => {
    const lines = ['email,note'];
    for (let i = 0; i < 40_000; i++)
      lines.push(
        i % 7 === 0
          ? `p${i}@example.com,"line one\nline ""two"", ${i}"`
          : `p${i}@example.com,note number ${i} of the list, kept as it is`,
      );
    const file = write('wide.csv', `${lines.join('\n')}\n\n`);
    expect(file.size).toBeGreaterThan(2 * 1024 * 1024);
    const parts = await prepareUpload(
      file,
      { delimiter: ',', header: true, roles: ['email', 'first_name'] },
      { split: true, dir: join(dir.path, 'parts'), headerNames: ['email', 'note'], partLimit: 15_000 },
    );
    expect(parts.map((p) => p.rows)).toEqual([15_000, 15_000, 10_000]);
    const rows = parts.flatMap((p) => {
      const [header, ...data] = Papa.parse<string[]>(readFileSync(p.path, 'utf8'), {
        skipEmptyLines: true,
      }).data;
      expect(header).toEqual(['email', 'First Name']);
      return data;
    });
    const original = Papa.parse<string[]>(readFileSync(file.path, 'utf8'), {
      skipEmptyLines: true,
    }).data.slice(1);
    expect(rows).toEqual(original);
  });

  it('inspects a list: delimiter, header, rows, email share and suggested roles', async () => {
    const file = write(
      'people.csv',
      'E-Mail,First Name,Surname,Postal Code,Hash\njane@example.com,Jane,Doe,10001,' +
        'a'.repeat(32) +
        '\nnot-an-address,Ann,Lee,10002,' +
        'b'.repeat(32) +
        '\n',
    );
    const inspection = await inspectFile({ fileId: 'f', ...file });
    expect(inspection).toMatchObject({
      format: 'csv',
      encoding: 'utf-8',
      delimiter: ',',
      header: true,
      rowCount: 2,
      isRowCountEstimate: false,
    });
    expect(inspection.columns.map((c) => c.suggestedRole)).toEqual([
      'email',
      'first_name',
      'last_name',
      'zip',
      'md5',
    ]);
    expect(inspection.columns[0].emailShare).toBe(0.5);
    expect(inspection.rows).toHaveLength(2);
    expect(inspection.signature).toBe(
      headerSignature(true, ['email', 'first name', 'surname', 'postal code', 'hash']),
    );
  });

  it('reads Windows-1252 text and warns about it; applies a remembered mapping for the same header', async () => {
    const bytes = Buffer.from('email;name\nrene@example.com;Ren\xe9\n', 'latin1');
    const file = write('latin.txt', bytes);
    const inspection = await inspectFile({
      fileId: 'f',
      ...file,
      presetFor: (signature) =>
        signature === 'h:email|name'
          ? { roles: ['email', 'full_name'], delimiter: ';', header: true }
          : undefined,
    });
    expect(inspection.encoding).toBe('windows-1252');
    expect(inspection.delimiter).toBe(';');
    expect(inspection.rows[0]).toEqual(['rene@example.com', 'René']);
    expect(inspection.warnings.map((w) => w.code)).toContain('not-utf8');
    expect(inspection.isPresetApplied).toBe(true);
    expect(inspection.columns.map((c) => [c.suggestedRole, c.suggestedBy])).toEqual([
      ['email', 'preset'],
      ['full_name', 'preset'],
    ]);
  });

  it('counts the rows of a big zipped list exactly and offers to split past the limit', async () => {
    // Rows that differ, as a real list's do: one row repeated would compress past the zip-bomb ratio the
    // service refuses (and so the desktop, which checks zips by the service's rule).
    const rows = Array.from(
      { length: 1_100_000 },
      (_, i) => `someone.${String(i).padStart(7, '0')}@example.com,Someone\n`,
    );
    const text = 'email,name\n' + rows.join('');
    const file = write('big.zip', zipSync({ 'big.csv': new TextEncoder().encode(text) }, { level: 1 }));
    const inspection = await inspectFile({ fileId: 'f', ...file });
    expect(inspection.isRowCountEstimate).toBe(false);
    expect(inspection.rowCount).toBe(1_100_000);
    expect(inspection.innerName).toBe('big.csv');
    expect(inspection.warnings.find((w) => w.code === 'too-many-rows')?.message).toMatch(
      /Split the file into 2 parts/,
    );
  });

  it('counts rows to send, syntax failures and duplicates offline', async () => {
    const file = write(
      'list.csv',
      'email,name\njane@example.com,Jane\nJANE@example.com,Jane\nbad,Bad\n,\nx@@y.com,X\nok@example.org,Ok\n',
    );
    const result = await precheck(file, { delimiter: ',', header: true, roles: ['email', 'ignore'] }, false);
    expect(result).toEqual({ rowsToSend: 5, invalid: 2, duplicates: 2, blank: 1, overLimit: 0, parts: 1 });
    expect(
      await precheck(file, { delimiter: ',', header: true, roles: ['email', 'ignore'] }, true, 2),
    ).toMatchObject({ parts: 3, overLimit: 0 });
    expect(
      await precheck(file, { delimiter: ',', header: true, roles: ['email', 'ignore'] }, false, 2),
    ).toMatchObject({ parts: 1, overLimit: 3 });
  });

  it('stops at a row longer than the service takes (1 MiB): a file problem, in the service’s words', async () => {
    const file = write(
      'long.csv',
      `email,note\njane@example.com,${'a'.repeat(3 * 1024 * 1024)}\nbob@example.com,x\n`,
    );
    const mapping: Mapping = { delimiter: ',', header: true, roles: ['email', 'ignore'] };
    const refused = {
      code: 'file-unreadable',
      message: 'Line 2 is longer than 1 MB, the most a row may hold.',
    };
    await expect(precheck(file, mapping, false)).rejects.toMatchObject(refused);
    // (The mapper's exact count.)
    await expect(inspectFile({ fileId: 'f', ...file })).rejects.toMatchObject(refused);
  });

  it('uploads the original when it can, and otherwise a copy naming the chosen roles, split into parts', async () => {
    const file = write(
      'crm.csv',
      'Mail,Vorname,Stadt\r\na@example.com,A,X\r\nb@example.com,B,Y\r\n\r\nc@example.com,C,Z\r\n',
    );
    const same = await prepareUpload(
      file,
      { delimiter: ',', header: true, roles: ['email', 'ignore', 'ignore'] },
      { split: false, dir: join(dir.path, 'a'), headerNames: ['Mail', 'Vorname', 'Stadt'] },
    );
    expect(same).toEqual([{ path: file.path, name: 'crm.csv', size: file.size, header: true, rows: null }]);

    const parts = await prepareUpload(
      file,
      { delimiter: ',', header: true, roles: ['email', 'first_name', 'city'] },
      { split: true, dir: join(dir.path, 'b'), headerNames: ['Mail', 'Vorname', 'Stadt'], partLimit: 2 },
    );
    expect(parts.map((p) => [p.name, p.rows, p.header])).toEqual([
      ['crm-part1.csv', 2, true],
      ['crm-part2.csv', 1, true],
    ]);
    expect(readFileSync(parts[0].path, 'utf8')).toBe(
      'Mail,First Name,City\r\na@example.com,A,X\r\nb@example.com,B,Y\r\n',
    );
    expect(readFileSync(parts[1].path, 'utf8')).toBe('Mail,First Name,City\r\nc@example.com,C,Z\r\n');

    // A file without a header gets one when its other columns have roles.
    const bare = write('bare.txt', 'a@example.com\tAnn\n');
    const [withHeader] = await prepareUpload(
      bare,
      { delimiter: '\t', header: false, roles: ['email', 'first_name'] },
      { split: false, dir: join(dir.path, 'c'), headerNames: [] },
    );
    expect(withHeader).toMatchObject({ name: 'bare.txt', header: true, rows: 1 });
    expect(readFileSync(withHeader.path, 'utf8')).toBe('Email\tFirst Name\na@example.com\tAnn\n');
  });

  it('counts the rows of a list without an email column, checking no address', async () => {
    const file = write(
      'people.csv',
      'first,last,street,zip\nAnn,Lee,1 Main St,10001\n,,,\nBo,Li,2 Oak Ave,10002\n',
    );
    expect(
      await precheck(
        file,
        { delimiter: ',', header: true, roles: ['first_name', 'last_name', 'street', 'zip'] },
        false,
      ),
    ).toEqual({ rowsToSend: 2, invalid: 0, duplicates: 0, blank: 1, overLimit: 0, parts: 1 });
  });

  it('sends the header names the services read: mapped roles named, set-aside synonyms renamed', () => {
    const names = ['E-Mail', 'Vorname', 'Nachname', 'Address', 'City', 'PLZ'];
    const mapping = {
      delimiter: ',',
      header: true,
      roles: ['email', 'first_name', 'last_name', 'street', 'ignore', 'zip'] as const,
    };
    // Validation alone reads the email column only: a set-aside "City" can stay as it is.
    expect(headerFor({ ...mapping, roles: [...mapping.roles] }, names)).toEqual({
      cells: ['E-Mail', 'First Name', 'Last Name', 'Address', 'City', 'Zip'],
      isChanged: true,
    });
    // Email append finds columns by name: the ignored "City" must not be read as one.
    expect(
      headerFor({ ...mapping, roles: [...mapping.roles] }, names, ['email_validation', 'email_append']),
    ).toEqual({
      cells: ['E-Mail', 'First Name', 'Last Name', 'Address', 'City (ignored)', 'Zip'],
      isChanged: true,
    });
    // An email column named like a postal column is renamed when names are read.
    expect(
      headerFor(
        { delimiter: ',', header: true, roles: ['email', 'ignore'] },
        ['Address', 'Notes'],
        ['email_intelligence'],
      ),
    ).toEqual({ cells: ['Email', 'Notes'], isChanged: true });
    // A file whose names already say every role goes as it is.
    expect(
      headerFor(
        { delimiter: ',', header: true, roles: ['email', 'first_name', 'last_name', 'street', 'zip'] },
        ['email', 'first name', 'last name', 'street', 'zip'],
        ['email_intelligence', 'email_append'],
      ),
    ).toEqual({ cells: ['email', 'first name', 'last name', 'street', 'zip'], isChanged: false });
  });
});
