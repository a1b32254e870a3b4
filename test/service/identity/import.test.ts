// Importing reference data from real CSV files into a real service database: header names, the spec's
// enumerations and formats row by row with line numbers, merging rows into people and households.
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoPeople, loadDemo, DEMO_DOMAINS } from '../../../service/identity/demo.js';
import { ImportFileError, importActivityFile, importPeopleFile } from '../../../service/identity/import.js';
import { referenceDataStatus } from '../../../service/identity/status.js';
import { migrate } from '../../../service/store/migrate.js';
import { INTEREST_BITS } from '../../../service/store/migrations/0040-identity.js';
import { SERVICE_MIGRATIONS } from '../../../service/store/migrations/index.js';
import { INTEREST_NAMES } from '../../../shared/api/intelligence.js';
import { daysAgo, md5, PEOPLE_ROWS, serviceDbPerTest, sha1, writeCsv } from './fixture.js';

describe('reference data import', () => {
  const t = serviceDbPerTest();

  const people = () =>
    t.db
      .prepare(
        'SELECT first_name, last_name, household, zip5, zip4, age, interests FROM ref_people ORDER BY id',
      )
      .all();
  const emailsOf = (first: string) =>
    (
      t.db
        .prepare(
          'SELECT e.email FROM ref_emails e JOIN ref_people p ON p.id = e.person_id WHERE p.first_name = ? ORDER BY e.id',
        )
        .all(first) as { email: string }[]
    ).map((row) => row.email);

  it('imports people with header synonyms, hashes of the lower-cased address, households by address', async () => {
    const report = await importPeopleFile(t.db, writeCsv(t.dir, 'people.csv', PEOPLE_ROWS));
    expect(report).toMatchObject({ rows: 5, imported: 5, rejected: 0, added: 5, updated: 0 });
    expect(report.warnings.join(' ')).toContain('2 row(s) give a 5-digit ZIP');
    expect(emailsOf('Jane')).toEqual(['jane.doe@example.com', 'jd@example.org']);
    const hashes = t.db
      .prepare("SELECT hex(md5) AS md5, hex(sha1) AS sha1 FROM ref_emails WHERE email = 'jd@example.org'")
      .get();
    expect(hashes).toEqual({
      md5: md5('jd@example.org').toUpperCase(),
      sha1: sha1('jd@example.org').toUpperCase(),
    });
    const rows = people() as { first_name: string; household: string | null; zip4: string | null }[];
    const households = new Set(
      rows.filter((r) => ['Jane', 'John', 'Jim'].includes(r.first_name)).map((r) => r.household),
    );
    expect(households.size).toBe(1);
    expect(rows.find((r) => r.first_name === 'Ann')?.household).not.toEqual(rows[0].household);
    expect(rows.find((r) => r.first_name === 'Jim')?.zip4).toBeNull();
  });

  it('rejects values outside the spec’s enumerations and formats row by row, with line numbers, and imports the rest', async () => {
    const file = join(t.dir, 'bad.csv');
    writeFileSync(
      file,
      [
        'email,first name,last name,street,city,state,zip,age,gender,household_income,rfm_avg_dollars,rfm_last_order,interests.pets,life_stage_segment,country',
        'ok1@example.com,A,One,1 A St,Austin,TX,78701,65+,female,250K+,10,2024-01-31,yes,Summit Estates,USA',
        'bad-age@example.com,,,,,,,17-20,,,,,,,',
        'multi@example.com,"Ann',
        'Marie",,,,,,17-20,,,,,,,',
        'ok2@example.com,,,,,,,,,,,,,,',
        'bad-gender@example.com,,,,,,,,M,,,,,,',
        'bad-income@example.com,,,,,,,,,1k-2k,,,,,',
        'bad-rfm@example.com,,,,,,,,,,-4,,,,',
        'bad-date@example.com,,,,,,,,,,,2024-02-30,,,',
        'bad-pet@example.com,,,,,,,,,,,,maybe,,',
        'bad-segment@example.com,,,,,,,,,,,,,Summit Estate,',
        'bad-state@example.com,B,Two,1 B St,Springfield,Narnia,,,,,,,,,',
        'bad-zip@example.com,B,Two,1 B St,,,1234,,,,,,,,',
        'bad-country@example.com,,,,,,,,,,,,,,Canada',
        '',
        'short@example.com,A',
        ',,,,,,,,,,,,,,',
        'ok3@example.com,,,,,,,,,,,,,,',
      ].join('\r\n'),
    );
    const report = await importPeopleFile(t.db, file);
    expect(report.imported).toBe(3);
    expect(report.rejected).toBe(13);
    expect(report.errors.map((e) => `${e.line}: ${e.message}`)).toEqual([
      "3: age '17-20' is not one of 18-20, 21-24, 25-34, 35-44, 45-54, 55-64, 65+",
      // The quoted first name spans lines 4 and 5: the next row is line 6.
      "4: age '17-20' is not one of 18-20, 21-24, 25-34, 35-44, 45-54, 55-64, 65+",
      "7: gender 'M' is not one of Male, Female",
      "8: household_income '1k-2k' is not one of 0-15k, 15k-25k, 25k-35k, 35k-50k, 50k-75k, 75k-100k, 100k-150k, 150k-175k, 175k-200k, 200k-250k, 250k+",
      "9: rfm_avg_dollars '-4' is not a whole number of 0 or more",
      "10: rfm_last_order '2024-02-30' is not a date (YYYY-MM-DD)",
      "11: interests.pets 'maybe' is not true/false (or yes/no, 1/0)",
      "12: life_stage_segment 'Summit Estate' is not one of the spec's 70 life_stage_segment values",
      "13: state 'Narnia' is not a U.S. state or its USPS code",
      "14: zip '1234' is not a ZIP code (NNNNN or NNNNN-NNNN)",
      "15: country 'Canada' is not the United States (U.S. addresses only)",
      '17: the row has 2 fields; the header has 15',
      '18: the row names no one: give an email, or a first and last name with a postal address',
    ]);
    // Values are stored in the spec's spelling, whatever their case in the file.
    expect(
      t.db.prepare("SELECT gender, household_income FROM ref_people WHERE first_name = 'A'").get(),
    ).toEqual({
      gender: 'Female',
      household_income: '250k+',
    });
  });

  it('lists the first maxErrors rejected rows and counts them all', async () => {
    const rows = [['email', 'age']];
    for (let i = 0; i < 50; i++) rows.push([`p${i}@example.com`, i % 2 ? 'old' : '25-34']);
    const report = await importPeopleFile(t.db, writeCsv(t.dir, 'many.csv', rows), { maxErrors: 3 });
    expect(report).toMatchObject({ imported: 25, rejected: 25 });
    expect(report.errors.map((e) => e.line)).toEqual([3, 5, 7]);
  });

  it('merges rows naming the same person: by name and address, by email alone, by a person id', async () => {
    writeCsv(t.dir, 'a.csv', [
      ['first', 'last', 'email', 'street', 'zip', 'age', 'interests'],
      ['Mary', 'Major', 'mary@example.com', '1 High St', '10001', '25-34', 'travel;pets'],
      ['MARY', "Ma'jor", 'mary.work@example.com', '1 High Street', '10001', '', 'books'],
    ]);
    await importPeopleFile(t.db, join(t.dir, 'a.csv'));
    // One person (the later row's spelling of the name wins), two addresses.
    expect(people()).toMatchObject([{ first_name: 'MARY', last_name: "Ma'jor" }]);
    expect(emailsOf('MARY')).toEqual(['mary@example.com', 'mary.work@example.com']);
    // An email-only row adds to the person who has the address; a later value replaces, an empty one keeps.
    await importPeopleFile(
      t.db,
      writeCsv(t.dir, 'b.csv', [
        ['email', 'age', 'gender'],
        ['MARY.work@example.com', '35-44', 'Female'],
      ]),
    );
    expect(people()).toHaveLength(1);
    const mary = t.db.prepare('SELECT age, gender, interests FROM ref_people').get() as { interests: number };
    expect(mary).toMatchObject({ age: '35-44', gender: 'Female' });
    const bits = INTEREST_BITS.filter((_, bit) => mary.interests & (1 << bit));
    expect(bits.sort()).toEqual(['books', 'pets', 'travel']);
    // A person id column groups rows whatever their names.
    const report = await importPeopleFile(
      t.db,
      writeCsv(t.dir, 'c.csv', [
        ['person_id', 'email', 'household'],
        ['crm-1', 'x1@example.com', 'h9'],
        ['crm-1', 'x2@example.com', 'h9'],
        ['crm-2', 'x3@example.com', 'h9'],
      ]),
    );
    expect(report).toMatchObject({ added: 2, updated: 1 });
    expect(people()).toHaveLength(3);
  });

  it('imports activity: dates, date-times with offsets, Unix seconds; refuses bad rows; stores an event once', async () => {
    const rows = [
      ['Email', 'Source', 'Event', 'Occurred_At', 'campaign'],
      ['a@example.com', 'esp', 'open', '2024-03-01', 'x'],
      ['a@example.com', 'esp', 'CLICK', '2024-03-01T10:00:00+02:00', 'x'],
      ['a@example.com', 'esp', 'seen', '1700000000', 'x'],
      ['a@example.com', 'esp', 'open', '2024-03-01', 'duplicate'],
      ['a@', 'esp', 'open', '2024-03-01', ''],
      ['a@example.com', '', 'open', '2024-03-01', ''],
      ['a@example.com', 'esp', 'bounce', '2024-03-01', ''],
      ['a@example.com', 'esp', 'open', 'yesterday', ''],
      ['a@example.com', 'esp', 'open', '1980-01-01', ''],
      ['a@example.com', 'esp', 'open', daysAgo(-3), ''],
    ];
    const report = await importActivityFile(t.db, writeCsv(t.dir, 'activity.csv', rows));
    expect(report).toMatchObject({ rows: 10, imported: 4, rejected: 6, added: 3, updated: 1 });
    expect(report.warnings).toEqual(['Ignored columns: campaign.']);
    expect(report.errors.map((e) => e.line)).toEqual([6, 7, 8, 9, 10, 11]);
    expect(report.errors[2].message).toBe("event 'bounce' is not one of open, click, seen");
    const times = t.db.prepare('SELECT occurred_at, kind FROM ref_activity ORDER BY occurred_at').all();
    expect(times).toEqual([
      { occurred_at: 1700000000, kind: 'seen' },
      { occurred_at: Date.UTC(2024, 2, 1) / 1000, kind: 'open' },
      { occurred_at: Date.UTC(2024, 2, 1, 8) / 1000, kind: 'click' },
    ]);
  });

  it('fails the whole file only when it cannot be read or its header names nothing usable', async () => {
    await expect(importPeopleFile(t.db, join(t.dir, 'missing.csv'))).rejects.toThrow(ImportFileError);
    await expect(importPeopleFile(t.db, t.dir)).rejects.toThrow(/not a file/);
    await expect(
      importPeopleFile(
        t.db,
        writeCsv(t.dir, 'x.csv', [
          ['name', 'colour'],
          ['a', 'b'],
        ]),
      ),
    ).rejects.toThrow(/names no email column/);
    await expect(
      importPeopleFile(
        t.db,
        writeCsv(t.dir, 'y.csv', [
          ['email', 'first', 'First Name'],
          ['a@example.com', 'a', 'b'],
        ]),
      ),
    ).rejects.toThrow("Columns 'first' and 'First Name' both hold first; keep one.");
    await expect(importActivityFile(t.db, writeCsv(t.dir, 'z.csv', [['email', 'event']]))).rejects.toThrow(
      'The header lacks source, occurred_at',
    );
    writeFileSync(join(t.dir, 'empty.csv'), '');
    await expect(importPeopleFile(t.db, join(t.dir, 'empty.csv'))).rejects.toThrow(/is empty/);
    // Nothing of those failed imports is left behind, and the indexes are in place (6 for lookups, 2 for the
    // answers to prepare).
    expect(referenceDataStatus(t.db)).toMatchObject({ people: 0, datasets: [] });
    const indexes = t.db
      .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND name LIKE 'ref_%'")
      .get();
    expect(indexes).toEqual({ n: 8 });
  });

  it('loads clearly labelled, deterministic demo data that passes the import checks', async () => {
    const first = [...demoPeople({ people: 50, seed: 3, nowS: 1_750_000_000 })];
    const again = [...demoPeople({ people: 50, seed: 3, nowS: 1_750_000_000 })];
    expect(again).toEqual(first);
    const summary = await loadDemo(t.db, { people: 300, seed: 3 });
    expect(summary.people).toBe(300);
    const status = referenceDataStatus(t.db);
    expect(status).toMatchObject({ people: 300, emails: summary.emails });
    expect(status.datasets).toMatchObject([{ kind: 'demo', name: 'mailsieve-demo' }]);
    const domains = t.db
      .prepare("SELECT DISTINCT substr(email, instr(email, '@') + 1) AS d FROM ref_emails")
      .all();
    expect(domains.map((row) => (row as { d: string }).d).sort()).toEqual([...DEMO_DOMAINS].sort());
    const sources = t.db.prepare('SELECT name FROM ref_sources').all() as { name: string }[];
    expect(sources.every((s) => s.name.startsWith('mailsieve-demo/'))).toBe(true);
    expect(status.events).toBeGreaterThan(0);
  });
});

