// A team node's share of a heavy domain (service/lists/node/onlinePhase.ts, DomainShare) and the cut of a
// team's SMTP list into parts (service/lists/parts.ts, rowsPerPart, partRowsAt): the parts of a list dominated
// by one domain are many, smaller at the list's end, and a node that already holds enough of that domain hands
// the next part back for another node.
import { describe, expect, it } from 'vitest';
import { DomainShare } from '../../../service/lists/node/onlinePhase.js';
import { PART_ROWS, partRowsAt, rowsPerPart } from '../../../service/lists/parts.js';

const of = (domain: string, n: number) => Array.from({ length: n }, () => domain);

describe('DomainShare', () => {
  it('hands back a part mostly of a domain the node holds enough of, and takes it again once that is nearly asked', () => {
    const share = new DomainShare(20, 50);
    expect(share.take(of('big.net', 100))).toBe(true);
    expect(share.take(of('big.net', 100))).toBe(false);
    expect(share.held('big.net')).toBe(100);
    share.done('big.net', 85);
    // Below the limit, but the domain was just handed back: left to the other nodes a moment.
    expect(share.take(of('big.net', 100))).toBe(false);
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        expect(share.take(of('big.net', 100))).toBe(true);
        expect(share.held('big.net')).toBe(115);
        resolve();
      }, 60),
    );
  });

  it('never hands back a part of many domains, nor a small one', () => {
    const share = new DomainShare(20, 50);
    expect(share.take(of('big.net', 500))).toBe(true);
    // big.net is only a third of this part: the node takes it.
    expect(share.take([...of('big.net', 30), ...of('a.net', 30), ...of('b.net', 30)])).toBe(true);
    // Fewer than 20 checks of big.net: not worth handing back.
    expect(share.take(of('big.net', 19))).toBe(true);
    expect(share.take(Array.from({ length: 2000 }, (_, i) => `d${i % 1000}.net`))).toBe(true);
  });
});

describe('DomainShare, a far turn (issue 38)', () => {
  it('names a part’s heavy domain, and leaves its parts to the other nodes until shortly before this node’s turn', async () => {
    const share = new DomainShare(20, 50);
    expect(share.heavy(of('big.net', 100))).toBe('big.net');
    expect(share.heavy([...of('big.net', 30), ...of('a.net', 40)])).toBe('a.net');
    expect(share.heavy([...of('big.net', 30), ...of('a.net', 30), ...of('b.net', 30)])).toBeUndefined();
    expect(share.heavy(of('big.net', 19))).toBeUndefined();
    // This node's connections of the minute at big.net's host are spent: its turn is 120 ms off.
    share.pause('big.net', Date.now() + 120);
    expect(share.take(of('big.net', 100))).toBe(false);
    // A part of many domains is still taken.
    expect(share.take([...of('big.net', 30), ...of('a.net', 30), ...of('b.net', 30)])).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(share.take(of('big.net', 100))).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 80));
    share.done('big.net', 30);
    expect(share.take(of('big.net', 100))).toBe(true);
  });
});

describe('rowsPerPart', () => {
  it('cuts a team SMTP list into at least the parts asked, of at least 100 rows, at most PART_ROWS', () => {
    expect(rowsPerPart(3_000, undefined, 32)).toBe(100);
    expect(rowsPerPart(100_000, undefined, 32)).toBe(3_125);
    expect(rowsPerPart(5_000_000, undefined, 32)).toBe(PART_ROWS);
    expect(rowsPerPart(300, undefined, 32)).toBe(100);
    // --part-rows wins; without a spread the default stays.
    expect(rowsPerPart(3_000, 2_000, 32)).toBe(2_000);
    expect(rowsPerPart(3_000)).toBe(PART_ROWS);
  });
});

/** The sizes of the parts a list of `records` rows is cut in (as the plan cuts it, service/lists/pipeline/plan.ts). */
function cut(records: number, partRows?: number, spreadParts?: number): number[] {
  const sizes: number[] = [];
  for (let first = 0; first < records;) {
    const size = Math.min(records - first, partRowsAt(records, first, partRows, spreadParts));
    sizes.push(size);
    first += size;
  }
  return sizes;
}

describe('partRowsAt (issue 38)', () => {
  it('cuts the last quarter of a spread list in half parts, so that its end splits evenly across nodes', () => {
    // 3,000 rows at one heavy domain: 23 parts of 100, then 14 of 50 (the 700 rows left for the server's
    // second minute split in fifties, not seven parts of 100 shared 2, 2.5 and 3 by three nodes).
    const sizes = cut(3_000, undefined, 32);
    expect(sizes.slice(0, 23)).toEqual(Array.from({ length: 23 }, () => 100));
    expect(sizes.slice(23)).toEqual(Array.from({ length: 14 }, () => 50));
    // A larger list: its last quarter in half parts too.
    const large = cut(100_000, undefined, 32);
    expect(large[0]).toBe(3_125);
    expect(large.at(-1)).toBeLessThanOrEqual(1_563);
    expect(large.filter((size) => size === 1_563).length).toBeGreaterThanOrEqual(15);
    expect(large.reduce((sum, size) => sum + size, 0)).toBe(100_000);
    // A small list keeps whole parts (half of 100 rows is at least 50, but 300 rows' last quarter is 75).
    expect(cut(300, undefined, 32)).toEqual([100, 100, 100]);
    // --part-rows, or a list without a spread: every part the same.
    expect(new Set(cut(3_000, 200, 32))).toEqual(new Set([200]));
    expect(cut(25_000)).toEqual([10_000, 10_000, 5_000]);
  });
});
