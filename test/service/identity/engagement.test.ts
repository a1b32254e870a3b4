// E1's engagement score as the request path reads it (engagement.ts EngagementScores), against a real store:
// no lookup while the store holds no activity, the same score as the address's event rows give (packed or
// not, any spelling, as of any moment), and an import or a clear made through another connection noticed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engagementScoreFrom } from '../../../service/identity/eam.js';
import { EngagementScores } from '../../../service/identity/engagement.js';
import { importActivityFile, importPeopleFile } from '../../../service/identity/import.js';
import { canonicalEmail } from '../../../service/identity/normalise.js';
import { packAddressActivity } from '../../../service/identity/prepared.js';
import { clearReferenceData } from '../../../service/identity/status.js';
import { IdentityStore } from '../../../service/identity/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { tempDir } from '../../helpers/service.js';
import { activityRows, DAY_S, daysAgo, nowS, PEOPLE_ROWS, writeCsv } from './fixture.js';

/** Addresses with and without activity, in several spellings, and things that are no address. */
const ASKED = [
  'jane.doe@example.com',
  'Jane.Doe@EXAMPLE.com',
  ' jane.doe@example.com ',
  'jd@example.org',
  'john.doe@example.com',
  'lurker@example.com',
  'jim.doe@example.net',
  'nobody@example.com',
  'busy@example.com',
  'not an address',
  '',
];

/** More activity: many events, some of them recent, one in each kind. */
function busyRows(): string[][] {
  const rows = [['email', 'source', 'event', 'occurred_at']];
  for (let i = 0; i < 40; i++)
    rows.push(['busy@example.com', `s${i % 3}`, ['open', 'click', 'seen'][i % 3], daysAgo(i * 7)]);
  return rows;
}

/** The score as the store's rows give it: the address found by its canonical form, its events summed up. */
function scoreFromRows(store: IdentityStore, address: string, at: number): number | undefined {
  const canonical = canonicalEmail(address);
  const match = canonical === undefined ? undefined : store.findByEmail(canonical);
  return match ? engagementScoreFrom(store.activityOf(match.email.id, at), at) : undefined;
}

describe('EngagementScores (E1 engagement_score)', () => {
  let dir: { path: string; remove(): void };
  let db: ServiceDb;
  let store: IdentityStore;
  let lookups: number;

  beforeEach(() => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    store = new IdentityStore(db);
    lookups = 0;
    const packedActivityOf = store.packedActivityOf.bind(store);
    store.packedActivityOf = (canonical) => {
      lookups++;
      return packedActivityOf(canonical);
    };
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  const importActivity = (into: ServiceDb, name: string, rows: string[][]) =>
    importActivityFile(into, writeCsv(dir.path, name, rows));

  it('gives no score, and asks the store about no address, while the store holds no activity', async () => {
    await importPeopleFile(db, writeCsv(dir.path, 'people.csv', PEOPLE_ROWS));
    const scores = new EngagementScores(store, 0);
    for (const address of ASKED) expect(scores.of(address), address).toBeUndefined();
    expect(lookups).toBe(0);
  });

  it('gives the score of the address’s events, packed or not, in any spelling, as of the moment asked', async () => {
    await importPeopleFile(db, writeCsv(dir.path, 'people.csv', PEOPLE_ROWS));
    await importActivity(db, 'activity.csv', activityRows());
    await importActivity(db, 'busy.csv', busyRows());
    const now = nowS();
    const moments = [now, now - 15 * DAY_S, now - 500 * DAY_S, now + 200 * DAY_S];
    const scores = new EngagementScores(store, 0);
    // Jane: 2 opens and a click in 6 months (3 on the doubling scale), last 5 days ago (10): 7.
    expect(scores.of('jane.doe@example.com', now)).toBe(7);
    expect(scores.of('Jane.Doe@EXAMPLE.com', now)).toBe(7);
    // Seen, never opened: known and not engaged. No activity at all: no score.
    expect(scores.of('lurker@example.com', now)).toBe(0);
    expect(scores.of('jim.doe@example.net', now)).toBeUndefined();
    const compare = () => {
      for (const at of moments)
        for (const address of ASKED)
          expect(scores.of(address, at), `${address} at ${at}`).toBe(scoreFromRows(store, address, at));
    };
    compare(); // the events read as rows: the preparer has not packed them yet
    expect(packAddressActivity(db)).toBeGreaterThan(0);
    compare(); // packed
    // Asked again: answered from what was read, the same.
    const before = lookups;
    compare();
    expect(lookups).toBe(before);
  });

  it('notices activity imported, cleared and imported again through another connection', async () => {
    await importPeopleFile(db, writeCsv(dir.path, 'people.csv', PEOPLE_ROWS));
    const scores = new EngagementScores(store, 0);
    expect(scores.of('jane.doe@example.com')).toBeUndefined();
    const other = openServiceDb(dir.path);
    try {
      await importActivity(other, 'activity.csv', activityRows());
      expect(scores.of('jane.doe@example.com')).toBe(7);
      expect(scores.of('lurker@example.com')).toBe(0);
      clearReferenceData(other);
      expect(scores.of('jane.doe@example.com')).toBeUndefined();
      expect(scores.of('lurker@example.com')).toBeUndefined();
      // Jane again, with one open a year and a half ago only: known, not engaged.
      await importActivity(other, 'again.csv', [
        ['email', 'source', 'event', 'occurred_at'],
        ['jane.doe@example.com', 'crm', 'open', daysAgo(540)],
      ]);
      expect(scores.of('jane.doe@example.com')).toBe(0);
      await importActivity(other, 'more.csv', [
        ['email', 'source', 'event', 'occurred_at'],
        ['jane.doe@example.com', 'crm', 'click', daysAgo(1)],
      ]);
      // One click (2 on the doubling scale), a day ago (10).
      expect(scores.of('jane.doe@example.com')).toBe(scoreFromRows(store, 'jane.doe@example.com', nowS()));
      expect(scores.of('jane.doe@example.com')).toBe(6);
    } finally {
      other.close();
    }
  });

  it('asks the database whether it changed at most every recheckMs, and keeps what it read until then', async () => {
    await importActivity(db, 'activity.csv', activityRows());
    const scores = new EngagementScores(store, 3_600_000);
    expect(scores.of('jane.doe@example.com')).toBe(7);
    const other = openServiceDb(dir.path);
    try {
      clearReferenceData(other);
    } finally {
      other.close();
    }
    expect(scores.of('jane.doe@example.com')).toBe(7);
    expect(lookups).toBe(1);
    expect(new EngagementScores(store, 3_600_000).of('jane.doe@example.com')).toBeUndefined();
  });
});
