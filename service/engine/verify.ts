// verifyOffline: everything that can be known about one address without the network. Syntax first (an
// address that does not parse cannot match a list), then the client's suppression list (255) and allow
// list (55), then the client's own hard bounces (520), unaccepted usernames (500) and disposable domains
// (525); what remains is syntax OK (10).
// Role account and domain type are reported on every address that parses, whatever its code.
import { CODE } from './codes.js';
import { correctDomain, correctionCandidate, domainCorrectionCandidate } from './corrections.js';
import { domainTypeOf } from './domainType.js';
import { rememberFreeMailDomain } from './knownDomains.js';
import { isUnacceptedUsername, usernameKindOf } from './roles.js';
import { checkSyntax, standardise } from './syntax.js';
import type { Verdict, VerifyPolicy } from './types.js';

type MutableVerdict = { -readonly [K in keyof Verdict]: Verdict[K] };

/** Whether a client list names the address (its local part compared case-insensitively) or its domain. */
function isListed(list: ReadonlySet<string>, local: string, domain: string, asciiDomain: string): boolean {
  if (list.size === 0) return false;
  const localKey = local.toLowerCase();
  if (list.has(domain) || list.has(`${localKey}@${domain}`)) return true;
  return asciiDomain !== domain && (list.has(asciiDomain) || list.has(`${localKey}@${asciiDomain}`));
}

/** Whether the client's bounces name the address, in the Unicode or the ASCII form of its domain. */
function isKnownBouncer(
  isBounced: (local: string, domain: string) => boolean,
  local: string,
  domain: string,
  asciiDomain: string,
): boolean {
  return isBounced(local, domain) || (asciiDomain !== domain && isBounced(local, asciiDomain));
}

/**
 * The third-party free-mail list also names typo-squatted look-alikes of real providers (gmial.com,
 * hotmial.com). Those are misspellings to correct, not free ISPs to report.
 */
const isProviderTypo = (asciiDomain: string): boolean => correctDomain(asciiDomain) !== undefined;

/** A correction is offered only if it passes every check itself: syntax OK (10) or allowed (55). */
function isAcceptedCorrection(candidate: Verdict): boolean {
  return candidate.code === CODE.syntaxOk || candidate.code === CODE.allowed;
}

/**
 * The offline verdict on one address. Synchronous and allocation-light: it runs once per row of
 * million-row lists and once per E1 request. Never throws; every code it gives is in the spec's table.
 */
export function verifyOffline(input: string, policy: VerifyPolicy): Verdict {
  const address = standardise(input);
  const syntax = checkSyntax(address);
  const verdict: MutableVerdict = { address, code: syntax.ok ? CODE.syntaxOk : syntax.code };
  /** A free-mail provider's own domain, written in ASCII: no correction of it exists (isProviderTypo). */
  let isProviderDomain = false;
  if (syntax.ok) {
    const { local, domain, asciiDomain, known } = syntax;
    const kind = usernameKindOf(local);
    let domainType = known ? known.type : domainTypeOf(asciiDomain);
    if (!known && domainType === 'freeisp') {
      if (isProviderTypo(asciiDomain)) domainType = undefined;
      else rememberFreeMailDomain(domain, asciiDomain);
    }
    if (isListed(policy.suppress, local, domain, asciiDomain)) verdict.code = CODE.suppressed;
    else if (isListed(policy.allow, local, domain, asciiDomain)) verdict.code = CODE.allowed;
    else if (policy.isBounced && isKnownBouncer(policy.isBounced, local, domain, asciiDomain))
      verdict.code = CODE.knownBouncer;
    else if (kind === 'unaccepted') verdict.code = CODE.unacceptedUsername;
    else if (domainType === 'disposable') verdict.code = CODE.disposable;
    if (domainType) verdict.domainType = domainType;
    if (kind) verdict.roleAccount = true;
    isProviderDomain = domainType === 'freeisp' && asciiDomain === domain;
  }
  // Corrections are for errors of syntax or spelling: not for a client's own list decisions (255, 55), an
  // address the client's own mail bounced from (520) or a username of the wrong kind (500). A disposable
  // domain may be a squatted typo (gmai.com).
  // An address without a syntax error at a provider's own domain has none to offer (half a list's rows).
  if (
    policy.corrections &&
    (!syntax.ok || (verdict.code === CODE.syntaxOk && !isProviderDomain) || verdict.code === CODE.disposable)
  ) {
    const candidate = syntax.ok
      ? domainCorrectionCandidate(address, syntax.domain)
      : correctionCandidate(address, verdict.code);
    if (candidate !== undefined) {
      const checked = verifyOffline(candidate, { ...policy, corrections: false });
      if (isAcceptedCorrection(checked)) verdict.corrections = [checked.address];
    }
  }
  return verdict;
}

/**
 * The part of verifyOffline that decides an invalid verdict when no client lists apply (NO_POLICY): the
 * syntax check (100–215) and the unaccepted usernames (500), without the domain-type and correction lookups
 * (the rest only ever gives 10 or 525, neither invalid). Its address is verifyOffline's. For counting, at
 * list scale: the app's pre-check of a million rows (test/service/engine/verify.syntaxVerdict.test.ts keeps
 * the two in agreement).
 */
export function syntaxVerdict(input: string): { readonly address: string; readonly code: number } {
  const address = standardise(input);
  const syntax = checkSyntax(address);
  if (!syntax.ok) return { address, code: syntax.code };
  return {
    address,
    code: isUnacceptedUsername(syntax.local) ? CODE.unacceptedUsername : CODE.syntaxOk,
  };
}
