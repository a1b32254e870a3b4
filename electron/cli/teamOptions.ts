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

/** `--source-address`: the node's address (also what `doctor` checks). */
export const sourceAddressOption = (): Option =>
  new Option(
    '--source-address <ip>',
    'the local address DNS and SMTP connections leave from (mail servers count per source address)',
  );

/** What makes a verifier node itself: the address it leaves from, its checks at once, its proxy. */
export function addNodeOptions(command: Command): Command {
  return command
    .addOption(sourceAddressOption())
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

export interface WorkCliOptions {
  parts?: string;
  partRows?: string;
  leaseSeconds?: string;
  retryDelay?: string;
  maxWait?: string;
  heartbeatSeconds?: string;
}

/**
 * How a node works on lists: `worker` and `serve` (whose in-process verifier node is a worker like any other)
 * take the same options, defined here once.
 */
export function addWorkOptions(command: Command): Command {
  return command
    .option('--parts <n>', 'parts of lists worked on at once (default 8)')
    .option(
      '--part-rows <n>',
      'rows per part of the lists this node plans (default 10000; on a team server with SMTP checks, at least 32 parts)',
    )
    .option(
      '--lease-seconds <n>',
      'with --database: how long this node holds list work before another takes it (default 180)',
    )
    .option(
      '--retry-delay <seconds>',
      'first wait before temporary failures (greylisting, timeouts) are asked again (default 300)',
    )
    .option('--max-wait <seconds>', 'longest wait for retries of a list; 0: no retries (default 1800)')
    .option(
      '--heartbeat-seconds <n>',
      'with --database: how often this node tells the database it is alive; silent for 3 of them, `status` drops it (default 10)',
    );
}

export interface WorkSettings {
  readonly lists: {
    readonly parts?: number;
    readonly partRows?: number;
    readonly retryDelayMs?: number;
    readonly maxWaitMs?: number;
  };
  readonly leaseSeconds?: number;
  readonly heartbeatSeconds?: number;
}

/** The settings of addWorkOptions' options, each checked (a CliError names the bad one). */
export function workOptionsFrom(options: WorkCliOptions): WorkSettings {
  return {
    lists: {
      ...(options.parts !== undefined ? { parts: intOption('--parts', options.parts, 1, 64) } : {}),
      ...(options.partRows !== undefined
        ? { partRows: intOption('--part-rows', options.partRows, 100, 1_000_000) }
        : {}),
      ...(options.retryDelay !== undefined
        ? { retryDelayMs: intOption('--retry-delay', options.retryDelay, 1, 24 * 3600) * 1000 }
        : {}),
      ...(options.maxWait !== undefined
        ? { maxWaitMs: intOption('--max-wait', options.maxWait, 0, 7 * 24 * 3600) * 1000 }
        : {}),
    },
    ...(options.leaseSeconds !== undefined
      ? { leaseSeconds: intOption('--lease-seconds', options.leaseSeconds, 5, 3600) }
      : {}),
    ...(options.heartbeatSeconds !== undefined
      ? { heartbeatSeconds: intOption('--heartbeat-seconds', options.heartbeatSeconds, 1, 600) }
      : {}),
  };
}
