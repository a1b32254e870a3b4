// `mailsieve recheck RESULTS_FILE` (or a list id of the embedded service): the rows that could not be checked
// (unknown, or checked offline only) go through the service again at the current checks level, and a new
// version of the results is written beside them: same rows, same order, updated verdicts. electron/core/results/recheckFile.ts
// does the work; this is the command line around it.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { EmbeddedService } from '../core/embedded.js';
import { downloadListResults, recheckResults, RecheckError } from '../core/results/recheckFile.js';
import { startChecksService, type ChecksCliOptions } from './checksOptions.js';
import { Progress, pollIntervalFor, showProgress } from './clean.js';
import { clientFor } from './connect.js';
import { CliError } from './errors.js';

export interface RecheckCliOptions extends ChecksCliOptions {
  out?: string;
  baseUrl?: string;
  apiKey?: string;
  dataDir: string;
  json?: boolean;
}

export async function recheck(target: string, options: RecheckCliOptions): Promise<void> {
  const apiKey = options.apiKey ?? process.env.MAILSIEVE_API_KEY;
  if (options.baseUrl && !apiKey) throw new CliError('--base-url needs --api-key (or MAILSIEVE_API_KEY).');
  if (!options.baseUrl && options.apiKey) throw new CliError('--api-key goes with --base-url.');
  const isFile = existsSync(target) && statSync(target).isFile();
  if (!isFile && !/^\d{1,15}$/.test(target))
    throw new CliError(`No such results file: ${target} (give a results file, or the id of a list).`);
  const info = (line: string) => (options.json ? process.stderr : process.stdout).write(`${line}\n`);
  let embedded: EmbeddedService | undefined;
  try {
    embedded = await startChecksService(options, info);
    const client = clientFor(embedded, options.baseUrl, apiKey);
    let resultsFile = resolve(target);
    if (!isFile) {
      const outDir = resolve(options.out ?? process.cwd());
      mkdirSync(outDir, { recursive: true });
      const downloaded = await downloadListResults(client, Number(target), outDir);
      if (!downloaded.ok) throw new CliError(downloaded.message);
      resultsFile = downloaded.path;
      info(`Results of list ${target}: ${resultsFile}`);
    }
    const progress = new Progress(process.stderr, false);
    const outcome = await recheckResults({
      client,
      resultsFile,
      ...(options.out && isFile ? { outFile: resolve(options.out) } : {}),
      ...(!isFile ? { outFile: join(resolve(options.out ?? process.cwd()), recheckName(resultsFile)) } : {}),
      pollIntervalMs: pollIntervalFor(client.baseUrl, embedded),
      onEvent: showProgress(progress),
    }).catch((error: unknown) => {
      if (error instanceof RecheckError) throw new CliError(error.message);
      throw error;
    });
    progress.end();
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({
          results: outcome.rechecked > 0 ? outcome.outFile : null,
          rows: outcome.rows,
          rechecked: outcome.rechecked,
          after: outcome.after,
          summary: outcome.summary,
          checks: embedded
            ? { level: embedded.checks.level, choice: embedded.checks.choice, reason: embedded.checks.reason }
            : { level: outcome.checks ?? null },
        })}\n`,
      );
      return;
    }
    info(`Re-check: ${outcome.summary}`);
    if (outcome.rechecked > 0) info(`Results: ${outcome.outFile}`);
  } finally {
    await embedded?.close();
  }
}

function recheckName(resultsFile: string): string {
  const name = resultsFile.split(/[/\\]/).pop() ?? 'results.csv';
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}-recheck${name.slice(dot)}` : `${name}-recheck`;
}
