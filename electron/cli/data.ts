// `mailsieve data …`: the reference data identity matching, intelligence and activity metrics answer from
// (docs/identity.md): import people and activity CSV files, and bounce exports (the known bouncers of code
// 520), load synthetic demo data, show what is stored, clear it.
import { mkdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  DEFAULT_MAX_ERRORS,
  ImportFileError,
  importActivityFile,
  importBouncesFile,
  importPeopleFile,
  type ImportReport,
} from '../../service/identity/import.js';
import { loadDemo, writeDemoCsv } from '../../service/identity/demo.js';
import { clearReferenceData, referenceDataStatus } from '../../service/identity/status.js';
import { clearBounces } from '../../service/identity/bounces.js';
import { openServiceDb, SERVICE_DB_FILE } from '../../service/store/db.js';
import { DEFAULT_RETAIN_DAYS, listFilesUsage } from '../../service/lists/backend/retention.js';
import type { Command, Option } from 'commander';
import { CliError, intOption } from './errors.js';
import { formatBytes } from '../../shared/bytes.js';
import { formatCount } from '../../shared/count.js';

export interface ImportCommandOptions {
  dataDir: string;
  json?: boolean;
  maxErrors?: string;
}

const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** What an import added, in words. */
function importedWhat(report: ImportReport): string {
  if (report.kind === 'people')
    return `people: ${formatCount(report.added)} added, ${formatCount(report.updated)} updated`;
  if (report.kind === 'activity')
    return `events: ${formatCount(report.added)} added, ${formatCount(report.updated)} already stored`;
  const { soft = 0, other = 0 } = report.bounces ?? {};
  return (
    `hard bounces: ${plural(report.added, 'address', 'addresses')} added, ${formatCount(report.updated)} updated; ` +
    `ignored: ${plural(soft, 'soft bounce')}, ${plural(other, 'row')} not a bounce`
  );
}

