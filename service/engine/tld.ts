// Is a top-level domain in the IANA root zone? Judged by the ICANN section of the public suffix list
// (tldts), which holds every delegated TLD: for a name no rule matches, tldts falls back to the implicit
// "*" rule and reports isIcann false (`foo.notarealtld`, `.local`, `.test`, `.example`).
import { parse } from 'tldts';

/**
 * Special-use and reserved names (RFC 6761, 6762, 7686, 9476 and the IANA special-use domain names
 * registry): no mailbox of the public mail system is reached there, whether or not the public suffix list
 * names them. `arpa` is in the root zone, but for the DNS's own infrastructure (in-addr.arpa, ip6.arpa,
 * home.arpa); `onion` resolves only inside Tor; `alt` names are for non-DNS systems.
 */
const SPECIAL_USE_TLDS: ReadonlySet<string> = new Set([
  'arpa',
  'example',
  'invalid',
  'localhost',
  'test',
  'local',
  'onion',
  'alt',
]);

// TLDs found in the root zone so far. Bounded by the root zone (about 1,500 names), so it cannot grow
// without limit however many made-up TLDs the input holds: those are not cached.
const knownTlds = new Set<string>();

const PARSE_OPTIONS = { extractHostname: false, validateHostname: false, detectIp: false } as const;

/** `tld`: the last label of a domain, lower-case, in ASCII (A-label) form. */
export function isRootZoneTld(tld: string): boolean {
  if (knownTlds.has(tld)) return true;
  if (tld === '' || SPECIAL_USE_TLDS.has(tld) || parse(tld, PARSE_OPTIONS).isIcann !== true) return false;
  knownTlds.add(tld);
  return true;
}
