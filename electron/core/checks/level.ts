// The checks level of the local (embedded) service, shared by the app and the CLI: Automatic (the default),
// Offline only, Domains (DNS) or Mailboxes (SMTP). Automatic asks a preflight (the `doctor` logic: the online
// verifier's preflight) whether DNS answers from a resolver that sees the internet, and runs DNS checks when
// it does, offline checks otherwise; mailbox (SMTP) checks run only when chosen. See docs/online-checks.md.
import { APP_OPTION_WORDS } from '../../../shared/unknownCauses.js';
import {
  createOnlineVerifier,
  describeProblems,
  describeProxy,
  parseDnsServers,
  type ChecksLevel,
  type DnsServer,
  type Preflight,
  type SocksProxySettings,
} from '../../../service/engine/online/index.js';

export const CHECKS_CHOICES = ['auto', 'offline', 'dns', 'smtp'] as const;
/** What the user chose; `auto` is decided by the preflight each time a service starts. */
export type ChecksChoice = (typeof CHECKS_CHOICES)[number];

export function isChecksChoice(value: string): value is ChecksChoice {
  return (CHECKS_CHOICES as readonly string[]).includes(value);
}

/** How the local service reaches the network for online checks; every member optional (defaults: the system's). */
export interface NetworkSettings {
  readonly dnsServers?: readonly DnsServer[];
  readonly smtpPort?: number;
  readonly heloName?: string;
  readonly mailFrom?: string;
  /** Mailbox checks through a SOCKS5 proxy (its password stays in the main process). */
  readonly smtpProxy?: SocksProxySettings;
  /** The domain whose MX the preflight asks for (default gmail.com). */
  readonly probeDomain?: string;
}

/** The level a job runs with, and why, in words ("auto: DNS answers, checking domains"). */
export interface ChecksDecision {
  readonly choice: ChecksChoice;
  readonly level: ChecksLevel;
  readonly reason: string;
  /** The preflight behind an `auto` decision. */
  readonly preflight?: Preflight;
  /** How long deciding took (the preflight of `auto`), in ms. */
  readonly decidedInMs?: number;
}

/** The environment variables that override the resolver and port 25 of the local service. */
export const ENV_DNS_SERVERS = 'MAILSIEVE_DNS_SERVERS';
export const ENV_SMTP_PORT = 'MAILSIEVE_SMTP_PORT';

/**
 * `MAILSIEVE_DNS_SERVERS` (HOST:PORT[,…]) and `MAILSIEVE_SMTP_PORT` as network settings (corporate resolvers,
 * tests), or an Error saying which variable is wrong and how.
 */
export function networkFromEnv(env: NodeJS.ProcessEnv = process.env): NetworkSettings {
  const out: { dnsServers?: DnsServer[]; smtpPort?: number } = {};
  const servers = env[ENV_DNS_SERVERS]?.trim();
  if (servers) {
    const parsed = parseDnsServers(servers);
    if (!parsed.ok)
      throw new Error(
        `${ENV_DNS_SERVERS} takes IP[:PORT] entries separated by commas ([IPv6]:PORT); '${parsed.bad}' is not one.`,
      );
    out.dnsServers = parsed.servers;
  }
  const port = env[ENV_SMTP_PORT]?.trim();
  if (port) {
    const value = Number(port);
    if (!/^\d+$/.test(port) || value < 1 || value > 65535)
      throw new Error(`${ENV_SMTP_PORT} takes a port number from 1 to 65535; got '${port}'.`);
    out.smtpPort = value;
  }
  return out;
}

/** The settings given, over the environment's, over the defaults. */
export function effectiveNetwork(given: NetworkSettings = {}, env: NodeJS.ProcessEnv = process.env) {
  const defined = Object.fromEntries(
    Object.entries(given).filter(([, value]) => value !== undefined),
  ) as NetworkSettings;
  return { ...networkFromEnv(env), ...defined } satisfies NetworkSettings;
}

/** The longest an Automatic decision may take, whatever the network does. */
export const AUTO_DECISION_MS = 4500;
/** The longest the identity preflight before a list with mailbox checks may take (it runs during the upload). */
export const IDENTITY_PREFLIGHT_MS = 12_000;

/**
 * The preflight (`mailsieve doctor`): whether DNS answers from a resolver that sees the internet, and (unless
 * `smtp: false`) whether port 25 of the probe domain's mail server can be reached, through the proxy when one
 * is set. Answers within a few seconds whatever the network does.
 */
