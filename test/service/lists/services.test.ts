// The list services beyond validation (docs/list-services.md), through HTTP on a real service with real
// reference data: which services run, the appended columns, their reporting, report-only lists and E9.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alternateEmailColumns,
  EMAIL_APPEND_COLUMNS,
  intelligenceColumns,
  VALIDATION_COLUMNS,
} from '../../../shared/api/listServices.js';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import { tempDir } from '../../helpers/service.js';
import { importFixture, md5 } from '../identity/fixture.js';
import {
  getResults,
  getStatus,
  lines,
  purchase,
  runList,
  startListService,
  submit,
  type ListService,
} from './helpers.js';

let service: ListService;
const scratch = tempDir('mailsieve-list-services-');

beforeAll(async () => {
  service = await startListService();
  await importFixture(service.db, scratch.path);
});
afterAll(async () => {
  await service?.close();
  scratch.remove();
});

const EMAIL_LIST = ['Email,Name', 'jane.doe@example.com,Jane', 'nobody@example.com,Nobody', ''].join('\n');
const POSTAL_LIST = [
  'First Name,Last Name,Street,City,State,Zip',
  'Jane,Doe,12 Main St,Springfield,IL,62704',
  'Jake,Doe,12 Main Street,Springfield,IL,62704-1234',
  'Ann,Roe,7 Elm Ave,Salem,MA,01970',
  'Zed,Zee,99 Nowhere Rd,Springfield,IL,62704',
  '',
].join('\n');

