// `mailsieve purchase LIST_ID`: buys a list that `clean --report-only` left awaiting purchase (E9: the fields
// to buy, the email append match type), waits for it to run again to its results, and downloads them (and the
// exports) as `clean` does. On the embedded service the list is in the service database of --data-dir, so the
// same data folder as the clean's is opened.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  EMAIL_APPEND_PURCHASE_MATCH_TYPES,
  effectiveDelimiter,
  type PurchaseRequest,
} from '../../shared/api/list.js';
import { startEmbeddedService, type EmbeddedService } from '../core/embedded.js';
import { purchaseListJob, type JobEvent } from '../core/jobs/runner.js';
import { STATUS_ZIP } from '../../shared/exports.js';
import { exportShapeOf, statusZipOption, writeCleanStatusZip, writeReportCsvs } from './exportOptions.js';
import { exportKindsOption, formatBreakdown, pollIntervalFor, Progress, showProgress } from './clean.js';
import { clientFor } from './connect.js';
import { CliError } from './errors.js';
import { formatCount } from '../../shared/count.js';

export interface PurchaseOptions {
  /** E9's `fields`: intelligence fields, sections (`eam`, `postal_address`) or list service keys. */
  fields?: string[];
  /** E9's `options.email_append.match_type`: `I` or `H`. */
  matchType?: string;
  out?: string;
  export?: string[];
  /** Write the match report and chart data CSVs beside the results, as `clean --report-csv` does. */
  reportCsv?: boolean;
  baseUrl?: string;
  apiKey?: string;
  dataDir: string;
  json?: boolean;
}

function listIdOption(raw: string): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < 1)
    throw new CliError(`LIST_ID is the list's number (as clean --report-only printed it); got '${raw}'.`);
  return value;
}

function matchTypeOption(raw: string): (typeof EMAIL_APPEND_PURCHASE_MATCH_TYPES)[number] {
  const value = raw.trim().toUpperCase();
  const known = EMAIL_APPEND_PURCHASE_MATCH_TYPES.find((type) => type === value);
  if (!known)
    throw new CliError(
      `--match-type takes I (Individual matches only) or H (Individual and Household matches); got '${raw}'.`,
    );
  return known;
}

export async function purchase(listIdText: string, options: PurchaseOptions): Promise<void> {
  const listId = listIdOption(listIdText);
  const matchType = options.matchType === undefined ? undefined : matchTypeOption(options.matchType);
  const { kinds: exportArgs, isZip } = statusZipOption(options.export);
  const exportKinds = exportKindsOption(exportArgs, [STATUS_ZIP]);
  const fields = options.fields && options.fields.length > 0 ? options.fields : undefined;
  const apiKey = options.apiKey ?? process.env.MAILSIEVE_API_KEY;
  if (options.baseUrl && !apiKey) throw new CliError('--base-url needs --api-key (or MAILSIEVE_API_KEY).');
  if (!options.baseUrl && options.apiKey) throw new CliError('--api-key goes with --base-url.');
  const outDir = resolve(options.out ?? '.');
  mkdirSync(outDir, { recursive: true });
  const info = (line: string) => (options.json ? process.stderr : process.stdout).write(`${line}\n`);
  // Without a selection E9 has no body: everything matched is bought.
  const body: PurchaseRequest | undefined =
    fields || matchType
      ? {
          ...(fields ? { fields } : {}),
          ...(matchType ? { options: { email_append: { match_type: matchType } } } : {}),
        }
      : undefined;

  let embedded: EmbeddedService | undefined;
  try {
    // The list runs again at the checks level it ran with (the service keeps it): the ceiling allows any.
    if (!options.baseUrl)
      embedded = await startEmbeddedService(options.dataDir, { online: { checks: 'smtp' } });
    const client = clientFor(embedded, options.baseUrl, apiKey);
    const progress = new Progress(process.stderr, false);
    const show = showProgress(progress);
    let isBought = false;
    const result = await purchaseListJob({
      client,
      listId,
      ...(body ? { purchase: body } : {}),
      outDir,
      exports: exportKinds,
      // Shaped for import as clean's are, by the defaults; the email column is the one the header names.
      exportShape: exportShapeOf({}, 0),
      pollIntervalMs: pollIntervalFor(client.baseUrl, embedded),
      onEvent: (event: JobEvent) => {
        if (event.phase === 'purchased') isBought = true;
        show(event);
      },
    });
    progress.end();
    if (!result.ok) throw new CliError(result.error.message);
    const outcome = result.value;
    if (outcome.stage !== 'results')
      throw new CliError(`List ${listId} is still awaiting purchase: its status is ${outcome.list.status}.`);
    const isOffline = embedded !== undefined && (outcome.list.checks ?? 'offline') === 'offline';
    // The zip of every status and the report CSVs, as clean writes them (named after the list).
    const listName = outcome.list.name;
    const zip = isZip
      ? await writeCleanStatusZip(
          {
            path: outcome.resultsPath,
            delimiter: outcome.list.delimiter ?? effectiveDelimiter({}, listName),
          },
          // The email column is the one the results' header names (0: find it).
          { file: listName, outDir, emailColumn: 0 },
          {},
        )
      : undefined;
    const exports = zip ? [...outcome.exports, zip] : outcome.exports;
    const reports = options.reportCsv
      ? writeReportCsvs(outcome.list, outcome.summary?.duplicates ?? null, { file: listName, outDir })
      : [];
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({
          list: outcome.list,
          purchased: isBought ? (body ?? {}) : null,
          results: outcome.resultsPath,
          duplicates: outcome.summary?.duplicates ?? null,
          exports,
          ...(options.reportCsv ? { reports } : {}),
          offline: isOffline,
        })}\n`,
      );
      return;
    }
    if (!isBought)
      info(
        `List ${listId} had its results already: nothing was bought${body ? ' (--fields and --match-type left unused)' : ''}.`,
      );
    info(formatBreakdown(outcome.list, outcome.summary, { isOffline, isLocal: isOffline }));
    info(`Results: ${outcome.resultsPath}`);
    for (const exported of exports)
      info(`Export ${exported.kind.padEnd(7)} ${exported.path} (${formatCount(exported.rows)} rows)`);
    for (const report of reports) info(`Report ${report.kind.padEnd(12)} ${report.path}`);
  } finally {
    await embedded?.close();
  }
}
