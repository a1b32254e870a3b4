// `mailsieve clean FILE`: a list file through the service (the embedded one, or a provider's with --base-url),
// its results downloaded next to it (or into --out) and the exports asked for written beside them. The list
// services beyond validation (--services, docs/list-services.md) add their columns; --report-only stops at
// their match reports, and `mailsieve purchase` (purchase.ts) buys the list later.
import { closeSync, existsSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { notAListFile, outputNameFor } from '../../shared/fileName.js';
import { isLoopbackUrl, LOCAL_POLL_MIN_INTERVAL_MS } from '../../shared/api/client.js';
import type { VerificationMode } from '../../shared/api/codes.js';
import { describeLeftOut } from '../../shared/exportChoices.js';
import { codeMeaning, statusName } from '../../shared/vocabulary.js';
import { CLI_OPTION_WORDS, formatCauseLine } from '../../shared/unknownCauses.js';
import { LIST_POLL_MIN_INTERVAL_MS } from '../../shared/api/limits.js';
import {
  listFileExtension,
  listProgress,
  REPORT_ALTERNATE_MATCH_KEYS,
  REPORT_DOMAIN_TYPE_KEYS,
  REPORT_EMAIL_MATCH_KEYS,
  REPORT_STATUS_KEYS,
  type EmailValidationReporting,
  type ListResource,
  type ListServiceKey,
  type SubmitListParams,
} from '../../shared/api/list.js';
import { LIST_SERVICE_TITLES, parseListServices } from '../../shared/api/listServices.js';
import {
  describeDelimiter,
  detectDelimiter,
  detectLayout,
  parseSampleRows,
  resolveLayout,
  type DetectedLayout,
} from '../../shared/columns.js';
import { serviceDataDir } from '../core/home.js';
import type { EmbeddedService } from '../core/embedded.js';
import { EXPORT_KINDS, isExportKind, type ExportKind, type ResultsSummary } from '../core/jobs/exports.js';
import { STATUS_ZIP } from '../../shared/exports.js';
import { runListJob, type JobEvent } from '../core/jobs/runner.js';
import { readHead } from '../core/files/source.js';
import { inspectZip, openZipEntry, ZipProblem } from '../../service/lists/read/zip.js';
import { clientFor } from './connect.js';
import { recordCleanJob } from './cleanHistory.js';
import { sha256FileAside } from '../core/files/hash.js';
import { keepEvidence } from '../core/results/evidence.js';
import {
  downloadExplanations,
  identityNote,
  onlineNotes,
  startChecksService,
  type ChecksCliOptions,
} from './checksOptions.js';
import {
  exportFormatOption,
  exportShapeOf,
  maxBounceRateOption,
  statusZipOption,
  writeCleanBudgetExports,
  writeCleanStatusZip,
  writeReportCsvs,
  xlsxAsCsv,
  type ExportCliOptions,
} from './exportOptions.js';
import { CliError, intOption } from './errors.js';
import { budgetRiskWords, budgetWords, isBudgetExportKind } from '../../shared/outcomes.js';
import { compareWithOption, type ChangesJson } from './compareWith.js';
import { temporaryPathOf } from '../core/jobs/outputs.js';
import { formatBytesOf } from '../../shared/bytes.js';
import { formatCount } from '../../shared/count.js';

export interface CleanOptions extends ChecksCliOptions, ExportCliOptions {
  /** Write what was checked and answered for each row beside the results (`<results>.explain.csv`). */
  explain?: boolean;
  /** False (`--no-history`): do not keep the run in the app home's job history. */
  history?: boolean;
  emailColumn?: string;
  header?: boolean;
  delimiter?: string;
  name?: string;
  out?: string;
  export?: string[];
  /** Comma-separated list services (E7's `services`); default validation. */
  services?: string;
  /** E7's `fields`. */
  fields?: string[];
  reportOnly?: boolean;
  baseUrl?: string;
  apiKey?: string;
  dataDir: string;
  json?: boolean;
  /** A job of the history (its id) whose results this run's are compared with (issue 37). */
  compareWith?: string;
}

/** Collects a repeatable option (`--export safe --export invalid`, or `--export safe,invalid`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  ];
}

const DELIMITER_WORDS: Record<string, string> = {
  tab: '\t',
  '\\t': '\t',
  comma: ',',
  semicolon: ';',
  pipe: '|',
  space: ' ',
};

function delimiterOption(raw: string): string {
  const value = DELIMITER_WORDS[raw.toLowerCase()] ?? raw;
  if ([...value].length !== 1 || value === '"' || value === '\n' || value === '\r')
    throw new CliError(
      `--delimiter takes one character (or tab, comma, semicolon, pipe, space); got '${raw}'.`,
    );
  return value;
}

/** `--export` kinds, each once, or a CliError naming the bad one (`also`: other words the command takes). */
export function exportKindsOption(raw: readonly string[] = [], also: readonly string[] = []): ExportKind[] {
  const kinds: ExportKind[] = [];
  for (const kind of raw) {
    if (!isExportKind(kind))
      throw new CliError(`--export takes ${[...EXPORT_KINDS, ...also].join(', ')}; got '${kind}'.`);
    if (!kinds.includes(kind)) kinds.push(kind);
  }
  return kinds;
}

/** `--services`: list services by their keys or the key service names, or `all`. */
function servicesOption(raw: string | undefined): ListServiceKey[] {
  const parsed = parseListServices(raw ?? 'validation');
  if (!parsed.ok)
    throw new CliError(
      `--services takes validation, intelligence, email_append, alternate_email or all (comma-separated); got '${parsed.unknown}'.`,
    );
  if (parsed.services.length === 0)
    throw new CliError(`--services names no list service; got '${raw ?? ''}'.`);
  return parsed.services;
}

const SAMPLE_BYTES = 1024 * 1024;

/** The start of a list file as text, and the name of the text file (the one inside a zip). */
async function readSample(file: string): Promise<{ text: string; textName: string; isWhole: boolean }> {
  const decode = (bytes: Uint8Array) => new TextDecoder('utf-8').decode(bytes);
  if (listFileExtension(file) !== '.zip') {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(SAMPLE_BYTES);
      const read = readSync(fd, buffer, 0, SAMPLE_BYTES, 0);
      return {
        text: decode(buffer.subarray(0, read)),
        textName: basename(file),
        isWhole: read < SAMPLE_BYTES,
      };
    } finally {
      closeSync(fd);
    }
  }
  // The one zip rule of the service and the app (service/lists/read/zip.ts), with its messages.
  try {
    const entry = await inspectZip(file);
    const { bytes, isWhole } = await readHead(await openZipEntry(file, entry.fileName), SAMPLE_BYTES);
    return { text: decode(bytes), textName: basename(entry.fileName), isWhole };
  } catch (error) {
    if (error instanceof ZipProblem) throw new CliError(`${file}: ${error.message}`);
    throw error;
  }
}

