// Importing bounce exports into a real service database: every supported platform shape (the files of
// test/fixtures/bounces/), hard bounces stored with their latest date, soft bounces and other rows read and
// counted, bad rows rejected by line, files that are not bounce exports refused in words.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ImportFileError, importBouncesFile } from '../../../service/identity/import.js';
import { bounceKindOf, parseBounceTime } from '../../../service/identity/import.bounces.js';
import { bounceStatus } from '../../../service/identity/bounces.js';
import { referenceDataStatus } from '../../../service/identity/status.js';
import { BOUNCE_FIXTURE_FILES, BOUNCE_FIXTURES, fixtureAddresses } from './bounces.fixtures.js';
import { serviceDbPerTest, writeCsv } from './fixture.js';

const NOW_S = Date.UTC(2026, 10, 20) / 1000;
const utc = (iso: string) => Date.parse(iso) / 1000;

describe('bounce kinds and dates', () => {
  it('reads platform words, enhanced status codes and reply codes', () => {
    const cases: [string, string | undefined][] = [
      ['HardBounce', 'hard'],
      ['hard_bounce', 'hard'],
      ['Hard Bounce', 'hard'],
      ['HARD_BOUNCE', 'hard'],
      ['hardBounce', 'hard'],
      ['hard', 'hard'],
      ['cleaned', 'hard'],
      ['bounced', 'hard'],
      ['BOUNCE', 'hard'],
      ['Permanent', 'hard'],
      ['BadEmailAddress', 'hard'],
      ['INVALID_EMAIL', 'hard'],
      ['5.1.1', 'hard'],
      ['5.1.10', 'hard'],
      ['550', 'hard'],
      ['smtp; 550 5.1.1 user unknown', 'hard'],
      ['550 Requested action not taken: mailbox unavailable', 'hard'],
      ['SoftBounce', 'soft'],
      ['soft', 'soft'],
      ['Transient', 'soft'],
      ['Undetermined', 'soft'],
      ['DnsError', 'soft'],
      ['4.2.2', 'soft'],
      ['452', 'soft'],
      ['smtp;421 4.4.2 Connection timed out', 'soft'],
      ['SpamComplaint', 'other'],
      ['COMPLAINT', 'other'],
      ['Unsubscribed', 'other'],
      ['unsubscribedViaEmail', 'other'],
      ['2.0.0', 'other'],
      ['', undefined],
      ['605', undefined],
      ['Not delivering to previously bounced address', undefined],
      // A code inside a version number or an address is no code.
      ['relay 10.5.1.1 said no', undefined],
      ['v2.5.1.14', undefined],
    ];
    for (const [value, kind] of cases) expect(bounceKindOf(value), value).toBe(kind);
  });

  it('reads the platforms’ date forms, and nothing else', () => {
    expect(parseBounceTime('2026-05-04 16:03:22')).toBe(utc('2026-05-04T16:03:22Z'));
    expect(parseBounceTime('2026-05-05T10:13:20.6530000-04:00')).toBe(utc('2026-05-05T14:13:20Z'));
    expect(parseBounceTime('1778000000')).toBe(1778000000);
    expect(parseBounceTime('1778000000123')).toBe(1778000000);
    expect(parseBounceTime('Tue, 05 May 2026 10:13:20 UTC')).toBe(utc('2026-05-05T10:13:20Z'));
    expect(parseBounceTime('5 May 2026 10:13:20 +0200')).toBe(utc('2026-05-05T08:13:20Z'));
    expect(parseBounceTime('Tue, 05 May 2026 10:13 GMT')).toBe(utc('2026-05-05T10:13:00Z'));
    for (const bad of [
      '2026-02-30',
      'Tue, 31 Feb 2026 10:13:20 UTC',
      '05/05/2026',
      'yesterday',
      '3 Foo 2026 10:00',
    ])
      expect(parseBounceTime(bad), bad).toBeUndefined();
  });
});

