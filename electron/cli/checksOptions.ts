// The checks options of `clean` and `recheck` on the embedded service: the level (auto, offline, dns, smtp),
// the network settings `verify` has (onlineOptions.ts), a SOCKS5 proxy for SMTP, the retries of temporary
// failures, and what the CLI shows of the online phase (the wait for a retry).
import { Option, type Command } from 'commander';
import type { ListResource } from '../../shared/api/list.js';
import {
  describeProblems,
  parseSocksProxy,
  type SocksProxySettings,
} from '../../service/engine/online/index.js';
import {
  CHECKS_CHOICES,
  isChecksChoice,
  type ChecksChoice,
  type ChecksDecision,
  type NetworkSettings,
} from '../core/checks/level.js';
import { CLI_OPTION_WORDS } from '../../shared/unknownCauses.js';
import { startEmbeddedService, type EmbeddedService, type EmbeddedServiceOptions } from '../core/embedded.js';
import { CliError, intOption } from './errors.js';
import { onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';
import { formatCount } from '../../shared/count.js';

export interface ChecksCliOptions extends OnlineCliOptions {
  smtpProxy?: string;
  retryDelay?: string;
  maxWait?: string;
}

/** Adds --checks (default auto) and the options of online checks, retries and the proxy. */
export function addListCheckOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--checks <level>',
        'how far checks go on the embedded service: auto (DNS when it answers, else offline), offline, dns (+ mail domain) or smtp (+ mailbox)',
      )
        .choices([...CHECKS_CHOICES])
        .default('auto'),
    )
    .option('--dns-servers <list>', 'DNS servers to ask, HOST[:PORT][,…] (default: the system’s)')
    .option('--smtp-port <n>', 'port of the mail servers (default 25)')
    .option(
      '--helo-name <name>',
      'name given in EHLO (default: this machine’s name); use one whose DNS matches your IP',
    )
    .option('--mail-from <address>', 'envelope sender of the probes (default postmaster@<helo name>)')
    .option(
      '--probe-domain <domain>',
      'with --checks smtp: domain whose mail server is asked first whether it takes the HELO name and sender (default gmail.com)',
    )
    .option(
      '--smtp-proxy <url>',
      'reach mail servers through a SOCKS5 proxy: socks5://[USER:PASSWORD@]HOST:PORT',
    )
    .option(
      '--retry-delay <seconds>',
      'first wait before temporary failures (greylisting, timeouts) are asked again (default 300)',
    )
    .option('--max-wait <seconds>', 'longest wait for retries; 0: no retries (default 1800)');
}

/** Whether any option of the embedded service's checks was given besides the default level. */
export function hasListCheckOptions(options: ChecksCliOptions): boolean {
  return [
    options.dnsServers,
    options.smtpPort,
    options.heloName,
    options.mailFrom,
    options.smtpProxy,
    options.probeDomain,
    options.retryDelay,
    options.maxWait,
  ].some((value) => value !== undefined);
}

/** `--smtp-proxy`'s value as proxy settings, or a CliError (that does not repeat it: it may hold a password). */
export function smtpProxyOption(raw: string): SocksProxySettings {
  const parsed = parseSocksProxy(raw);
  if (!parsed.ok)
    throw new CliError(`--smtp-proxy takes socks5://[USER:PASSWORD@]HOST:PORT: ${parsed.reason}.`);
  return parsed.proxy;
}

/** The embedded service's settings from the options, or a CliError naming the bad one. */
export function embeddedChecksOptions(options: ChecksCliOptions): EmbeddedServiceOptions {
  const choice: ChecksChoice = options.checks === undefined ? 'auto' : (options.checks as ChecksChoice);
  if (!isChecksChoice(choice))
    throw new CliError(`--checks takes ${CHECKS_CHOICES.join(', ')}; got '${options.checks}'.`);
  const { checks: _level, ...online } = onlineOptionsFrom({ ...options, checks: undefined }, 'offline');
  const network: { -readonly [K in keyof NetworkSettings]: NetworkSettings[K] } = {};
  if (online.dnsServers) network.dnsServers = online.dnsServers;
  if (online.smtpPort !== undefined) network.smtpPort = online.smtpPort;
  if (online.heloName !== undefined) network.heloName = online.heloName;
  if (online.mailFrom !== undefined) network.mailFrom = online.mailFrom;
  if (online.probeDomain !== undefined) network.probeDomain = online.probeDomain;
  if (options.smtpProxy !== undefined) network.smtpProxy = smtpProxyOption(options.smtpProxy);
  const retry: { delayMs?: number; maxWaitMs?: number } = {};
  if (options.retryDelay !== undefined)
    retry.delayMs = intOption('--retry-delay', options.retryDelay, 1, 24 * 3600) * 1000;
  if (options.maxWait !== undefined)
    retry.maxWaitMs = intOption('--max-wait', options.maxWait, 0, 24 * 3600) * 1000;
  return {
    checks: choice,
    network,
    ...(online.smtpConcurrency !== undefined ? { online: { smtpConcurrency: online.smtpConcurrency } } : {}),
    ...(Object.keys(retry).length > 0 ? { retry } : {}),
  };
}

