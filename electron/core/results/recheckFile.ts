// Re-check later: the rows of a results file that could not be checked — unknown (code 5), or checked offline
// only (code 10) — go through the service again at its current checks level, and a new version of the results
// is written: the same rows in the same order, those rows' verdicts updated, every other byte of every other
// field as it was. Used by `mailsieve recheck` and by the app's Re-check unknown rows.
//
// Pass 1 streams the results (papaparse) and gathers the distinct addresses of the rows to re-check into a
// one-column list; that list runs as any list does (runListJob); pass 2 streams the results again and writes
// the new version (temporary name, renamed when complete).
import {
  closeSync,
  createReadStream,
  createWriteStream,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Client } from '../../../shared/api/client.js';
import Papa from 'papaparse';
import type { EmailValidationReporting } from '../../../shared/api/list.js';
import { VALIDATION_COLUMNS } from '../../../shared/api/listServices.js';
import { DOMAIN_TYPES } from '../../../shared/api/verification.js';
import { ReportCounter } from '../../../service/lists/report.js';
import { FLAG_DOMAIN_SHIFT, FLAG_ROLE, STATUS_INDEX } from '../../../service/lists/rowFlags.js';
import { temporaryPathOf } from '../jobs/outputs.js';
import { runListJob, type JobEvent, type ListJobOptions } from '../jobs/runner.js';
import { formatCount } from '../../../shared/count.js';

/** Codes a re-check sends again: unknown (5), and syntax OK checked offline only (10). */
export const RECHECK_CODES: ReadonlySet<string> = new Set(['5', '10']);

export interface RecheckOptions {
  readonly client: ListJobOptions['client'];
  /** The results file (.csv or .txt, with the validation columns). */
  readonly resultsFile: string;
  /** Where the new version goes; default `<stem>-recheck<ext>` beside the results (or -recheck-2, …). */
  readonly outFile?: string;
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: JobEvent) => void;
  /** The steps around the list's run: its rows sent (`checking`), the new version being written (`writing`). */
  readonly onStage?: (stage: 'checking' | 'writing', facts: { rechecked: number; addresses: number }) => void;
}

export interface RecheckOutcome {
  readonly outFile: string;
  /** Rows of the results. */
  readonly rows: number;
  /** Rows sent again (codes 5 and 10). */
  readonly rechecked: number;
  /** Their new statuses (`Validation Status`), with `still unknown` for those still 5 or 10. */
  readonly after: Readonly<Record<string, number>>;
  /** "412 unknown → 380 valid, 25 invalid, 7 still unknown" */
  readonly summary: string;
  /** The list that ran the re-check. */
  readonly listId?: number;
  readonly checks?: string;
  /**
   * The email_validation reporting of the new version, counted from its rows as the service counts them
   * (service/lists/report.ts); absent when nothing was re-checked.
   */
  readonly reporting?: EmailValidationReporting;
}

export class RecheckError extends Error {}

interface Layout {
  delimiter: string;
  header: string[];
  emailIndex: number;
  statusIndex: number;
  codeIndex: number;
  /** The validation columns a re-check replaces (not Duplicate: that is of the whole list). */
  replaced: number[];
  domainTypeIndex: number;
  roleIndex: number;
}

/** Streams the rows of a delimited file (header first), synchronously per chunk, which paces the stream. */
function streamRows(
  file: string,
  delimiter: string,
  onRow: (row: string[], index: number) => void,
  signal?: AbortSignal,
): Promise<{ linebreak: string }> {
  return new Promise((resolve, reject) => {
    let index = 0;
    let failure: Error | undefined;
    let linebreak = '\n';
    const input = createReadStream(file, { encoding: 'utf8' });
    input.on('error', (error) => reject(new RecheckError(`Cannot read ${file}: ${error.message}`)));
    Papa.parse<string[]>(input, {
      delimiter,
      chunk(results, parser) {
        try {
          if (signal?.aborted) throw new RecheckError('The re-check was stopped.');
          if (results.meta.linebreak) linebreak = results.meta.linebreak;
          for (const row of results.data) {
            if (row.length === 1 && row[0] === '') continue;
            onRow(row, index++);
          }
        } catch (error) {
          failure = error instanceof Error ? error : new Error(String(error));
          parser.abort();
        }
      },
      complete: () => (failure === undefined ? resolve({ linebreak }) : reject(failure)),
      error: (error: Error) => reject(new RecheckError(`Cannot read ${file}: ${error.message}`)),
    });
  });
}

