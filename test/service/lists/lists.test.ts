// E7–E10 through real HTTP on a real service: layouts (header or not, each delimiter, .txt tab default, two
// email columns), results exactly as the spec describes them, zip in and out, names, errors, ownership.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync, zipSync, strToU8 } from 'fflate';
import { verifyOffline } from '../../../service/engine/index.js';
import { listStatusOf } from '../../../service/lists/verdicts.js';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import {
  fixture,
  getResults,
  getStatus,
  isHealthy,
  lines,
  purchase,
  runList,
  startListService,
  submit,
  waitForList,
  type ListService,
} from './helpers.js';

const APPENDED = 'Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';

/** The appended columns the engine's verdict calls for (corrections on), for comparing with the service's. */
function expectedAppended(address: string, isDuplicate: boolean, delimiter = ','): string {
  const policy = { corrections: true, allow: new Set<string>(), suppress: new Set<string>() };
  const verdict = verifyOffline(address, policy);
  const status = listStatusOf(verdict, { corrections: true, legacyAcceptAll: false });
  const validEmail =
    status === 'corrected' ? verdict.corrections![0] : status === 'valid' ? verdict.address : '';
  return [
    status,
    String(verdict.code),
    verdict.domainType ?? '',
    verdict.roleAccount ? 'true' : '',
    isDuplicate ? 'true' : '',
    validEmail,
  ].join(delimiter);
}

