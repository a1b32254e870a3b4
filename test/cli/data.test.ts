// `mailsieve data …` and the identity options of `mailsieve keys create`, through the built CLI on real files.
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { tempFolderPerTest } from '../helpers/folders.js';
import { activityRows, PEOPLE_HEADER, PEOPLE_ROWS, writeCsv } from '../service/identity/fixture.js';

describe('mailsieve data', () => {
  const folder = tempFolderPerTest();

  it('imports people and activity, reporting rejected rows by line and importing the rest', async () => {
    const dir = folder();
    const svc = join(dir, 'svc');
    const badAge = PEOPLE_HEADER.map(
      (column) =>
        ({ 'First Name': 'Al', 'Last Name': 'Bad', Email: 'al@example.com', age: 'old' })[column as string] ??
        '',
    );
    const people = writeCsv(dir, 'people.csv', [...PEOPLE_ROWS, badAge]);
    const text = await runCli(['data', 'import', 'people', people, '--data-dir', svc]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^Imported 5 of 6 rows from people\.csv \(people: 5 added, 0 updated\) in [\d.]+ s\.\n/,
    );
    expect(text.stdout).toContain("Rejected 1 row:\n  line 7: age 'old' is not one of 18-20");
    const json = await runCli(['data', 'import', 'people', people, '--data-dir', svc, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      kind: 'people',
      rows: 6,
      imported: 5,
      rejected: 1,
      added: 0,
      updated: 5,
      errors: [{ line: 7, message: expect.stringContaining("age 'old'") as string }],
    });
    const activity = await runCli([
      'data',
      'import',
      'activity',
      writeCsv(dir, 'activity.csv', activityRows()),
      '--data-dir',
      svc,
      '--json',
    ]);
    expect(JSON.parse(activity.stdout)).toMatchObject({ kind: 'activity', imported: 6, rejected: 0 });
    const status = await runCli(['data', 'status', '--data-dir', svc, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ people: 5, emails: 6, events: 6, sources: 3 });
  });

  it('exits non-zero with one line when nothing is usable or the file cannot be read', async () => {
    const dir = folder();
    const svc = join(dir, 'svc');
    const allBad = writeCsv(dir, 'bad.csv', [
      ['email', 'gender'],
      ['a@example.com', 'M'],
      ['b@example.com', 'F'],
    ]);
    writeFileSync(join(dir, 'header-only.csv'), 'email,age\n');
    const cases: [string[], RegExp][] = [
      [
        ['data', 'import', 'people', join(dir, 'missing.csv')],
        /^mailsieve: Cannot read .*missing\.csv: no such file\.\n$/,
      ],
      [
        ['data', 'import', 'people', allBad],
        /^mailsieve: Nothing imported: all 2 rows of bad\.csv were rejected\.\n$/,
      ],
      [
        ['data', 'import', 'people', join(dir, 'header-only.csv')],
        /^mailsieve: Nothing imported: header-only\.csv has a header but no data rows\.\n$/,
      ],
      [['data', 'import', 'activity', allBad], /^mailsieve: The header lacks source, event, occurred_at/],
      [
        ['data', 'import', 'things', allBad],
        /^mailsieve: data import takes people, activity or bounces; got 'things'\./,
      ],
      [['data', 'demo', '--people', '0'], /^mailsieve: --people takes a whole number/],
      [['data', 'clear'], /^mailsieve: data clear deletes .* add --yes\.\n$/],
      [
        ['keys', 'create', '--alternate-max', '6'],
        /^mailsieve: --alternate-max takes a whole number from 1 to 5/,
      ],
      [
        ['keys', 'create', '--fields', 'age,shoe_size'],
        /^mailsieve: Unknown field 'shoe_size' in --fields\.\n$/,
      ],
      [
        ['keys', 'create', '--services', 'intelligence,eam', '--bulk-limit', '10000'],
        /activity-metrics keys only/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli([...args, '--data-dir', svc]);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
    // The rejected rows were still reported on stdout.
    const bad = await runCli(['data', 'import', 'people', allBad, '--data-dir', svc]);
    expect(bad.stdout).toContain("line 2: gender 'M' is not one of Male, Female");
  });

  it('loads demo data, or writes it as CSV files that import cleanly; clear removes it', async () => {
    const dir = folder();
    const svc = join(dir, 'svc');
    const demo = await runCli(['data', 'demo', '--people', '120', '--data-dir', svc, '--json']);
    expect(demo.code).toBe(0);
    expect(JSON.parse(demo.stdout)).toMatchObject({ people: 120 });
    const csv = await runCli(['data', 'demo', '--people', '40', '--csv', join(dir, 'demo'), '--seed', '9']);
    expect(csv.stdout).toContain('Wrote synthetic demo data for 40 people');
    const imported = await runCli([
      'data',
      'import',
      'people',
      join(dir, 'demo', 'people.csv'),
      '--data-dir',
      join(dir, 'svc2'),
      '--json',
    ]);
    expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 40, imported: 40, rejected: 0 });
    const text = await runCli(['data', 'status', '--data-dir', svc]);
    expect(text.stdout).toMatch(
      /^People 120, addresses \d+, activity events \d+ from \d+ sources\.\n {2}#1 {2}demo {5}mailsieve-demo/,
    );
    expect(text.stdout).toMatch(/\nDisk used in .+: [\d.]+ (?:bytes|KB|MB) database, 0 bytes in 0 stored lists /);
    expect((await runCli(['data', 'clear', '--yes', '--data-dir', svc])).stdout).toBe(
      'Reference data cleared.\n',
    );
    const after = JSON.parse((await runCli(['data', 'status', '--data-dir', svc, '--json'])).stdout) as {
      people: number;
    };
    expect(after.people).toBe(0);
  });

  it('keys create takes --fields, --alternate-max and --bulk-limit, and keys list shows them', async () => {
    const svc = join(folder(), 'svc');
    expect(
      (
        await runCli([
          'keys',
          'create',
          '--data-dir',
          svc,
          '--services',
          'intelligence,eam',
          '--fields',
          'age,gender,month_last_open',
          '--alternate-max',
          '3',
        ])
      ).code,
    ).toBe(0);
    expect(
      (await runCli(['keys', 'create', '--data-dir', svc, '--services', 'eam', '--bulk-limit', '10000']))
        .code,
    ).toBe(0);
    const listed = (await runCli(['keys', 'list', '--json', '--data-dir', svc])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(listed).toMatchObject([
      {
        services: ['intelligence', 'eam'],
        fields: ['age', 'gender', 'month_last_open'],
        alternate_max: 3,
        bulk_limit: 5000,
      },
      { services: ['eam'], fields: 'all', alternate_max: 1, bulk_limit: 10000 },
    ]);
  });
});
