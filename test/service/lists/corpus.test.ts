// The broken-file corpus: each kind of broken list ends in status Invalid with a reason a person understands,
// or in a 4xx with a message, and the service keeps serving afterwards. Small files are in
// test/fixtures/lists/broken/; big ones (a zip bomb, 1,000,001 records, a 10 MB field) are made here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Zip, ZipDeflate, zipSync, strToU8 } from 'fflate';
import {
  fixture,
  getResults,
  isHealthy,
  startListService,
  submit,
  waitForList,
  type ListService,
  type SubmitOptions,
} from './helpers.js';

type Expectation = { readonly status: number; readonly message: RegExp } | { readonly invalid: RegExp };

interface Case {
  readonly kind: string;
  readonly body: () => Uint8Array | string;
  readonly options?: SubmitOptions;
  readonly expect: Expectation;
}

const header = { query: { header: 'true' } } satisfies SubmitOptions;

/** A real zip bomb: 48 MiB of one byte deflated to ~50 KiB (streamed, so the test never holds it whole). */
function zipBomb(): Uint8Array {
  const chunks: Uint8Array[] = [];
  const zip = new Zip((error, data) => {
    if (error) throw error;
    chunks.push(data);
  });
  const entry = new ZipDeflate('list.csv', { level: 9 });
  zip.add(entry);
  const zeros = new Uint8Array(1024 * 1024).fill(0x30);
  for (let i = 0; i < 48; i++) entry.push(zeros, i === 47);
  zip.end();
  return Buffer.concat(chunks);
}

/** A zip that lies: it declares 1,000 bytes and inflates to 20 MiB (the sizes patched in both headers). */
function lyingZip(): Uint8Array {
  const zip = Buffer.from(zipSync({ 'list.csv': new Uint8Array(20 * 1024 * 1024).fill(0x61) }));
  const local = zip.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
  const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  zip.writeUInt32LE(1000, local + 22);
  zip.writeUInt32LE(1000, central + 24);
  return zip;
}

const CASES: readonly Case[] = [
  {
    kind: 'an empty file',
    body: () => fixture('broken/empty.csv'),
    expect: { status: 422, message: /empty/ },
  },
  {
    kind: 'a header row only',
    body: () => fixture('broken/header-only.csv'),
    options: header,
    expect: { invalid: /header row but no records/ },
  },
  {
    kind: 'an image named .csv',
    body: () => fixture('broken/image-as-list.csv'),
    options: header,
    expect: { invalid: /NUL bytes|not UTF-8/ },
  },
  {
    kind: 'random bytes',
    body: () => fixture('broken/random-bytes.csv'),
    expect: { invalid: /Line \d+ cannot be read: it is not UTF-8 text/ },
  },
  {
    kind: 'a wrong extension (.xlsx)',
    body: () => fixture('broken/spreadsheet.xlsx'),
    options: { fileName: 'spreadsheet.xlsx' },
    expect: { status: 422, message: /must end in \.txt, \.csv or \.zip/ },
  },
  {
    kind: 'a zip named .csv',
    body: () => fixture('broken/zip-named-csv.csv'),
    expect: { status: 422, message: /zip archive.*name it \.zip/ },
  },
  {
    kind: 'a text file named .zip',
    body: () => fixture('broken/not-a-zip.zip'),
    options: { fileName: 'not-a-zip.zip' },
    expect: { status: 422, message: /not a zip archive/ },
  },
  {
    kind: 'a zip with two files',
    body: () => fixture('broken/two-files.zip'),
    options: { fileName: 'two.zip' },
    expect: { status: 422, message: /holds 2 files .*exactly one/ },
  },
  {
    kind: 'an empty zip',
    body: () => fixture('broken/empty.zip'),
    options: { fileName: 'e.zip' },
    expect: { status: 422, message: /holds no file/ },
  },
  {
    kind: 'a zip holding a PDF',
    body: () => fixture('broken/pdf-inside.zip'),
    options: { fileName: 'p.zip' },
    expect: { status: 422, message: /'list\.pdf', is not a \.txt or \.csv file/ },
  },
  {
    kind: 'a zip bomb',
    body: zipBomb,
    options: { fileName: 'bomb.zip' },
    expect: { status: 422, message: /zip bomb/ },
  },
  {
    kind: 'a zip that lies about its size',
    body: lyingZip,
    options: { fileName: 'liar.zip' },
    expect: { invalid: /zip archive cannot be read/ },
  },
  {
    kind: 'a .zip sent as a text/csv body',
    body: () => zipSync({ 'a.csv': strToU8('email\na@example.com\n') }),
    options: { as: 'text', query: { name: 'a.zip' } },
    expect: { status: 422, message: /multipart\/form-data/ },
  },
  {
    kind: 'undecodable bytes (Latin-1)',
    body: () => fixture('broken/latin1.csv'),
    options: header,
    expect: { invalid: /^Line 3 cannot be read: it is not UTF-8 text/ },
  },
  {
    kind: 'an unterminated quote',
    body: () => fixture('broken/unterminated-quote.csv'),
    options: header,
    expect: { invalid: /^Line 2: a quoted field opens there and is never closed/ },
  },
  {
    kind: 'text after a closing quote',
    body: () => fixture('broken/text-after-quote.csv'),
    options: header,
    expect: { invalid: /^Line 2: text follows the closing quote/ },
  },
  {
    kind: 'ragged rows',
    body: () => fixture('broken/ragged-rows.csv'),
    options: header,
    expect: { invalid: /^Line 3 has 2 fields where the header has 3/ },
  },
  {
    kind: 'UTF-16 LE with a BOM',
    body: () => fixture('broken/utf16le-bom.csv'),
    expect: { invalid: /UTF-16 text; lists must be UTF-8/ },
  },
  {
    kind: 'UTF-16 BE with a BOM',
    body: () => fixture('broken/utf16be-bom.csv'),
    expect: { invalid: /UTF-16 text/ },
  },
  {
    kind: 'UTF-32 LE with a BOM',
    body: () => fixture('broken/utf32le-bom.csv'),
    expect: { invalid: /UTF-32 text/ },
  },
  {
    kind: 'UTF-16 without a BOM',
    body: () => fixture('broken/utf16le-no-bom.csv'),
    expect: { invalid: /NUL bytes.*UTF-16/ },
  },
  {
    kind: 'NUL bytes in text',
    body: () => fixture('broken/nul-bytes.csv'),
    options: header,
    expect: { invalid: /^Line 2 cannot be read: it holds NUL bytes/ },
  },
  {
    kind: 'only blank lines',
    body: () => fixture('broken/blank-lines.csv'),
    expect: { invalid: /only blank lines/ },
  },
  {
    kind: 'no email column',
    body: () => fixture('broken/no-email-column.csv'),
    options: header,
    expect: { invalid: /No column holds email addresses/ },
  },
  {
    kind: 'a header row with header=false',
    body: () => fixture('broken/header-not-declared.csv'),
    expect: { invalid: /is a header row, but header is false: submit with header=true/ },
  },
  {
    kind: 'header=true on a file without one',
    body: () => fixture('broken/header-declared-but-data.csv'),
    options: header,
    expect: { invalid: /first row holds an address .*header row is missing/ },
  },
  {
    kind: 'two email columns',
    body: () => fixture('broken/two-email-columns.csv'),
    options: header,
    expect: { invalid: /More than one column/ },
  },
  {
    kind: 'email_column past the last column',
    body: () => fixture('good/people.csv'),
    options: { query: { header: 'true', email_column: '9' } },
    expect: { invalid: /email_column is 9, but the rows have 5 fields/ },
  },
  {
    kind: 'a 10 MB field',
    body: () => `email,notes\njane@example.com,${'n'.repeat(10 * 1024 * 1024)}\n`,
    options: header,
    expect: { invalid: /^Line 2 is longer than 1 MB/ },
  },
  {
    kind: '1,000,001 records',
    body: () => 'x\n'.repeat(1_000_001),
    options: { as: 'text', query: { name: 'many.txt' } },
    expect: { invalid: /more than 1,000,000 records/ },
  },
  {
    kind: 'a multipart body without a part named file',
    body: () => 'email\na@example.com\n',
    options: { partName: 'upload' },
    expect: { status: 400, message: /part named 'file'/ },
  },
];