describe('lists (E7–E10) through HTTP', () => {
  let svc: ListService;
  let key: string;
  beforeAll(async () => {
    svc = await startListService();
    key = svc.key();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('processes a CSV with a header: every input byte kept, row order kept, the six columns appended', async () => {
    const input = fixture('good/people.csv');
    const submitted = await submit(svc.url, key, input, {
      fileName: 'people.csv',
      query: { header: 'true' },
    });
    expect(submitted.status).toBe(202);
    const accepted = submitted.json<{ list_id: number; size_bytes: number }>();
    expect(accepted.size_bytes).toBe(input.length);
    expect(submitted.headers.get('location')).toBe(`${svc.url}/v5/list/${accepted.list_id}`);

    const list = await waitForList(svc.url, key, accepted.list_id);
    expect(list).toMatchObject({
      list_id: accepted.list_id,
      name: 'people.csv',
      status: 'Results',
      records: 5,
      size_bytes: input.length,
    });
    expect(list.services.email_validation).toMatchObject({
      input_count: 5,
      completed_count: 5,
      status: 'Completed',
    });

    const results = await getResults(svc.url, key, accepted.list_id);
    expect(results.status).toBe(200);
    expect(results.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(results.headers.get('content-disposition')).toBe(
      `attachment; filename=people-${accepted.list_id}-Validation.csv`,
    );
    const inputRows = input.toString('utf8').split('\r\n').slice(0, -1);
    const outputRows = results.text.split('\r\n');
    expect(outputRows.pop()).toBe(''); // CRLF kept, the last row terminated
    expect(outputRows[0]).toBe(`${inputRows[0]},${APPENDED}`);
    const addresses = inputRows.slice(1).map((row) => row.split(',')[0]);
    const duplicates = new Set(['jane.doe@gmial.com']);
    outputRows.slice(1).forEach((row, i) => {
      expect(row).toBe(
        `${inputRows[i + 1]},${expectedAppended(addresses[i], duplicates.has(addresses[i].toLowerCase()))}`,
      );
    });
    // The meaning behind the engine's answers, row by row.
    expect(outputRows[1]).toMatch(/,corrected,10,,,true,jane\.doe@gmail\.com$/);
    expect(outputRows[2]).toMatch(/,unknown,10,,true,,$/); // role account, good syntax: unknown offline
    expect(outputRows[3]).toMatch(/^bad address,No,One,"3 ""Elm"" St",Dover,invalid,\d+,,,,$/);
    expect(outputRows[4]).toMatch(/,corrected,10,,,true,Jane\.Doe@gmail\.com$/); // Duplicate on every occurrence
    expect(outputRows[5]).toMatch(/,risky,525,disposable,,,$/);

    const reporting = list.services.email_validation!.reporting!;
    expect(reporting.statuses).toEqual({
      Valid: 0,
      Invalid: 1,
      Risky: 1,
      Unknown: 1,
      Unverifiable: 0,
      Corrected: 2,
    });
    expect(reporting.invalid_categories).toEqual({
      'Syntax Errors': 1,
      'Domain Errors': 0,
      'Mailbox Errors': 0,
      Suppressions: 0,
    });
    expect(reporting.role_accounts).toBe(1);
    expect(reporting.trap_hits).toEqual({ 'Trap Hits': 1 });
    expect(reporting.domain_type).toMatchObject({ Disposable: 1, Unknown: 4 });
    const badCode = String(
      verifyOffline('bad address', { corrections: true, allow: new Set(), suppress: new Set() }).code,
    );
    expect(reporting.status_codes).toEqual({ '10': 3, [badCode]: 1, '525': 1 });
    expect(listResourceSchema.safeParse(list).success).toBe(true);
  });

  it('reads a .txt list without a header as tab-delimited, and synthesises the header row', async () => {
    const input =
      'jane.doe@example.com\tJane\nno-at-sign.example.com\tNobody\nsales@example.org\tSales\njane.doe@example.com\tJane again\n';
    const { list, results } = await runList(svc.url, key, input, {
      fileName: 'contacts.txt',
      query: { name: 'contacts.txt' },
    });
    expect(list.status).toBe('Results');
    expect(results!.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(results!.headers.get('content-disposition')).toBe(
      `attachment; filename=contacts-${list.list_id}-Validation.txt`,
    );
    const rows = lines(results!.text);
    expect(rows[0]).toBe(`Email\tColumn 2\t${APPENDED.replaceAll(',', '\t')}`);
    expect(rows[1]).toBe(
      `jane.doe@example.com\tJane\t${expectedAppended('jane.doe@example.com', true, '\t')}`,
    );
    expect(rows[2]).toBe(
      `no-at-sign.example.com\tNobody\t${expectedAppended('no-at-sign.example.com', false, '\t')}`,
    );
    expect(rows[4]).toBe(
      `jane.doe@example.com\tJane again\t${expectedAppended('jane.doe@example.com', true, '\t')}`,
    );
    expect(rows[1]).toContain('\tunknown\t10\t'); // offline, a good address reads unknown; Valid Email empty
    expect(rows[1].endsWith('\t')).toBe(true);
  });

  it('reads a one-column list with no header and no delimiter given (a .txt of addresses)', async () => {
    const { list, results } = await runList(svc.url, key, fixture('good/addresses.txt'), {
      fileName: 'a.txt',
      query: { name: 'a.txt' },
    });
    expect(list.records).toBe(4);
    const rows = lines(results!.text);
    expect(rows[0]).toBe(`Email\t${APPENDED.replaceAll(',', '\t')}`);
    expect(rows.slice(1).map((r) => r.split('\t')[0])).toEqual([
      'jane.doe@example.com',
      'no-at-sign.example.com',
      'sales@example.org',
      'jane.doe@example.com',
    ]);
  });

  for (const [delimiter, label] of [
    [',', 'comma'],
    ['\t', 'tab'],
    [';', 'semicolon'],
    ['|', 'pipe'],
    ['¦', 'a non-ASCII character'],
  ] as const) {
    it(`splits by the delimiter parameter: ${label}`, async () => {
      const d = delimiter;
      const input = `name${d}email${d}city\nJane "J" Doe${d}jane@example.com${d}Springfield\n"Roe${d} John"${d}john@example.org${d}Salem\n`;
      const { list, results } = await runList(svc.url, key, input, {
        as: 'text',
        query: { name: 'people.csv', delimiter, header: 'true' },
      });
      expect(list.status).toBe('Results');
      const rows = lines(results!.text);
      expect(rows[0]).toBe(`name${d}email${d}city${d}${APPENDED.replaceAll(',', d)}`);
      expect(rows[1]).toBe(
        `Jane "J" Doe${d}jane@example.com${d}Springfield${d}${expectedAppended('jane@example.com', false, d)}`,
      );
      expect(rows[2]).toBe(
        `"Roe${d} John"${d}john@example.org${d}Salem${d}${expectedAppended('john@example.org', false, d)}`,
      );
    });
  }

  it('needs email_column when two columns hold addresses, and verifies the one it names', async () => {
    const input = fixture('broken/two-email-columns.csv');
    const without = await runList(svc.url, key, input, { query: { header: 'true' } });
    expect(without.list.status).toBe('Invalid');
    expect(without.list.reason).toMatch(/more than one column holds email addresses.*email_column/i);
    expect(without.list.services.email_validation?.status).toBe('Error');

    const second = await runList(svc.url, key, input, { query: { header: 'true', email_column: '2' } });
    expect(second.list.status).toBe('Results');
    const rows = lines(second.results!.text);
    expect(rows[1]).toBe(`jane@example.com,jd@example.net,Jane,${expectedAppended('jd@example.net', false)}`);
  });

  it('takes a zip holding one .csv and answers a zip holding the results', async () => {
    const csv = 'email,first\njane.doe@gmial.com,Jane\nbob@example.com,Bob\n';
    const zip = zipSync({ 'inner list.csv': [strToU8(csv), { mtime: new Date(2024, 4, 17, 9, 30, 12) }] });
    const { list, results } = await runList(svc.url, key, zip, {
      fileName: 'batch.zip',
      query: { header: 'true' },
    });
    expect(list).toMatchObject({ status: 'Results', name: 'batch.zip', records: 2, size_bytes: zip.length });
    expect(results!.headers.get('content-type')).toBe('application/zip');
    expect(results!.headers.get('content-disposition')).toBe(
      `attachment; filename=batch-${list.list_id}-Validation.zip`,
    );
    const entries = unzipSync(new Uint8Array(results!.bytes));
    expect(Object.keys(entries)).toEqual([`inner list-${list.list_id}-Validation.csv`]);
    // The results file takes the time of the input's file (so the same list gives the same bytes): the MS-DOS
    // date and time fields of the local header (offsets 10 and 12) are the input's.
    expect(results!.bytes.readUInt32LE(10)).toBe(Buffer.from(zip).readUInt32LE(10));
    const text = Buffer.from(Object.values(entries)[0]).toString('utf8');
    expect(lines(text)).toEqual([
      `email,first,${APPENDED}`,
      `jane.doe@gmial.com,Jane,${expectedAppended('jane.doe@gmial.com', false)}`,
      `bob@example.com,Bob,${expectedAppended('bob@example.com', false)}`,
    ]);
  });

  it('names a list myfile.csv by default, and keeps a UTF-8 BOM and old Mac line breaks', async () => {
    const input = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('email\rjane@example.com\rjo@example.org\r'),
    ]);
    const { list, results } = await runList(svc.url, key, input, { as: 'text', query: { header: 'true' } });
    expect(list.name).toBe('myfile.csv');
    expect(results!.headers.get('content-disposition')).toBe(
      `attachment; filename=myfile-${list.list_id}-Validation.csv`,
    );
    expect(results!.bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(results!.text.slice(1).split('\r')).toEqual([
      `email,${APPENDED}`,
      `jane@example.com,${expectedAppended('jane@example.com', false)}`,
      `jo@example.org,${expectedAppended('jo@example.org', false)}`,
      '',
    ]);
  });

  it('answers 401 without a valid key, on every list endpoint', async () => {
    const id = (await runList(svc.url, key, 'email\njane@example.com\n', { query: { header: 'true' } })).list
      .list_id;
    for (const request of [
      () => submit(svc.url, undefined, 'email\na@example.com\n'),
      () => submit(svc.url, 'not-a-key', 'email\na@example.com\n'),
      () => getStatus(svc.url, 'not-a-key', id),
      () => getResults(svc.url, 'not-a-key', id),
      () => purchase(svc.url, 'not-a-key', id),
    ]) {
      const answer = await request();
      expect(answer.status).toBe(401);
      expect(answer.text).toBe('Invalid API key.');
    }
    // The key in the query string (E1–E6 style) is not the list endpoints' way.
    const inQuery = await fetch(`${svc.url}/v5/list/${id}?api_key=${key}`);
    expect(inQuery.status).toBe(401);
  });

  it('keeps a list to its key: another key gets 404, as for a list that does not exist', async () => {
    const { list } = await runList(svc.url, key, 'email\njane@example.com\n', { query: { header: 'true' } });
    const other = svc.key();
    for (const answer of [
      await getStatus(svc.url, other, list.list_id),
      await getResults(svc.url, other, list.list_id),
      await purchase(svc.url, other, list.list_id),
      await getStatus(svc.url, key, 999_999),
      await getStatus(svc.url, key, 'abc'),
    ]) {
      expect(answer.status).toBe(404);
      const error = answer.json<{ error_code: number; error_msg: string }>();
      expect(error.error_code).toBe(404);
      expect(error.error_msg).toMatch(/not found/);
    }
    expect((await getStatus(svc.url, key, list.list_id)).status).toBe(200);
  });

  it('answers 415 for another Content-Type, 422 for an improper name, 400 for a bad parameter', async () => {
    const csv = 'email\njane@example.com\n';
    const json = await submit(svc.url, key, '{"email":"x"}', { as: 'application/json' });
    expect(json.status).toBe(415);
    expect(json.json<{ error_msg: string }>().error_msg).toMatch(/multipart\/form-data.*text\/csv/);
    expect((await submit(svc.url, key, csv, { as: 'text/plain' })).status).toBe(415);

    const badName = await submit(svc.url, key, csv, { query: { name: 'list.xlsx' } });
    expect(badName.status).toBe(422);
    expect(badName.json<{ error_msg: string }>().error_msg).toMatch(/\.txt, \.csv or \.zip/);
    const badFileName = await submit(svc.url, key, csv, { fileName: 'list.numbers' });
    expect(badFileName.status).toBe(422);

    for (const [query, words] of [
      [{ email_column: 'two' }, /email_column/],
      [{ email_column: '0' }, /email_column/],
      [{ header: 'maybe' }, /header/],
      [{ delimiter: ';;' }, /delimiter/],
      [{ callback_url: 'ftp://example.com/hook' }, /callback/i],
      [{ callback_url: `https://example.com/${'x'.repeat(600)}` }, /callback/i],
    ] as const) {
      const answer = await submit(svc.url, key, csv, { query });
      expect(answer.status).toBe(400);
      expect(answer.json<{ error_msg: string }>().error_msg).toMatch(words);
    }
    const repeated = await fetch(`${svc.url}/v5/list?header=true&header=false`, {
      method: 'POST',
      headers: { api_key: key, 'content-type': 'text/csv' },
      body: csv,
    });
    expect(repeated.status).toBe(400);
    expect(await isHealthy(svc.url, key)).toBe(true);
  });

  it('serves results (E10) only once a list has them, and purchase (E9) answers the status document then', async () => {
    // A list big enough to be still running when asked at once.
    const rows = Array.from({ length: 150_000 }, (_, i) => `user${i}@example.com,Name ${i}`).join('\n');
    const submitted = await submit(svc.url, key, `email,name\n${rows}\n`, {
      as: 'text',
      query: { header: 'true' },
    });
    const id = submitted.json<{ list_id: number }>().list_id;
    const early = await getResults(svc.url, key, id);
    expect(early.status).toBe(404);
    expect(early.json<{ error_msg: string }>().error_msg).toMatch(
      /no results yet: its status is (Pending|Processing)/,
    );
    const earlyPurchase = await purchase(svc.url, key, id);
    expect(earlyPurchase.status).toBe(404);
    expect(earlyPurchase.json<{ error_msg: string }>().error_msg).toMatch(/not complete yet/);

    let sawProgress = false;
    for (;;) {
      const doc = listResourceSchema.parse((await getStatus(svc.url, key, id)).json());
      const service = doc.services.email_validation!;
      if (doc.status === 'Processing' && service.input_count > 0 && service.completed_count < 150_000)
        sawProgress = true;
      if (doc.status === 'Results') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(sawProgress).toBe(true);
    const done = await purchase(svc.url, key, id, {
      fields: ['email'],
      options: { email_append: { match_type: 'I' } },
    });
    expect(done.status).toBe(200);
    const doc = done.json<ListResource>();
    expect(doc).toMatchObject({ list_id: id, status: 'Results', records: 150_000 });
    expect(doc.services.email_validation?.reporting?.statuses?.Unknown).toBe(150_000);
    expect((await purchase(svc.url, key, id)).status).toBe(200);
    expect((await purchase(svc.url, key, id, { fields: 'email' })).status).toBe(400);
    expect((await purchase(svc.url, key, id, 'email', 'text/plain')).status).toBe(415);
    // A multipart body too (multipart's parser is E7's alone): in the purchase's own words.
    const multipartBody = await purchase(svc.url, key, id, 'email', 'multipart/form-data; boundary=x');
    expect(multipartBody.status).toBe(415);
    expect(multipartBody.json<{ error_msg: string }>().error_msg).toMatch(/^The purchase body is JSON/);
    const results = await getResults(svc.url, key, id);
    expect(results.status).toBe(200);
    expect(Number(results.headers.get('content-length'))).toBe(results.bytes.length);
    expect(lines(results.text)).toHaveLength(150_001);
  });

  it('refuses 403 for a key without any list service, or asked for validation it lacks', async () => {
    const postalOnly = svc.key({ services: ['postal_append'] });
    const none = await submit(svc.url, postalOnly, 'email\njane@example.com\n');
    expect(none.status).toBe(403);
    const intelligenceOnly = svc.key({ services: ['intelligence'] });
    const lacking = await submit(svc.url, intelligenceOnly, 'email\njane@example.com\n', {
      query: { services: 'email_validation' },
    });
    expect(lacking.status).toBe(403);
    expect(lacking.text).toMatch(/not enabled for email_validation/);
  });
});
