// The per-address part of the offline pre-check (prepare.ts): the syntax verdict of each address (is it
// invalid?) and a 52-bit hash of its lower-case form for counting duplicates. Run by the pre-check's own
// thread and by its helper thread (syntaxWorker.ts), which takes every other batch on a second core.
import { statusForCode } from '../../../shared/api/codes.js';
import { hashInto } from '../../../service/lists/read/dupTable.js';
import { syntaxVerdict } from '../../../service/engine/index.js';

const words = new Uint32Array(2);

/** A 52-bit hash of a string (of hashInto's 64), for counting duplicates without holding a million strings. */
function hash52(text: string): number {
  hashInto(text, words, 0);
  return words[0] * 0x100000 + (words[1] & 0xfffff);
}

export interface CheckedAddresses {
  /** Addresses the syntax check alone finds invalid. */
  readonly invalid: number;
  /** The hashes of the addresses that have one (a non-empty standardised form), in order. */
  readonly hashes: Float64Array;
}

/** Checks a batch of email fields as they are in the file. */
export function checkAddresses(values: readonly string[]): CheckedAddresses {
  const hashes = new Float64Array(values.length);
  let count = 0;
  let invalid = 0;
  for (const value of values) {
    // The syntax and username checks alone decide an invalid verdict without client lists.
    const verdict = syntaxVerdict(value);
    if (statusForCode(verdict.code, 'email_validation') === 'invalid') invalid++;
    if (verdict.address !== '') hashes[count++] = hash52(verdict.address.toLowerCase());
  }
  return { invalid, hashes: hashes.subarray(0, count) };
}