/** A detection message in the CLI's words (the shared module speaks of E7's parameters). */
function cliWords(reason: string): string {
  return reason
    .replaceAll('email_column', '--email-column')
    .replaceAll('submit with header=true', 'give --header')
    .replaceAll('submit with header=false', 'give --no-header')
    .replaceAll('header=true', '--header')
    .replaceAll('header is false', '--no-header was given');
}

/**
 * `detectLayout`, letting a file with a header have no email column when no service chosen reads one (email
 * append, intelligence by hashes or name and address): its `emailColumn` is then 0.
 */
function detectListLayout(
  sample: string,
  fileName: string,
  given: { delimiter?: string; header?: boolean; emailColumn?: number; isWhole: boolean },
  isEmailOptional: boolean,
): ReturnType<typeof detectLayout> {
  const detected = detectLayout(sample, fileName, given);
  if (detected.ok || !isEmailOptional) return detected;
  const delimiter =
    given.delimiter !== undefined
      ? { delimiter: given.delimiter, how: 'given' as const }
      : detectDelimiter(sample, fileName);
  const { rows } = parseSampleRows(sample, delimiter.delimiter, { maxRows: 1000, isWhole: given.isWhole });
  const resolved = resolveLayout(rows, {
    delimiter: delimiter.delimiter,
    ...(given.header !== undefined ? { header: given.header } : {}),
    ...(given.emailColumn !== undefined ? { emailColumn: given.emailColumn } : {}),
    emailOptional: true,
  });
  if (!resolved.ok) return detected;
  return {
    ok: true,
    layout: { ...resolved.layout, delimiter: delimiter.delimiter, delimiterHow: delimiter.how },
  };
}

