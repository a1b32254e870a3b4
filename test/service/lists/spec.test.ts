// Issue #13's list answers through E7–E10 on a real service: white space around addresses (210, corrected),
// the delimiter read from the content and reported in E8, the results file name by the services run, one
// results line per input line, and counts that never overshoot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/service.js';
import { importFixture } from '../identity/fixture.js';
import { getStatus, lines, runList, startListService, submit, type ListService } from './helpers.js';

let service: ListService;
const scratch = tempDir('mailsieve-list-spec-');

beforeAll(async () => {
  service = await startListService();
  await importFixture(service.db, scratch.path);
});
afterAll(async () => {
  await service?.close();
  scratch.remove();
});

/** The cells of a results line split by `delimiter` (no quoted cells in these tests). */
const cells = (line: string, delimiter = ',') => line.split(delimiter);

describe('white space around an address in a list', () => {
  it('is 210; with corrections the row reads corrected with the trimmed address in Valid Email', async () => {
    const key = service.key({ services: ['validation', 'corrections'] });
    const body =
      'Email,Name\n test@iana.org,A\n"test@iana.org\t",B\njane doe@example.com,C\ntest@iana.org,D\n';
    const { list, results } = await runList(service.url, key, body, {
      query: { header: 'true', delimiter: ',' },
      fileName: 'spaces.csv',
    });
    expect(list.status).toBe('Results');
    const [header, ...rows] = lines(results!.text).map((line) => cells(line));
    const at = (name: string) => header.indexOf(name);
    expect(
      rows.map((row) => [row[at('Validation Status')], row[at('Validation Code')], row[at('Valid Email')]]),
    ).toEqual([
      ['corrected', '210', 'test@iana.org'],
      ['corrected', '210', 'test@iana.org'],
      ['invalid', '215', ''],
      ['unknown', '10', ''],
    ]);
    expect(list.services.email_validation?.reporting).toMatchObject({
      status_codes: { '210': 2, '215': 1, '10': 1 },
    });
  });

  it('without corrections the row is invalid (210) and Valid Email is empty', async () => {
    const key = service.key({ services: ['validation'] });
    const { results } = await runList(service.url, key, 'test@iana.org \n', { fileName: 'one.txt' });
    const [header, row] = lines(results!.text).map((line) => cells(line, '\t'));
    expect(row[header.indexOf('Validation Status')]).toBe('invalid');
    expect(row[header.indexOf('Validation Code')]).toBe('210');
    expect(row[header.indexOf('Valid Email')]).toBe('');
  });
});

describe('the delimiter, when none is given, is read from the content', () => {
  const people = (d: string) =>
    ['Email', 'First', 'Last'].join(d) +
    '\n' +
    ['jane.doe@example.com', 'Jane', 'Doe'].join(d) +
    '\n' +
    ['bob.lee@example.com', 'Bob', 'Lee'].join(d) +
    '\n';

  it('a tab-separated text/csv body with no name or delimiter (spec defaults: tab, myfile.csv)', async () => {
    const key = service.key({ services: ['validation'] });
    const { list, results } = await runList(service.url, key, people('\t'), {
      as: 'text',
      query: { header: 'true' },
    });
    expect(list).toMatchObject({ status: 'Results', name: 'myfile.csv', records: 2, delimiter: '\t' });
    expect(list.services.email_validation?.reporting).toMatchObject({ status_codes: { '10': 2 } });
    expect(lines(results!.text)[1].split('\t').slice(0, 5)).toEqual([
      'jane.doe@example.com',
      'Jane',
      'Doe',
      'unknown',
      '10',
    ]);
  });

  it.each([
    [';', 'semicolon.csv'],
    ['|', 'pipe.csv'],
    [',', 'comma.txt'],
    ['\t', 'tab.csv'],
  ])('%j in %s', async (delimiter, fileName) => {
    const key = service.key({ services: ['validation'] });
    const { list, results } = await runList(service.url, key, people(delimiter), {
      fileName,
      query: { header: 'true' },
    });
    expect(list).toMatchObject({ status: 'Results', records: 2, delimiter });
    expect(list.services.email_validation?.reporting).toMatchObject({ status_codes: { '10': 2 } });
    expect(lines(results!.text)[0].split(delimiter)).toHaveLength(3 + 6);
  });

  it('the delimiter parameter wins, and is reported too', async () => {
    const key = service.key({ services: ['validation'] });
    const { list } = await runList(service.url, key, 'jane.doe@example.com\n', {
      fileName: 'one.csv',
      query: { delimiter: ';' },
    });
    expect(list).toMatchObject({ status: 'Results', delimiter: ';' });
  });
});

