// The rule of known bouncers (code 520) on a real service database: a hard bounce counts while it is at most
// the key's max age old, on the day asked, unless the address opened or clicked after it. E1's one-address
// lookup and a list's shared set answer alike.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  BounceLookup,
  clearBounces,
  hasBounces,
  isBouncedIn,
  knownBouncerSet,
} from '../../../service/identity/bounces.js';
import { knownBouncersFor, withKnownBouncers } from '../../../service/identity/bounces.list.js';
import { importActivityFile, importBouncesFile } from '../../../service/identity/import.js';
import { SharedHashSet64 } from '../../../service/lists/read/dupTable.js';
import { serviceDbPerTest, writeCsv } from './fixture.js';

const DAY_S = 86_400;
const NOW_S = Date.UTC(2026, 10, 20, 12) / 1000;
const iso = (s: number) => new Date(s * 1000).toISOString();

describe('known bouncers', () => {
  const t = serviceDbPerTest();

  /** Hard bounces `days` ago, and activity `days` ago. */
  async function load(
    bounces: readonly [string, number][],
    activity: readonly [string, 'open' | 'click' | 'seen', number][] = [],
  ): Promise<void> {
    const file = writeCsv(t.dir, 'bounces.csv', [
      ['email', 'type', 'bounced_at'],
      ...bounces.map(([email, days]) => [email, 'HardBounce', iso(NOW_S - days * DAY_S)]),
    ]);
    await importBouncesFile(t.db, file, { nowS: NOW_S });
    if (activity.length === 0) return;
    const events = writeCsv(t.dir, 'activity.csv', [
      ['email', 'source', 'event', 'occurred_at'],
      ...activity.map(([email, kind, days]) => [email, 'newsletter', kind, iso(NOW_S - days * DAY_S)]),
    ]);
    await importActivityFile(t.db, events, { nowS: NOW_S });
  }

  const parts = (address: string): [string, string] => {
    const at = address.lastIndexOf('@');
    return [address.slice(0, at), address.slice(at + 1)];
  };

  /** The addresses that count, asked both ways: one by one (E1) and as a list's set; the two must agree. */
  function counting(addresses: readonly string[], maxAgeDays: number, nowS = NOW_S): string[] {
    const lookup = new BounceLookup(t.db);
    const one = addresses.filter((address) => lookup.isBounced(...parts(address), maxAgeDays, nowS));
    const set = knownBouncerSet(t.db, maxAgeDays, nowS);
    const isBounced = set ? isBouncedIn(set.buffer) : () => false;
    expect(addresses.filter((address) => isBounced(...parts(address)))).toEqual(one);
    return one;
  }

  it('counts a hard bounce up to the max age, measured from the day asked', async () => {
    await load([
      ['recent@example.com', 10],
      ['edge@example.com', 365],
      ['old@example.com', 366],
      ['Zoë.Ünal@Example.com', 10],
    ]);
    const all = ['recent@example.com', 'edge@example.com', 'old@example.com', 'never@example.com'];
    // Compared lower-cased, ASCII or not.
    expect(counting(['RECENT@example.com', 'ZOË.ünal@example.com', 'zoe.unal@example.com'], 365)).toEqual([
      'RECENT@example.com',
      'ZOË.ünal@example.com',
    ]);
    expect(counting(all, 365)).toEqual(['recent@example.com', 'edge@example.com']);
    expect(counting(all, 30)).toEqual(['recent@example.com']);
    expect(counting(all, 1000)).toEqual(['recent@example.com', 'edge@example.com', 'old@example.com']);
    // A month later the edge has aged out, at the same setting.
    expect(counting(all, 365, NOW_S + 30 * DAY_S)).toEqual(['recent@example.com']);
  });

  it('does not count an address that opened or clicked after its bounce', async () => {
    await load(
      [
        ['opened-after@example.com', 20],
        ['clicked-after@example.com', 20],
        ['opened-before@example.com', 20],
        ['seen-after@example.com', 20],
      ],
      [
        ['opened-after@example.com', 'open', 5],
        ['clicked-after@example.com', 'click', 19],
        ['opened-before@example.com', 'open', 40],
        // Seen at a sign-up form: no sign that mail arrives.
        ['seen-after@example.com', 'seen', 5],
      ],
    );
    expect(
      counting(
        [
          'opened-after@example.com',
          'clicked-after@example.com',
          'opened-before@example.com',
          'seen-after@example.com',
        ],
        365,
      ),
    ).toEqual(['opened-before@example.com', 'seen-after@example.com']);
    // A bounce after the open counts again.
    await load([['opened-after@example.com', 1]]);
    expect(counting(['opened-after@example.com'], 365)).toEqual(['opened-after@example.com']);
  });

  it('gives a list nothing to look up without bounces, or for a key without known bouncers', async () => {
    const key = { knownBouncers: true, bounceMaxAgeDays: 365 };
    expect(hasBounces(t.db)).toBe(false);
    expect(knownBouncersFor(t.db, key, undefined)).toBeUndefined();
    expect(knownBouncerSet(t.db, 365, NOW_S)).toBeUndefined();
    await load([['old@example.com', 500]]);
    expect(knownBouncersFor(t.db, { ...key, knownBouncers: false }, undefined)).toBeUndefined();
    const known = knownBouncersFor(t.db, key, undefined);
    expect(known).toEqual({ maxAgeDays: 365, dbPath: t.db.name, nativeBinding: undefined });
    const policy = {
      corrections: false,
      allow: [],
      suppress: [],
      legacyAcceptAll: false,
      knownBouncers: known,
    };
    // Stored, but too old to count: the list's set is left out.
    expect(withKnownBouncers(policy, NOW_S).bounceSet).toBeUndefined();
    await load([['new@example.com', 3]]);
    const withSet = withKnownBouncers(policy, NOW_S);
    expect(withSet.bounceSet).toBeInstanceOf(SharedArrayBuffer);
    const isBounced = isBouncedIn(withSet.bounceSet!);
    expect(isBounced('new', 'example.com')).toBe(true);
    expect(isBounced('old', 'example.com')).toBe(false);
    clearBounces(t.db);
    expect(knownBouncersFor(t.db, key, undefined)).toBeUndefined();
  });

  it('shares the set with another thread without copying it', async () => {
    await load([
      ['a@example.com', 1],
      ['b@example.com', 2],
    ]);
    const set = knownBouncerSet(t.db, 365, NOW_S)!;
    const url = new URL('../../../dist/service/identity/bounces.js', import.meta.url).href;
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       import(workerData.url).then(({ isBouncedIn }) => {
         const isBounced = isBouncedIn(workerData.buffer);
         parentPort.postMessage(['a', 'b', 'c'].map((local) => isBounced(local, 'example.com')));
       });`,
      { eval: true, workerData: { url, buffer: set.buffer } },
    );
    const answer = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(answer).toEqual([true, true, false]);
  });
});

describe('SharedHashSet64', () => {
  it('holds what was added, refuses more than it was made for', () => {
    const set = SharedHashSet64.create(3);
    set.add(1, 2);
    set.add(3, 4);
    set.add(1, 2);
    expect(set.size).toBe(2);
    expect(set.has(1, 2)).toBe(true);
    expect(set.has(3, 4)).toBe(true);
    expect(set.has(2, 1)).toBe(false);
    const small = SharedHashSet64.create(0);
    for (let i = 1; i <= 8; i++) small.add(i, i);
    expect(() => small.add(9, 9)).toThrow(RangeError);
    expect(small.has(8, 8)).toBe(true);
    expect(small.has(10, 10)).toBe(false);
  });
});