/** Polls until the list is final or awaits purchase. */
async function settle(key: string, id: number): Promise<ListResource> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await getStatus(service.url, key, id);
    const list = listResourceSchema.parse(answer.json());
    if (['Results', 'Processed', 'Invalid', 'Error'].includes(list.status)) return list;
    if (Date.now() > deadline) throw new Error(`list ${id} still ${list.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function table(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [head, ...rest] = lines(text);
  const header = head.split(',');
  return {
    header,
    rows: rest.map((line) => Object.fromEntries(line.split(',').map((value, i) => [header[i], value]))),
  };
}

describe('email intelligence on a list', () => {
  it('appends every enabled field to every row, filled for known people, and reports matches', async () => {
    const key = service.key({
      services: ['validation', 'intelligence'],
      fields: ['age', 'gender', 'interests'],
    });
    const { list, results } = await runList(service.url, key, EMAIL_LIST, {
      query: { header: 'true', services: 'email_validation,email_intelligence' },
    });
    expect(list.status).toBe('Results');
    expect(Object.keys(list.services)).toEqual(['email_validation', 'email_intelligence']);
    expect(list.services.email_intelligence).toMatchObject({
      status: 'Completed',
      input_count: 2,
      completed_count: 2,
      reporting: { age: { 'Total Count': 1 }, gender: { 'Total Count': 1 }, interests: { 'Total Count': 1 } },
    });
    const { header, rows } = table(results!.text);
    const intelligence = intelligenceColumns({
      fields: ['age', 'gender', 'interests'],
      eam: false,
      monthLastOpen: false,
      postalAddress: false,
    });
    expect(header).toEqual(['Email', 'Name', ...VALIDATION_COLUMNS, ...intelligence]);
    expect(rows[0]).toMatchObject({
      age: '35-44',
      gender: 'Female',
      'interests.travel': 'true',
      'interests.pets': '',
    });
    expect(rows[1]).toMatchObject({ age: '', gender: '', 'interests.travel': '' });
  });

  it('gives EAM columns to an EAM key, and limits the fields to E7 `fields`', async () => {
    const key = service.key({ services: ['validation', 'intelligence', 'eam'] });
    const { list, results } = await runList(service.url, key, EMAIL_LIST, {
      query: { header: 'true', services: 'validation,intelligence', fields: 'age,eam' },
    });
    expect(list.status).toBe('Results');
    const { header, rows } = table(results!.text);
    expect(header.slice(2 + VALIDATION_COLUMNS.length)).toEqual([
      'age',
      'eam.date_first_seen',
      'eam.longevity',
      'eam.velocity',
      'eam.popularity',
      'eam.month_last_open',
    ]);
    expect(rows[0]['eam.longevity']).toBe('3');
    expect(rows[0]['eam.month_last_open']).toMatch(/^\d{4}-\d{2}$/);
    // An unknown address has the spec's defaults, not empty cells: eam is always present for EAM keys.
    expect(rows[1]).toMatchObject({ 'eam.date_first_seen': 'now', 'eam.velocity': '0', age: '' });
    expect(list.services.email_intelligence?.reporting).toEqual({
      age: { 'Total Count': 1 },
      eam: { 'Total Count': 1 },
    });
  });

  it('keeps activity metrics beside a postal address nobody lives at', async () => {
    const key = service.key({ services: ['eam'] });
    const text = [
      'Email,First Name,Last Name,Street,Zip',
      'lurker@example.com,Lou,Lurk,1 Nowhere Rd,62704',
      'nobody@example.com,No,Body,1 Nowhere Rd,62704',
      '',
    ].join('\n');
    const { results } = await runList(service.url, key, text, { query: { header: 'true' } });
    const { rows } = table(results!.text);
    expect(rows[0]['eam.longevity']).toBe('1');
    expect(rows[1]).toMatchObject({ 'eam.date_first_seen': 'now', 'eam.longevity': '0' });
  });

  it('finds people by an MD5 column, without any email column', async () => {
    const key = service.key({ services: ['intelligence'], fields: ['age'] });
    const text = ['MD5,Id', `${md5('ann.roe@example.com')},1`, `${md5('nobody@example.com')},2`, ''].join(
      '\n',
    );
    const { list, results } = await runList(service.url, key, text, { query: { header: 'true' } });
    expect(list.status).toBe('Results');
    expect(Object.keys(list.services)).toEqual(['email_intelligence']);
    expect(lines(results!.text)).toEqual([
      'MD5,Id,age',
      `${md5('ann.roe@example.com')},1,65+`,
      `${md5('nobody@example.com')},2,`,
    ]);
  });
});

describe('email append and alternate email append', () => {
  it('appends an address by name and postal address, Individual before Household', async () => {
    const key = service.key({ services: ['email_append'] });
    const { list, results } = await runList(service.url, key, POSTAL_LIST, { query: { header: 'true' } });
    expect(list.status).toBe('Results');
    expect(list.services.email_append?.reporting).toEqual({
      email_match_type: { 'Individual match': 2, 'Household match': 1 },
    });
    const { header, rows } = table(results!.text);
    expect(header.slice(6)).toEqual([...EMAIL_APPEND_COLUMNS]);
    expect(rows.map((row) => [row['Appended Email'], row['Email Match Type']])).toEqual([
      ['jane.doe@example.com', 'Individual'],
      ['jane.doe@example.com', 'Household'],
      ['ann.roe@example.com', 'Individual'],
      ['', ''],
    ]);
  });

  it('appends as many alternate addresses as the key allows', async () => {
    const text = ['Email', 'jane.doe@example.com', 'ann.roe@example.com', ''].join('\n');
    const one = service.key({ services: ['alternate_email'] });
    const first = await runList(service.url, one, text, { query: { header: 'true' } });
    expect(lines(first.results!.text)).toEqual([
      'Email,Alternate Email,Alternate Match Type',
      'jane.doe@example.com,jd@example.org,Individual',
      'ann.roe@example.com,,',
    ]);
    const three = service.key({ services: ['alternate_email'], alternateMax: 3 });
    const second = await runList(service.url, three, text, { query: { header: 'true' } });
    const { header, rows } = table(second.results!.text);
    expect(header.slice(1)).toEqual(alternateEmailColumns(3));
    expect(rows[0]).toMatchObject({
      'Alternate Email': 'jd@example.org',
      'Alternate Match Type': 'Individual',
      'Alternate Match Type 2': 'Household',
      'Alternate Match Type 3': 'Household',
    });
    expect(second.list.services.alternate_email_append?.reporting).toEqual({
      alternate_match_type: {
        'Individual match': 1,
        'Household match': 0,
        '2nd Individual match': 0,
        '2nd Household match': 1,
        '3rd Individual match': 0,
        '3rd Household match': 1,
      },
    });
  });
});

describe('which services run', () => {
  it('runs the key’s services whose columns the file has, when E7 names none', async () => {
    const key = service.key({ services: ['validation', 'intelligence', 'email_append', 'alternate_email'] });
    const { list } = await runList(service.url, key, EMAIL_LIST, { query: { header: 'true' } });
    expect(list.status).toBe('Results');
    expect(Object.keys(list.services)).toEqual([
      'email_validation',
      'email_intelligence',
      'alternate_email_append',
    ]);
  });

  it('makes a list Invalid when a named service lacks its columns', async () => {
    const key = service.key({ services: ['validation', 'email_append'] });
    const { list } = await runList(service.url, key, EMAIL_LIST, {
      query: { header: 'true', services: 'email_append' },
    });
    expect(list.status).toBe('Invalid');
    expect(list.reason).toMatch(/Email append needs first name, last name, street/);
  });

  it('answers 403 for a service the key lacks and 400 for an unknown one, before reading the file', async () => {
    const key = service.key({ services: ['validation'] });
    const lacking = await submit(service.url, key, EMAIL_LIST, { query: { services: 'email_intelligence' } });
    expect(lacking.status).toBe(403);
    expect(lacking.json()).toMatchObject({ error_code: 403 });
    expect(lacking.text).toMatch(/not enabled for email_intelligence/);
    const unknown = await submit(service.url, key, EMAIL_LIST, { query: { services: 'teleportation' } });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toMatch(/'teleportation' is not a list service/);
    const intelligenceKey = service.key({ services: ['intelligence'], fields: ['age'] });
    const badField = await submit(service.url, intelligenceKey, EMAIL_LIST, {
      query: { fields: 'shoe_size' },
    });
    expect(badField.status).toBe(400);
    const notEnabled = await submit(service.url, intelligenceKey, EMAIL_LIST, {
      query: { fields: 'gender' },
    });
    expect(notEnabled.status).toBe(403);
    expect(notEnabled.text).toMatch(/gender/);
    const none = service.key({ services: ['postal_append'] });
    expect((await submit(service.url, none, EMAIL_LIST)).status).toBe(403);
  });

  it('tells a key what it may have (GET /v5/key)', async () => {
    const key = service.key({
      services: ['validation', 'eam', 'alternate_email'],
      fields: ['age'],
      alternateMax: 4,
    });
    const response = await fetch(`${service.url}/v5/key`, { headers: { api_key: key } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      services: ['validation', 'eam', 'alternate_email'],
      list_services: ['email_validation', 'email_intelligence', 'alternate_email_append'],
      fields: ['age'],
      alternate_max: 4,
      mode: 'safe_to_send',
    });
    const bad = await fetch(`${service.url}/v5/key`, { headers: { api_key: 'nope' } });
    expect(bad.status).toBe(401);
  });
});

describe('report=true and E9 purchase', () => {
  it('counts matches, waits for purchase, then delivers what was bought', async () => {
    const key = service.key({ services: ['validation', 'intelligence', 'email_append'] });
    const text = [
      'Email,First Name,Last Name,Street,City,State,Zip',
      'jane.doe@example.com,Jane,Doe,12 Main St,Springfield,IL,62704',
      'jim.doe@example.net,Jake,Doe,12 Main St,Springfield,IL,62704',
      'nobody@example.com,Zed,Zee,99 Nowhere Rd,Springfield,IL,62704',
      '',
    ].join('\n');
    const submitted = await submit(service.url, key, text, { query: { header: 'true', report: 'true' } });
    expect(submitted.status).toBe(202);
    const id = submitted.json<{ list_id: number }>().list_id;
    const reported = await settle(key, id);
    expect(reported.status).toBe('Processed');
    expect(reported.services.email_validation?.status).toBe('Completed');
    expect(reported.services.email_intelligence).toMatchObject({ status: 'Completed' });
    expect(reported.services.email_intelligence?.reporting).toMatchObject({
      age: { 'Total Count': 2 },
      gender: { 'Total Count': 2 },
      household_income: { 'Total Count': 1 },
    });
    expect(reported.services.email_append?.reporting).toEqual({
      email_match_type: { 'Individual match': 1, 'Household match': 1 },
    });
    const early = await getResults(service.url, key, id);
    expect(early.status).toBe(404);
    expect(early.text).toMatch(/waiting for purchase/);

    // A field the key lacks, an unknown one, a service the list did not run: refused, nothing bought.
    const limited = service.key({ services: ['validation', 'intelligence'], fields: ['age'] });
    expect((await purchase(service.url, key, id, { fields: ['shoe_size'] })).status).toBe(400);
    expect((await purchase(service.url, key, id, { fields: ['alternate_email_append'] })).status).toBe(400);
    expect((await purchase(service.url, limited, id, { fields: ['age'] })).status).toBe(404);

    const bought = await purchase(service.url, key, id, {
      fields: ['age', 'email_append'],
      options: { email_append: { match_type: 'I' } },
    });
    expect(bought.status).toBe(200);
    expect(['Pending', 'Processing', 'Results']).toContain(bought.json<ListResource>().status);
    const done = await settle(key, id);
    expect(done.status).toBe('Results');
    const results = await getResults(service.url, key, id);
    const { header, rows } = table(results.text);
    expect(header.slice(7)).toEqual([...VALIDATION_COLUMNS, 'age', ...EMAIL_APPEND_COLUMNS]);
    expect(rows.map((row) => [row.age, row['Appended Email'], row['Email Match Type']])).toEqual([
      ['35-44', 'jane.doe@example.com', 'Individual'],
      ['18-20', '', ''],
      ['', '', ''],
    ]);
    // Bought once: a second purchase changes nothing.
    const again = await purchase(service.url, key, id, { fields: ['gender'] });
    expect(again.status).toBe(200);
    expect(again.json<ListResource>().status).toBe('Results');
  });

  it('ends a validation-only report list with Results, as validation is not subject to report', async () => {
    const key = service.key();
    const { list, results } = await runList(service.url, key, EMAIL_LIST, {
      query: { header: 'true', report: 'true' },
    });
    expect(list.status).toBe('Results');
    expect(results?.status).toBe(200);
  });
});