function printReport(report: ImportReport): void {
  const name = basename(report.file);
  const what = importedWhat(report);
  const lines = [
    `Imported ${formatCount(report.imported)} of ${plural(report.rows, 'row')} from ${name} (${what}) in ${report.seconds.toFixed(1)} s.`,
  ];
  if (report.rejected > 0) {
    lines.push(`Rejected ${formatCount(report.rejected)} row${report.rejected === 1 ? '' : 's'}:`);
    for (const error of report.errors) lines.push(`  line ${error.line}: ${error.message}`);
    const unlisted = report.rejected - report.errors.length;
    if (unlisted > 0) lines.push(`  … and ${formatCount(unlisted)} more (--max-errors N lists more)`);
  }
  for (const warning of report.warnings) lines.push(`Note: ${warning}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function reportJson(report: ImportReport) {
  return {
    kind: report.kind,
    file: report.file,
    dataset_id: report.datasetId,
    rows: report.rows,
    imported: report.imported,
    rejected: report.rejected,
    errors: report.errors,
    warnings: report.warnings,
    added: report.added,
    updated: report.updated,
    ...(report.bounces ? { bounces: report.bounces } : {}),
    seconds: Number(report.seconds.toFixed(3)),
  };
}

const IMPORTS = { people: importPeopleFile, activity: importActivityFile, bounces: importBouncesFile };

/** Progress on a terminal only: a line rewritten in place on stderr. */
function progress(): { onProgress?: (rows: number) => void; done(): void } {
  if (!process.stderr.isTTY) return { done: () => undefined };
  let shown = false;
  return {
    onProgress: (rows) => {
      shown = true;
      process.stderr.write(`\r  ${formatCount(rows)} rows…`);
    },
    done: () => {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

export async function importCommand(
  kind: string,
  file: string,
  options: ImportCommandOptions,
): Promise<void> {
  if (kind !== 'people' && kind !== 'activity' && kind !== 'bounces')
    throw new CliError(`data import takes people, activity or bounces; got '${kind}'.`);
  const maxErrors =
    options.maxErrors === undefined
      ? DEFAULT_MAX_ERRORS
      : intOption('--max-errors', options.maxErrors, 0, 1_000_000);
  const db = openServiceDb(options.dataDir);
  // Ctrl+C stops after the current batch, so the store is left with its indexes built.
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  const shown = progress();
  let report: ImportReport;
  try {
    report = await IMPORTS[kind](db, file, {
      maxErrors,
      signal: abort.signal,
      ...(shown.onProgress ? { onProgress: shown.onProgress } : {}),
    });
  } catch (error) {
    if (error instanceof ImportFileError) throw new CliError(error.message);
    throw error;
  } finally {
    shown.done();
    process.off('SIGINT', stop);
    db.close();
  }
  if (options.json) process.stdout.write(`${JSON.stringify(reportJson(report))}\n`);
  else printReport(report);
  // A bounces file of soft bounces only is read in full: nothing to store is no failure.
  if (report.imported === 0 && (report.rows === 0 || report.rejected === report.rows))
    throw new CliError(
      report.rows === 0
        ? `Nothing imported: ${basename(file)} has a header but no data rows.`
        : `Nothing imported: all ${formatCount(report.rows)} rows of ${basename(file)} were rejected.`,
    );
}

export interface DemoCommandOptions {
  dataDir: string;
  people: string;
  seed?: string;
  csv?: string;
  json?: boolean;
}

export async function demoCommand(options: DemoCommandOptions): Promise<void> {
  const people = intOption('--people', options.people, 1, 10_000_000);
  const seed = options.seed === undefined ? 1 : intOption('--seed', options.seed, 0, 2 ** 31);
  if (options.csv !== undefined) {
    try {
      mkdirSync(options.csv, { recursive: true });
    } catch {
      throw new CliError(`Cannot create the folder ${options.csv}.`);
    }
    const files = await writeDemoCsv(options.csv, { people, seed });
    if (options.json) process.stdout.write(`${JSON.stringify({ people, files })}\n`);
    else
      process.stdout.write(
        `Wrote synthetic demo data for ${formatCount(people)} people: ${files.people} and ${files.activity}.\n` +
          'Import them with `mailsieve data import people` and `mailsieve data import activity`.\n',
      );
    return;
  }
  const db = openServiceDb(options.dataDir);
  try {
    const summary = await loadDemo(db, { people, seed });
    if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else
      process.stdout.write(
        `Loaded synthetic demo data (dataset mailsieve-demo): ${formatCount(summary.people)} people, ` +
          `${formatCount(summary.emails)} addresses at demo.example.com/.org/.net, ${formatCount(summary.events)} activity ` +
          `events from mailsieve-demo/… sources, in ${summary.seconds.toFixed(1)} s.\n`,
      );
  } finally {
    db.close();
  }
}

/** The service data folder's disk use: the database (with its WAL) and the stored lists' files. */
function diskUsage(dataDir: string): { database_bytes: number; list_bytes: number; lists: number } {
  let database = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      database += statSync(join(dataDir, `${SERVICE_DB_FILE}${suffix}`)).size;
    } catch {
      // not there
    }
  }
  const lists = listFilesUsage(dataDir);
  return { database_bytes: database, list_bytes: lists.bytes, lists: lists.lists };
}

export function statusCommand(options: { dataDir: string; json?: boolean }): void {
  const db = openServiceDb(options.dataDir);
  try {
    const status = referenceDataStatus(db);
    const disk = diskUsage(options.dataDir);
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ ...status, disk })}\n`);
      return;
    }
    const lines = [
      `People ${formatCount(status.people)}, addresses ${formatCount(status.emails)}, activity events ${formatCount(status.events)} from ${formatCount(status.sources)} sources.`,
    ];
    for (const dataset of status.datasets)
      lines.push(
        `  #${dataset.id}  ${dataset.kind.padEnd(8)} ${dataset.name}  ${formatCount(dataset.rows_imported)} rows` +
          `${dataset.rows_rejected ? ` (${formatCount(dataset.rows_rejected)} rejected)` : ''}  ${dataset.started_at}`,
      );
    const { bounces } = status;
    lines.push(
      `Bounces: ${plural(bounces.addresses, 'address', 'addresses')} with a hard bounce, from ${plural(bounces.rows, 'row')} read ` +
        `(${formatCount(bounces.hard)} hard; ignored: ${plural(bounces.soft, 'soft bounce')}, ${plural(bounces.other, 'row')} not a bounce; ${formatCount(bounces.rejected)} rejected).`,
    );
    for (const row of bounces.imports)
      lines.push(
        `  #${row.id}  bounces  ${row.name}  ${formatCount(row.rows_read)} rows: ${formatCount(row.hard)} hard, ${formatCount(row.soft)} soft, ` +
          `${formatCount(row.other)} other${row.rows_rejected ? `, ${formatCount(row.rows_rejected)} rejected` : ''}  ${row.started_at}`,
      );
    const { people, addresses } = status.waiting;
    if (people + addresses > 0)
      lines.push(
        `Answers to prepare: ${formatCount(people)} people, ${formatCount(addresses)} addresses (the service prepares them in the background; E6 answers meanwhile, more slowly).`,
      );
    lines.push(
      `Disk used in ${options.dataDir}: ${formatBytes(disk.database_bytes)} database, ${formatBytes(disk.list_bytes)} in ${formatCount(disk.lists)} stored list${disk.lists === 1 ? '' : 's'} (input and results, deleted ${DEFAULT_RETAIN_DAYS} days after a list completes unless serve --retain-days says otherwise).`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    db.close();
  }
}

