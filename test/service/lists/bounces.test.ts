// Acceptance of known bouncers (issue 22), on a real service over HTTP: a bounce file of each supported shape
// imported (test/fixtures/bounces/), then a list and E1: hard bounces read 520 offline, soft ones and other
// rows do not, nor an address that opened after its bounce; only keys with known bouncers say 520, in both
// modes; the key's max age is read against the day of the check.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importActivityFile, importBouncesFile } from '../../../service/identity/import.js';
import { tempDir } from '../../helpers/service.js';
import { allFixtureAddresses, BOUNCE_FIXTURE_FILES, BOUNCE_FIXTURES } from '../identity/bounces.fixtures.js';
import { daysAgo, writeCsv } from '../identity/fixture.js';
import { lines, runList, startListService, type ListService } from './helpers.js';

/** A hard bounce of the fixtures that opened a message after it bounced (2026-05-06). */
const OPENED_AFTER = 'sg.hard2@example.org';

describe('known bouncers (code 520) in lists and E1', () => {
  let svc: ListService;
  let scratch: { path: string; remove(): void };
  beforeAll(async () => {
    svc = await startListService();
    scratch = tempDir();
    for (const file of BOUNCE_FIXTURE_FILES) {
      const report = await importBouncesFile(svc.db, join(BOUNCE_FIXTURES, file));
      expect(report.rejected, file).toBe(0);
    }
    const activity = writeCsv(scratch.path, 'activity.csv', [
      ['email', 'source', 'event', 'occurred_at'],
      [OPENED_AFTER, 'newsletter', 'open', '2026-06-01T09:00:00Z'],
      ['sg.hard1@example.com', 'newsletter', 'open', '2026-04-01T09:00:00Z'],
      ['mg.hard1@example.com', 'signup-form', 'seen', '2026-06-01T09:00:00Z'],
    ]);
    await importActivityFile(svc.db, activity);
  });
  afterAll(async () => {
    await svc?.close();
    scratch?.remove();
  });

  const addresses = allFixtureAddresses();
  /** What each address should read: 520 for a hard bounce that still counts, else 10 (offline, syntax OK). */
  const expectedCode = ({ email, kind }: { email: string; kind: string }) =>
    kind === 'hard' && email !== OPENED_AFTER ? 520 : 10;

  async function codesOf(
    key: string,
    emails: readonly string[],
  ): Promise<Map<string, { code: number; status: string }>> {
    const csv = ['email', ...emails].join('\n');
    const { list, results } = await runList(svc.url, key, csv, {
      fileName: 'bounced.csv',
      query: { header: 'true' },
    });
    expect(list.status, JSON.stringify(list)).toBe('Results');
    const [header, ...rows] = lines(results!.text).map((line) => line.split(','));
    const code = header.indexOf('Validation Code');
    const status = header.indexOf('Validation Status');
    return new Map(rows.map((row) => [row[0], { code: Number(row[code]), status: row[status] }]));
  }

  async function e1(key: string, email: string): Promise<{ status: string; status_code: number }> {
    const response = await fetch(`${svc.url}/v5/ev?email=${encodeURIComponent(email)}&api_key=${key}`);
    const body = (await response.json()) as Record<string, { status: string; status_code: number }>;
    return body.safe_to_send ?? body.email_validation;
  }

  it('a list reads every hard bounce 520 (invalid, Mailbox Errors), and no soft bounce, other row or later opener', async () => {
    const key = svc.key({ knownBouncers: true, bounceMaxAgeDays: 36_500 });
    const emails = [...addresses.map((row) => row.email), 'fresh@example.com'];
    const codes = await codesOf(key, emails);
    for (const row of addresses)
      expect(codes.get(row.email), `${row.email} (${row.kind})`).toEqual(
        expectedCode(row) === 520 ? { code: 520, status: 'invalid' } : { code: 10, status: 'unknown' },
      );
    expect(codes.get('fresh@example.com')?.code).toBe(10);
    const hard = addresses.filter((row) => expectedCode(row) === 520).length;
    expect(hard).toBeGreaterThanOrEqual(BOUNCE_FIXTURE_FILES.length);
    expect(addresses.some((row) => row.kind === 'soft')).toBe(true);
    expect(addresses.some((row) => row.kind === 'other')).toBe(true);

    const { list } = await runList(svc.url, key, ['email', ...emails].join('\n'), {
      fileName: 'again.csv',
      query: { header: 'true' },
    });
    const reporting = list.services.email_validation!.reporting!;
    expect(reporting.status_codes?.['520']).toBe(hard);
    expect(reporting.invalid_categories?.['Mailbox Errors']).toBe(hard);
  });

  it('E1 answers each address as the list does, in both modes', async () => {
    const key = svc.key({ knownBouncers: true, bounceMaxAgeDays: 36_500 });
    const legacy = svc.key({ knownBouncers: true, bounceMaxAgeDays: 36_500, mode: 'email_validation' });
    for (const row of addresses) {
      const answer = await e1(key, row.email.toUpperCase());
      expect(answer.status_code, row.email).toBe(expectedCode(row));
      expect(answer.status).toBe(expectedCode(row) === 520 ? 'invalid' : 'valid');
    }
    expect(await e1(legacy, 'mc.hard1@example.com')).toMatchObject({ status: 'invalid', status_code: 520 });
  });

  it('a key without known bouncers never reads 520', async () => {
    const key = svc.key({ bounceMaxAgeDays: 36_500 });
    const hard = addresses.filter((row) => expectedCode(row) === 520).map((row) => row.email);
    const codes = await codesOf(key, hard);
    expect(new Set([...codes.values()].map((value) => value.code))).toEqual(new Set([10]));
    expect((await e1(key, hard[0])).status_code).toBe(10);
  });

  it('counts a bounce only within the key’s max age, from today', async () => {
    const file = writeCsv(scratch.path, 'aged.csv', [
      ['Email', 'Type', 'BouncedAt'],
      ['aged.400@example.com', 'HardBounce', daysAgo(400)],
      ['aged.100@example.com', 'HardBounce', daysAgo(100)],
    ]);
    await importBouncesFile(svc.db, file);
    const year = svc.key({ knownBouncers: true });
    const month = svc.key({ knownBouncers: true, bounceMaxAgeDays: 30 });
    const aged = ['aged.400@example.com', 'aged.100@example.com'];
    const yearCodes = await codesOf(year, aged);
    expect(aged.map((email) => yearCodes.get(email)?.code)).toEqual([10, 520]);
    expect((await e1(year, aged[0])).status_code).toBe(10);
    expect((await e1(year, aged[1])).status_code).toBe(520);
    const monthCodes = await codesOf(month, aged);
    expect(aged.map((email) => monthCodes.get(email)?.code)).toEqual([10, 10]);
    expect((await e1(month, aged[1])).status_code).toBe(10);
  });
});
