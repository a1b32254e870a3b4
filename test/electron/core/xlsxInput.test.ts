// .xlsx lists (issue #12): a sheet read by exceljs's streaming reader becomes CSV text that the mapper,
// the pre-check and the upload read as any list; the first sheet unless one is named. The archive is read
// through its central directory, so the order of its parts does not matter.
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { unzipSync, zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectFile } from '../../../electron/core/files/inspect.js';
import { precheck, prepareUpload } from '../../../electron/core/files/prepare.js';
import { openListSource, readHead } from '../../../electron/core/files/source.js';
import { convertSheetToCsv, sheetCsv, sheetNames, SheetProblem } from '../../../electron/core/files/xlsx.js';
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
    const copies = join(dir.path, 'sheets');
    const file = { path, name: 'crm.xlsx', size: readFileSync(path).length, sheetCopyDir: copies };
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
    // The pre-check read the sheet whole: the upload reads its copy.
    expect(readdirSync(copies)).toHaveLength(1);
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

  it('keeps the CSV of a sheet read whole, and reads that copy while the workbook is unchanged', async () => {
    // More rows than a few chunks of conversion, so that a sample is only a start.
    const book = new ExcelJS.Workbook();
    const people = book.addWorksheet('People');
    for (let i = 0; i < 12_000; i++) people.addRow([`p${i}@example.com`, `Person ${i}`]);
    await book.xlsx.writeFile(path);
    // A whole millisecond: utimes keeps no finer time.
    utimesSync(path, new Date(1_700_000_000_000), new Date(1_700_000_000_000));
    const copies = join(dir.path, 'sheets');
    const size = statSync(path).size;
    const source = () => openListSource(path, 'crm.xlsx', size, { sheet: 'People', sheetCopyDir: copies });
    const files = () => (existsSync(copies) ? readdirSync(copies) : []);
    const readAll = async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of (await (await source()).open()) as AsyncIterable<Buffer>) chunks.push(chunk);
      return Buffer.concat(chunks).toString('utf8');
    };
    // A read stopped early (the mapper's sample) keeps nothing.
    const head = await readHead(await (await source()).open(), 16);
    expect(head.isWhole).toBe(false);
    // Its temporary copy is removed as the stopped conversion winds down (a busy machine takes longer).
    for (const deadline = Date.now() + 10_000; files().length > 0 && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(files()).toEqual([]);

    const csv = join(dir.path, 'people.csv');
    await convertSheetToCsv(path, csv, 'People');
    expect(await readAll()).toBe(readFileSync(csv, 'utf8'));
    expect(files()).toHaveLength(1);
    expect(files()[0]).toMatch(/\.csv$/);
    expect((await source()).textSize).toBe(statSync(csv).size);

    // The workbook's bytes are gone but its size and time are the same: the copy is what is read.
    const { atime, mtime } = statSync(path);
    writeFileSync(path, Buffer.alloc(size));
    utimesSync(path, atime, mtime);
    expect(await readAll()).toBe(readFileSync(csv, 'utf8'));
    // A workbook saved again is read again, not answered from the old copy.
    utimesSync(path, atime, new Date(mtime.getTime() + 60_000));
    await expect(readAll()).rejects.toThrow(/is not a readable \.xlsx workbook/);
    expect(files()).toHaveLength(1);
  });

  it('reads the sheets in the tabs’ order, whatever their parts are numbered', async () => {
    const book = new ExcelJS.Workbook();
    const people = book.addWorksheet('People');
    people.addRow(['email']);
    people.addRow(['people@example.com']);
    book.addWorksheet('Suppressed').addRow(['suppressed@example.com']);
    // People stays xl/worksheets/sheet1.xml but becomes the second tab.
    (people as unknown as { orderNo: number }).orderNo = 3;
    await book.xlsx.writeFile(path);
    expect(await sheetNames(path)).toEqual(['Suppressed', 'People']);
    const csv = join(dir.path, 'first.csv');
    await convertSheetToCsv(path, csv);
    expect(readFileSync(csv, 'utf8')).toBe('suppressed@example.com\n');
  });

  it('offers hidden sheets after the visible ones: the first sheet is the first tab a user sees', async () => {
    const book = new ExcelJS.Workbook();
    book.addWorksheet('Lookup', { state: 'hidden' }).addRow(['code']);
    book.addWorksheet('Contacts').addRow(['contact@example.com']);
    book.addWorksheet('Internal', { state: 'veryHidden' }).addRow(['internal@example.com']);
    book.addWorksheet('Leads').addRow(['lead@example.com']);
    await book.xlsx.writeFile(path);
    expect(await sheetNames(path)).toEqual(['Contacts', 'Leads', 'Lookup', 'Internal']);
    expect(await text(path)).toBe('contact@example.com\n');
    expect(await text(path, 'Internal')).toBe('internal@example.com\n');
  });

  it('reads a workbook whatever the order of the parts inside its archive', async () => {
    const parts = Object.entries(unzipSync(readFileSync(path)));
    expect(parts.map(([name]) => name)).toContain('xl/workbook.xml');
    const expected = await text(path, 'Suppressed');
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const orders = [parts, [...parts].reverse()];
    for (let i = 0; i < 10; i++) orders.push([...parts].sort(() => random() - 0.5));
    for (const order of orders) {
      const shuffled = join(dir.path, 'shuffled.xlsx');
      writeFileSync(shuffled, zipSync(Object.fromEntries(order)));
      expect(await sheetNames(shuffled)).toEqual(['People', 'Suppressed']);
      expect(await text(shuffled, 'Suppressed')).toBe(expected);
    }
  });

  it('names the sheets from the workbook part, and reads only the sheet asked for', async () => {
    // The first sheet's part is damaged: naming the sheets and reading the second never look at it.
    const parts = unzipSync(readFileSync(path));
    parts['xl/worksheets/sheet1.xml'] = new TextEncoder().encode('<worksheet><sheetData></row></worksheet>');
    const damaged = join(dir.path, 'damaged.xlsx');
    writeFileSync(damaged, zipSync(parts));
    expect(await sheetNames(damaged)).toEqual(['People', 'Suppressed']);
    expect(await text(damaged, 'Suppressed')).toBe('email\ngone@example.com\n');
    await expect(text(damaged)).rejects.toThrow(/is not a readable \.xlsx workbook/);
  });

  it('keeps every character whole, however the parts are cut into chunks', async () => {
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Names');
    const names = Array.from({ length: 30_000 }, (_, i) => `Zoë Ångström 日本語 ${i}`);
    names.forEach((name, i) => sheet.addRow([`p${i}@example.com`, name]));
    // Inline strings too, beside the shared ones.
    sheet.addRow(['last@example.com', { richText: [{ text: 'Ærø ' }, { text: '🙂' }] }]);
    await book.xlsx.writeFile(path);
    const lines = (await text(path)).split('\n');
    expect(lines.slice(0, -2).map((line) => line.split(',')[1])).toEqual(names);
    expect(lines.at(-2)).toBe('last@example.com,Ærø 🙂');
  });

  it('refuses a file that is not a workbook in words, naming it', async () => {
    const notBook = join(dir.path, 'list.xlsx');
    writeFileSync(notBook, 'email\nann@example.com\n');
    await expect(sheetNames(notBook, 'list.xlsx')).rejects.toThrow(
      /^“list\.xlsx” is not a readable \.xlsx workbook \(/,
    );
    // What Excel writes for a workbook saved with a password (and for an old .xls renamed .xlsx).
    const locked = join(dir.path, 'locked.xlsx');
    writeFileSync(locked, Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(4096)]));
    await expect(sheetNames(locked, 'locked.xlsx')).rejects.toThrow(
      '“locked.xlsx” is not a readable .xlsx workbook (it is protected by a password, or an older .xls workbook: save it from Excel as an .xlsx workbook without a password).',
    );
    const plainZip = join(dir.path, 'zipped.xlsx');
    writeFileSync(plainZip, zipSync({ 'list.csv': new TextEncoder().encode('email\n') }));
    const refusal = await sheetNames(plainZip, 'zipped.xlsx').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SheetProblem);
    expect((refusal as Error).message).toBe(
      '“zipped.xlsx” is not a readable .xlsx workbook (it has no xl/workbook.xml part).',
    );
  });
});

async function text(path: string, sheet?: string): Promise<string> {
  let all = '';
  for await (const chunk of sheetCsv(path, sheet)) all += chunk;
  return all;
}
