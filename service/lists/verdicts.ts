// Verdicts of list rows, packed for the trip between threads: the verify workers turn a batch of addresses
// into typed arrays (status code, packed flags, a 64-bit hash of the address for duplicates) and a sparse
// list of the few strings the results need (the `Valid Email` of valid and corrected rows).
import { statusForCode } from '../../shared/api/codes.js';
import { DOMAIN_TYPES } from '../../shared/api/verification.js';
import { answerListStatus } from '../../shared/vocabulary.js';
import type { Verdict, VerifyPolicy } from '../engine/types.js';
import { verifyOffline } from '../engine/index.js';
import { FLAG_DOMAIN_SHIFT, FLAG_HAS_KEY, FLAG_ROLE, STATUS_INDEX, type ListRowStatus } from './rowFlags.js';
import type { ListPolicy } from './types.js';
import { hashAsciiLowerTextInto, hashInto } from './read/dupTable.js';
import { isBouncedIn } from '../identity/bounces.js';

/**
 * The list status of a verdict. `corrected` when the key has corrections and the engine offers exactly one
 * for an address that is not valid: a syntax error (an invalid code) or a spelling error the engine
 * recognises (a misspelt provider domain such as gmial.com, which offline reads code 10, or a squatted typo
 * domain, 525). The spec defines `corrected` as "the address had a syntax or spelling error and was fixed".
 */
export function listStatusOf(
  verdict: Verdict,
  policy: Pick<ListPolicy, 'corrections' | 'legacyAcceptAll'>,
): ListRowStatus {
  // One rule for list rows and single answers (shared/vocabulary.ts), so Verify and Results agree.
  return answerListStatus(verdict.code, verdict.corrections, policy);
}

export interface BatchVerdicts {
  readonly codes: Uint16Array<ArrayBuffer>;
  readonly flags: Uint16Array<ArrayBuffer>;
  /** Two words per row; (0, 0) for a row without an address. */
  readonly hashes: Uint32Array<ArrayBuffer>;
  /** Pairs of row index (in the batch) and the row's `Valid Email`, for valid and corrected rows only. */
  readonly validEmails: (number | string)[];
  /**
   * With `policy.online` only (empty otherwise): pairs of row index and address for the rows of code 10
   * (syntax OK, undecided offline), which online checks decide.
   */
  readonly undecided: (number | string)[];
}

export function toVerifyPolicy(policy: ListPolicy): VerifyPolicy {
  return {
    corrections: policy.corrections,
    allow: new Set(policy.allow),
    suppress: new Set(policy.suppress),
    ...(policy.bounceSet ? { isBounced: isBouncedIn(policy.bounceSet) } : {}),
  };
}

const DOMAIN_BITS = new Map<string, number>(
  DOMAIN_TYPES.map((type, i) => [type, (i + 1) << FLAG_DOMAIN_SHIFT]),
);

/** Status indexes by code for one policy (the table is consulted once per code, not once per row). */
function statusIndexer(policy: ListPolicy): (code: number) => number {
  const byCode = new Int8Array(1024).fill(-1);
  return (code) => {
    const cached = code < 1024 ? byCode[code] : -1;
    if (cached >= 0) return cached;
    const status = statusForCode(code, 'email_validation', { legacyAcceptAll: policy.legacyAcceptAll });
    const index = STATUS_INDEX.get(status)!;
    if (code < 1024) byCode[code] = index;
    return index;
  };
}

const CORRECTED = STATUS_INDEX.get('corrected')!;

/**
 * The verdict a corrected row reports. A squatted typo domain (gmai.com) is disposable, code 525; once the
 * row is corrected its address to mail is the correction, so the row carries the correction's code and
 * domain type rather than a code that reads "spamtrap". Syntax codes (210 and the like) stay: they say what
 * was fixed.
 */
export function correctedVerdict(verdict: Verdict, verifyPolicy: VerifyPolicy): Verdict {
  if (verdict.code !== 525 || verdict.corrections?.length !== 1) return verdict;
  const fixed = verifyOffline(verdict.corrections[0], { ...verifyPolicy, corrections: false });
  return { ...fixed, address: verdict.address, corrections: verdict.corrections };
}
const VALID = STATUS_INDEX.get('valid')!;

/**
 * Verifies a batch of addresses. The same address met twice in a row (common in lists sorted by address)
 * reuses the verdict.
 */
export function verifyBatch(
  addresses: readonly string[],
  policy: ListPolicy,
  verifyPolicy: VerifyPolicy,
): BatchVerdicts {
  const count = addresses.length;
  const codes = new Uint16Array(count);
  const flags = new Uint16Array(count);
  const hashes = new Uint32Array(count * 2);
  const validEmails: (number | string)[] = [];
  const undecided: (number | string)[] = [];
  const isOnline = policy.online === true;
  const statusOf = statusIndexer(policy);
  let previous = '';
  let previousVerdict: Verdict | undefined;
  for (let i = 0; i < count; i++) {
    const input = addresses[i];
    let verdict =
      input === previous && previousVerdict ? previousVerdict : verifyOffline(input, verifyPolicy);
    previous = input;
    previousVerdict = verdict;
    let status = statusOf(verdict.code);
    // See listStatusOf: exactly one correction for an address that is not valid reads `corrected`.
    if (policy.corrections && status !== VALID && verdict.corrections?.length === 1) {
      status = CORRECTED;
      verdict = correctedVerdict(verdict, verifyPolicy);
    }
    let packed = status;
    if (verdict.domainType) packed |= DOMAIN_BITS.get(verdict.domainType) ?? 0;
    if (verdict.roleAccount) packed |= FLAG_ROLE;
    // Duplicates compare addresses without the white space around them (" jane@x.com" is jane@x.com again).
    const key = verdict.address.trim();
    if (key !== '') {
      packed |= FLAG_HAS_KEY;
      if (!hashAsciiLowerTextInto(key, hashes, i * 2)) hashInto(key.toLowerCase(), hashes, i * 2);
    }
    codes[i] = verdict.code;
    flags[i] = packed;
    if (status === VALID) validEmails.push(i, verdict.address);
    else if (status === CORRECTED) validEmails.push(i, verdict.corrections![0]);
    if (isOnline && verdict.code === 10) undecided.push(i, verdict.address);
  }
  return { codes, flags, hashes, validEmails, undecided };
}

/** A verdict packed as a list row's code, flags and `Valid Email` ('' for none), as verifyBatch packs them. */
export function packVerdict(
  verdict: Verdict,
  policy: ListPolicy,
): { code: number; flags: number; validEmail: string } {
  const status = STATUS_INDEX.get(listStatusOf(verdict, policy))!;
  let packed = status;
  if (verdict.domainType) packed |= DOMAIN_BITS.get(verdict.domainType) ?? 0;
  if (verdict.roleAccount) packed |= FLAG_ROLE;
  if (verdict.address.trim() !== '') packed |= FLAG_HAS_KEY;
  const validEmail =
    status === VALID ? verdict.address : status === CORRECTED ? (verdict.corrections?.[0] ?? '') : '';
  return { code: verdict.code, flags: packed, validEmail };
}
