// The offline verification engine: one address in, a status code and what was learnt on the way out.
// See docs/verification.md for the checks, their order and the decisions behind them.
export { syntaxVerdict, verifyOffline } from './verify.js';
export { standardise, checkSyntax, type SyntaxCheck } from './syntax.js';
export { domainTypeOf } from './domainType.js';
export { isRoleAccount, isUnacceptedUsername } from './roles.js';
export { correctDomain } from './corrections.js';
export { isRootZoneTld } from './tld.js';
export { CODE, isSyntaxError } from './codes.js';
export { NO_POLICY, type Verdict, type VerifyPolicy } from './types.js';
