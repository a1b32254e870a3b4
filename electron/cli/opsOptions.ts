// The command-line options of a node's operation (docs/operations.md): `--log-format json|text` for `serve` and
// `worker`, `--metrics` for `serve`, `--http-port`/`--http-host` for a worker's health, readiness and metrics.
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import type { LogFormat } from '../../service/ops/log.js';
import { CliError } from './errors.js';

export interface LogCliOptions {
  logFormat?: string;
}

export function addLogFormatOption(command: Command): Command {
  return command.addOption(
    new Option(
      '--log-format <format>',
      'log lines as json or text (default: text on a terminal, json otherwise)',
    ).choices(['json', 'text']),
  );
}

/** The node's logger, logging its lists' steps and the mail servers refusing it (and coming back). */
export async function nodeLoggerFrom(options: LogCliOptions): Promise<Logger> {
  const { createLogger, defaultLogFormat, logNodeEvents } = await import('../../service/ops/log.js');
  const format = (options.logFormat as LogFormat | undefined) ?? defaultLogFormat();
  if (format !== 'json' && format !== 'text') throw new CliError('--log-format takes json or text.');
  const logger = createLogger({ format });
  logNodeEvents(logger);
  return logger;
}
