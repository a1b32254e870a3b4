// Online verification: DNS and SMTP checks on top of the offline engine. See docs/online-checks.md.
export {
  createOnlineVerifier,
  isParkedRouting,
  ONLINE_CODE,
  type OnlineOptions,
  type OnlineStats,
  type OnlineVerdict,
  type OnlineVerifier,
  type OnlineVerifyOptions,
  type Preflight,
  type PreflightCheck,
} from './verifier.js';
export {
  CHECK_LEVELS,
  DEFAULT_KEY_CHECKS,
  isChecksLevel,
  minLevel,
  type ChecksLevel,
  type OnlineLevel,
} from './levels.js';
export { parseDnsServers, systemDnsServers, formatServer, type DnsServer } from './dns.js';
export { classifyRcpt, type RcptClass } from './classify.js';
export { describeProxy, parseSocksProxy, type SocksProxySettings } from './smtp.js';
export { describeProblems, type IdentityCheck, type IdentityProblem } from './identity.js';
