// `mailsieve clean FILE`: a list file through the service (the embedded one, or a provider's with --base-url),
// its results downloaded next to it (or into --out) and the exports asked for written beside them.
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import yauzl from 'yauzl';
import { isLoopbackUrl, LOCAL_POLL_MIN_INTERVAL_MS } from '../../shared/api/client.js';
import { describeStatusCode } from '../../shared/api/codes.js';
import { LIST_POLL_MIN_INTERVAL_MS } from '../../shared/api/limits.js';
import {
  listFileExtension,
  listProgress,
  REPORT_DOMAIN_TYPE_KEYS,
  REPORT_STATUS_KEYS,
  type EmailValidationReporting,
  type ListResource,
  type SubmitListParams,
} from '../../shared/api/list.js';
import { describeDelimiter, detectLayout, type DetectedLayout } from '../../shared/columns.js';
import { startEmbeddedService, type EmbeddedService } from '../core/embedded.js';
import { EXPORT_KINDS, isExportKind, type ExportKind } from '../core/jobs/exports.js';
import { runListJob, type JobEvent, type JobOutcome } from '../core/jobs/runner.js';
import { clientFor } from './connect.js';
import { CliError, intOption } from './errors.js';

export interface CleanOptions {
  emailColumn?: string;
  header?: boolean;
  delimiter?: string;
  name?: string;
  out?: string;
  export?: string[];
  baseUrl?: string;
  apiKey?: string;
  dataDir: string;
  json?: boolean;
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
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(file, { autoClose: false });
  } catch {
    throw new CliError(`${file} is not a readable zip archive.`);
  }
  try {
    const entries: yauzl.Entry[] = [];
    await new Promise<void>((done, fail) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/') && !entry.fileName.startsWith('__MACOSX/')) entries.push(entry);
        zip.readEntry();
      });
      zip.once('end', () => done());
      zip.once('error', fail);
      zip.readEntry();
    });
    const entry = entries[0];
    if (entries.length !== 1 || !entry || !/\.(txt|csv)$/i.test(entry.fileName))
      throw new CliError(`${file} must hold exactly one .txt or .csv file.`);
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= SAMPLE_BYTES) break;
    }
    stream.destroy();
    const bytes = Buffer.concat(chunks).subarray(0, SAMPLE_BYTES);
    return { text: decode(bytes), textName: basename(entry.fileName), isWhole: size < SAMPLE_BYTES };
  } finally {
    zip.close();
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

function describeLayout(layout: DetectedLayout): string {
  const how = (given: boolean) => (given ? 'given' : 'detected');
  const column = layout.columnNames[layout.emailColumn - 1] ?? '';
  return [
    `delimiter ${describeDelimiter(layout.delimiter)} (${layout.delimiterHow === 'given' ? 'given' : layout.delimiterHow === 'content' ? 'detected' : 'from the file name'})`,
    `${layout.header ? 'a header row' : 'no header row'} (${how(layout.headerHow === 'given')})`,
    `email in column ${layout.emailColumn}${layout.header && column ? ` '${column}'` : ''} (${how(layout.emailColumnHow === 'given')})`,
  ].join(', ');
}

// ---------------------------------------------------------------------------------------------------------
// Progress

const MB = 1024 * 1024;

/** A progress bar on stderr when it is a terminal; otherwise a plain line at every quarter. */
class Progress {
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

  /** Ends a bar (a new one starts on a fresh line); resets the quarters of the plain lines. */
  end(): void {
    if (this.isDrawn) this.stream.write('\n');
    this.isDrawn = false;
    this.lastQuarter = -1;
  }
}

const bytesOf = (done: number, total: number) => `${(done / MB).toFixed(1)} of ${(total / MB).toFixed(1)} MB`;
const countOf = (done: number, total: number) =>
  `${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} records`;

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

const n = (value: number | undefined) => (value ?? 0).toLocaleString('en-US');

export function formatBreakdown(
  list: ListResource,
  outcome: Pick<JobOutcome, 'summary'>,
  options: { isOffline: boolean },
): string {
  const reporting: EmailValidationReporting = list.services.email_validation?.reporting ?? {};
  const lines: string[] = [];
  lines.push(`List ${list.list_id} (${list.name}): ${n(list.records)} records, status ${list.status}`);
  const statuses = REPORT_STATUS_KEYS.map((key) => [key, reporting.statuses?.[key] ?? 0] as const)
    .filter(([, count]) => count > 0)
    .map(([key, count]) => `${key.toLowerCase()} ${n(count)}`);
  lines.push(`  statuses:      ${statuses.join(', ') || 'none'}`);
  const codes = Object.entries(reporting.status_codes ?? {}).sort(([a], [b]) => Number(a) - Number(b));
  if (codes.length > 0) {
    lines.push('  status codes:');
    for (const [code, count] of codes)
      lines.push(
        `    ${code.padStart(3)}  ${describeStatusCode(Number(code)).padEnd(44)} ${n(count).padStart(11)}`,
      );
  }
  const domains = REPORT_DOMAIN_TYPE_KEYS.map((key) => [key, reporting.domain_type?.[key] ?? 0] as const)
    .filter(([, count]) => count > 0)
    .map(([key, count]) => `${DOMAIN_WORDS[key] ?? key} ${n(count)}`);
  if (domains.length > 0) lines.push(`  domain types:  ${domains.join(', ')}`);
  lines.push(`  role accounts: ${n(reporting.role_accounts)}`);
  lines.push(
    `  duplicates:    ${n(outcome.summary.duplicates)} rows hold an address that appears more than once`,
  );
  if (options.isOffline) lines.push('  checked offline: syntax only — good addresses read unknown (code 10)');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// The command

export async function clean(file: string, options: CleanOptions): Promise<void> {
  const path = resolve(file);
  if (!existsSync(path) || !statSync(path).isFile()) throw new CliError(`No such file: ${file}`);
  const extension = listFileExtension(options.name ?? path);
  if (!extension)
    throw new CliError(`${options.name ? `--name ${options.name}` : file} must end in .csv, .txt or .zip.`);
  const exportKinds: ExportKind[] = [];
  for (const kind of options.export ?? []) {
    if (!isExportKind(kind)) throw new CliError(`--export takes ${EXPORT_KINDS.join(', ')}; got '${kind}'.`);
    if (!exportKinds.includes(kind)) exportKinds.push(kind);
  }
  const emailColumn =
    options.emailColumn === undefined
      ? undefined
      : intOption('--email-column', options.emailColumn, 1, 100_000);
  const delimiter = options.delimiter === undefined ? undefined : delimiterOption(options.delimiter);
  const apiKey = options.apiKey ?? process.env.MAILSIEVE_API_KEY;
  if (options.baseUrl && !apiKey) throw new CliError('--base-url needs --api-key (or MAILSIEVE_API_KEY).');
  if (!options.baseUrl && options.apiKey) throw new CliError('--api-key goes with --base-url.');
  const outDir = resolve(options.out ?? dirname(path));
  mkdirSync(outDir, { recursive: true });
  const info = (line: string) => (options.json ? process.stderr : process.stdout).write(`${line}\n`);

  // What the file looks like, from its first rows: said, then given to the service explicitly.
  const sample = await readSample(path);
  const detected = detectLayout(sample.text, sample.textName, {
    ...(delimiter !== undefined ? { delimiter } : {}),
    ...(options.header !== undefined ? { header: options.header } : {}),
    ...(emailColumn !== undefined ? { emailColumn } : {}),
    isWhole: sample.isWhole,
  });
  if (!detected.ok) throw new CliError(`Cannot clean ${basename(path)}: ${cliWords(detected.reason)}`);
  const layout = detected.layout;
  info(`${basename(path)}: ${describeLayout(layout)}`);
  const params: SubmitListParams = {
    delimiter: layout.delimiter,
    header: layout.header,
    email_column: layout.emailColumn,
    ...(options.name ? { name: options.name } : {}),
  };

  let embedded: EmbeddedService | undefined;
  try {
    if (!options.baseUrl) embedded = await startEmbeddedService(options.dataDir);
    const client = clientFor(embedded, options.baseUrl, apiKey);
    const isLocal = isLoopbackUrl(client.baseUrl);
    const progress = new Progress(process.stderr, false);
    let phase: JobEvent['phase'] | undefined;
    const onEvent = (event: JobEvent) => {
      if (phase !== event.phase && phase !== 'submitted') progress.end();
      phase = event.phase;
      if (event.phase === 'uploading')
        progress.update('uploading', event.sentBytes, event.totalBytes, bytesOf);
      else if (event.phase === 'processing') {
        const { completed, total } = listProgress(event.list);
        progress.update('processing', completed, Math.max(total, event.list.records), countOf);
      } else if (event.phase === 'downloading' && event.totalBytes)
        progress.update('downloading', event.receivedBytes, event.totalBytes, bytesOf);
    };
    const result = await runListJob({
      client,
      file: path,
      params,
      delimiter: layout.delimiter,
      outDir,
      exports: exportKinds,
      // The embedded service may be polled often; a remote one no faster than every 5 s (pollList enforces it).
      pollIntervalMs: isLocal && embedded ? LOCAL_POLL_MIN_INTERVAL_MS : LIST_POLL_MIN_INTERVAL_MS,
      onEvent,
    });
    progress.end();
    if (!result.ok) throw new CliError(result.error.message);
    const outcome = result.value;
    if (options.json) {
      process.stdout.write(
        `${JSON.stringify({
          list: outcome.list,
          detected: {
            delimiter: layout.delimiter,
            header: layout.header,
            email_column: layout.emailColumn,
            column_names: layout.columnNames,
          },
          results: outcome.resultsPath,
          duplicates: outcome.summary.duplicates,
          exports: outcome.exports,
          offline: embedded !== undefined,
        })}\n`,
      );
      return;
    }
    info(formatBreakdown(outcome.list, outcome, { isOffline: embedded !== undefined }));
    info(`Results: ${outcome.resultsPath}`);
    for (const exported of outcome.exports)
      info(`Export ${exported.kind.padEnd(7)} ${exported.path} (${n(exported.rows)} rows)`);
  } finally {
    await embedded?.close();
  }
}
