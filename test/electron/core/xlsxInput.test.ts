// .xlsx lists (issue #12): a sheet read by exceljs's streaming reader becomes CSV text that the mapper,
// the pre-check and the upload read as any list; the first sheet unless one is named.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectFile } from '../../../electron/core/files/inspect.js';
import { precheck, prepareUpload } from '../../../electron/core/files/prepare.js';
import { convertSheetToCsv, sheetNames } from '../../../electron/core/files/xlsx.js';
import { tempDir } from '../../helpers/service.js';

async function workbook(path: string): Promise<void> {
  const book = new ExcelJS.Workbook();
  const people = book.addWorksheet('People');
  people.addRow(['Email', 'Name', 'Joined', 'Zip']);
  people.addRow(['zoe@example.com', 'Zoë, "Z"', new Date(Date.UTC(2024, 4, 17)), '01234']);
  people.addRow(['bad-address', 'Line\nbreak', 42, '']);
  people.addRow(['ann@hotmial.com', { richText: [{ text: 'A' }, { text: 'nn' }] }, null, '75001']);
  const other = book.addWorksheet('Suppressed');
  other.addRow(['email']);
  other.addRow(['gone@example.com']);
  await book.xlsx.writeFile(path);
}

describe('xlsx lists', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  beforeEach(async () => {
    dir = tempDir();
    path = join(dir.path, 'crm.xlsx');
    await workbook(path);
  });
  afterEach(() => dir.remove());

  it('converts the first sheet, or the named one, to CSV', async () => {
    expect(await sheetNames(path)).toEqual(['People', 'Suppressed']);
    const csv = join(dir.path, 'people.csv');
    await convertSheetToCsv(path, csv);
    expect(readFileSync(csv, 'utf8')).toBe(
      'Email,Name,Joined,Zip\n' +
        'zoe@example.com,"Zoë, ""Z""",2024-05-17,01234\n' +
        'bad-address,"Line\nbreak",42,\n' +
        'ann@hotmial.com,Ann,,75001\n',
    );
    const second = join(dir.path, 'suppressed.csv');
    await convertSheetToCsv(path, second, 'Suppressed');
    expect(readFileSync(second, 'utf8')).toBe('email\ngone@example.com\n');
    await expect(convertSheetToCsv(path, second, 'Nope')).rejects.toThrow(/no sheet named “Nope”.*“People”/);
  });

  it('goes through the same mapper, pre-check and upload as a CSV', async () => {
    const file = { path, name: 'crm.xlsx', size: readFileSync(path).length };
    const inspection = await inspectFile({ fileId: 'f', ...file });
    expect(inspection.header).toBe(true);
    expect(inspection.rowCount).toBe(3);
    expect(inspection.columns.map((c) => c.suggestedRole)[0]).toBe('email');
    const mapping = {
      delimiter: inspection.delimiter,
      header: true,
      roles: inspection.columns.map((c) => c.suggestedRole),
    };
    const checked = await precheck(file, mapping, false);
    expect(checked.rowsToSend).toBe(3);
    expect(checked.invalid).toBe(1);
    const parts = await prepareUpload(file, mapping, {
      split: false,
      dir: join(dir.path, 'upload'),
      headerNames: inspection.columns.map((c) => c.name),
    });
    expect(parts).toHaveLength(1);
    expect(parts[0].name).toBe('crm.csv');
    expect(readFileSync(parts[0].path, 'utf8').split('\n')[1]).toBe(
      'zoe@example.com,"Zoë, ""Z""",2024-05-17,01234',
    );
  });
});
