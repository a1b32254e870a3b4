// The command-line options of online checks, shared by `serve`, `verify` (embedded service) and `doctor`.
import { Option, type Command } from 'commander';
import {
  CHECK_LEVELS,
  isChecksLevel,
  parseDnsServers,
  type ChecksLevel,
} from '../../service/engine/online/index.js';
import type { OnlineServiceOptions } from '../../service/http/app.js';
import { CliError, intOption } from './errors.js';

export interface OnlineCliOptions {
  checks?: string;
  dnsServers?: string;
  smtpPort?: string;
  heloName?: string;
  mailFrom?: string;
  smtpConcurrency?: string;
  probeDomain?: string;
}

/** `--dns-servers` and `--smtp-port`: what every command that goes online takes. */
export function addNetworkOptions(command: Command): Command {
  return command
    .option('--dns-servers <list>', 'DNS servers to ask, HOST[:PORT][,…] (default: the system’s)')
    .option('--smtp-port <n>', 'port of the mail servers (default 25)');
}

/** What `serve` and `verify` take besides: the level and how the verifier introduces itself. */
export function addCheckOptions(
  command: Command,
  checksDefault: ChecksLevel | undefined,
  checksHelp: string,
): Command {
  addNetworkOptions(command);
  const checks = new Option('--checks <level>', checksHelp).choices([...CHECK_LEVELS]);
  return command
    .addOption(checksDefault === undefined ? checks : checks.default(checksDefault))
    .option(
      '--helo-name <name>',
      'name given in EHLO (default: this machine’s name); use one whose DNS matches your IP',
    )
    .option('--mail-from <address>', 'envelope sender of the probes (default postmaster@<helo name>)')
    .option('--smtp-concurrency <n>', 'conversations open at once with one mail server (default 2)');
}

export function parseChecks(raw: string | undefined, fallback: ChecksLevel): ChecksLevel {
  if (raw === undefined) return fallback;
  if (!isChecksLevel(raw)) throw new CliError(`--checks takes ${CHECK_LEVELS.join(', ')}; got '${raw}'.`);
  return raw;
}

/** Whether any option of online checks was given (they apply to a service this process runs). */
export function hasOnlineOptions(options: OnlineCliOptions): boolean {
  return [
    options.checks,
    options.dnsServers,
    options.smtpPort,
    options.heloName,
    options.mailFrom,
    options.smtpConcurrency,
  ].some((value) => value !== undefined);
}

/** The online settings of the options given; undefined members are left to the verifier's defaults. */
export function onlineOptionsFrom(
  options: OnlineCliOptions,
  checksDefault: ChecksLevel,
): OnlineServiceOptions {
  const out: { -readonly [K in keyof OnlineServiceOptions]: OnlineServiceOptions[K] } = {
    checks: parseChecks(options.checks, checksDefault),
  };
  if (options.dnsServers !== undefined) {
    const parsed = parseDnsServers(options.dnsServers);
    if (!parsed.ok)
      throw new CliError(
        `--dns-servers takes IP[:PORT] entries separated by commas ([IPv6]:PORT); '${parsed.bad}' is not one.`,
      );
    out.dnsServers = parsed.servers;
  }
  if (options.smtpPort !== undefined) out.smtpPort = intOption('--smtp-port', options.smtpPort, 1, 65535);
  if (options.smtpConcurrency !== undefined)
    out.smtpConcurrency = intOption('--smtp-concurrency', options.smtpConcurrency, 1, 50);
  if (options.heloName !== undefined) {
    if (
      !/^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/.test(
        options.heloName,
      ) &&
      !/^\[[0-9a-fA-F:.]+\]$/.test(options.heloName)
    )
      throw new CliError(`--helo-name takes a host name (or [IP]); got '${options.heloName}'.`);
    out.heloName = options.heloName;
  }
  if (options.mailFrom !== undefined) {
    if (!/^[^\s<>@"]+@[A-Za-z0-9.-]+$/.test(options.mailFrom))
      throw new CliError(
        `--mail-from takes a plain address such as verify@example.com; got '${options.mailFrom}'.`,
      );
    out.mailFrom = options.mailFrom;
  }
  if (options.probeDomain !== undefined) {
    if (!/^[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/.test(options.probeDomain))
      throw new CliError(`--probe-domain takes a domain name; got '${options.probeDomain}'.`);
    out.probeDomain = options.probeDomain.toLowerCase();
  }
  return out;
}