describe('the results file name', () => {
  const disposition = (headers: Headers) => headers.get('content-disposition') ?? '';

  it('is <name>-<list_id>-Validation.<ext> when validation ran', async () => {
    const key = service.key({ services: ['validation', 'intelligence'] });
    const { list, results } = await runList(service.url, key, 'Email\njane.doe@example.com\n', {
      fileName: 'leads.csv',
      query: { header: 'true', services: 'email_validation,email_intelligence' },
    });
    expect(disposition(results!.headers)).toContain(`filename=leads-${list.list_id}-Validation.csv`);
  });

  it('is named by the first service run otherwise: Intelligence, EmailAppend', async () => {
    const intelligence = service.key({ services: ['intelligence'], fields: ['age'] });
    const a = await runList(service.url, intelligence, 'Email\njane.doe@example.com\n', {
      fileName: 'leads.csv',
      query: { header: 'true', services: 'email_intelligence' },
    });
    expect(Object.keys(a.list.services)).toEqual(['email_intelligence']);
    expect(disposition(a.results!.headers)).toContain(`filename=leads-${a.list.list_id}-Intelligence.csv`);
    const append = service.key({ services: ['email_append'] });
    const b = await runList(
      service.url,
      append,
      'First Name,Last Name,Street,Zip\nJane,Doe,12 Main St,62704\n',
      {
        fileName: 'postal.txt',
        query: { header: 'true', delimiter: ',', services: 'email_append' },
      },
    );
    expect(disposition(b.results!.headers)).toContain(`filename=postal-${b.list.list_id}-EmailAppend.txt`);
  });
});

describe('row alignment', () => {
  it('keeps one results line per input line: blank lines stay, with empty appended fields; records counts the others', async () => {
    const key = service.key({ services: ['validation'] });
    const input = [
      'Email,Name',
      '',
      'jane.doe@example.com,Jane',
      '',
      '   ',
      ',',
      'bob.lee@example.com,Bob',
      '',
      'ann@example.com,Ann',
      '',
    ].join('\r\n');
    const { list, results } = await runList(service.url, key, input, {
      fileName: 'gaps.csv',
      query: { header: 'true' },
    });
    expect(list.records).toBe(3);
    const out = results!.text.split('\r\n');
    expect(out).toHaveLength(input.split('\r\n').length);
    const empty = ','.repeat(1 + 6);
    expect(out[1]).toBe(empty);
    expect(out[2]).toMatch(/^jane\.doe@example\.com,Jane,unknown,10,/);
    expect(out.slice(3, 6)).toEqual([empty, empty, empty]);
    expect(out[6]).toMatch(/^bob\.lee@example\.com,Bob,unknown,10,/);
    expect(out[7]).toBe(empty);
    expect(out[8]).toMatch(/^ann@example\.com,Ann,/);
    expect(out[9]).toBe('');
  });

  it('without a header too, and with many blank lines between two rows', async () => {
    const key = service.key({ services: ['validation'] });
    const input = `\n\njane.doe@example.com\n${'\n'.repeat(200_000)}bob.lee@example.com\n\n`;
    const { list, results } = await runList(service.url, key, input, { fileName: 'gaps.txt' });
    expect(list.records).toBe(2);
    const out = results!.text.split('\n');
    // The header row is added: every input line i is results line i + 1.
    expect(out).toHaveLength(input.split('\n').length + 1);
    expect(out[3]).toMatch(/^jane\.doe@example\.com\tunknown\t10\t/);
    expect(out[3 + 200_001]).toMatch(/^bob\.lee@example\.com\tunknown/);
    expect(out[4]).toBe('\t'.repeat(6));
  });
});

describe('progress counts', () => {
  it('input_count never exceeds records, completed_count never input_count, and neither goes back', async () => {
    const key = service.key({ services: ['validation'] });
    const rows = Array.from({ length: 60_000 }, (_, i) => `person${i}@example.com,Name ${i}`);
    const submitted = await submit(service.url, key, `Email,Name\n${rows.join('\n')}\n`, {
      fileName: 'big.csv',
      query: { header: 'true' },
    });
    const id = submitted.json<{ list_id: number }>().list_id;
    let last = { records: 0, input: 0, completed: 0 };
    for (;;) {
      const doc = getStatus(service.url, key, id);
      const list = (await doc).json<{
        status: string;
        records: number;
        services: { email_validation: { input_count: number; completed_count: number } };
      }>();
      const now = {
        records: list.records,
        input: list.services.email_validation.input_count,
        completed: list.services.email_validation.completed_count,
      };
      expect(now.input).toBeLessThanOrEqual(now.records);
      expect(now.completed).toBeLessThanOrEqual(now.input);
      expect(now.records).toBeGreaterThanOrEqual(last.records);
      expect(now.input).toBeGreaterThanOrEqual(last.input);
      expect(now.completed).toBeGreaterThanOrEqual(last.completed);
      last = now;
      if (list.status === 'Results') break;
      expect(['Pending', 'Processing']).toContain(list.status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(last).toEqual({ records: 60_000, input: 60_000, completed: 60_000 });
  });
});
