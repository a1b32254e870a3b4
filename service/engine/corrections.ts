// Correction candidates (`email_corrections`): the mechanical repair of a syntax error, and the spelling
// of a popular provider's domain. This module only proposes; the engine keeps a candidate only when it
// passes every check itself (verify.ts). It proposes at most one: where two fixes fit a typo equally well
// (hotmail.co: hotmail.com or hotmail.co.uk?) it proposes none.
import { domainToASCII, domainToUnicode } from 'node:url';
import { isSyntaxError } from './codes.js';
import { isCuratedDomain } from './domainType.js';
import { readDataList } from './lists.js';
import { lastIndexOfCode, ownCopy } from './strings.js';
import { isRootZoneTld } from './tld.js';

interface Provider {
  readonly domain: string;
  /** The first label: "hotmail" of hotmail.co.uk. */
  readonly name: string;
  /** The rest: "co.uk" of hotmail.co.uk. */
  readonly suffix: string;
}

const PROVIDERS: readonly Provider[] = readDataList('providers.txt').map((domain) => {
  const dot = domain.indexOf('.');
  return { domain, name: domain.slice(0, dot), suffix: domain.slice(dot + 1) };
});

/** Domains that are real and never corrected: the providers, the known look-alikes, the curated lists. */
const NOT_TYPOS: ReadonlySet<string> = new Set([
  ...PROVIDERS.map((p) => p.domain),
  ...readDataList('not-typos.txt'),
]);

/** A domain with its dots lost, or a bare provider name: "gmailcom", "gmail" → gmail.com (.com only). */
const DOTLESS = new Map<string, string>();
for (const p of PROVIDERS) {
  DOTLESS.set(p.name + p.suffix.replaceAll('.', ''), p.domain);
  if (p.suffix === 'com') DOTLESS.set(p.name, p.domain);
}

/** Real country-code TLDs that are frequent slips for .com: corrected to .com only on a provider's name. */
const COM_SLIPS: ReadonlySet<string> = new Set(['co', 'cm', 'om']);
/** For a top-level domain not in the root zone, the common ones it may be a slip for (example.con). */
const COMMON_TLDS = ['com', 'net', 'org'] as const;

/** Longer inputs are not repaired: nothing a few edits away from them is a valid address. */
const MAX_REPAIR_LENGTH = 512;

// Reused rows of the distance matrix: labels are at most 63 characters.
const MAX_COMPARED = 64;
let rowBeforeLast = new Int32Array(MAX_COMPARED + 1);
let lastRow = new Int32Array(MAX_COMPARED + 1);
let row = new Int32Array(MAX_COMPARED + 1);

/**
 * Damerau-Levenshtein distance (optimal string alignment: insertions, deletions, substitutions and
 * transpositions of neighbours each cost 1), or `max + 1` as soon as it must exceed `max`.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max || a.length > MAX_COMPARED || b.length > MAX_COMPARED)
    return max + 1;
  for (let j = 0; j <= b.length; j++) lastRow[j] = j;
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cb = b.charCodeAt(j - 1);
      let d = Math.min(lastRow[j] + 1, row[j - 1] + 1, lastRow[j - 1] + (ca === cb ? 0 : 1));
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        d = Math.min(d, rowBeforeLast[j - 2] + 1);
      }
      row[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [rowBeforeLast, lastRow, row] = [lastRow, row, rowBeforeLast];
  }
  return Math.min(lastRow[b.length], max + 1);
}

/**
 * How many edits a provider's name may be away: two (gmiol.com is gmail.com), and none for names shorter
 * than five letters, which real domains sit next to (aon.com, me.com). The whole correction stays within
 * two edits, a tie between two providers gives none, and a domain with mail servers of its own is not
 * corrected when online checks run (the online verifier drops the suggestion): that is what keeps real
 * services two edits from a provider from being "corrected" (with {@link isTwoSlipsOf}).
 */
function nameTolerance(name: string): number {
  return name.length >= 5 ? 2 : 0;
}

/**
 * Two edits in a name are read as two slips of the keys only when the length and the first letter are
 * kept (gmiol → gmail): other names two edits from a provider are mostly services of their own (foxmail,
 * popmail, homemail are not hotmail).
 */
function isTwoSlipsOf(name: string, providerName: string): boolean {
  return name.length === providerName.length && name.charCodeAt(0) === providerName.charCodeAt(0);
}

/** Whether `suffix` is `full` cut short: a prefix of it ending inside its last label (`c`, `co.u`). */
function isCutShort(suffix: string, full: string): boolean {
  return suffix.length < full.length && full.startsWith(suffix) && full.charCodeAt(suffix.length) !== 46;
}

