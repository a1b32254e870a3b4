// Domain types (`domain_type`) known offline, from maintained lists, in this order of precedence:
//   1. the curated lists in data/ (paidisp, wireless, privacy): a domain or any parent domain listed;
//   2. disposable-email-domains: the domain itself, or it or a parent in the package's wildcard list;
//   3. free-email-domains: the domain itself (freeisp);
//   4. the curated suffix rules in data/ (edu, gov, org): .edu, ac.uk, gouv.fr, .org, org.au …
// Curated lists come first so that our own knowledge overrides the big third-party lists (a relay they
// call disposable is still `privacy`); the suffix rules come last because a free or disposable mail
// domain under edu.pl is that, not a school. Other domains have no type offline (`biz` needs DNS).
import type { DomainType } from '../../shared/api/verification.js';
import { readFileSync } from 'node:fs';
import { domainToASCII } from 'node:url';
import { DomainTable, isAscii } from './domainTable.js';
import { lastIndexOfCode } from './strings.js';
import {
  DISPOSABLE_DOMAINS,
  FREE_MAIL_DOMAINS,
  disposableParentDomains,
  readDataList,
  readDomainArray,
} from './lists.js';

const DOT = 46;

const CURATED_DOMAINS = new Map<string, DomainType>();
for (const type of ['paidisp', 'wireless', 'privacy'] as const) {
  for (const domain of readDataList(`${type}.txt`)) CURATED_DOMAINS.set(domain, type);
}

/** A suffix rule of more than one label: labels from the top-level domain inwards; "*" is any label. */
interface SuffixRule {
  readonly labels: readonly string[];
  readonly type: DomainType;
}
// The rules by shape, so that the common ones cost one map lookup: a top-level domain ("edu"), a second
// level under any country code ("ac.*"), and the rest, by their top-level domain ("gc.ca", "k12.*.us").
const typeByTld = new Map<string, DomainType>();
const typeBySecondLevelOfCcTld = new Map<string, DomainType>();
const rulesByTld = new Map<string, SuffixRule[]>();
for (const type of ['edu', 'gov', 'org'] as const) {
  for (const suffix of readDataList(`${type}.txt`)) {
    const labels = suffix.split('.').reverse();
    const [tld, secondLevel] = labels as [string, string | undefined];
    if (labels.length === 1) typeByTld.set(tld, type);
    else if (labels.length === 2 && tld === '*' && secondLevel !== undefined && secondLevel !== '*')
      typeBySecondLevelOfCcTld.set(secondLevel, type);
    else if (tld === '*')
      throw new Error(`${type}.txt: "${suffix}": a rule ending in "*" must have two labels`);
    else rulesByTld.set(tld, [...(rulesByTld.get(tld) ?? []), { labels, type }]);
  }
}
// The longest rule first, so that a more specific rule wins.
for (const rules of rulesByTld.values()) rules.sort((a, b) => b.labels.length - a.labels.length);

/** Whether `domain` ends with the labels of `rule`; compares in place, without splitting the domain. */
function matches(rule: SuffixRule, domain: string): boolean {
  let end = domain.length;
  for (const label of rule.labels) {
    if (end < 0) return false; // the domain has fewer labels than the rule
    const start = lastIndexOfCode(domain, DOT, end - 1) + 1;
    if (label !== '*' && (end - start !== label.length || !domain.startsWith(label, start))) return false;
    end = start - 1;
  }
  return true;
}

/** The type the edu/gov/org suffix rules give a domain: the most specific rule that matches. */
function typeBySuffixRules(domain: string): DomainType | undefined {
  const tldStart = lastIndexOfCode(domain, DOT) + 1;
  const tld = domain.slice(tldStart);
  const rules = rulesByTld.get(tld);
  if (rules) {
    for (const rule of rules) if (matches(rule, domain)) return rule.type;
  }
  if (tld.length === 2 && typeBySecondLevelOfCcTld.size > 0) {
    const secondLevel = domain.slice(lastIndexOfCode(domain, DOT, tldStart - 2) + 1, tldStart - 1);
    const type = typeBySecondLevelOfCcTld.get(secondLevel);
    if (type) return type;
  }
  return typeByTld.get(tld);
}

