// `mailsieve outcomes import FILE --job ID [--sent FILE]` and `mailsieve outcomes report --job ID`: a job of the
// history (the app home's, MAILSIEVE_HOME) measured against its campaign's bounce export, by the same engine
// as the app's Campaign results (electron/core/outcomes/), so both say the same numbers. The hard bounces go
// to the local service's known bouncers (--data-dir), as `data import bounces` puts them.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command, Option } from 'commander';
import {
  evidenceWords,
  outcomesHeadline,
  percentWords,
  type OutcomeGroup,
  type OutcomesReport,
} from '../../shared/outcomes.js';
import { openServiceDb } from '../../service/store/db.js';
import { appHome } from '../core/home.js';
import { HISTORY_DB_FILE, getJob, openHistoryDb, type HistoryDb } from '../core/history/db.js';
import { OutcomesError, importJobOutcomes, outcomesFile } from '../core/outcomes/outcomes.js';
import { storedOutcomes } from '../core/outcomes/store.js';
import { CliError, intOption, writeStdout } from './errors.js';
import { formatCount } from '../../shared/count.js';

/** The app home's history, which holds the jobs (the app's and the CLI's alike); undefined before any job. */
export function homeHistory(): { db: HistoryDb; home: string } | undefined {
  const home = appHome();
  const file = join(home, HISTORY_DB_FILE);
  return existsSync(file) ? { db: openHistoryDb(file), home } : undefined;
}

/** The app home's history, or a CliError saying there is none. */
export function openHomeHistory(): { db: HistoryDb; home: string } {
  const opened = homeHistory();
  if (!opened)
    throw new CliError(
      `No job history at ${appHome()} (set MAILSIEVE_HOME to the app home that holds history.sqlite).`,
    );
  return opened;
}

function jobIdOption(raw: string | undefined): number {
  if (raw === undefined)
    throw new CliError('--job takes the id of a job in the history (see History in the app).');
  return intOption('--job', raw, 1, 2 ** 31);
}

function readableFile(option: string, path: string): void {
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new CliError(`${option}: ${path} does not exist.`);
  }
  if (!isFile) throw new CliError(`${option}: ${path} is not a file.`);
}

function bar(rate: number, max: number): string {
  const width = max <= 0 ? 0 : Math.round((rate / max) * 20);
  return '█'.repeat(width);
}

function groupLines(title: string, groups: readonly OutcomeGroup[]): string[] {
  if (groups.length === 0) return [];
  const max = Math.max(...groups.map((g) => Math.max(g.measuredRate, g.predictedRate)));
  const width = Math.max(...groups.map((g) => g.label.length));
  return [
    `${title}:`,
    ...groups.map(
      (g) =>
        `  ${g.label.padEnd(width)}  ${formatCount(g.sent).padStart(9)} mailed  ${formatCount(g.hardBounced).padStart(7)} hard  ` +
        `${percentWords(g.measuredRate).padStart(7)} (predicted ${percentWords(g.predictedRate)})  ${bar(g.measuredRate, max)}`,
    ),
  ];
}

/** A report in words, as the CLI prints it. */
export function reportText(report: OutcomesReport): string {
  const lines = [
    `Job ${report.jobId}: campaign results from ${report.bounceFile} (imported ${report.importedAt}).`,
    report.bounceLayout,
    outcomesHeadline(report),
    `Soft bounces among them: ${formatCount(report.softBounced)}. The export's rows: ${formatCount(report.exportRows.hard)} hard, ` +
      `${formatCount(report.exportRows.soft)} soft, ${formatCount(report.exportRows.other)} other, ${formatCount(report.exportRows.rejected)} unreadable; ` +
      `${formatCount(report.exportRows.unmatched)} addresses match no row of the job.`,
    ...groupLines('By status code', report.byCode),
    ...groupLines('By mail provider', report.byProvider),
  ];
  if (report.missedTotal === 0)
    lines.push('Verdicts that missed: none (no row called valid or accept-all hard-bounced).');
  else {
    lines.push(
      `Verdicts that missed: ${formatCount(report.missedTotal)} rows called valid or accept-all hard-bounced` +
        (report.missedTotal > report.missed.length
          ? ` (the first ${formatCount(report.missed.length)}):`
          : ':'),
    );
    for (const row of report.missed)
      lines.push(
        `  row ${row.row}  ${row.email}  ${row.code} ${row.status}: ${evidenceWords(row.evidence)}` +
          (row.why ? ` — ${row.why}` : ''),
      );
  }
  lines.push(
    `Known bouncers: ${formatCount(report.knownBouncers.added)} added, ${formatCount(report.knownBouncers.updated)} updated (code 520 when they are cleaned again).`,
  );
  return `${lines.filter((line) => line !== '').join('\n')}\n`;
}

export interface OutcomesImportOptions {
  job?: string;
  sent?: string;
  json?: boolean;
  dataDir: string;
}

export async function outcomesImport(file: string, options: OutcomesImportOptions): Promise<void> {
  const jobId = jobIdOption(options.job);
  readableFile('FILE', file);
  if (options.sent !== undefined) readableFile('--sent', options.sent);
  const { db, home } = openHomeHistory();
  try {
    const job = getJob(db, jobId);
    if (!job) throw new CliError(`Job ${jobId} is not in the history at ${home}.`);
    const serviceDb = openServiceDb(options.dataDir);
    let report: OutcomesReport;
    try {
      report = await importJobOutcomes({
        db,
        job,
        resultsDir: join(home, 'results'),
        serviceDb,
        bounces: outcomesFile(file),
        ...(options.sent !== undefined ? { sent: outcomesFile(options.sent) } : {}),
      });
    } catch (error) {
      if (error instanceof OutcomesError) throw new CliError(error.message);
      throw error;
    } finally {
      serviceDb.close();
    }
    await writeStdout(options.json ? `${JSON.stringify(report)}\n` : reportText(report));
  } finally {
    db.close();
  }
}

export async function outcomesReport(options: { job?: string; json?: boolean }): Promise<void> {
  const jobId = jobIdOption(options.job);
  const { db, home } = openHomeHistory();
  try {
    if (!getJob(db, jobId)) throw new CliError(`Job ${jobId} is not in the history at ${home}.`);
    const report = storedOutcomes(db, jobId);
    if (!report)
      throw new CliError(
        `Job ${jobId} has no campaign results yet: import them with \`mailsieve outcomes import FILE --job ${jobId}\`.`,
      );
    await writeStdout(options.json ? `${JSON.stringify(report)}\n` : reportText(report));
  } finally {
    db.close();
  }
}

/** The `mailsieve outcomes` command tree. */
export function registerOutcomesCommands(program: Command, dataDirOption: () => Option): void {
  const outcomes = program
    .command('outcomes')
    .description(
      "A job's verdicts measured against its campaign's real bounces (the job ids of the History).",
    );
  outcomes
    .command('import')
    .description(
      "Read a mailing platform's bounce or suppression export (and its sent list) for a job: the report is kept with the job, the hard bounces become known bouncers.",
    )
    .argument('<file>', 'the bounce or suppression export (any shape `data import bounces` reads)')
    .option('--job <id>', 'the job of the history the campaign mailed')
    .option('--sent <file>', 'the platform’s sent or delivered list (default: the job’s Ready to mail rows)')
    .option('--json', 'print the report as one JSON object')
    .addOption(dataDirOption())
    .action(outcomesImport);
  outcomes
    .command('report')
    .description('Show the kept campaign results of a job.')
    .option('--job <id>', 'the job of the history')
    .option('--json', 'print the report as one JSON object')
    .action(outcomesReport);
}
