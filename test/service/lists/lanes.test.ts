// The node's lanes (service/lists/node/onlinePhase.ts): a freed lane goes to the part whose next check's
// domain comes first, so a list's parts ask each domain together; a check that fails fails its part's feed
// (the part's job is taken again) without stopping the other parts or escaping as an unhandled rejection.
import { describe, expect, it } from 'vitest';
import { Lanes, type LaneFeed } from '../../../service/lists/node/onlinePhase.js';

/** A feed of checks at `domains`, recording each start in `started`; `failAt` makes that check throw. */
function feedOf(name: string, domains: string[], started: string[], failAt?: number): LaneFeed {
  let next = 0;
  return {
    next: () => domains[next],
    take: async () => {
      const at = next++;
      started.push(`${name}:${domains[at]}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (at === failAt) throw new Error(`${name} could not save its journal`);
    },
  };
}

describe('Lanes', () => {
  it('gives each freed lane to the part whose next domain comes first, whichever part came first', async () => {
    const lanes = new Lanes(1);
    const started: string[] = [];
    await Promise.all([
      lanes.feed(feedOf('p0', ['b.test', 'd.test', 'f.test'], started)),
      lanes.feed(feedOf('p1', ['a.test', 'b.test', 'd.test'], started)),
    ]);
    expect(started).toEqual(['p1:a.test', 'p0:b.test', 'p1:b.test', 'p0:d.test', 'p1:d.test', 'p0:f.test']);
  });

  it('fails the feed of a check that fails, starts no more of its checks, and lets the others finish', async () => {
    const lanes = new Lanes(2);
    const started: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failing = lanes.feed(feedOf('p0', ['a.test', 'b.test', 'c.test', 'd.test'], started, 0));
      const other = lanes.feed(feedOf('p1', ['a.test', 'b.test', 'c.test', 'd.test'], started));
      await expect(failing).rejects.toThrow('p0 could not save its journal');
      await other;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(started.filter((s) => s.startsWith('p1:'))).toHaveLength(4);
      // p0's first check failed; at most the check already started beside it ran after it.
      expect(started.filter((s) => s.startsWith('p0:')).length).toBeLessThanOrEqual(2);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
