// What the engine learnt about the free-mail providers' domains (gmail.com, yahoo.com, …), kept for the next
// address at the same domain. Half the rows of a list of people are at a few dozen such domains, and what a
// domain alone decides (its ASCII form, its top-level domain in the root zone, its domain type) cost about
// 0.6 µs of the 2.5 µs an address takes; asked again it costs one lookup. Only domains of the free-mail list
// are kept, so the memory is bounded by that list (14,000 domains), and a list of companies' domains, each met
// once or twice, adds nothing to keep (keeping every domain cost more than it saved: corrections.ts).

import { ownCopy } from './strings.js';

/** A domain that passed the syntax checks that look at it alone, and its domain type. */
export interface KnownDomain {
  /** Its ASCII (A-label) form. */
  readonly ascii: string;
  /** Its domain type, as verifyOffline reports it. */
  readonly type: 'freeisp';
}

const known = new Map<string, KnownDomain>();

/** What is known of `domain` (lower-case, as written in the address), if anything. */
export function knownDomain(domain: string): KnownDomain | undefined {
  return known.get(domain);
}

/**
 * Keeps what was learnt of a domain `domain` (as written) that passed every check of the domain alone, in
 * ASCII form `ascii`, whose type verifyOffline found free-mail.
 */
export function rememberFreeMailDomain(domain: string, ascii: string): void {
  // Strings of their own: the domain as cut from its address would keep its whole verify batch alive.
  const key = ownCopy(domain);
  known.set(key, { ascii: ascii === domain ? key : ownCopy(ascii), type: 'freeisp' });
}