export function clearCommand(what: string | undefined, options: { dataDir: string; yes?: boolean }): void {
  const kind = what ?? 'all';
  if (kind !== 'all' && kind !== 'bounces')
    throw new CliError(`data clear takes all (the default) or bounces; got '${kind}'.`);
  if (!options.yes)
    throw new CliError(
      kind === 'bounces'
        ? 'data clear bounces deletes every imported bounce: add --yes.'
        : 'data clear deletes every imported person, address, event and bounce: add --yes.',
    );
  const db = openServiceDb(options.dataDir);
  try {
    if (kind === 'bounces') clearBounces(db);
    else clearReferenceData(db);
    process.stdout.write(kind === 'bounces' ? 'Bounces cleared.\n' : 'Reference data cleared.\n');
  } finally {
    db.close();
  }
}

/** The `mailsieve data` command tree. */
export function registerDataCommands(program: Command, dataDirOption: () => Option): void {
  const data = program
    .command('data')
    .description('Reference data for identity matching, intelligence and activity metrics (E2–E6).');
  data
    .command('import')
    .description(
      "Import a CSV file: people (names, postal addresses, emails, attributes), activity events, or bounces (an email platform's bounce or suppression export).",
    )
    .argument('<kind>', 'people, activity or bounces')
    .argument('<file>', 'the CSV file (docs/identity.md lists its columns)')
    .option('--json', 'print the import report as one JSON object')
    .option('--max-errors <n>', 'rejected rows to list (all are counted)', '20')
    .addOption(dataDirOption())
    .action(importCommand);
  data
    .command('demo')
    .description(
      'Load synthetic demo people and activity (at demo.example.com/.org/.net), or write them as CSV.',
    )
    .requiredOption('--people <n>', 'how many people')
    .option('--seed <n>', 'the random seed: the same seed gives the same data', '1')
    .option('--csv <dir>', 'write people.csv and activity.csv to this folder instead of loading them')
    .option('--json', 'print the outcome as one JSON object')
    .addOption(dataDirOption())
    .action(demoCommand);
  data
    .command('status')
    .description('Show how many people, addresses, events and bounces are stored, and each import.')
    .option('--json', 'print the status as one JSON object')
    .addOption(dataDirOption())
    .action(statusCommand);
  data
    .command('clear')
    .description('Delete all reference data (people, addresses, activity, bounces), or the bounces only.')
    .argument('[what]', 'all (the default) or bounces')
    .option('--yes', 'confirm')
    .addOption(dataDirOption())
    .action(clearCommand);
}
