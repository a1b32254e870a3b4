// The engine's word and domain lists: the curated text files in ./data (copied beside the compiled code by
// build/build.js) and the third-party packages. Each is read once, when this module loads.
import { readFileSync } from 'node:fs';
import disposableDomains from 'disposable-email-domains/index.json' with { type: 'json' };
import disposableWildcardDomains from 'disposable-email-domains/wildcard.json' with { type: 'json' };
import freeMailDomains from 'free-email-domains/domains.json' with { type: 'json' };

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

/** disposable-email-domains: domains whose own addresses are disposable. */
export const DISPOSABLE_DOMAINS: ReadonlySet<string> = new Set(disposableDomains);
/** disposable-email-domains' wildcard list: the domain and every subdomain of it are disposable. */
export const DISPOSABLE_PARENT_DOMAINS: ReadonlySet<string> = new Set(disposableWildcardDomains);
/**
 * free-email-domains. It also names disposable domains and some typo domains of big providers (gmial.com),
 * so it is consulted after the disposable lists and never protects a domain from a typo correction.
 */
export const FREE_MAIL_DOMAINS: ReadonlySet<string> = new Set(freeMailDomains);