describe('migration 0040', () => {
  it('creates strict reference tables with checked values', () => {
    const db = new Database(':memory:');
    migrate(db, SERVICE_MIGRATIONS);
    db.prepare("INSERT INTO ref_datasets (kind, name, started_at) VALUES ('people', 'x', 'now')").run();
    const insert = (column: string, value: unknown) => () =>
      db
        .prepare(`INSERT INTO ref_people (person_key, dataset_id, ${column}) VALUES (randomblob(16), 1, ?)`)
        .run(value);
    expect(insert('zip5', '1234')).toThrow(/CHECK constraint/);
    expect(insert('interests', 2 ** 22)).toThrow(/CHECK constraint/);
    expect(insert('rfm_avg_dollars', 'many')).toThrow(/cannot store TEXT value in INTEGER column/);
    expect(() =>
      db.prepare("INSERT INTO ref_emails (email, md5, sha1) VALUES ('a@b.co', x'00', randomblob(20))").run(),
    ).toThrow(/CHECK constraint/);
    expect(() =>
      db
        .prepare(
          "INSERT INTO keys (key_hash, key_hint, mode, services, created_at, alternate_max) VALUES ('h', 'abcd', 'safe_to_send', '[]', 'now', 6)",
        )
        .run(),
    ).toThrow(/CHECK constraint/);
    db.close();
  });

  it('keeps one bit per spec interest', () => {
    expect([...INTEREST_BITS].sort()).toEqual([...INTEREST_NAMES].sort());
  });
});
