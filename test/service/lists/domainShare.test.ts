// A team node's share of a heavy domain (service/lists/node/onlinePhase.ts, DomainShare) and the cut of a
// team's SMTP list into parts (service/lists/parts.ts, rowsPerPart): the parts of a list dominated by one
// domain are many, and a node that already holds enough of that domain hands the next part back for another
// node (or, where it may cut, takes only what tops its hold up, the rest for a job of its own).
import { describe, expect, it } from 'vitest';
import { DomainShare } from '../../../service/lists/node/onlinePhase.js';
import { PART_ROWS, rowsPerPart } from '../../../service/lists/parts.js';

const of = (domain: string, n: number) => Array.from({ length: n }, () => domain);

describe('DomainShare', () => {
  it('hands back a part mostly of a domain the node holds enough of, and takes it again once that is nearly asked', () => {
    const share = new DomainShare(20, 50);
    expect(share.take(of('big.net', 100))).toBe(100);
    expect(share.take(of('big.net', 100))).toBe(0);
    expect(share.held('big.net')).toBe(100);
    share.done('big.net', 85);
    // Below the limit, but the domain was just handed back: left to the other nodes a moment.
    expect(share.take(of('big.net', 100))).toBe(0);
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        expect(share.take(of('big.net', 100))).toBe(100);
        expect(share.held('big.net')).toBe(115);
        resolve();
      }, 60),
    );
  });

  it('takes, where it may cut, no more of a heavy domain than tops its hold up: the rest is for a node with room (issue 38)', () => {
    // The end of a one-domain list: each node still asks a conversation or two, and the last part comes.
    const share = new DomainShare(100, 50);
    expect(share.take(of('big.net', 50), true)).toBe(50);
    // Without a cut the whole part is taken (50 < 100), and the node asks 150 while the others run dry.
    expect(share.take(of('big.net', 100), true)).toBe(50);
    expect(share.held('big.net')).toBe(100);
    share.done('big.net', 100);
    // A part of several domains is cut in its order: the checks before the cut, whatever their domain.
    const mixed = [...of('a.net', 10), ...of('big.net', 80), ...of('z.net', 10)];
    share.take(of('big.net', 40));
    expect(share.take(mixed, true)).toBe(10 + 60);
    expect(share.held('big.net')).toBe(100);
    expect(share.held('a.net')).toBe(10);
    expect(share.held('z.net')).toBe(0);
    share.done('big.net', 15);
    // Less room than a part worth cutting (15 < 20): nothing, as when the hold is full.
    expect(share.take(of('big.net', 100), true)).toBe(0);
    // A rest too small for a part of its own is not cut off: room for 85 of 100, all taken.
    const small = new DomainShare(100, 50);
    small.take(of('big.net', 15));
    expect(small.take(of('big.net', 100), true)).toBe(100);
    // Where it may not cut (a retry's checks, asked together; a backend that cannot hand a rest on), the
    // whole part while the hold is under the limit.
    const whole = new DomainShare(100, 50);
    whole.take(of('big.net', 50));
    expect(whole.take(of('big.net', 100))).toBe(100);
  });

  it('never hands back a part of many domains, nor a small one', () => {
    const share = new DomainShare(20, 50);
    expect(share.take(of('big.net', 500))).toBe(500);
    // big.net is only a third of this part: the node takes it.
    expect(share.take([...of('big.net', 30), ...of('a.net', 30), ...of('b.net', 30)])).toBe(90);
    // Fewer than 20 checks of big.net: not worth handing back.
    expect(share.take(of('big.net', 19))).toBe(19);
    expect(share.take(Array.from({ length: 2000 }, (_, i) => `d${i % 1000}.net`))).toBe(2000);
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
    expect(share.take(of('big.net', 100))).toBe(0);
    // A part of many domains is still taken.
    expect(share.take([...of('big.net', 30), ...of('a.net', 30), ...of('b.net', 30)])).toBe(90);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(share.take(of('big.net', 100))).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 80));
    share.done('big.net', 30);
    expect(share.take(of('big.net', 100))).toBe(100);
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
