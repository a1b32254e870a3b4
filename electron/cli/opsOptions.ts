// The command-line options of a node's operation (docs/operations.md): `--log-format json|text` and `--log-level`
// for `serve` and `worker`, `--metrics` and `--metrics-port`/`--metrics-host` for `serve`, `--http-port`/
// `--http-host` for a worker's health, readiness and metrics; and the server of those ports.
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import type { LogFormat } from '../../service/ops/log.js';
import type { OpsServer, OpsServerOptions } from '../../service/ops/routes.js';
import { CliError } from './errors.js';

export interface LogCliOptions {
  logFormat?: string;
  logLevel?: string;
}

/** pino's levels, most severe first: a node logs the lines of its level and those above. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function addLogOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--log-format <format>',
        'log lines as json or text (default: text on a terminal, json otherwise)',
      ).choices(['json', 'text']),
    )
    .addOption(
      new Option(
        '--log-level <level>',
        'the least severe lines logged: info logs a line a request and list step, warn only refusals and failures, silent nothing',
      )
        .choices(LOG_LEVELS)
        .default('info'),
    );
}

/** The node's logger, logging its lists' steps and the mail servers refusing it (and coming back). */
export async function nodeLoggerFrom(options: LogCliOptions): Promise<Logger> {
  const { createLogger, defaultLogFormat, logNodeEvents } = await import('../../service/ops/log.js');
  const format = (options.logFormat as LogFormat | undefined) ?? defaultLogFormat();
  if (format !== 'json' && format !== 'text') throw new CliError('--log-format takes json or text.');
  const level = options.logLevel ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new CliError(`--log-level takes one of ${LOG_LEVELS.join(', ')}.`);
  const logger = createLogger({ format, level });
  logNodeEvents(logger);
  return logger;
}

/**
 * The node's health, readiness and metrics on a port of their own (a worker's `--http-port`, an API node's
 * `--metrics-port`); a port that cannot be had is said in words, after `close` (the node) has run.
 */
export async function startOpsPort(
  options: OpsServerOptions,
  flag: string,
  hostFlag: string,
  close: () => Promise<void>,
): Promise<OpsServer> {
  const { startOpsServer } = await import('../../service/ops/routes.js');
  try {
    return await startOpsServer(options);
  } catch (error) {
    await close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new CliError(`Port ${options.port} on ${options.host} (${flag}) is already in use.`);
    if (code === 'EADDRNOTAVAIL')
      throw new CliError(`Cannot bind to ${options.host} (${hostFlag}): no such local address.`);
    throw error;
  }
}