function describeLayout(layout: DetectedLayout): string {
  const how = (given: boolean) => (given ? 'given' : 'detected');
  const column = layout.columnNames[layout.emailColumn - 1] ?? '';
  return [
    `delimiter ${describeDelimiter(layout.delimiter)} (${layout.delimiterHow === 'given' ? 'given' : layout.delimiterHow === 'content' ? 'detected' : 'from the file name'})`,
    `${layout.header ? 'a header row' : 'no header row'} (${how(layout.headerHow === 'given')})`,
    layout.emailColumn === 0
      ? 'no email column'
      : `email in column ${layout.emailColumn}${layout.header && column ? ` '${column}'` : ''} (${how(layout.emailColumnHow === 'given')})`,
  ].join(', ');
}

// ---------------------------------------------------------------------------------------------------------
// Progress

/** A progress bar on stderr when it is a terminal; otherwise a plain line at every quarter. */
export class Progress {
  private lastDraw = 0;
  private lastQuarter = -1;
  private isDrawn = false;
  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly isQuiet: boolean,
  ) {}

  update(
    label: string,
    done: number,
    total: number,
    describe: (done: number, total: number) => string,
  ): void {
    if (this.isQuiet) return;
    const share = total > 0 ? Math.min(1, done / total) : 0;
    if (this.stream.isTTY) {
      const now = Date.now();
      if (now - this.lastDraw < 80 && share < 1) return;
      this.lastDraw = now;
      const width = 28;
      const filled = Math.round(share * width);
      this.stream.write(
        `\r${label.padEnd(11)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%  ${describe(done, total)}\u001b[K`,
      );
      this.isDrawn = true;
      return;
    }
    const quarter = Math.floor(share * 4);
    if (quarter === this.lastQuarter) return;
    this.lastQuarter = quarter;
    this.stream.write(`${label}: ${Math.floor(share * 100)}% (${describe(done, total)})\n`);
  }

  /** A line of its own (the service cannot be reached, …). */
  note(line: string): void {
    if (this.isQuiet) return;
    this.end();
    this.stream.write(`${line}\n`);
  }

  /** Ends a bar (a new one starts on a fresh line); resets the quarters of the plain lines. */
  end(): void {
    if (this.isDrawn) this.stream.write('\n');
    this.isDrawn = false;
    this.lastQuarter = -1;
  }
}

const countOf = (done: number, total: number) => `${formatCount(done)} of ${formatCount(total)} records`;

/**
 * The job's events as progress on stderr: uploading, processing, downloading, and a line saying what the job
 * waits for (a busy service's refusal, a service that cannot be reached), once until it changes.
 */
export function showProgress(progress: Progress): (event: JobEvent) => void {
  let phase: JobEvent['phase'] | undefined;
  let waitingFor: string | undefined;
  return (event) => {
    if (phase !== event.phase && phase !== 'submitted') progress.end();
    phase = event.phase;
    if (event.phase === 'waiting') {
      if (event.message !== waitingFor) progress.note(event.message);
      waitingFor = event.message;
      return;
    }
    waitingFor = undefined;
    if (event.phase === 'uploading')
      progress.update('uploading', event.sentBytes, event.totalBytes, formatBytesOf);
    else if (event.phase === 'processing') {
      const { completed, total } = listProgress(event.list);
      progress.update('processing', completed, Math.max(total, event.list.records), countOf);
    } else if (event.phase === 'downloading' && event.totalBytes)
      progress.update('downloading', event.receivedBytes, event.totalBytes, formatBytesOf);
  };
}

/**
 * When each stage of a run ended, in milliseconds since the process started (`--json`'s `stages_ms`): the
 * upload began (`started`: the process's own start-up, the service's, the file's layout read) and ended
 * (`uploaded`), the list reached its results (`processed`: the first byte of the download), the results and
 * exports were written (`exported`), and the run was over (`done`: the history kept, the summary made). What
 * the list benchmark reports stage by stage.
 */
class RunStages {
  private readonly at: Record<string, number> = {};

  see(event: JobEvent): void {
    if (event.phase === 'uploading') this.markOnce('started');
    else if (event.phase === 'submitted') this.mark('uploaded');
    else if (event.phase === 'downloading') this.markOnce('processed');
  }

  mark(stage: string): void {
    this.at[stage] = Math.round(performance.now());
  }

  private markOnce(stage: string): void {
    if (this.at[stage] === undefined) this.mark(stage);
  }

  done(): Record<string, number> {
    this.mark('done');
    return { ...this.at };
  }
}