/** The first parent domain of `domain` that `has` accepts, nearest first; a bare top-level domain is not tried. */
function parentOf(domain: string, has: (d: string) => boolean): string | undefined {
  for (let dot = domain.indexOf('.'); ;) {
    const next = domain.indexOf('.', dot + 1);
    if (next < 0) return undefined;
    const parent = domain.slice(dot + 1);
    if (has(parent)) return parent;
    dot = next;
  }
}
const isCurated = (d: string): boolean => CURATED_DOMAINS.has(d);
const isDisposableParent = (d: string): boolean => disposableParentDomains().has(d);

/** The types a domain's own entry gives: the table's values are their index + 1. */
const OWN_TYPES: readonly DomainType[] = ['freeisp', 'disposable', 'paidisp', 'wireless', 'privacy'];
const typeValue = (type: DomainType): number => OWN_TYPES.indexOf(type) + 1;

/** The file build/build.js writes the table of own entries to, beside the compiled engine. */
export const OWN_TYPES_FILE = new URL('./data/domain-types.bin', import.meta.url);

/** A list's domains in ASCII: its few Unicode entries in the A-label form every lookup uses. */
const inAscii = (domains: readonly string[]): string[] =>
  domains.map((domain) => (isAscii(domain) ? domain : domainToASCII(domain)));

/**
 * Every domain's own entry in the lists, in one table (domainTable.ts), later lists winning: 'freeisp'
 * (free-email-domains), then 'disposable' (disposable-email-domains, its list and its wildcard list), then the
 * curated types. build/build.js writes it to OWN_TYPES_FILE.
 */
export function buildOwnTypeTable(): DomainTable {
  return DomainTable.of([
    { domains: inAscii(readDomainArray(FREE_MAIL_DOMAINS)), value: typeValue('freeisp') },
    { domains: inAscii(readDomainArray(DISPOSABLE_DOMAINS)), value: typeValue('disposable') },
    { domains: inAscii([...disposableParentDomains()]), value: typeValue('disposable') },
    ...(['paidisp', 'wireless', 'privacy'] as const).map((type) => ({
      domains: [...CURATED_DOMAINS].filter(([, of]) => of === type).map(([domain]) => domain),
      value: typeValue(type),
    })),
  ]);
}

/**
 * The table of own entries, so that a domain's own type costs one lookup: read from OWN_TYPES_FILE (made at
 * build time), or made from the lists where there is none (the engine run from its sources: tests).
 */
let ownTypes: DomainTable | undefined;
function ownTypeTable(): DomainTable {
  if (!ownTypes) {
    let bytes: Uint8Array | undefined;
    try {
      bytes = readFileSync(OWN_TYPES_FILE);
    } catch {
      // not built: made from the lists below
    }
    ownTypes = bytes ? DomainTable.fromBytes(bytes) : buildOwnTypeTable();
  }
  return ownTypes;
}

/**
 * The domain type of a domain, or undefined when the offline lists do not know it.
 * `domain`: lower-case, in ASCII (A-label) form, as the syntax check gives it.
 */
export function domainTypeOf(domain: string): DomainType | undefined {
  const value = ownTypeTable().get(domain);
  const own = value === 0 ? undefined : OWN_TYPES[value - 1];
  if (own !== undefined && own !== 'disposable' && own !== 'freeisp') return own;
  // Parent domains (other than the top-level domain) exist from three labels on: most domains have two.
  const dot = domain.indexOf('.');
  const hasParents = dot >= 0 && domain.indexOf('.', dot + 1) >= 0;
  if (hasParents) {
    const curated = parentOf(domain, isCurated);
    if (curated !== undefined) return CURATED_DOMAINS.get(curated);
  }
  if (own === 'disposable' || (hasParents && parentOf(domain, isDisposableParent) !== undefined))
    return 'disposable';
  if (own === 'freeisp') return own;
  return typeBySuffixRules(domain);
}

/** The domains of the curated lists (any type), which are real and never the object of a typo correction. */
export function isCuratedDomain(domain: string): boolean {
  return CURATED_DOMAINS.has(domain);
}
