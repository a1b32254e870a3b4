// Reading a downloaded results file offline: the drill-down's rows (a filter's index, pages read by offset),
// the Results numbers (counted by the exporter's own rule: Ready to mail = the default export's rows), the why
// per row, and "Export these rows" (the exporter with a row filter writes exactly the rows shown).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import { zipSync, strToU8 } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  countResults,
  indexExplain,
  indexRows,
  readIndexedRows,
  readWhys,
} from '../../../electron/core/results/resultsFile.js';
import { ResultsProblem, exportResultsFile, isCountShared } from '../../../electron/core/jobs/exports.js';
import { desktopExportSpec } from '../../../electron/core/jobs/desktopExport.js';
import { isEveryRow, rowMatches, type RowFilter } from '../../../shared/rowFilter.js';
import { tempDir } from '../../helpers/service.js';

const HEADER =
  'email,name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email,age,postal_address.address,Appended Email';

const VALIDATION_HEADER =
  'Email,Name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';

const job = {
  mapping: { delimiter: ',', header: true, roles: ['email', 'first_name'] as ('email' | 'first_name')[] },
  originalHeader: null,
};

/** The drill-down's spec: the rows "Export these rows" writes. */
const rowsSpec = (filter: RowFilter) =>
  isEveryRow(filter) ? { kind: 'all' as const } : { kind: 'all' as const, filter };

/** Rows of a results text (papaparse, the reference reader), header first. */
const parse = (text: string) =>
  Papa.parse<string[]>(text, { skipEmptyLines: true }).data.map((row) => row.map(String));