/** The embedded service may be polled often; a remote one no faster than every 5 s (pollList enforces it). */
export function pollIntervalFor(baseUrl: string, embedded: EmbeddedService | undefined): number {
  return isLoopbackUrl(baseUrl) && embedded ? LOCAL_POLL_MIN_INTERVAL_MS : LIST_POLL_MIN_INTERVAL_MS;
}

// ---------------------------------------------------------------------------------------------------------
// The breakdown

const DOMAIN_WORDS: Record<string, string> = {
  Disposable: 'disposable',
  'Free ISP': 'free ISP',
  'Paid ISP': 'paid ISP',
  Wireless: 'wireless',
  Education: 'education',
  Government: 'government',
  Business: 'business',
  'Non-profit': 'non-profit',
  Parked: 'parked',
  Privacy: 'privacy',
  Unknown: 'not known',
};

const n = (value: number | undefined) => formatCount(value ?? 0);

const percentOf = (count: number, total: number) =>
  total > 0 ? `${((100 * count) / total).toFixed(1)}%` : '';

const plural = (count: number, word: string) => `${n(count)} ${word}${count === 1 ? '' : 's'}`;

/** The match reports of the services beyond validation, in the spec's order; none for a validation list. */
export function formatServiceReports(list: ListResource): string[] {
  const lines: string[] = [];
  // `email append:  …`, the words after the title aligned as the validation breakdown's; a service that did
  // not complete says its status instead.
  const report = (
    key: ListServiceKey,
    service: { status: string; reporting?: unknown },
    words: () => string,
  ) => {
    const title = `${LIST_SERVICE_TITLES[key].toLowerCase()}:`.padEnd(14);
    lines.push(
      `  ${title} ${service.status === 'Completed' && service.reporting ? words() : service.status.toLowerCase()}`,
    );
  };
  // The first two keys (Individual, Household) always; the 2nd to 5th alternates when they matched.
  const counts = (reporting: Readonly<Record<string, unknown>> | undefined, keys: readonly string[]) =>
    keys
      .map((key, i) => {
        const count = reporting?.[key];
        return [key, typeof count === 'number' ? count : 0, i < 2] as const;
      })
      .filter(([, count, isAlways]) => isAlways || count > 0)
      .map(([key, count]) => `${key.toLowerCase()} ${n(count)}`)
      .join(', ');

  const intelligence = list.services.email_intelligence;
  if (intelligence) {
    const matched = Object.entries(intelligence.reporting ?? {});
    report('email_intelligence', intelligence, () =>
      matched.length > 0 ? `${plural(matched.length, 'field')} matched` : 'no field matched',
    );
    // As the spec's match report: field, records matched, percent.
    const total = intelligence.input_count || list.records;
    if (intelligence.status === 'Completed')
      for (const [field, { 'Total Count': count }] of matched)
        lines.push(
          `    ${field.padEnd(28)} ${plural(count, 'record').padStart(15)}  ${percentOf(count, total)}`,
        );
  }
  const append = list.services.email_append;
  if (append)
    report('email_append', append, () => counts(append.reporting?.email_match_type, REPORT_EMAIL_MATCH_KEYS));
  const alternate = list.services.alternate_email_append;
  if (alternate)
    report('alternate_email_append', alternate, () =>
      counts(alternate.reporting?.alternate_match_type, REPORT_ALTERNATE_MATCH_KEYS),
    );
  return lines;
}

/**
 * The list in words: its validation breakdown when validation ran (duplicates from the results, when they
 * were read), then the match reports of the other services.
 */