describe('the broken-file corpus', () => {
  let svc: ListService;
  let key: string;
  beforeAll(async () => {
    svc = await startListService();
    key = svc.key();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('has at least 20 kinds of broken files', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });

  for (const testCase of CASES) {
    it(
      `${testCase.kind}: ${'status' in testCase.expect ? `${testCase.expect.status}` : 'Invalid'}, and the service keeps serving`,
      { timeout: 60_000 },
      async () => {
        const answer = await submit(svc.url, key, testCase.body(), testCase.options);
        if ('status' in testCase.expect) {
          expect(answer.status, answer.text).toBe(testCase.expect.status);
          expect(answer.json<{ error_msg: string }>().error_msg).toMatch(testCase.expect.message);
        } else {
          expect(answer.status, answer.text).toBe(202);
          const id = answer.json<{ list_id: number }>().list_id;
          const list = await waitForList(svc.url, key, id);
          expect(list.status).toBe('Invalid');
          expect(list.reason).toMatch(testCase.expect.invalid);
          expect(list.services.email_validation?.status).toBe('Error');
          expect((await getResults(svc.url, key, id)).status).toBe(404);
        }
        expect(await isHealthy(svc.url, key)).toBe(true);
      },
    );
  }

  it('after the whole corpus, a good list still gets exact results (nothing left over from broken ones)', async () => {
    const answer = await submit(svc.url, key, fixture('good/addresses.txt'), {
      fileName: 'a.txt',
      query: { name: 'a.txt' },
    });
    const list = await waitForList(svc.url, key, answer.json<{ list_id: number }>().list_id);
    expect(list).toMatchObject({ status: 'Results', records: 4 });
    const rows = (await getResults(svc.url, key, list.list_id)).text.split('\n');
    expect(rows.slice(1, 5).map((row) => row.split('\t').slice(0, 3).join(' '))).toEqual([
      'jane.doe@example.com unknown 10',
      'no-at-sign.example.com invalid 150',
      'sales@example.org unknown 10',
      'jane.doe@example.com unknown 10',
    ]);
  });

  it('an upload over the byte cap: 413, and the service keeps serving', async () => {
    const small = await startListService({ maxUploadBytes: 1024 * 1024 });
    try {
      const smallKey = small.key();
      const body = `email\n${'jane@example.com\n'.repeat(130_000)}`;
      for (const as of ['text', 'multipart'] as const) {
        const answer = await submit(small.url, smallKey, body, { as, query: { header: 'true' } });
        expect(answer.status).toBe(413);
        expect(answer.json<{ error_msg: string }>().error_msg).toMatch(/larger than 1 MB/);
      }
      expect(await isHealthy(small.url, smallKey)).toBe(true);
      // Within the cap, the same service takes a list.
      const fits = await submit(small.url, smallKey, 'email\njane@example.com\n', {
        query: { header: 'true' },
      });
      expect(fits.status).toBe(202);
    } finally {
      await small.close();
    }
  });
});
