// The command-line options of a team server (docs/team-server.md): the database (`--database` or
// MAILSIEVE_DATABASE_URL), and what a verifier node is (`--source-address`, `--concurrency`, `--smtp-proxy`).
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Option, type Command } from 'commander';
import type { SocksProxySettings } from '../../service/engine/online/index.js';
import { checkDatabaseUrl, DatabaseUrlProblem, ENV_DATABASE_URL } from '../../service/pg/url.js';
import { smtpProxyOption } from './checksOptions.js';
import { CliError, intOption } from './errors.js';

export interface DatabaseCliOptions {
  database?: string;
}

export function addDatabaseOption(command: Command, what: string): Command {
  return command.addOption(
    new Option('--database <url>', `${what}: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`).env(
      ENV_DATABASE_URL,
    ),
  );
}

/** The team server's database URL given (checked), or undefined. */
export function databaseUrlOf(options: DatabaseCliOptions): string | undefined {
  const url = options.database?.trim();
  if (!url) return undefined;
  try {
    checkDatabaseUrl(url);
  } catch (error) {
    if (error instanceof DatabaseUrlProblem) throw new CliError(error.message);
    throw error;
  }
  return url;
}

export interface NodeCliOptions {
  sourceAddress?: string;
  concurrency?: string;
  smtpProxy?: string;
}

/** What makes a verifier node itself: the address it leaves from, its checks at once, its proxy. */
export function addNodeOptions(command: Command): Command {
  return command
    .option(
      '--source-address <ip>',
      'the local address DNS and SMTP connections leave from (mail servers count per source address)',
    )
    .option('--concurrency <n>', 'addresses checked at once by this node (default 500)')
    .option(
      '--smtp-proxy <url>',
      'reach mail servers through a SOCKS5 proxy: socks5://[USER:PASSWORD@]HOST:PORT',
    );
}

/** Whether `ip` is an address of this machine (any loopback address counts: 127.0.0.0/8 is all local). */
function isLocalAddress(ip: string): boolean {
  if (ip.startsWith('127.') || ip === '::1') return true;
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((entry) => entry.address === ip),
  );
}

export function nodeOptionsFrom(options: NodeCliOptions): {
  sourceAddress?: string;
  concurrency?: number;
  smtpProxy?: SocksProxySettings;
} {
  const out: { sourceAddress?: string; concurrency?: number; smtpProxy?: SocksProxySettings } = {};
  if (options.sourceAddress !== undefined) {
    const ip = options.sourceAddress.trim();
    if (isIP(ip) === 0)
      throw new CliError(`--source-address takes an IP address of this machine; got '${ip}'.`);
    if (!isLocalAddress(ip))
      throw new CliError(
        `--source-address ${ip} is not an address of this machine: give one of its own addresses (ip addr lists them).`,
      );
    out.sourceAddress = ip;
  }
  if (options.concurrency !== undefined)
    out.concurrency = intOption('--concurrency', options.concurrency, 1, 10_000);
  if (options.smtpProxy !== undefined) out.smtpProxy = smtpProxyOption(options.smtpProxy);
  return out;
}