export function formatBreakdown(
  list: ListResource,
  summary: ResultsSummary | undefined,
  options: {
    isOffline: boolean;
    note?: string;
    checks?: string;
    /** The key's mode, whose status names are printed (shared/vocabulary.ts); the local service's is safe_to_send. */
    mode?: VerificationMode;
    /** The local service gives code 525 to disposable domains only. */
    isLocal?: boolean;
  },
): string {
  const lines: string[] = [];
  lines.push(
    `List ${list.list_id} (${list.name}): ${n(list.records)} records, status ${list.status}${options.note ? ` (${options.note})` : ''}`,
  );
  const validation = list.services.email_validation;
  const mode = options.mode ?? (options.isLocal ? 'safe_to_send' : 'email_validation');
  if (validation) {
    const reporting: EmailValidationReporting = validation.reporting ?? {};
    const statuses = REPORT_STATUS_KEYS.map((key) => [key, reporting.statuses?.[key] ?? 0] as const)
      .filter(([, count]) => count > 0)
      .map(([key, count]) => `${statusName(key.toLowerCase(), mode).toLowerCase()} ${n(count)}`);
    lines.push(`  statuses:      ${statuses.join(', ') || 'none'}`);
    const codes = Object.entries(reporting.status_codes ?? {}).sort(([a], [b]) => Number(a) - Number(b));
    if (codes.length > 0) {
      lines.push('  status codes:');
      for (const [code, count] of codes)
        lines.push(
          `    ${code.padStart(3)}  ${codeMeaning(Number(code), code === '525' && options.isLocal ? 'disposable' : null).padEnd(44)} ${n(count).padStart(11)}`,
        );
    }
    const causes = list.online?.unknown_causes ?? [];
    if (causes.length > 0) {
      lines.push('  unknown rows by cause:');
      for (const cause of causes) lines.push(`    ${formatCauseLine(cause, CLI_OPTION_WORDS)}`);
    }
    const domains = REPORT_DOMAIN_TYPE_KEYS.map((key) => [key, reporting.domain_type?.[key] ?? 0] as const)
      .filter(([, count]) => count > 0)
      .map(([key, count]) => `${DOMAIN_WORDS[key] ?? key} ${n(count)}`);
    if (domains.length > 0) lines.push(`  domain types:  ${domains.join(', ')}`);
    lines.push(`  role accounts: ${n(reporting.role_accounts)}`);
    if (summary)
      lines.push(
        `  duplicates:    ${n(summary.duplicates)} rows hold an address that appears more than once`,
      );
    if (options.checks) lines.push(`  checks:        ${options.checks}`);
    if (options.isOffline)
      lines.push('  checked offline: syntax only — good addresses read unknown (code 10)');
  }
  lines.push(...formatServiceReports(list));
  return lines.join('\n');
}

/** A word of a command line, quoted for a POSIX shell when it needs to be. */
export function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

// ---------------------------------------------------------------------------------------------------------
// The command

/** What `mailsieve purchase` needs to find the list again: the command to print after a report-only run. */
export function purchaseCommand(
  listId: number,
  where: {
    embedded: boolean;
    dataDir: string;
    baseUrl: string | undefined;
    isKeyGiven: boolean;
    outDir: string;
    exports: readonly ExportKind[];
  },
): string {
  const words = ['mailsieve', 'purchase', String(listId)];
  if (where.embedded && resolve(where.dataDir) !== resolve(serviceDataDir()))
    words.push('--data-dir', resolve(where.dataDir));
  if (where.baseUrl) words.push('--base-url', where.baseUrl);
  // The key is not echoed: it came from --api-key (said as a placeholder) or MAILSIEVE_API_KEY (read again).
  const command = words.map(shellWord);
  if (where.baseUrl && where.isKeyGiven) command.push('--api-key', '<key>');
  if (resolve(where.outDir) !== process.cwd()) command.push('--out', shellWord(where.outDir));
  for (const kind of where.exports) command.push('--export', kind);
  return command.join(' ');
}

