// The engine's word and domain lists: the curated text files in ./data (copied beside the compiled code by
// build/build.js) and the third-party packages. The big third-party lists are read on first use and kept
// only as Sets: a JSON module import would keep its parsed array alive beside the Set, in every thread that
// loads the engine (the service's main thread, list workers), whether or not it verifies anything.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A package's JSON array of domains, as a Set; the parsed array is left to the collector. */
function domainSet(packagePath: string): ReadonlySet<string> {
  return new Set(JSON.parse(readFileSync(require.resolve(packagePath), 'utf8')) as string[]);
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

let disposable: ReadonlySet<string> | undefined;
let disposableParents: ReadonlySet<string> | undefined;
let freeMail: ReadonlySet<string> | undefined;

/** disposable-email-domains: domains whose own addresses are disposable. */
export const disposableDomains = (): ReadonlySet<string> =>
  (disposable ??= domainSet('disposable-email-domains/index.json'));
/** disposable-email-domains' wildcard list: the domain and every subdomain of it are disposable. */
export const disposableParentDomains = (): ReadonlySet<string> =>
  (disposableParents ??= domainSet('disposable-email-domains/wildcard.json'));
/**
 * free-email-domains. It also names disposable domains and some typo domains of big providers (gmial.com),
 * so it is consulted after the disposable lists and never protects a domain from a typo correction.
 */
export const freeMailDomains = (): ReadonlySet<string> =>
  (freeMail ??= domainSet('free-email-domains/domains.json'));
