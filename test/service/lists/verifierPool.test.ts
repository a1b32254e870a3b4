// The verify workers (real worker threads, from the build): verdicts come back for the right rows, and a
// list that stopped early leaves nothing behind for the next one.
import { afterEach, describe, expect, it } from 'vitest';
import { VerifierPool } from '../../../service/lists/verify/verifierPool.js';
import { statusOfFlags } from '../../../service/lists/rowFlags.js';
import type { BatchVerdicts } from '../../../service/lists/verdicts.js';

const policy = { corrections: true, allow: [], suppress: [], legacyAcceptAll: false };
const batch = (addresses: string[]) => new TextEncoder().encode(addresses.join('\0'));

describe('VerifierPool', () => {
  const pools: VerifierPool[] = [];
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.close();
  });

  it('answers packed verdicts for the rows of each batch', async () => {
    const pool = new VerifierPool(1);
    pools.push(pool);
    const seen: [BatchVerdicts, number][] = [];
    pool.begin(policy, (verdicts, firstRow) => seen.push([verdicts, firstRow]));
    expect(pool.trySubmit(batch(['jane@example.com', 'bad', 'john.doe@gmial.com']), 40)).toBe(true);
    await pool.drain();
    expect(seen).toHaveLength(1);
    const [verdicts, firstRow] = seen[0];
    expect(firstRow).toBe(40);
    expect([...verdicts.codes]).toEqual([10, 150, 10]);
    expect([...verdicts.flags].map(statusOfFlags)).toEqual(['unknown', 'invalid', 'corrected']);
    expect(verdicts.validEmails).toEqual([2, 'john.doe@gmail.com']);
  });

  it('drops the answers of a list that stopped before they came', async () => {
    const pool = new VerifierPool(1);
    pools.push(pool);
    const first: number[] = [];
    const second: number[] = [];
    pool.begin(policy, (_verdicts, firstRow) => first.push(firstRow));
    expect(pool.trySubmit(batch(Array.from({ length: 20_000 }, (_, i) => `person${i}@example.com`)), 0)).toBe(
      true,
    );
    pool.begin(policy, (verdicts, firstRow) => second.push(firstRow, verdicts.codes.length));
    expect(pool.trySubmit(batch(['a@example.com']), 7)).toBe(true);
    await pool.drain();
    expect(first).toEqual([]);
    expect(second).toEqual([7, 1]);
  });

  it('refuses more batches than its workers should queue, so the caller verifies them itself', () => {
    const pool = new VerifierPool(1);
    pools.push(pool);
    pool.begin(policy, () => undefined);
    const accepted = Array.from({ length: 6 }, () => pool.trySubmit(batch(['a@example.com']), 0));
    expect(accepted).toEqual([true, true, true, true, false, false]);
  });
});