export async function preflightNetwork(
  settings: NetworkSettings,
  options: { smtp?: boolean } = {},
): Promise<Preflight> {
  const verifier = createOnlineVerifier({
    ...settings,
    dnsAttemptTimeoutMs: 1500,
    dnsQueryTimeoutMs: 3000,
  });
  try {
    return await verifier.preflight({ fresh: true, smtp: options.smtp ?? true });
  } finally {
    await verifier.close();
  }
}

/** The first sentence of a preflight detail (the rest speaks of `doctor`'s levels). */
function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return end > 0 ? text.slice(0, end) : text;
}

/** A preflight in the words the Connection screen shows beside the Checks choice. */
export function describePreflight(preflight: Preflight, proxy?: SocksProxySettings): string {
  if (!preflight.dns.ok)
    return `${firstSentence(preflight.dns.detail)}: only offline checks can run (syntax, lists).`;
  if (preflight.smtp.ok) {
    const reached = `DNS answers; port ${preflight.smtp.port} can be reached${proxy ? ` through ${describeProxy(proxy)}` : ''}`;
    if (preflight.identity.ok) return `${reached}: mailbox checks can run.`;
    // The issue's first complaint: "can run" while every mail server refuses this machine's identity.
    return `${reached}, but mailbox checks would come back unknown: ${describeProblems(preflight.identity.problems, APP_OPTION_WORDS)}`;
  }
  if (preflight.smtp.detail.startsWith('Not tried'))
    return 'DNS answers: domain checks can run (port 25 was not tried).';
  return proxy
    ? `DNS answers; port ${preflight.smtp.port} cannot be reached through ${describeProxy(proxy)}: mailbox checks would come back unknown.`
    : `DNS answers; port ${preflight.smtp.port} is blocked by this network: mailbox checks would come back unknown.`;
}

const CHOSEN_WORDS: Record<Exclude<ChecksChoice, 'auto'>, string> = {
  offline: 'offline: chosen, syntax and lists only (no DNS or mail server is asked)',
  dns: 'dns: chosen, checking domains (DNS)',
  smtp: 'smtp: chosen, checking mailboxes (DNS, then the mail servers)',
};

/**
 * The level a job runs with. `auto` runs the DNS part of the preflight (at most AUTO_DECISION_MS): DNS when
 * it answers from a resolver that sees the internet, else offline, with the reason; never SMTP. The other
 * choices are taken as they are.
 */
export async function decideChecks(
  choice: ChecksChoice,
  settings: NetworkSettings = {},
): Promise<ChecksDecision> {
  if (choice !== 'auto') {
    const proxy =
      choice === 'smtp' && settings.smtpProxy ? ` through ${describeProxy(settings.smtpProxy)}` : '';
    const reason = `${CHOSEN_WORDS[choice]}${proxy}`;
    if (choice !== 'smtp') return { choice, level: choice, reason };
    // Mailbox checks: a real conversation with a mail server of the probe domain first, so that an identity
    // mail servers refuse is said before the list, not found in every row after it.
    const started = Date.now();
    const timedOut = new Promise<undefined>((resolve) =>
      setTimeout(() => resolve(undefined), IDENTITY_PREFLIGHT_MS).unref(),
    );
    const preflight = await Promise.race([preflightNetwork(settings), timedOut]);
    return {
      choice,
      level: choice,
      reason,
      ...(preflight ? { preflight } : {}),
      decidedInMs: Date.now() - started,
    };
  }
  const started = Date.now();
  const timedOut = new Promise<undefined>((resolve) =>
    setTimeout(() => resolve(undefined), AUTO_DECISION_MS).unref(),
  );
  const preflight = await Promise.race([preflightNetwork(settings, { smtp: false }), timedOut]);
  const decidedInMs = Date.now() - started;
  if (!preflight)
    return {
      choice,
      level: 'offline',
      reason: `auto: DNS did not answer within ${(decidedInMs / 1000).toFixed(1)} s, checking offline (syntax and lists only)`,
      decidedInMs,
    };
  if (preflight.dns.ok)
    return { choice, level: 'dns', reason: 'auto: DNS answers, checking domains', preflight, decidedInMs };
  return {
    choice,
    level: 'offline',
    reason: `auto: ${firstSentence(preflight.dns.detail)}; checking offline (syntax and lists only)`,
    preflight,
    decidedInMs,
  };
}
