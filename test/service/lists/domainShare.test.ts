// A team node's share of a heavy domain (service/lists/node/onlinePhase.ts, DomainShare) and the cut of a
// team's SMTP list into parts (service/lists/parts.ts, rowsPerPart): the parts of a list dominated by one
// domain are many, and a node that already holds enough of that domain hands the next part back for another
// node.
import { describe, expect, it } from 'vitest';
import { DomainShare } from '../../../service/lists/node/onlinePhase.js';
import { PART_ROWS, rowsPerPart } from '../../../service/lists/parts.js';

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