/** 0 for the same suffix, 1 for a slip (co for co.uk, con for com, c for com), more for another suffix. */
function suffixDistance(suffix: string, providerSuffix: string, isRealTld: boolean): number {
  if (suffix === providerSuffix) return 0;
  if (providerSuffix.startsWith(suffix) && providerSuffix.charCodeAt(suffix.length) === 46 /* . */) return 1;
  // A top-level domain that does not exist and is the provider's cut short (gmail.c, hotmail.co.u).
  if (!isRealTld && isCutShort(suffix, providerSuffix)) return 1;
  if (providerSuffix === 'com' && COM_SLIPS.has(suffix)) return 1;
  // A suffix ending in a real TLD is someone's real domain (yahoo.com.ar is not yahoo.com.au).
  return isRealTld ? 2 : editDistance(suffix, providerSuffix, 1);
}

/**
 * The providers whose name a name of each length may be a misspelling of: those within their
 * {@link nameTolerance} of that length (a name further from a provider's in length is further in edits).
 * Most domains' names have none, and are not compared with any provider.
 */
const PROVIDERS_BY_NAME_LENGTH = new Map<number, Provider[]>();
for (const provider of PROVIDERS) {
  const tolerance = nameTolerance(provider.name);
  for (let length = provider.name.length - tolerance; length <= provider.name.length + tolerance; length++) {
    const providers = PROVIDERS_BY_NAME_LENGTH.get(length) ?? [];
    PROVIDERS_BY_NAME_LENGTH.set(length, [...providers, provider]);
  }
}

/** The one value of `candidates` closest to `value` within `within`, or undefined if none or a tie. */
function closest<T>(candidates: readonly T[], within: number, distanceTo: (c: T) => number): T | undefined {
  let best: T | undefined;
  let bestDistance = within + 1;
  let isTie = false;
  for (const candidate of candidates) {
    const d = distanceTo(candidate);
    if (d < bestDistance) [best, bestDistance, isTie] = [candidate, d, false];
    else if (d === bestDistance) isTie = true;
  }
  return isTie ? undefined : best;
}

/**
 * The domain meant by a misspelt one, or undefined. The closest popular provider's domain within two edits
 * of it (at most one in the suffix, and in the name only as many as {@link nameTolerance} allows), or else for a
 * top-level domain not in the root zone the common TLD one edit away. `domain`: lower-case.
 */
export function correctDomain(domain: string): string | undefined {
  if (NOT_TYPOS.has(domain) || isCuratedDomain(domain)) return undefined;
  // Most other domains are answered at once: a name no provider's is within edit range of. Lists repeat
  // their domains, and the answer depends on the domain alone: the others, compared with providers edit by
  // edit, are kept (keeping every domain cost more than it saved).
  const dot = domain.indexOf('.');
  if (dot < 0 || !PROVIDERS_BY_NAME_LENGTH.has(dot)) return findCorrectDomain(domain, dot);
  let known = correctedDomains.get(domain);
  if (known === undefined) {
    if (correctedDomains.size >= CORRECTED_DOMAINS_MAX) correctedDomains.clear();
    known = findCorrectDomain(domain, dot) ?? null;
    correctedDomains.set(ownCopy(domain), known);
  }
  return known ?? undefined;
}

/** A bounded memo of {@link correctDomain}: null for "no correction". Its keys are {@link ownCopy}s. */
const correctedDomains = new Map<string, string | null>();
const CORRECTED_DOMAINS_MAX = 50_000;

/** correctDomain for a domain that is no provider's nor curated; `dot`: its first dot's index (-1: none). */
function findCorrectDomain(domain: string, dot: number): string | undefined {
  if (dot < 0) return DOTLESS.get(domain);
  const lastDot = lastIndexOfCode(domain, 46 /* . */);
  const tld = domain.slice(lastDot + 1);
  const isRealTld = isRootZoneTld(tld);
  // (A name of a length no provider's is within edits of: only its top-level domain may be a slip.)
  const providers = PROVIDERS_BY_NAME_LENGTH.get(dot);
  if (providers) {
    const name = domain.slice(0, dot);
    const suffix = domain.slice(dot + 1);
    const provider = closest(providers, 2, (p) => {
      const suffixEdits = suffixDistance(suffix, p.suffix, isRealTld);
      if (suffixEdits > 1) return Infinity;
      const tolerance = nameTolerance(p.name);
      const nameEdits = editDistance(name, p.name, tolerance);
      if (nameEdits > tolerance || (nameEdits === 2 && !isTwoSlipsOf(name, p.name))) return Infinity;
      return nameEdits + suffixEdits;
    });
    if (provider) return provider.domain;
  }
  if (isRealTld) return undefined;
  const common = closest(COMMON_TLDS, 1, (t) => (isCutShort(tld, t) ? 1 : editDistance(tld, t, 1)));
  return common && domain.slice(0, lastDot + 1) + common;
}