describe('results files', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());
  const write = (name: string, text: string | Uint8Array) => {
    const path = join(dir.path, name);
    writeFileSync(path, text);
    return path;
  };
  const rowsOf = async (path: string, name: string, filter: RowFilter, from = 0, limit = 100) => {
    const index = await indexRows(path, name, ',', rowsSpec(filter));
    return { index, rows: await readIndexedRows(path, name, ',', index, from, limit) };
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
    const emails = async (filter: RowFilter) =>
      (await rowsOf(path, 'results.csv', filter)).rows.map((row) => row.fields[0]);
    expect(await emails({ status: 'valid' })).toEqual(['a@example.com']);
    expect(await emails({ status: 'invalid' })).toEqual(['b@example.com']);
    expect(await emails({ status: 'unknown' })).toEqual(['c@example.com']);
    expect(await emails({ duplicate: true })).toEqual(['b@example.com', 'c@example.com']);
    const { rows } = await rowsOf(path, 'results.csv', { code: 10 });
    expect(rows).toEqual([
      {
        number: 3,
        fields: ['c@example.com', 'Cy "C", Jr', 'unknown', '10', 'free', '', 'true', '', '', '', ''],
      },
    ]);
    const out = join(dir.path, 'clean.csv');
    const written = await exportResultsFile(path, 'results.csv', ',', [
      { name: 'clean', path: out, spec: { kind: 'clean' } },
    ]);
    expect(written).toEqual({ rows: 3, duplicates: 2, exported: { clean: 2 } });
    expect(readFileSync(out, 'utf8').split('\n')[2]).toMatch(/^c@example\.com/);
  });

  it('shows every row of a file without a status column; filters by status are refused', async () => {
    const text =
      'first name,last name,street,zip,Appended Email,Email Match Type\nAnn,Lee,1 Main St,10001,ann@demo.example.com,Individual\nBo,Li,2 Oak,10002,,\n';
    const path = write('append.csv', text);
    const { index, rows } = await rowsOf(path, 'append.csv', {});
    expect(index.header.at(-1)).toBe('Email Match Type');
    expect(rows.map((row) => row.fields)).toEqual(parse(text).slice(1));
    await expect(indexRows(path, 'append.csv', ',', rowsSpec({ status: 'valid' }))).rejects.toBeInstanceOf(
      ResultsProblem,
    );
    const out = join(dir.path, 'all.csv');
    expect(
      await exportResultsFile(path, 'append.csv', ',', [{ name: 'all', path: out, spec: { kind: 'all' } }]),
    ).toMatchObject({ rows: 2, exported: { all: 2 } });
    expect(readFileSync(out, 'utf8')).toBe(text);
    await expect(
      exportResultsFile(path, 'append.csv', ',', [
        { name: 'safe', path: join(dir.path, 'x.csv'), spec: { kind: 'safe' } },
      ]),
    ).rejects.toBeInstanceOf(ResultsProblem);
  });

  // A list as the offline service gives it: corrected typos keep their code (525 for a typo of a disposable
  // domain too), duplicates in other case (the results mark every occurrence), role and disposable rows.
  const results = [
    VALIDATION_HEADER,
    'jane@example.com,Jane,unknown,10,biz,false,true,',
    'john@gmial.com,John,corrected,310,freeisp,false,false,john@gmail.com',
    'JOHN@gmail.com,"Smith, John",unknown,10,freeisp,false,true,',
    'john@gmail.com,John,unknown,10,freeisp,false,true,',
    'bad@@example.com,Bad,invalid,300,,false,false,',
    'temp@mailinator.com,Temp,risky,525,disposable,false,false,',
    'temp@mailinatr.com,Temp,corrected,525,disposable,false,false,temp@mailinator.com',
    'info@acme.com,"Info\nDesk",unknown,10,biz,true,false,',
    'JANE@example.com,Jane,unknown,10,biz,false,true,',
    'ops@catchall.example,Ops,unverifiable,45,biz,true,false,',
  ].join('\r\n');

  it('counts rows by final status and code, and Ready to mail as the default export writes them', async () => {
    const path = write('offline.csv', results + '\r\n');
    const spec = desktopExportSpec(job, 'clean', []);
    const counts = await countResults(path, 'offline.csv', ',', spec, true);
    // The exporter's default export of the same file: its data rows are the headline's Ready to mail.
    const out = join(dir.path, 'clean-export.csv');
    const written = await exportResultsFile(path, 'offline.csv', ',', [{ name: 'clean', path: out, spec }]);
    const exported = parse(readFileSync(out, 'utf8')).slice(1);
    expect(counts.ready).toBe(exported.length);
    expect(counts.ready).toBe(written.exported.clean);
    // clean keeps all but invalid and risky (8 rows); 3 repeat an address already written
    // (JOHN@gmail.com and john@gmail.com after john@gmial.com's correction, JANE after jane).
    expect(counts).toMatchObject({
      rows: 10,
      exportKind: 'clean',
      ready: 5,
      duplicatesLeftOut: 3,
      invalid: 1,
      risky: 1,
      // Offline, unknown rows are mailable: they are in Ready to mail.
      unknown: 0,
      roleAccounts: 2,
      duplicates: 4,
      statuses: { unknown: 5, corrected: 2, invalid: 1, risky: 1, unverifiable: 1 },
      domainTypes: { biz: 4, freeisp: 3, disposable: 2 },
    });
    expect(counts.ready + counts.duplicatesLeftOut + counts.invalid + counts.risky + counts.unknown).toBe(10);
    // Codes under the status the rows ended in: 525 once as risky, once as corrected.
    expect(counts.codes).toEqual([
      { code: 10, status: 'unknown', rows: 5 },
      { code: 45, status: 'unverifiable', rows: 1 },
      { code: 300, status: 'invalid', rows: 1 },
      { code: 310, status: 'corrected', rows: 1 },
      { code: 525, status: 'corrected', rows: 1 },
      { code: 525, status: 'risky', rows: 1 },
    ]);

    // Duplicates left out open as rows too: the default export's rule decides them, row by row.
    const leftOut = desktopExportSpec(job, 'all', [], undefined, { leftOutBy: 'clean' });
    const repeats = await indexRows(path, 'offline.csv', ',', leftOut);
    expect([...repeats.numbers]).toEqual([3, 4, 9]);
    expect(repeats.length).toBe(counts.duplicatesLeftOut);
    const repeatsOut = join(dir.path, 'repeats.csv');
    await exportResultsFile(path, 'offline.csv', ',', [{ name: 'rows', path: repeatsOut, spec: leftOut }]);
    expect(parse(readFileSync(repeatsOut, 'utf8')).map((row) => row[0])).toEqual([
      'Email',
      'JOHN@gmail.com',
      'john@gmail.com',
      'JANE@example.com',
    ]);

    // After online checks the default is safe: valid and corrected, once per address.
    const safe = desktopExportSpec(job, 'safe', []);
    const online = await countResults(path, 'offline.csv', ',', safe, false);
    const safeOut = join(dir.path, 'safe-export.csv');
    await exportResultsFile(path, 'offline.csv', ',', [{ name: 'safe', path: safeOut, spec: safe }]);
    expect(online.ready).toBe(parse(readFileSync(safeOut, 'utf8')).length - 1);
    expect(online).toMatchObject({ ready: 2, duplicatesLeftOut: 0, unknown: 6, invalid: 1, risky: 1 });

    // The download pass counts the same numbers as it goes (the desktop's jobs: ready when the job completes),
    // beside an export and without one, for both levels; the quoted row goes through the scanner there.
    for (const [request, expected] of [
      [{ spec, isOffline: true }, counts],
      [{ spec: safe, isOffline: false }, online],
    ] as const) {
      const alongside = await exportResultsFile(
        path,
        'offline.csv',
        ',',
        [{ name: 'clean', path: join(dir.path, 'again.csv'), spec }],
        request,
      );
      expect(alongside.counts).toEqual(expected);
      expect((await exportResultsFile(path, 'offline.csv', ',', [], request)).counts).toEqual(expected);
      // In the two worker threads of a download: beside the default export, the framer counts all but
      // Ready to mail, which is the exporter's first export's. A job's download sizes the export's set of
      // addresses for the list's records (engine.ts): that export is the default export all the same.
      const beside = [{ name: 'clean', path: join(dir.path, 'threaded.csv'), spec: request.spec, rows: 10 }];
      expect(isCountShared(beside, request)).toBe(true);
      const other = request.spec === spec ? safe : spec;
      expect(isCountShared([{ ...beside[0], spec: other }], request)).toBe(false);
      const threaded = await exportResultsFile(path, 'offline.csv', ',', beside, request, 0);
      expect(threaded.counts).toEqual(expected);
      expect((await exportResultsFile(path, 'offline.csv', ',', [], request, 0)).counts).toEqual(expected);
    }
  });

  it('counts rows the download pass tallies by their bytes as a reading of each row counts them', async () => {
    // The download pass counts rows whose status and fields have the same bytes together (counts.ts):
    // fields that read alike in other bytes (quoted, padded, in other case) must land in the same counts,
    // and past its most tallies (4,096 kinds of rows here: as many codes) every row still counts once.
    const lines = [VALIDATION_HEADER];
    const statuses = ['valid', 'invalid', 'risky', 'unknown', 'corrected'];
    const types = ['biz', '" Biz"', 'FREEISP', 'freeisp', '"disposable"', ''];
    const roles = ['true', 'TRUE', '" true"', 'false', ''];
    for (let i = 0; i < 6000; i++) {
      const code = i < 3000 ? String(10 + (i % 7)) : i % 2 ? `"${i}"` : ` ${i}`;
      lines.push(
        [
          `user${i % 4500}@example.com`,
          `Name ${i}`,
          statuses[i % statuses.length],
          code,
          types[i % types.length],
          roles[i % roles.length],
          i % 4 === 0 ? 'true' : 'false',
          '',
        ].join(','),
      );
    }
    const path = write('many.csv', lines.join('\n') + '\n');
    for (const [kind, isOffline] of [
      ['clean', true],
      ['safe', false],
    ] as const) {
      const spec = desktopExportSpec(job, kind, []);
      const read = await countResults(path, 'many.csv', ',', spec, isOffline);
      const tallied = (await exportResultsFile(path, 'many.csv', ',', [], { spec, isOffline })).counts;
      expect(tallied).toEqual(read);
      // Counted on the framer's thread beside the default export (FramedCounts).
      const framed = await exportResultsFile(
        path,
        'many.csv',
        ',',
        [{ name: kind, path: join(dir.path, `many-${kind}.csv`), spec }],
        { spec, isOffline },
        0,
      );
      expect(framed.counts).toEqual(read);
      expect(read.rows).toBe(6000);
      expect(read.domainTypes).toEqual({ biz: 2000, freeisp: 2000, disposable: 1000 });
      expect(read.roleAccounts).toBe(3600);
      expect(read.codes.find((line) => line.code === 3001)).toEqual({
        code: 3001,
        status: 'invalid',
        rows: 1,
      });
    }
  });

  it('pages through a large file by offset, quoted line breaks included, and exports exactly a filter’s rows', async () => {
    const lines = [VALIDATION_HEADER];
    const codes = [10, 300, 310, 525, 45];
    for (let i = 1; i <= 20_000; i++) {
      const code = codes[i % codes.length];
      const status =
        code === 300 ? 'invalid' : code === 310 ? 'corrected' : code === 525 ? 'risky' : 'unknown';
      const name = i % 7 === 0 ? `"Line ${i}\nsecond ""part"""` : `Name ${i}`;
      const domainType = i % 3 === 0 ? 'freeisp' : 'biz';
      lines.push(`user${i}@example.com,${name},${status},${code},${domainType},${i % 11 === 0},false,`);
    }
    const text = lines.join('\n') + '\n';
    const path = write('big.csv', text);
    const all = parse(text);
    const header = all[0];
    const column = (row: string[]) => (name: string) => row[header.lastIndexOf(name)];
    for (const filter of [{ code: 300 }, { domainType: 'freeisp' }, { role: true }, {}] as RowFilter[]) {
      const expected = all.slice(1).filter((row) => rowMatches(filter, column(row)));
      const index = await indexRows(path, 'big.csv', ',', rowsSpec(filter));
      expect(index.length).toBe(expected.length);
      // A page past the first hundred, and the last (short) page.
      const page = await readIndexedRows(path, 'big.csv', ',', index, 150, 50);
      expect(page.map((row) => row.fields)).toEqual(expected.slice(150, 200));
      const last = await readIndexedRows(path, 'big.csv', ',', index, expected.length - 3, 50);
      expect(last.map((row) => row.fields)).toEqual(expected.slice(-3));
      // Export these rows: the exporter with the same filter writes the same rows, as they were.
      const out = join(dir.path, 'rows.csv');
      const written = await exportResultsFile(path, 'big.csv', ',', [
        { name: 'rows', path: out, spec: { kind: 'all', filter } },
      ]);
      expect(written.exported.rows).toBe(expected.length);
      expect(parse(readFileSync(out, 'utf8'))).toEqual([header, ...expected]);
    }
    // Row numbers are the list's (a quoted line break does not make a row).
    const sevenths = await indexRows(path, 'big.csv', ',', rowsSpec({ code: 525 }));
    expect(sevenths.numbers[0]).toBe(3);
    // The same file zipped: pages are read by scanning again.
    const zipped = write('big.zip', zipSync({ 'big.csv': strToU8(text) }));
    const zipIndex = await indexRows(zipped, 'big.zip', ',', rowsSpec({ code: 300 }));
    const zipPage = await readIndexedRows(zipped, 'big.zip', ',', zipIndex, 150, 50);
    expect(zipPage.map((row) => row.fields)).toEqual(
      all
        .slice(1)
        .filter((row) => row[3] === '300')
        .slice(150, 200),
    );
  });

  it('reads the why of each row from the list’s explain file', async () => {
    const path = write(
      'explain.csv',
      [
        'Row,Email,Status Code,Checked,Why',
        '1,a@example.com,50,smtp,mx1.example.com: 250 2.1.5 OK',
        '2,b@nomx.example,310,dns,"no MX, no address: domain takes no mail"',
        '3,c@example.com,550,smtp,"mx1.example.com: 550 5.1.1 user ""unknown"""',
      ].join('\n') + '\n',
    );
    const index = await indexExplain(path);
    expect(readWhys(path, index, [3, 1, 2, 9])).toEqual([
      'mx1.example.com: 550 5.1.1 user "unknown"',
      'mx1.example.com: 250 2.1.5 OK',
      'no MX, no address: domain takes no mail',
      '',
    ]);
  });
});