function layoutOf(file: string, header: readonly string[], delimiter: string): Layout {
  const at = (name: string) => header.indexOf(name);
  const statusIndex = at(VALIDATION_COLUMNS[0]);
  const codeIndex = at(VALIDATION_COLUMNS[1]);
  if (statusIndex < 0 || codeIndex < 0)
    throw new RecheckError(
      `${basename(file)} is not a results file of a validation: it has no '${VALIDATION_COLUMNS[1]}' column.`,
    );
  // The address: the column before the appended ones named like one, else the first.
  const before = header.slice(0, statusIndex).map((name) => name.trim().toLowerCase());
  let emailIndex = before.findIndex((name) => /^(e-?mail|email address|e-mail address|mail)$/.test(name));
  if (emailIndex < 0) emailIndex = before.findIndex((name) => name.includes('mail'));
  if (emailIndex < 0) emailIndex = 0;
  const replaced = VALIDATION_COLUMNS.filter((name) => name !== 'Duplicate')
    .map(at)
    .filter((i) => i >= 0);
  return {
    delimiter,
    header: [...header],
    emailIndex,
    statusIndex,
    codeIndex,
    replaced,
    domainTypeIndex: at(VALIDATION_COLUMNS[2]),
    roleIndex: at(VALIDATION_COLUMNS[3]),
  };
}

function defaultOutFile(resultsFile: string): string {
  const ext = extname(resultsFile);
  const stem = resultsFile.slice(0, resultsFile.length - ext.length).replace(/-recheck(-\d+)?$/, '');
  return `${stem}-recheck${ext}`;
}

/** Counts a results row into `counter` as the service counted it when it wrote the row (its packed flags). */
function countRow(counter: ReportCounter, layout: Layout, row: readonly string[]): void {
  const status =
    STATUS_INDEX.get((row[layout.statusIndex] ?? '').toLowerCase()) ?? STATUS_INDEX.get('unknown')!;
  const type = DOMAIN_TYPES.indexOf((row[layout.domainTypeIndex] ?? '') as (typeof DOMAIN_TYPES)[number]);
  const flags =
    status | ((type + 1) << FLAG_DOMAIN_SHIFT) | (row[layout.roleIndex] === 'true' ? FLAG_ROLE : 0);
  const code = Number.parseInt(row[layout.codeIndex] ?? '', 10);
  counter.add(Number.isNaN(code) ? 999 : code, flags);
}

/** "412 unknown → 380 valid, 25 invalid, 7 still unknown" */
export function describeRecheck(rechecked: number, after: Readonly<Record<string, number>>): string {
  if (rechecked === 0) return 'no unknown rows: nothing to re-check';
  const parts = Object.entries(after)
    .filter(([, count]) => count > 0)
    .sort(([a, x], [b, y]) => (a === 'still unknown' ? 1 : b === 'still unknown' ? -1 : y - x))
    .map(([status, count]) => `${formatCount(count)} ${status}`);
  return `${formatCount(rechecked)} unknown → ${parts.join(', ')}`;
}

/**
 * Re-checks the unknown rows of a results file through `client` (the embedded service at the current checks
 * level, or a provider's) and writes the new version. Never touches the original file.
 */
