// One vocabulary (issue #12): one name per answer for one key mode, whether shown by Verify (an E1 answer)
// or Results (a list row); 525 on a disposable domain reads as disposable.
import { describe, expect, it } from 'vitest';
import { describeStatusCode, invalidCategoryForCode, statusForCode } from '../../shared/api/codes.js';
import { answerListStatus, codeMeaning, statusName } from '../../shared/vocabulary.js';
import { verifyOffline } from '../../service/engine/index.js';
import { listStatusOf, toVerifyPolicy } from '../../service/lists/verdicts.js';

const policy = { corrections: true, allow: [], suppress: [], legacyAcceptAll: false };

describe('one vocabulary', () => {
  it('names the answer Verify shows as Results name the same address', () => {
    for (const address of [
      'jane.doe@gmial.com',
      'someone@example.com',
      'temp@mailinator.com',
      'not-an-address',
      'info@example.com',
    ]) {
      const verdict = verifyOffline(address, toVerifyPolicy(policy));
      const listStatus = listStatusOf(verdict, policy);
      const verifyStatus = answerListStatus(verdict.code, verdict.corrections);
      for (const mode of ['safe_to_send', 'email_validation'] as const)
        expect(statusName(verifyStatus, mode), address).toBe(statusName(listStatus, mode));
    }
    // The E1 status of gmial.com is "valid" in safe_to_send mode; both screens call it Corrected.
    expect(statusForCode(10, 'safe_to_send')).toBe('valid');
    expect(statusName(answerListStatus(10, ['jane.doe@gmail.com']), 'safe_to_send')).toBe('Corrected');
  });

  it('lets the key mode choose the words', () => {
    expect(statusName('risky', 'safe_to_send')).toBe('Trap');
    expect(statusName('risky', 'email_validation')).toBe('Risky');
    expect(statusName('unverifiable', 'safe_to_send')).toBe('Catch-all');
    expect(statusName('trap', 'email_validation')).toBe('Risky');
  });

  it('says disposable, not spamtrap, for 525 on a disposable domain', () => {
    expect(codeMeaning(525, 'disposable')).toBe('Disposable (throw-away) address');
    expect(codeMeaning(525, null)).toMatch(/^Spamtrap/);
  });

  it('says "Bounced before" for 520, where the spec’s table keeps its own words', () => {
    expect(codeMeaning(520)).toBe('Bounced before');
    expect(describeStatusCode(520)).toBe('Matched to known bouncers');
    expect(statusForCode(520, 'safe_to_send')).toBe('invalid');
    expect(statusForCode(520, 'email_validation')).toBe('invalid');
    expect(invalidCategoryForCode(520)).toBe('Mailbox Errors');
  });
});