/**
 * The embedded service of `clean` and `recheck`, started with the checks options, its level said in a line
 * ("Checks: auto: DNS answers, checking domains"); undefined with --base-url, where the key decides and the
 * checks options are refused.
 */
export async function startChecksService(
  options: ChecksCliOptions & { readonly baseUrl?: string; readonly dataDir: string },
  info: (line: string) => void,
  /**
   * Automatic's preflight runs while the service starts and the list uploads (the list waits for the decision
   * before it runs; without a network it may take seconds): the caller says the level when `decided` settles.
   */
  isDecidedWhileStarting = false,
): Promise<EmbeddedService | undefined> {
  if (options.baseUrl) {
    if (hasListCheckOptions(options) || (options.checks ?? 'auto') !== 'auto')
      throw new CliError(
        '--checks and the options of online checks set up the embedded service; with --base-url the key decides.',
      );
    return undefined;
  }
  const embedded = await startEmbeddedService(options.dataDir, {
    ...embeddedChecksOptions(options),
    ...(isDecidedWhileStarting ? { isDecidedWhileStarting } : {}),
  });
  if (!isDecidedWhileStarting) {
    info(`Checks: ${embedded.checks.reason}`);
    const identity = identityNote(embedded.checks);
    if (identity) info(identity);
  }
  return embedded;
}

/**
 * What the preflight before mailbox checks found of this machine's identity, in a line: "Identity: the mail
 * server refused the HELO name 'localhost' (…): set a fully-qualified name … (set --helo-name)."; undefined
 * for a level below smtp.
 */
export function identityNote(decision: ChecksDecision): string | undefined {
  if (decision.level !== 'smtp') return undefined;
  const preflight = decision.preflight;
  if (!preflight) return 'Identity: not checked (the preflight did not finish in time).';
  if (!preflight.dns.ok) return `Identity: not checked: ${preflight.dns.detail}`;
  if (!preflight.smtp.ok) return `Identity: not checked: ${preflight.smtp.detail}`;
  const { identity } = preflight;
  if (identity.problems.length === 0) return `Identity: ${identity.detail}`;
  return `Identity: ${describeProblems(identity.problems, CLI_OPTION_WORDS)}`;
}

const clock = (iso: string) => {
  const at = new Date(iso);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
};

/**
 * A line for the wait of a list's online phase, once each time it changes: "12 rows waiting for a retry at
 * 14:05 (greylisting or timeouts)", and when the wait ends.
 */
export function onlineNotes(say: (line: string) => void): (list: ListResource) => void {
  let last = '';
  let lastPace = '';
  return (list) => {
    const online = list.online;
    if (!online) return;
    // Which host sets the pace, said again when the host or its allowance changes (issue #26).
    const pace = online.paced_by ? `${online.paced_by.host} ${online.paced_by.allowance}` : '';
    if (pace !== lastPace && online.paced_by) say(`Pace: ${online.paced_by.words}`);
    lastPace = pace;
    const line =
      online.retry_rows > 0 && online.retry_at
        ? `${formatCount(online.retry_rows)} ${online.retry_rows === 1 ? 'row' : 'rows'} waiting for a retry at ${clock(online.retry_at)} (temporary failures: greylisting, timeouts); Ctrl+C stops here, the service keeps the list`
        : '';
    if (line !== last && line !== '') say(line);
    last = line;
  };
}

export { downloadExplanations } from '../core/jobs/listOnline.js';