describe('bounces import', () => {
  const t = serviceDbPerTest();

  const stored = () =>
    Object.fromEntries(
      (
        t.db.prepare('SELECT email, bounced_at FROM ref_bounces').all() as {
          email: string;
          bounced_at: number;
        }[]
      ).map((row) => [row.email, row.bounced_at]),
    );
  const importFile = (path: string, nowS = NOW_S) => importBouncesFile(t.db, path, { nowS });

  it.each(BOUNCE_FIXTURE_FILES)(
    '%s: hard bounces stored, soft bounces and other rows counted',
    async (file) => {
      const expected = fixtureAddresses(file);
      const count = (kind: string) => expected.filter((row) => row.kind === kind).length;
      expect(count('hard')).toBeGreaterThan(0);
      const report = await importFile(join(BOUNCE_FIXTURES, file));
      expect(report).toMatchObject({
        kind: 'bounces',
        rows: expected.length,
        imported: count('hard'),
        rejected: 0,
        added: count('hard'),
        updated: 0,
        bounces: { hard: count('hard'), soft: count('soft'), other: count('other') },
      });
      expect(Object.keys(stored()).sort()).toEqual(
        expected
          .filter((row) => row.kind === 'hard')
          .map((row) => row.email)
          .sort(),
      );
      expect(bounceStatus(t.db)).toMatchObject({
        addresses: count('hard'),
        rows: expected.length,
        hard: count('hard'),
        soft: count('soft'),
        other: count('other'),
        rejected: 0,
        imports: [{ name: file, hard: count('hard'), soft: count('soft'), other: count('other') }],
      });
    },
  );

  it('keeps each shape’s bounce date (UTC unless the file says otherwise); an undated row counts from its import', async () => {
    for (const file of BOUNCE_FIXTURE_FILES) await importFile(join(BOUNCE_FIXTURES, file));
    expect(stored()).toMatchObject({
      'mc.hard2@example.org': utc('2026-05-06T08:30:00Z'), // Mailchimp CLEAN_TIME
      'sg.hard1@example.com': utc('2026-05-05T10:13:20Z'), // SendGrid, Unix seconds
      'mg.hard2@example.org': utc('2026-05-09T10:13:20Z'), // Mailgun, RFC 2822
      'ses.hard2@example.org': utc('2026-05-07T22:45:09Z'), // SES, ISO 8601 with an offset
      'pm.hard1@example.com': utc('2026-05-05T14:13:20Z'), // Postmark, -04:00
      'kl.hard1@example.com': utc('2026-05-05T10:13:20Z'),
      'bv.hard2@example.net': utc('2026-05-08T10:13:20Z'),
      'pl.hard1@example.com': NOW_S, // the plain list: no dates
    });
  });

  it('keeps the latest hard bounce of an address, and says what moved', async () => {
    const first = writeCsv(t.dir, 'first.csv', [
      ['email', 'type', 'date'],
      ['jo@example.com', 'hard', '2026-03-01'],
      ['JO@example.com', 'hard', '2026-02-01'],
      ['al@example.com', 'hard', '2026-03-01'],
    ]);
    expect(await importFile(first)).toMatchObject({ imported: 3, added: 2, updated: 0 });
    expect(stored()).toEqual({ 'jo@example.com': utc('2026-03-01'), 'al@example.com': utc('2026-03-01') });
    const second = writeCsv(t.dir, 'second.csv', [
      ['email', 'type', 'date'],
      ['jo@example.com', 'hard', '2026-04-01'],
      ['al@example.com', 'hard', '2026-01-01'],
      ['al@example.com', 'soft', '2026-06-01'],
    ]);
    expect(await importFile(second)).toMatchObject({ imported: 2, added: 0, updated: 1 });
    expect(stored()).toEqual({ 'jo@example.com': utc('2026-04-01'), 'al@example.com': utc('2026-03-01') });
  });

  it('rejects the rows it cannot read by line, and reads the rest', async () => {
    const file = writeCsv(t.dir, 'mixed.csv', [
      ['address', 'code', 'error', 'created_at'],
      ['ok@example.com', '550', 'no such user', '2026-05-01'],
      ['late@example.com', '550', 'no such user', '2027-05-01'],
      ['old@example.com', '550', 'no such user', '1989-12-31'],
      ['when@example.com', '550', 'no such user', 'last Tuesday'],
      ['not-an-address', '550', 'no such user', '2026-05-01'],
      ['again@example.com', '605', 'Not delivering to previously bounced address', '2026-05-01'],
      ['blank@example.com', '', '', '2026-05-01'],
      ['not-an-address-either', '452', 'mailbox full', 'whenever'],
      ['short@example.com', '550'],
    ]);
    const report = await importFile(file);
    expect(report).toMatchObject({
      rows: 9,
      imported: 1,
      rejected: 7,
      bounces: { hard: 1, soft: 1, other: 0 },
    });
    expect(report.errors).toEqual([
      { line: 3, message: "date '2027-05-01' is in the future" },
      { line: 4, message: "date '1989-12-31' is before 1990" },
      {
        line: 5,
        message:
          "date 'last Tuesday' is not a date (YYYY-MM-DD, an ISO 8601 date-time, an RFC 2822 date or Unix seconds)",
      },
      { line: 6, message: "email 'not-an-address' is not a valid address" },
      {
        line: 7,
        message:
          "'605' is no bounce type or SMTP code Mailsieve knows (hard: 5.x.x, 5xx, HardBounce, cleaned…; soft: 4.x.x, 4xx, SoftBounce, Transient…)",
      },
      {
        line: 8,
        message: 'the row gives no bounce type, code or reason: it cannot tell a hard bounce from a soft one',
      },
      { line: 10, message: 'the row has 2 fields; the header has 4' },
    ]);
    expect(Object.keys(stored())).toEqual(['ok@example.com']);
  });

  it('takes a one-column file with any header, or none, and email + date alone', async () => {
    writeFileSync(join(t.dir, 'bom.txt'), '\uFEFFa@example.com\r\nB@Example.com\r\n');
    expect(await importFile(join(t.dir, 'bom.txt'))).toMatchObject({ rows: 2, imported: 2 });
    const headed = writeCsv(t.dir, 'headed.csv', [['Bounced addresses'], ['c@example.com']]);
    expect(await importFile(headed)).toMatchObject({ rows: 1, imported: 1 });
    const dated = writeCsv(t.dir, 'dated.csv', [
      ['Email', 'Date'],
      ['d@example.com', '2026-01-02'],
    ]);
    const report = await importFile(dated);
    expect(report).toMatchObject({ rows: 1, imported: 1 });
    expect(report.warnings).toEqual([
      "Read addresses from 'Email'; dates from 'Date'; every row a hard bounce.",
    ]);
    expect(stored()).toEqual({
      'a@example.com': NOW_S,
      'b@example.com': NOW_S,
      'c@example.com': NOW_S,
      'd@example.com': utc('2026-01-02'),
    });
  });

  it('refuses, in words, a file with no addresses or nothing that says its rows bounced, and leaves no trace', async () => {
    const noEmail = writeCsv(t.dir, 'no-email.csv', [
      ['name', 'type'],
      ['Jo', 'hard'],
    ]);
    await expect(importFile(noEmail)).rejects.toThrow(
      "The header names no email column (its columns: 'name', 'type'): a bounces file needs one, named email, email address, recipient or address.",
    );
    // Mailchimp's subscribed members: an audience, not bounces. Importing it would mark every subscriber.
    const subscribed = writeCsv(t.dir, 'subscribed_members_export.csv', [
      ['Email Address', 'First Name', 'Last Name', 'MEMBER_RATING', 'OPTIN_TIME', 'LAST_CHANGED'],
      ['jo@example.com', 'Jo', 'Ng', '2', '2025-01-01 10:00:00', '2025-02-01 10:00:00'],
    ]);
    await expect(importFile(subscribed)).rejects.toThrow(ImportFileError);
    await expect(importFile(subscribed)).rejects.toThrow(
      /^No column says which rows are bounces \(its columns: 'Email Address', 'First Name', 'Last Name', 'MEMBER_RATING', 'OPTIN_TIME', 'LAST_CHANGED'\): .* Is this a bounce or suppression export\?$/,
    );
    writeFileSync(join(t.dir, 'empty.csv'), '');
    await expect(importFile(join(t.dir, 'empty.csv'))).rejects.toThrow(/is empty/);
    expect(referenceDataStatus(t.db).bounces).toMatchObject({ addresses: 0, imports: [] });
  });

  it('stops when cancelled: the bounces written stay, with their import’s counts', async () => {
    const rows = [['email', 'status']];
    for (let i = 0; i < 60_000; i++) rows.push([`person${i}@example.com`, '5.1.1']);
    const file = writeCsv(t.dir, 'big.csv', rows);
    const abort = new AbortController();
    const run = importBouncesFile(t.db, file, {
      nowS: NOW_S,
      batchSize: 1000,
      signal: abort.signal,
      onProgress: (_rows, progress) => {
        if (progress.imported > 0) abort.abort();
      },
    });
    await expect(run).rejects.toThrow(/interrupted/);
    const status = bounceStatus(t.db);
    expect(status.addresses).toBeGreaterThan(0);
    expect(status.addresses).toBeLessThan(60_000);
    expect(status.imports).toHaveLength(1);
    expect(status.imports[0].hard).toBe(status.addresses);
  });
});
