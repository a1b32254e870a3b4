// Standardisation and the syntax checks (codes 100–215), as a practical verifier judges an address rather
// than as RFC 5322 allows (DESIGN.md, "Decisions"): dot-atom local parts only (no quoted strings, comments
// or folding white space), UTF-8 local parts allowed (RFC 6531), domains of at least two labels with a
// top-level domain in the root zone, internationalised domains judged in their ASCII form. The checks run
// in a fixed order and the first defect found gives the code; docs/verification.md lists the order.
//
// Everything here is called once per row of million-row lists: single passes over char codes, a lookup
// table instead of regular expressions, and no allocation beyond the slices of the two parts.
import { domainToASCII, domainToUnicode } from 'node:url';
import { CODE, type SyntaxErrorCode } from './codes.js';
import { breaksProviderRules } from './providerRules.js';
import { knownDomain, type KnownDomain } from './knownDomains.js';
import { isRootZoneTld } from './tld.js';
import { lastIndexOfCode } from './strings.js';

export type SyntaxCheck =
  | {
      readonly ok: true;
      /** The local part as written (its case kept). */
      readonly local: string;
      /** The domain, lower-case, in the form written (Unicode or ASCII). */
      readonly domain: string;
      /** The domain in ASCII (A-label) form; the same string as `domain` for an ASCII domain. */
      readonly asciiDomain: string;
      /** What was known of the domain before (knownDomains.ts), if anything. */
      readonly known: KnownDomain | undefined;
    }
  | { readonly ok: false; readonly code: SyntaxErrorCode };

const DOT = 46;
const HYPHEN = 45;
const QUOTE = 34;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
const MAX_LOCAL_OCTETS = 64;
const MAX_ADDRESS_OCTETS = 254;
const MAX_DOMAIN_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

// Classes of ASCII characters, as bits of one table.
const SPACE = 1; // white space: 215 inside an address, 210 around it
const FORBIDDEN = 2; // control characters and the specials of RFC 5322 that only quoting allows: 110
const LEADING_EXTRA = 4; // stray punctuation before an address: 210
const TRAILING_EXTRA = 8; // stray punctuation after an address: 210
const LDH = 16; // letters (lower case), digits, hyphen: what a domain label is made of

const ASCII_CLASS = new Uint8Array(128);
const mark = (chars: string, bit: number): void => {
  for (const char of chars) ASCII_CLASS[char.charCodeAt(0)] |= bit;
};
for (let c = 0; c < 32; c++) ASCII_CLASS[c] = FORBIDDEN;
ASCII_CLASS[127] = FORBIDDEN;
mark(' \t\n\v\f\r', SPACE);
mark('(),:;<>[\\]"', FORBIDDEN);
mark('<>()[]{},;:"', LEADING_EXTRA);
mark('<>()[]{},;:"\'`!?', TRAILING_EXTRA);
mark('abcdefghijklmnopqrstuvwxyz0123456789-', LDH);

const classOf = (c: number): number => (c < 128 ? ASCII_CLASS[c] : 0);

/** Unicode white space beyond ASCII (the Zs category, the line and paragraph separators, U+0085). */
function isUnicodeSpace(c: number): boolean {
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/**
 * Non-ASCII code units no address may hold: C1 controls, invisible formatting characters (soft hyphen,
 * zero-width and bidirectional controls, byte-order mark) and non-characters. Surrogates are judged by
 * the caller, in pairs.
 */
function isForbiddenNonAscii(c: number): boolean {
  return (
    (c >= 0x80 && c <= 0x9f) ||
    c === 0xad ||
    (c >= 0x200b && c <= 0x200f) ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2060 && c <= 0x206f) ||
    c === 0xfeff ||
    (c >= 0xfff9 && c <= 0xfffb) ||
    c === 0xfffe ||
    c === 0xffff
  );
}

const MAILTO = 'mailto:';

/**
 * The standardised form of an input address: a `mailto:` prefix is removed and the domain (after the last
 * `@`) is lower-cased. The local part keeps its case. Nothing else changes, white space included (it is
 * not part of an address: a verifier must not hide that the data is dirty), so every defect stays visible
 * to {@link checkSyntax}.
 */