export async function recheckResults(options: RecheckOptions): Promise<RecheckOutcome> {
  const { resultsFile, signal } = options;
  const ext = extname(resultsFile).toLowerCase();
  if (ext === '.zip')
    throw new RecheckError(`${basename(resultsFile)} is zipped: unzip it and re-check the file inside.`);
  const delimiter = ext === '.csv' ? ',' : '\t';

  // Pass 1: the rows to re-check, by distinct address.
  let layout: Layout | undefined;
  const addresses = new Map<string, number>();
  let rows = 0;
  let rechecked = 0;
  const { linebreak } = await streamRows(
    resultsFile,
    delimiter,
    (row, index) => {
      if (index === 0) {
        layout = layoutOf(resultsFile, row, delimiter);
        return;
      }
      rows++;
      if (!RECHECK_CODES.has(row[layout!.codeIndex] ?? '')) return;
      const address = (row[layout!.emailIndex] ?? '').trim();
      if (address === '') return;
      rechecked++;
      if (!addresses.has(address)) addresses.set(address, addresses.size);
    },
    signal,
  );
  if (!layout) throw new RecheckError(`${basename(resultsFile)} is empty.`);
  const outFile = options.outFile ?? defaultOutFile(resultsFile);
  if (addresses.size === 0)
    return { outFile, rows, rechecked: 0, after: {}, summary: describeRecheck(0, {}) };

  options.onStage?.('checking', { rechecked, addresses: addresses.size });
  // The distinct addresses as a one-column list, run as any list.
  const work = mkdtempSync(join(dirname(outFile), '.recheck-'));
  try {
    const listFile = join(work, `${basename(resultsFile, extname(resultsFile))}-recheck.csv`);
    const fd = openSync(listFile, 'w', 0o600);
    try {
      let batch: string[] = ['email'];
      for (const address of addresses.keys()) {
        batch.push(Papa.unparse([[address]], { newline: '' }));
        if (batch.length >= 10_000) {
          writeSync(fd, `${batch.join('\n')}\n`);
          batch = [];
        }
      }
      if (batch.length > 0) writeSync(fd, `${batch.join('\n')}\n`);
    } finally {
      closeSync(fd);
    }
    const result = await runListJob({
      client: options.client,
      file: listFile,
      params: { delimiter: ',', header: true, email_column: 1, name: basename(listFile) },
      delimiter: ',',
      outDir: work,
      exports: [],
      // A throw-away folder: nothing to resume from, so the service named is only the client's address.
      service: options.client.baseUrl,
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
      ...(signal ? { signal } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    if (!result.ok) throw new RecheckError(`The re-check did not run: ${result.error.message}`);
    const outcome = result.value;
    if (outcome.stage !== 'results') throw new RecheckError('The re-check list has no results.');
    const list = outcome.list;

    // The new verdicts, by address index: the replaced columns' values, in `layout.replaced` order.
    const fresh: (string[] | undefined)[] = new Array<string[] | undefined>(addresses.size);
    let freshLayout: Layout | undefined;
    await streamRows(
      outcome.resultsPath,
      ',',
      (row, index) => {
        if (index === 0) {
          freshLayout = layoutOf(outcome.resultsPath, row, ',');
          return;
        }
        const at = addresses.get((row[0] ?? '').trim());
        if (at === undefined || !freshLayout) return;
        fresh[at] = layout!.replaced.map((column) => {
          const name = layout!.header[column];
          return row[freshLayout!.header.indexOf(name)] ?? '';
        });
      },
      signal,
    );

    // Pass 2: the new version, row by row in the same order, its rows counted for its reporting.
    options.onStage?.('writing', { rechecked, addresses: addresses.size });
    const after: Record<string, number> = {};
    const counter = new ReportCounter();
    const partFile = temporaryPathOf(outFile);
    const out = openSync(partFile, 'w', 0o600);
    let isOpen = true;
    try {
      const l = layout;
      let chunk: string[] = [];
      const unparse = (row: string[]) =>
        Papa.unparse([row], { delimiter: l.delimiter, newline: '', quotes: false });
      const flush = () => {
        if (chunk.length === 0) return;
        writeSync(out, chunk.join(''));
        chunk = [];
      };
      await streamRows(
        resultsFile,
        delimiter,
        (row, index) => {
          if (index > 0 && RECHECK_CODES.has(row[l.codeIndex] ?? '')) {
            const at = addresses.get((row[l.emailIndex] ?? '').trim());
            const values = at === undefined ? undefined : fresh[at];
            if (values) {
              l.replaced.forEach((column, k) => (row[column] = values[k] ?? ''));
              const code = row[l.codeIndex] ?? '';
              const status = RECHECK_CODES.has(code) ? 'still unknown' : (row[l.statusIndex] ?? '');
              after[status] = (after[status] ?? 0) + 1;
            } else if (at !== undefined) after['still unknown'] = (after['still unknown'] ?? 0) + 1;
          }
          if (index > 0) countRow(counter, l, row);
          chunk.push(unparse(row), linebreak);
          if (chunk.length >= 20_000) flush();
        },
        signal,
      );
      flush();
      isOpen = false;
      closeSync(out);
      renameSync(partFile, outFile);
    } catch (error) {
      if (isOpen) closeSync(out);
      rmSync(partFile, { force: true });
      throw error;
    }
    return {
      outFile,
      rows,
      rechecked,
      after,
      summary: describeRecheck(rechecked, after),
      listId: list.list_id,
      ...(list.checks ? { checks: list.checks } : {}),
      reporting: counter.reporting(),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Downloads the results of a list (E10) into `outDir`, named as the service names them, whole or not at all:
 * what `recheck LIST_ID` re-checks.
 */
export async function downloadListResults(
  client: Pick<Client, 'results'>,
  listId: number,
  outDir: string,
): Promise<{ ok: true; path: string } | { ok: false; message: string }> {
  const answer = await client.results(listId);
  if (!answer.ok) return { ok: false, message: `List ${listId}: ${answer.error.message}` };
  const name = answer.value.fileName ?? `list-${listId}-results.csv`;
  const path = join(outDir, name);
  const part = `${path}.${process.pid}.tmp`;
  try {
    await pipeline(Readable.fromWeb(answer.value.body as never), createWriteStream(part, { mode: 0o600 }));
    renameSync(part, path);
  } catch (error) {
    rmSync(part, { force: true });
    return { ok: false, message: `List ${listId}: the download failed (${(error as Error).message}).` };
  }
  return { ok: true, path };
}