const isSpace = (c: string): boolean => c.trim() === '';
/** Brackets, quotes, punctuation, dots and white space that lists leave around addresses. */
const isStray = (c: string): boolean => '<>()[]{},;:"\'`!?.'.includes(c) || isSpace(c);

function stripStray(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isStray(s[start])) start++;
  while (end > start && isStray(s[end - 1])) end--;
  return s.slice(start, end);
}

function hasNonAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return true;
  return false;
}

/** Dot-separated parts without empty ones: "..jane..doe." → "jane.doe". */
const collapseDots = (parts: readonly string[]): string => parts.filter((p) => p !== '').join('.');

/** No @ at all, but a provider's domain after a dot or a space: "jane.doe.gmail.com" → "jane.doe@gmail.com". */
function insertAtSign(s: string): string | undefined {
  for (const { domain } of PROVIDERS) {
    const before = s.length - domain.length - 1;
    if (before > 0 && s.endsWith(domain) && (s[before] === '.' || isSpace(s[before]))) {
      return `${s.slice(0, before)}@${domain}`;
    }
  }
  return undefined;
}

/**
 * The address a syntax error most plainly stands for, or undefined when the repair would be a guess:
 * a display name or stray characters around it dropped (`Jane <jane@x.com>`, `jane@x.com,`), white space
 * next to the @ or a dot or inside the domain removed, `@@` made one, a missing @ before a provider's
 * domain put in, a quoted local part unquoted, empty labels and stray dots dropped, a comma in the domain
 * read as a dot, an internationalised domain mapped to its IDNA form. White space between two words of the
 * local part ("jane doe@") is left alone: jane.doe, janedoe and jane_doe are all as likely.
 */
export function repairSyntax(address: string): string | undefined {
  if (address.length > MAX_REPAIR_LENGTH) return undefined;
  let s = address;
  const open = s.lastIndexOf('<');
  const close = s.lastIndexOf('>');
  if (open >= 0 && close > open) s = s.slice(open + 1, close);
  const closingQuote = s.startsWith('"') ? s.indexOf('"@') : -1;
  if (closingQuote > 1) s = s.slice(1, closingQuote) + s.slice(closingQuote + 1);
  s = stripStray(s).replace(/@+/g, '@');
  if (!s.includes('@')) s = insertAtSign(s) ?? s;
  const at = s.indexOf('@');
  if (at < 0 || s.indexOf('@', at + 1) >= 0) return undefined;

  const localParts = s
    .slice(0, at)
    .split('.')
    .map((part) => part.trim());
  if (localParts.some((part) => /\s/.test(part))) return undefined;
  const local = collapseDots(localParts);

  let domain = collapseDots(
    s
      .slice(at + 1)
      .replace(/\s+/g, '')
      .replaceAll(',', '.')
      .toLowerCase()
      .split('.'),
  );
  if (hasNonAscii(domain)) {
    const ascii = domainToASCII(domain);
    if (ascii !== '') domain = domainToUnicode(ascii);
  }
  return `${local}@${domain}`;
}

/**
 * The one correction to offer for an address (standardised) that got `code`, or undefined. An address
 * with a syntax error is repaired first; then a misspelt provider domain is corrected. The caller must
 * check the candidate before offering it.
 */
export function correctionCandidate(address: string, code: number): string | undefined {
  const repaired = isSyntaxError(code) ? repairSyntax(address) : address;
  if (repaired === undefined) return undefined;
  const domain = repaired.slice(lastIndexOfCode(repaired, 64 /* @ */) + 1);
  const candidate = withCorrectedDomain(repaired, domain) ?? repaired;
  return candidate === address ? undefined : candidate;
}

/**
 * correctionCandidate of an address that passed the syntax checks, whose domain (after its one @) checkSyntax
 * cut as `domain`: the same string, so its lookups reuse the hash the syntax check's computed.
 */
export function domainCorrectionCandidate(address: string, domain: string): string | undefined {
  const candidate = withCorrectedDomain(address, domain);
  return candidate === address ? undefined : candidate;
}

/** `address` with its domain (`domain`: what follows its last @) corrected, or undefined when none is. */
function withCorrectedDomain(address: string, domain: string): string | undefined {
  const corrected = correctDomain(domain);
  return corrected === undefined ? undefined : address.slice(0, address.length - domain.length) + corrected;
}