export function standardise(input: string): string {
  let s = input;
  if (
    s.length > MAILTO.length &&
    s.charCodeAt(MAILTO.length - 1) === 58 /* : */ &&
    s.slice(0, MAILTO.length).toLowerCase() === MAILTO
  ) {
    s = s.slice(MAILTO.length);
  }
  // Back to the last @, noting whether the domain holds anything that lower-casing could change (nearly no
  // domain does: then no slice and no call of toLowerCase).
  let at = s.length - 1;
  let mayChange = false;
  for (; at >= 0; at--) {
    const c = s.charCodeAt(at);
    if (c === 64 /* @ */) break;
    if ((c >= 65 && c <= 90) || c >= 128) mayChange = true;
  }
  if (at < 0 || !mayChange) return s;
  const domain = s.slice(at + 1);
  const lowered = domain.toLowerCase();
  return lowered === domain ? s : s.slice(0, at + 1) + lowered;
}

/** White space as String#trim sees it (any Unicode white space and the byte-order mark). */
const isTrimmedSpace = (c: number): boolean =>
  c < 128 ? (ASCII_CLASS[c] & SPACE) !== 0 : isUnicodeSpace(c) || c === 0xfeff;

/**
 * Stray punctuation or white space at either end of the address (`<jane@example.com>`,
 * `jane@example.com,`, ` jane@example.com`, `jane@example.com\r\n`).
 */
function hasExtraCharacter(local: string, domain: string): boolean {
  const first = local.charCodeAt(0);
  if (isTrimmedSpace(first) || isTrimmedSpace(domain.charCodeAt(domain.length - 1))) return true;
  // A leading quote that closes before the @ is a quoted local part, judged later (110).
  const isQuotedLocal = first === QUOTE && local.length > 1 && local.charCodeAt(local.length - 1) === QUOTE;
  if (classOf(first) & LEADING_EXTRA && !isQuotedLocal) return true;
  const last = domain.charCodeAt(domain.length - 1);
  // A closing bracket that ends a bracketed domain is an IP literal, judged later (115).
  const isIpLiteral = last === CLOSE_BRACKET && domain.charCodeAt(0) === OPEN_BRACKET;
  return (classOf(last) & TRAILING_EXTRA) !== 0 && !isIpLiteral;
}

const FOUND_SPACE = 1;
const FOUND_FORBIDDEN = 2;
const FOUND_NON_ASCII_DOMAIN = 4;

interface Scan {
  found: number;
  localOctets: number;
  octets: number;
}
// One scan result reused by every call: checkSyntax is synchronous and does not re-enter itself.
const scan: Scan = { found: 0, localOctets: 0, octets: 0 };

/** One pass over the address: what kinds of character it holds, and its length in UTF-8 octets. */
function scanAddress(address: string, at: number): Scan {
  let found = 0;
  let octets = 0;
  let localOctets = 0;
  for (let i = 0; i < address.length; i++) {
    if (i === at) localOctets = octets;
    const c = address.charCodeAt(i);
    if (c < 128) {
      octets += 1;
      const cls = ASCII_CLASS[c];
      if (cls & SPACE) found |= FOUND_SPACE;
      else if (cls & FORBIDDEN) found |= FOUND_FORBIDDEN;
      continue;
    }
    if (i > at) found |= FOUND_NON_ASCII_DOMAIN;
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = address.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        octets += 4;
        i++;
      } else {
        found |= FOUND_FORBIDDEN; // a lone surrogate: not text at all
        octets += 3;
      }
      continue;
    }
    octets += c < 0x800 ? 2 : 3;
    if (isUnicodeSpace(c)) found |= FOUND_SPACE;
    else if (isForbiddenNonAscii(c)) found |= FOUND_FORBIDDEN;
  }
  scan.found = found;
  scan.octets = octets;
  scan.localOctets = localOctets;
  return scan;
}

/** A dot-atom: no leading or trailing dot and no two dots in a row (the characters are checked already). */
function isDotAtom(local: string): boolean {
  if (local.charCodeAt(0) === DOT || local.charCodeAt(local.length - 1) === DOT) return false;
  return !local.includes('..');
}

/** asciiDomainOf's answer for a domain whose ASCII form is over 253 octets: too long (130), not 115. */
const DOMAIN_TOO_LONG = '';

