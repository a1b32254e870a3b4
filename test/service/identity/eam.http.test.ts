// The activity-metrics formulas (docs/identity.md, "Activity metrics") and E1's engagement_score, through
// HTTP against activity imported from a CSV file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importActivityFile } from '../../../service/identity/import.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';
import { daysAgo, getJson, importFixture, query, writeCsv } from './fixture.js';

const at = (email: string, source: string, event: string, days: number) => [
  email,
  source,
  event,
  daysAgo(days),
];

function activity(): string[][] {
  const rows = [['email', 'source', 'event', 'occurred_at']];
  rows.push(at('new@example.com', 's1', 'seen', 10));
  rows.push(at('year@example.com', 's1', 'seen', 100), at('year@example.com', 's1', 'open', 99));
  // 8 events in the last 6 months and one before: velocity counts the 8.
  for (let i = 0; i < 8; i++) rows.push(at('busy@example.com', 's1', 'open', 10 + i));
  rows.push(at('busy@example.com', 's1', 'open', 300));
  // 12 sources in the last 12 months (10 at most), and 3 more before that do not count.
  for (let i = 0; i < 12; i++) rows.push(at('popular@example.com', `source-${i}`, 'seen', 30 + i));
  for (let i = 0; i < 3; i++) rows.push(at('faded@example.com', `old-${i}`, 'open', 400 + i));
  // 600 events in 6 months: the most active there is.
  for (let i = 0; i < 600; i++)
    rows.push(at('hyper@example.com', 's1', i % 2 ? 'open' : 'click', 1 + i * 0.25));
  rows.push(at('clicker@example.com', 's1', 'click', 40));
  rows.push(at('x@mailinator.com', 's1', 'open', 2));
  return rows;
}

describe('activity metrics (eam) and engagement_score', () => {
  let service: TestService;
  let dir: { path: string; remove(): void };
  let eamKey: string;

  beforeAll(async () => {
    service = await startTestService();
    dir = tempDir();
    await importFixture(service.db, dir.path);
    const report = await importActivityFile(service.db, writeCsv(dir.path, 'more.csv', activity()));
    expect(report.rejected).toBe(0);
    eamKey = service.key({ services: ['eam'] });
  });
  afterAll(async () => {
    await service.close();
    dir.remove();
  });

  const eamOf = async (email: string) =>
    ((await getJson(service.url, `/v5/td?${query({ email, api_key: eamKey })}`)).body as { eam: unknown })
      .eam;

  it('longevity: 1 first seen within a month, 2 within a year, 3 before; date_first_seen is that day (UTC)', async () => {
    expect(await eamOf('new@example.com')).toEqual({
      date_first_seen: daysAgo(10).slice(0, 10),
      longevity: 1,
      velocity: 1,
      popularity: 1,
    });
    expect(await eamOf('year@example.com')).toMatchObject({
      date_first_seen: daysAgo(100).slice(0, 10),
      longevity: 2,
    });
    expect(await eamOf('busy@example.com')).toMatchObject({ longevity: 2 });
    expect(await eamOf('faded@example.com')).toMatchObject({ longevity: 3 });
  });

  it('velocity: events of the last 6 months, one step per doubling, 10 at most', async () => {
    expect(await eamOf('year@example.com')).toMatchObject({ velocity: 2 });
    expect(await eamOf('busy@example.com')).toMatchObject({ velocity: 4 });
    expect(await eamOf('hyper@example.com')).toMatchObject({ velocity: 10 });
    expect(await eamOf('faded@example.com')).toMatchObject({ velocity: 0 });
  });

  it('popularity: distinct sources of the last 12 months, 10 at most', async () => {
    expect(await eamOf('popular@example.com')).toMatchObject({ popularity: 10 });
    expect(await eamOf('faded@example.com')).toMatchObject({ popularity: 0 });
    expect(await eamOf('busy@example.com')).toMatchObject({ popularity: 1 });
  });

  it('month_last_open: the last open or click within 12 months, absent otherwise', async () => {
    expect(await eamOf('clicker@example.com')).toMatchObject({ month_last_open: daysAgo(40).slice(0, 7) });
    expect(await eamOf('faded@example.com')).not.toHaveProperty('month_last_open');
    expect(await eamOf('popular@example.com')).not.toHaveProperty('month_last_open');
  });

  describe('E1 engagement_score', () => {
    const ev = async (key: string, email: string) =>
      (await getJson(service.url, `/v5/ev?${query({ email, api_key: key })}`)).body as Record<
        string,
        Record<string, unknown>
      >;

    it('is given to every safe_to_send key (at no charge: no eam or intelligence needed), from opens, clicks and their recency', async () => {
      const eam = service.key({ services: ['validation', 'eam'] });
      const intelligence = service.key({ services: ['validation', 'intelligence'] });
      const verification = service.key({ services: ['validation'] });
      // Jane: 2 opens and a click in 6 months (2 + 2×1 = 4: 3 on the doubling scale), last 5 days ago (10).
      for (const key of [eam, intelligence, verification])
        expect((await ev(key, 'jane.doe@example.com')).safe_to_send).toEqual({
          address: 'jane.doe@example.com',
          status: 'valid',
          status_code: 10,
          engagement_score: 7,
        });
      // Seen but never opened: known, and not engaged.
      expect((await ev(eam, 'new@example.com')).safe_to_send.engagement_score).toBe(0);
      // Most active and recent: 10.
      expect((await ev(eam, 'hyper@example.com')).safe_to_send.engagement_score).toBe(10);
      // No activity at all: nothing is known, no score.
      expect((await ev(eam, 'jim.doe@example.net')).safe_to_send).not.toHaveProperty('engagement_score');
    });

    it('is not given in the legacy mode, or for invalid and trap statuses', async () => {
      const legacy = service.key({ mode: 'email_validation', services: ['validation', 'eam'] });
      expect((await ev(legacy, 'jane.doe@example.com')).email_validation).not.toHaveProperty(
        'engagement_score',
      );
      const suppressing = service.key({
        services: ['validation', 'eam'],
        suppress: ['jane.doe@example.com'],
      });
      expect((await ev(suppressing, 'jane.doe@example.com')).safe_to_send).toMatchObject({
        status: 'invalid',
      });
      expect((await ev(suppressing, 'jane.doe@example.com')).safe_to_send).not.toHaveProperty(
        'engagement_score',
      );
      const eam = service.key({ services: ['validation', 'eam'] });
      expect((await ev(eam, 'x@mailinator.com')).safe_to_send).toMatchObject({ status: 'trap' });
      expect((await ev(eam, 'x@mailinator.com')).safe_to_send).not.toHaveProperty('engagement_score');
    });
  });
});
