// One truthful answer per row (issue #12): a corrected squatted-typo row (gmai.com, disposable, 525) reports
// the code and domain type of its correction; a disposable address keeps 525 and reads as disposable.
import { describe, expect, it } from 'vitest';
import { codeMeaning } from '../../../shared/vocabulary.js';
import { domainTypeOfFlags, statusOfFlags } from '../../../service/lists/rowFlags.js';
import { toVerifyPolicy, verifyBatch } from '../../../service/lists/verdicts.js';
import type { ListPolicy } from '../../../service/lists/types.js';

const policy: ListPolicy = { corrections: true, allow: [], suppress: [], legacyAcceptAll: false };

describe('list verdicts', () => {
  it('a corrected gmai.com row no longer carries 525', () => {
    const batch = verifyBatch(['jane.doe@gmai.com', 'temp@mailinator.com'], policy, toVerifyPolicy(policy));
    expect(statusOfFlags(batch.flags[0])).toBe('corrected');
    expect(batch.codes[0]).not.toBe(525);
    expect(domainTypeOfFlags(batch.flags[0])).not.toBe('disposable');
    expect(batch.validEmails).toEqual([0, 'jane.doe@gmail.com']);
    // A real throw-away address: 525, risky, and said to be disposable, not a spam trap.
    expect(batch.codes[1]).toBe(525);
    expect(statusOfFlags(batch.flags[1])).toBe('risky');
    expect(codeMeaning(batch.codes[1], domainTypeOfFlags(batch.flags[1]))).toBe(
      'Disposable (throw-away) address',
    );
  });
});