/**
 * The ASCII (A-label) form of a domain, {@link DOMAIN_TOO_LONG} when that form is over 253 octets, or
 * undefined when it is not a valid domain name: labels of
 * letters, digits and hyphens, 1–63 long, not starting or ending with a hyphen, at least two labels, no
 * trailing dot, a top-level label that is not all digits (that would be an IP address), at most 253 long.
 * A Unicode domain must be in the form IDNA gives it (lower case, NFC, no characters IDNA maps away, such as
 * full-width letters or the ideographic full stop); `xn--` labels must decode.
 */
function asciiDomainOf(domain: string, isAscii: boolean): string | undefined {
  let ascii = domain;
  if (!isAscii) {
    ascii = domainToASCII(domain);
    if (ascii === '' || domainToUnicode(ascii) !== domain) return undefined;
  } else if (domain.includes('xn--') && domainToASCII(domain) !== domain) {
    return undefined;
  }
  if (ascii.length > MAX_DOMAIN_LENGTH) return DOMAIN_TOO_LONG;
  let labelStart = 0;
  let lastLabelStart = 0;
  let labels = 0;
  for (let i = 0; i <= ascii.length; i++) {
    const c = i < ascii.length ? ascii.charCodeAt(i) : DOT;
    if (c !== DOT) {
      if (!(classOf(c) & LDH)) return undefined;
      continue;
    }
    const length = i - labelStart;
    if (length === 0 || length > MAX_LABEL_LENGTH) return undefined;
    if (ascii.charCodeAt(labelStart) === HYPHEN || ascii.charCodeAt(i - 1) === HYPHEN) return undefined;
    labels++;
    lastLabelStart = labelStart;
    labelStart = i + 1;
  }
  if (labels < 2) return undefined;
  return isAllDigits(ascii, lastLabelStart) ? undefined : ascii;
}

function isAllDigits(s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

const fail = (code: SyntaxErrorCode): SyntaxCheck => ({ ok: false, code });

/**
 * The syntax checks on a standardised address (see {@link standardise}), in order; the first that fails
 * gives the code. An address that passes all of them is split into its parts.
 */
export function checkSyntax(address: string): SyntaxCheck {
  // Nothing but white space is no address at all: a general syntax error, not extra space.
  if (address === '' || address.trim() === '') return fail(CODE.generalSyntax);
  const at = address.indexOf('@');
  if (at < 0) return fail(CODE.noAtSign);
  if (address.indexOf('@', at + 1) >= 0) return fail(CODE.manyAtSigns);
  if (at === 0) return fail(CODE.noUsername);
  if (at === address.length - 1) return fail(CODE.noDomain);
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (hasExtraCharacter(local, domain)) return fail(CODE.extraCharacter);
  if (local.charCodeAt(0) === QUOTE) return fail(CODE.invalidCharacter); // a quoted local part
  const { found, localOctets, octets } = scanAddress(address, at);
  if (found & FOUND_SPACE) return fail(CODE.unquotedSpace);
  if (localOctets > MAX_LOCAL_OCTETS || octets > MAX_ADDRESS_OCTETS) return fail(CODE.tooLong);
  if (domain.charCodeAt(0) === OPEN_BRACKET) return fail(CODE.invalidDomain); // an IP literal
  if (found & FOUND_FORBIDDEN) return fail(CODE.invalidCharacter);
  if (!isDotAtom(local)) return fail(CODE.invalidUsername);
  // A domain known to pass the checks of the domain alone (its form, its length, its top-level domain) is
  // not checked again; the address's length still is.
  const known = knownDomain(domain);
  const asciiDomain = known ? known.ascii : asciiDomainOf(domain, (found & FOUND_NON_ASCII_DOMAIN) === 0);
  if (asciiDomain === undefined) return fail(CODE.invalidDomain);
  // Lengths as the DNS and SMTP see them: the domain in its ASCII form (IDNA can lengthen it).
  if (asciiDomain === DOMAIN_TOO_LONG || localOctets + 1 + asciiDomain.length > MAX_ADDRESS_OCTETS)
    return fail(CODE.tooLong);
  if (!known && !isRootZoneTld(asciiDomain.slice(lastIndexOfCode(asciiDomain, DOT) + 1)))
    return fail(CODE.invalidTld);
  if (breaksProviderRules(local, asciiDomain)) return fail(CODE.invalidUsernameForDomain);
  return { ok: true, local, domain, asciiDomain, known };
}