export async function clean(file: string, options: CleanOptions): Promise<void> {
  const given = resolve(file);
  if (!existsSync(given) || !statSync(given).isFile()) throw new CliError(`No such file: ${file}`);
  const isXlsx = /\.xlsx$/i.test(given);
  if (options.sheet !== undefined && !isXlsx) throw new CliError('--sheet is for an .xlsx list.');
  exportFormatOption(options.exportFormat);
  const extension = isXlsx && !options.name ? '.csv' : listFileExtension(options.name ?? given);
  if (!extension)
    throw new CliError(
      /\.(xlsm|xls|ods|numbers)$/i.test(file) && !options.name
        ? notAListFile(file)
        : `${options.name ? `--name ${options.name}` : file} must end in .csv, .txt, .xlsx or .zip.`,
    );
  const { kinds: exportArgs, isZip } = statusZipOption(options.export);
  const exportKinds = exportKindsOption(exportArgs, [STATUS_ZIP]);
  // --max-bounce-rate: the safe and clean exports are planned from the results once downloaded (two passes),
  // the others written as the results arrive.
  const maxBounceRate = maxBounceRateOption(options.maxBounceRate, exportKinds);
  const budgetKinds: ExportKind[] =
    maxBounceRate === undefined ? [] : exportKinds.filter((kind) => isBudgetExportKind(kind));
  const services = servicesOption(options.services);
  const isReportOnly = options.reportOnly === true;
  if (isReportOnly && !services.some((service) => service !== 'email_validation'))
    throw new CliError(
      '--report-only is for intelligence, email_append and alternate_email: validation alone always runs to its results.',
    );
  if ((exportKinds.length > 0 || isZip) && !services.includes('email_validation'))
    throw new CliError(
      '--export needs validation in --services: the exports sort rows by their validation status.',
    );
  const fields = options.fields && options.fields.length > 0 ? options.fields : undefined;
  const emailColumn =
    options.emailColumn === undefined
      ? undefined
      : intOption('--email-column', options.emailColumn, 1, 100_000);
  const delimiter = options.delimiter === undefined ? undefined : delimiterOption(options.delimiter);
  const apiKey = options.apiKey ?? process.env.MAILSIEVE_API_KEY;
  if (options.baseUrl && !apiKey) throw new CliError('--base-url needs --api-key (or MAILSIEVE_API_KEY).');
  if (!options.baseUrl && options.apiKey) throw new CliError('--api-key goes with --base-url.');
  if (options.compareWith !== undefined && (isReportOnly || !services.includes('email_validation')))
    throw new CliError(
      '--compare-with compares the rows’ verdicts: it needs validation, without --report-only.',
    );
  // The job compared with is checked now, before anything is uploaded.
  const compareWith = compareWithOption(options.compareWith);
  const outDir = resolve(options.out ?? dirname(given));
  mkdirSync(outDir, { recursive: true });
  // An .xlsx list goes as the CSV of its sheet, converted here, beside the results.
  const path = isXlsx ? await xlsxAsCsv(given, outDir, options.sheet) : given;
  const info = (line: string) => (options.json ? process.stderr : process.stdout).write(`${line}\n`);
  // The history keeps the file's SHA-256: hashed on a thread of its own from now, while the service starts and
  // the list runs, instead of after the exports (~65 ms for 80 MB).
  const fileSha256 = options.history !== false ? sha256FileAside(path) : undefined;

  // What the file looks like, from its first rows: said, then given to the service explicitly. Only
  // validation and alternate email append read the email column; the others can do without one.
  const isEmailOptional = !services.some(
    (service) => service === 'email_validation' || service === 'alternate_email_append',
  );
  const sample = await readSample(path);
  const detected = detectListLayout(
    sample.text,
    sample.textName,
    {
      ...(delimiter !== undefined ? { delimiter } : {}),
      ...(options.header !== undefined ? { header: options.header } : {}),
      ...(emailColumn !== undefined ? { emailColumn } : {}),
      isWhole: sample.isWhole,
    },
    isEmailOptional,
  );
  if (!detected.ok) throw new CliError(`Cannot clean ${basename(path)}: ${cliWords(detected.reason)}`);
  const layout = detected.layout;
  info(`${basename(path)}: ${describeLayout(layout)}`);
  const params: SubmitListParams = {
    delimiter: layout.delimiter,
    header: layout.header,
    ...(layout.emailColumn > 0 ? { email_column: layout.emailColumn } : {}),
    // Shortened now, so that no output named after the list is too long for the file system at the end.
    name: outputNameFor(options.name ?? basename(path)),
    services,
    ...(fields ? { fields } : {}),
    ...(isReportOnly ? { report: true } : {}),
  };

  let embedded: EmbeddedService | undefined;
  try {
    // Automatic's preflight runs while the list uploads (the list waits for its decision before it runs).
    embedded = await startChecksService(options, info, true);
    const client = clientFor(embedded, options.baseUrl, apiKey);
    const progress = new Progress(process.stderr, false);
    // (A failed decision is the run's error: `await embedded?.decided` below throws it.)
    void embedded?.decided.then(
      (decision) => {
        progress.end();
        info(`Checks: ${decision.reason}`);
        const identity = identityNote(decision);
        if (identity) info(identity);
      },
      () => undefined,
    );
    const notes = onlineNotes((line) => {
      progress.end();
      process.stderr.write(`${line}\n`);
    });
    const showJob = showProgress(progress);
    const stages = new RunStages();
    const result = await runListJob({
      client,
      file: path,
      params,
      delimiter: layout.delimiter,
      outDir,
      exports: exportKinds.filter((kind) => !budgetKinds.includes(kind)),
      service: embedded ? `embedded:${resolve(options.dataDir)}` : client.baseUrl,
      ...(layout.emailColumn > 0 ? { exportShape: exportShapeOf(options, layout.emailColumn) } : {}),
      reportOnly: isReportOnly,
      pollIntervalMs: pollIntervalFor(client.baseUrl, embedded),
      onEvent: (event) => {
        stages.see(event);
        showJob(event);
        if (event.phase === 'processing') notes(event.list);
      },
      onResume: (listId) =>
        info(`Taking up list ${listId}, submitted by an earlier run that was interrupted.`),
    });
    progress.end();
    stages.mark('exported');
    await embedded?.decided;
    if (!result.ok) throw new CliError(result.error.message);
    const outcome = result.value;
    const isOffline = embedded !== undefined && embedded.checks.level === 'offline';
    const checksJson = embedded
      ? {
          level: embedded.checks.level,
          choice: embedded.checks.choice,
          reason: embedded.checks.reason,
          ...(embedded.checks.decidedInMs !== undefined
            ? { decided_in_ms: embedded.checks.decidedInMs }
            : {}),
        }
      : undefined;
    const explainPath =
      options.explain && outcome.stage !== 'awaiting-purchase'
        ? outcome.resultsPath.replace(/(\.[^./\\]+)?$/, '.explain.csv')
        : undefined;
    const hasExplain = explainPath
      ? await downloadExplanations(
          client.baseUrl,
          embedded ? embedded.apiKey : apiKey!,
          outcome.list.list_id,
          explainPath,
        )
      : false;
    // Kept in the app home's history (cleanHistory.ts), with the evidence of every verdict when the local
    // service checked the list online.
    const kept =
      options.history !== false && outcome.stage !== 'awaiting-purchase'
        ? await recordCleanJob({
            file: path,
            delimiter: layout.delimiter,
            header: layout.header,
            emailColumn: layout.emailColumn,
            columnCount: layout.columnCount,
            list: outcome.list,
            resultsPath: outcome.resultsPath,
            duplicates: outcome.summary?.duplicates ?? null,
            dataDir: embedded ? options.dataDir : undefined,
            baseUrl: client.baseUrl,
            checks: embedded
              ? { level: embedded.checks.level, reason: embedded.checks.reason }
              : { level: 'provider', reason: 'checked by the provider’s service' },
            fileSha256: fileSha256!,
          })
        : undefined;
    if (kept && embedded && !isOffline) {
      mkdirSync(dirname(kept.evidencePath), { recursive: true });
      await downloadExplanations(
        client.baseUrl,
        embedded.apiKey,
        outcome.list.list_id,
        kept.evidencePath,
        keepEvidence,
      );
    }
    const detectedJson = {
      delimiter: layout.delimiter,
      header: layout.header,
      email_column: layout.emailColumn > 0 ? layout.emailColumn : null,
      column_names: layout.columnNames,
    };

    if (outcome.stage === 'awaiting-purchase') {
      const command = purchaseCommand(outcome.list.list_id, {
        embedded: embedded !== undefined,
        dataDir: options.dataDir,
        baseUrl: options.baseUrl,
        isKeyGiven: options.apiKey !== undefined,
        outDir,
        exports: exportKinds,
      });
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ list: outcome.list, detected: detectedJson, awaiting_purchase: true, purchase_command: command, offline: isOffline })}\n`,
        );
        return;
      }
      info(
        formatBreakdown(outcome.list, undefined, {
          isOffline,
          isLocal: embedded !== undefined,
          note: 'match reports ready, awaiting purchase',
        }),
      );
      info(`Nothing was bought or downloaded. To buy list ${outcome.list.list_id}:`);
      info(`  ${command}`);
      info('  (add --fields to buy only some fields, --match-type I for Individual email matches only)');
      return;
    }

    // The zip of every status, from the results file (after the kinds, which runner.ts wrote).
    const zip =
      isZip && layout.emailColumn > 0
        ? await writeCleanStatusZip(
            { path: outcome.resultsPath, delimiter: layout.delimiter },
            { file: path, outDir, emailColumn: layout.emailColumn },
            options,
          )
        : undefined;
    const budgeted =
      maxBounceRate !== undefined && budgetKinds.length > 0 && outcome.summary && !outcome.exportsSkipped
        ? await writeCleanBudgetExports(
            { path: outcome.resultsPath, name: outcome.resultsName, delimiter: layout.delimiter },
            {
              file: path,
              outDir,
              shape: layout.emailColumn > 0 ? exportShapeOf(options, layout.emailColumn) : undefined,
            },
            budgetKinds,
            maxBounceRate,
          )
        : [];
    const exports = [
      ...outcome.exports,
      ...budgeted.map(({ kind, path, rows }) => ({ kind, path, rows })),
      ...(zip ? [zip] : []),
    ];
    const reports = options.reportCsv
      ? writeReportCsvs(outcome.list, outcome.summary?.duplicates ?? null, { file: path, outDir })
      : [];
    // --compare-with: this run's evidence is its explain file, downloaded as --explain does when the local
    // service checked online (to a temporary when --explain did not ask for it).
    let changes: { json: ChangesJson; lines: string[] } | undefined;
    if (compareWith) {
      let explain = explainPath && hasExplain ? explainPath : null;
      const scratch =
        explain === null && embedded && !isOffline
          ? temporaryPathOf(outcome.resultsPath.replace(/(\.[^./\\]+)?$/, '.explain.csv'))
          : undefined;
      try {
        if (
          scratch &&
          (await downloadExplanations(client.baseUrl, embedded!.apiKey, outcome.list.list_id, scratch))
        )
          explain = scratch;
        changes = await compareWith.run({
          path: outcome.resultsPath,
          delimiter: layout.delimiter,
          emailColumn: layout.emailColumn,
          explain,
          isOffline,
        });
      } finally {
        if (scratch) rmSync(scratch, { force: true });
      }
    }
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({
          list: outcome.list,
          detected: detectedJson,
          results: outcome.resultsPath,
          duplicates: outcome.summary?.duplicates ?? null,
          exports,
          ...(budgeted.length > 0
            ? { budget: Object.fromEntries(budgeted.map((written) => [written.kind, written.budget])) }
            : {}),
          ...(options.reportCsv ? { reports } : {}),
          ...(outcome.exportsSkipped ? { exports_skipped: outcome.exportsSkipped } : {}),
          offline: isOffline,
          checks: checksJson ?? { level: outcome.list.checks ?? null },
          ...(outcome.list.online ? { online: outcome.list.online } : {}),
          ...(explainPath ? { explain: hasExplain ? explainPath : null } : {}),
          ...(kept ? { job: kept.id } : {}),
          ...(changes ? { changes: changes.json } : {}),
          stages_ms: stages.done(),
        })}\n`,
      );
      return;
    }
    info(
      formatBreakdown(outcome.list, outcome.summary, {
        isOffline,
        isLocal: embedded !== undefined,
        ...(embedded ? { checks: embedded.checks.reason } : {}),
      }),
    );
    info(`Results: ${outcome.resultsPath}`);
    if (kept)
      info(
        `Kept in the history as job ${kept.id}: after the campaign, \`mailsieve outcomes import BOUNCES --job ${kept.id}\` measures it against the real bounces.`,
      );
    if (explainPath)
      info(
        hasExplain
          ? `Why, per row: ${explainPath}`
          : embedded === undefined
            ? 'Why, per row: none written — the provider gave no explanations (it has no explain endpoint), so each row’s Status Code says what it answered.'
            : 'Why, per row: none written — the list ran offline, so each row’s Status Code says why.',
      );
    for (const exported of exports) {
      const planned = budgeted.find((written) => written.path === exported.path);
      const leftOut =
        zip && exported === zip
          ? zip.leftOut
          : planned
            ? planned.leftOut
            : outcome.summary?.leftOut?.[exported.kind];
      info(
        `Export ${exported.kind.padEnd(7)} ${exported.path} (${n(exported.rows)} rows${leftOut ? `; ${describeLeftOut(leftOut)}` : ''})`,
      );
      if (planned)
        info(
          `  Bounce budget ${planned.budget.maxRatePercent}%: ${budgetWords(planned.budget)} ${budgetRiskWords(planned.budget.riskSource)}`,
        );
    }
    if (outcome.exportsSkipped) info(`Note: ${outcome.exportsSkipped}.`);
    for (const report of reports) info(`Report ${report.kind.padEnd(12)} ${report.path}`);
    for (const line of changes?.lines ?? []) info(line);
  } finally {
    await embedded?.close();
  }
}
