// The engine's word and domain lists: the curated text files in ./data (copied beside the compiled code by
// build/build.js) and the third-party packages. The big third-party lists are read on first use and kept
// only in the tables that look them up (domainType.ts): a JSON module import would keep its parsed array alive
// beside them, in every thread that loads the engine (the service's main thread, list workers), whether or
// not it verifies anything.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A package's JSON array of domains (not kept here: the caller keeps what it needs of it). */
export function readDomainArray(packagePath: string): readonly string[] {
  return JSON.parse(readFileSync(require.resolve(packagePath), 'utf8')) as string[];
}

/** A package's JSON array of domains, as a Set; the parsed array is left to the collector. */
function domainSet(packagePath: string): ReadonlySet<string> {
  return new Set(readDomainArray(packagePath));
}

/** The entries of a data file: one a line, lower-cased; blank lines and `#` comments are skipped. */
export function readDataList(fileName: string): string[] {
  const text = readFileSync(new URL(`./data/${fileName}`, import.meta.url), 'utf8');
  const entries: string[] = [];
  for (const line of text.split('\n')) {
    const hash = line.indexOf('#');
    const entry = (hash < 0 ? line : line.slice(0, hash)).trim().toLowerCase();
    if (entry !== '') entries.push(entry);
  }
  return entries;
}

let disposableParents: ReadonlySet<string> | undefined;

/** disposable-email-domains: domains whose own addresses are disposable. */
export const DISPOSABLE_DOMAINS = 'disposable-email-domains/index.json';
/** disposable-email-domains' wildcard list: the domain and every subdomain of it are disposable. */
const DISPOSABLE_PARENT_DOMAINS = 'disposable-email-domains/wildcard.json';
/**
 * free-email-domains. It also names disposable domains and some typo domains of big providers (gmial.com),
 * so it is consulted after the disposable lists and never protects a domain from a typo correction.
 */
export const FREE_MAIL_DOMAINS = 'free-email-domains/domains.json';

/** The wildcard list, as a Set (its entries' subdomains are looked up in it). */
export const disposableParentDomains = (): ReadonlySet<string> =>
  (disposableParents ??= domainSet(DISPOSABLE_PARENT_DOMAINS));
