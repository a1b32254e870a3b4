// The evidence of every verdict of a job (issue 37): per row, the check that decided its code (syntax, a list,
// DNS, SMTP), the host and the reply that decided, the source address or proxy, and when. A local job with
// online checks keeps its list's explain CSV, whose columns say it (`Step,Host,Reply,Source,Checked At` after
// the Why), as `results/<job>/explain.csv.gz` (evidenceFile.ts: blocked gzip, about 22 bytes a row); jobs
// saved before kept it plain (`explain.csv`, older ones without the evidence columns: the host and reply are
// then read from the Why). A re-check keeps the explain file of the addresses it sent beside its version of the
// results (`explain-vN.csv.gz`); a re-checked row's evidence is the latest version's. A row checked offline,
// or a job with no explain file, has the evidence its code gives (the code alone decided it).
//
// Readers stream the file once in row order (scanEvidence) or fetch a few rows (readEvidence): the outcomes
// report, the changed rows of a new run and the Results screen all read the evidence here.
import { formatBytes } from '../../../shared/bytes.js';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describeStatusCode } from '../../../shared/api/codes.js';
import { offlineStepOf, type Evidence, type EvidenceStep } from '../../../shared/outcomes.js';
import type { HistoryDb, JobRecord } from '../history/db.js';
import { jobVersions } from '../history/jobVersions.js';
import { EvidenceWriter, leadingNumber, RowSplitter } from './evidenceFile.js';
import { ResultsProblem } from '../jobs/rowFramer.js';
import { scanExplain, scanResults, scanRowsOf } from './resultsFile.js';

/** The explain file of a job saved before the evidence was kept compact (plain CSV). */
export const EVIDENCE_FILE = 'explain.csv';
/** The evidence file a job keeps (blocked gzip: evidenceFile.ts). */
export const KEPT_EVIDENCE_FILE = 'explain.csv.gz';

/** Where a job's evidence is saved (deleted with the job's folder). */
export function keptEvidencePathOf(resultsDir: string, jobId: number): string {
  return join(resultsDir, String(jobId), KEPT_EVIDENCE_FILE);
}

/** Where a re-check's evidence of the addresses it sent is saved: beside that version's results. */
export function recheckExplainPath(versionResultsPath: string, version: number): string {
  return join(dirname(versionResultsPath), `explain-v${version}.csv.gz`);
}

/** The evidence file kept at `keptPath`, or the plain one an older version saved there, or undefined. */
export function foundEvidenceFile(keptPath: string): string | undefined {
  if (existsSync(keptPath)) return keptPath;
  const plain = keptPath.replace(/\.gz$/, '');
  return plain !== keptPath && existsSync(plain) ? plain : undefined;
}

/** Where a job's first run's evidence is: the kept file, else an older job's plain one (which may not exist). */
export function evidencePathOf(resultsDir: string, jobId: number): string {
  const kept = keptEvidencePathOf(resultsDir, jobId);
  return foundEvidenceFile(kept) ?? join(resultsDir, String(jobId), EVIDENCE_FILE);
}

/** The longest row an explain file may hold (a why is a line; a row this long is not one). */
const MAX_ROW_BYTES = 4 * 1024 * 1024;

/**
 * Keeps a list's explain CSV (as the service sends it) as a job's evidence file at `path`: whole or not at
 * all (a temporary name, then renamed). Answers its size in bytes. Rows are found without reading their
 * fields (RowSplitter) and blocks deflated on the thread pool: a 1,000,000-row list's in a few seconds.
 */
export async function keepEvidence(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  path: string,
): Promise<number> {
  const temporary = `${path}.${process.pid}.tmp`;
  const writer = new EvidenceWriter(temporary);
  let rowAt = -1;
  let isStart = true;
  /** Writes the whole rows of `text`; answers the bytes used (a row cut short waits for more). */
  const take = async (text: Buffer, isLast: boolean): Promise<number> => {
    const splitter = new RowSplitter(text);
    let at = 0;
    if (isStart && text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf) at = 3;
    isStart = false;
    while (at < text.length) {
      const lineEnd = splitter.rowEnd(at);
      if (lineEnd < 0 && !isLast) return at;
      const end = lineEnd < 0 ? text.length : lineEnd;
      // (A CRLF file's rows end before their \r.)
      const line = text.subarray(at, end > at && text[end - 1] === 0x0d ? end - 1 : end);
      at = end + 1;
      if (line.length === 0) continue;
      if (rowAt < 0) {
        const names = fieldsOf(line);
        rowAt = names.indexOf('Row');
        if (rowAt < 0) throw new ResultsProblem('The explanations have no Row column.');
        await writer.header(line);
        continue;
      }
      const number = rowAt === 0 ? leadingNumber(line, 0, line.length) : Number(fieldsOf(line)[rowAt] ?? -1);
      const waiting = writer.row(Number.isInteger(number) && number >= 0 ? number : 0, line);
      if (waiting) await waiting;
    }
    return text.length;
  };
  try {
    let rest: Buffer = Buffer.alloc(0);
    for await (const chunk of source) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      const text = rest.length === 0 ? bytes : Buffer.concat([rest, bytes]);
      rest = text.subarray(await take(text, false));
      if (rest.length > MAX_ROW_BYTES)
        throw new ResultsProblem(`The explanations have a row longer than ${formatBytes(MAX_ROW_BYTES)}.`);
    }
    await take(rest, true);
    if (rowAt < 0) throw new ResultsProblem('The explanations came empty: no header row.');
    await writer.finish();
    renameSync(temporary, path);
    return writer.size;
  } catch (error) {
    await writer.abandon().catch(() => undefined);
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** The fields of one row of CSV text. */
function fieldsOf(line: Buffer): string[] {
  let fields: string[] = [];
  scanRowsOf(line, ',', (row) => {
    fields = row.fields();
    return false;
  });
  return fields;
}

/** The evidence of a row decided without the network: its code says it all. */
export function offlineEvidence(code: number): Evidence {
  return {
    step: offlineStepOf(code),
    host: '',
    reply: '',
    source: '',
    checkedAt: '',
    why: `decided offline: ${describeStatusCode(code)}`,
  };
}

const HOST_REPLY = /^([A-Za-z0-9.-]+\.[A-Za-z]{2,}|\[[0-9a-fA-F:.]+\]): ((?:[2-5]\d\d)\b.*)$/;

/** Columns of an explain file, by name (older files have the first five only). */
interface Columns {
  row: number;
  email: number;
  code: number;
  checked: number;
  why: number;
  step: number;
  host: number;
  reply: number;
  source: number;
  at: number;
}

function columnsOf(names: readonly string[]): Columns {
  const at = (name: string) => names.indexOf(name);
  return {
    row: at('Row'),
    email: at('Email'),
    code: at('Status Code'),
    checked: at('Checked'),
    why: at('Why'),
    step: at('Step'),
    host: at('Host'),
    reply: at('Reply'),
    source: at('Source'),
    at: at('Checked At'),
  };
}

const STEPS: ReadonlySet<string> = new Set(['syntax', 'list', 'dns', 'smtp']);

/** The evidence of one explain row (its fields by column). */
function evidenceOf(field: (index: number) => string, columns: Columns): Evidence {
  const code = Number(field(columns.code));
  const checked = field(columns.checked).trim();
  const why = field(columns.why);
  const stepField = columns.step >= 0 ? field(columns.step).trim() : '';
  const step: EvidenceStep = STEPS.has(stepField)
    ? (stepField as EvidenceStep)
    : checked === 'smtp' || checked === 'dns'
      ? checked
      : offlineStepOf(code);
  let host = columns.host >= 0 ? field(columns.host).trim() : '';
  let reply = columns.reply >= 0 ? field(columns.reply).trim() : '';
  // Files written before the Host and Reply columns say them in the why: "mx1.example.com: 550 5.1.1 …".
  if (columns.host < 0 && step === 'smtp') {
    const match = HOST_REPLY.exec(why);
    if (match) {
      host = match[1];
      reply = match[2];
    }
  }
  return {
    step,
    host,
    reply,
    source: columns.source >= 0 ? field(columns.source).trim() : '',
    checkedAt: columns.at >= 0 ? field(columns.at).trim() : '',
    why,
  };
}

/** How a row's address is matched to a re-check's (the re-check sent the addresses as the results hold them). */
const addressKey = (address: string) => address.trim().toLowerCase();

/**
 * A job's evidence: its first run's explain file, by row, and its re-checks' explain files, by address (a
 * re-checked row's evidence is the latest version's). The results file gives each row's address when the first
 * run kept no explain file (it ran offline) but a re-check did.
 */
export interface JobEvidence {
  /** The first run's evidence file (it may not exist: the job ran offline). */
  readonly path: string;
  /** The re-checks' evidence files, newest first (only those that exist). */
  readonly rechecks: readonly string[];
  /** The job's results, to tell each row's address when the first run has no evidence file. */
  readonly results?: {
    readonly path: string;
    readonly name: string;
    readonly delimiter: string;
    readonly emailIndex: number;
  };
}

/** The evidence files of a job: its first run's and those of its re-checks up to the version it shows. */
export function jobEvidenceOf(db: HistoryDb, resultsDir: string, job: JobRecord): JobEvidence {
  const versions = jobVersions(db, job.id);
  const shown = versions.findIndex((version) => version.resultsPath === job.resultsPath);
  const rechecks: string[] = [];
  for (const version of versions.slice(1, shown < 0 ? versions.length : shown + 1).reverse()) {
    const found = foundEvidenceFile(recheckExplainPath(version.resultsPath, version.version));
    if (found) rechecks.push(found);
  }
  const emailIndex = job.mapping.roles.indexOf('email');
  return {
    path: evidencePathOf(resultsDir, job.id),
    rechecks,
    ...(job.resultsPath && job.resultsName && emailIndex >= 0
      ? {
          results: {
            path: job.resultsPath,
            name: job.resultsName,
            delimiter: job.mapping.delimiter,
            emailIndex,
          },
        }
      : {}),
  };
}

/**
 * The evidence of the addresses re-checked, by address, the newest re-check's where several asked the same
 * (`paths` newest first). Held in memory: a re-check sends only the rows that could not be checked.
 */
export async function readRecheckEvidence(paths: readonly string[]): Promise<Map<string, Evidence>> {
  const found = new Map<string, Evidence>();
  for (const path of paths) {
    let columns: Columns | undefined;
    await scanExplain(
      path,
      (names) => {
        columns = columnsOf(names);
      },
      (scanned) => {
        if (!columns || columns.email < 0) return;
        const key = addressKey(scanned.field(columns.email));
        if (key === '' || found.has(key)) return;
        found.set(
          key,
          evidenceOf((index) => (index < 0 ? '' : scanned.field(index)), columns),
        );
      },
    );
  }
  return found;
}

/** Streams one explain file: `visit(row, address, evidence)` for each row. */
async function scanFile(
  path: string,
  visit: (row: number, address: string, evidence: () => Evidence) => void,
): Promise<void> {
  let columns: Columns | undefined;
  await scanExplain(
    path,
    (names) => {
      columns = columnsOf(names);
    },
    (scanned) => {
      if (!columns) return;
      const row = Number(scanned.field(columns.row));
      if (!Number.isInteger(row) || row < 1) return;
      const found = columns;
      visit(row, scanned.field(found.email), () =>
        evidenceOf((index) => (index < 0 ? '' : scanned.field(index)), found),
      );
    },
  );
}

/** Streams a job's evidence: `visit` for each row `want` takes (every row without it). */
async function walk(
  source: string | JobEvidence,
  want: ((row: number) => boolean) | undefined,
  visit: (row: number, evidence: Evidence, address: string) => void,
): Promise<boolean> {
  const job: JobEvidence = typeof source === 'string' ? { path: source, rechecks: [] } : source;
  const later = job.rechecks.length > 0 ? await readRecheckEvidence(job.rechecks) : undefined;
  if (existsSync(job.path)) {
    await scanFile(job.path, (row, address, evidence) => {
      if (want && !want(row)) return;
      visit(row, (later && later.get(addressKey(address))) ?? evidence(), address);
    });
    return true;
  }
  if (!later || !job.results) return false;
  // The first run kept no evidence (it ran offline): the re-checked rows, found by their address.
  const { emailIndex } = job.results;
  await scanResults(
    job.results.path,
    job.results.name,
    job.results.delimiter,
    () => undefined,
    (row) => {
      if (want && !want(row.number)) return;
      const address = row.field(emailIndex);
      const evidence = later.get(addressKey(address));
      if (evidence) visit(row.number, evidence, address);
    },
  );
  return true;
}

/**
 * Streams a job's evidence in row order: `visit(row, evidence, address)` for each row an explain file holds, a
 * re-checked row with its latest re-check's evidence. `source` is a job's evidence (jobEvidenceOf) or one
 * explain file. Answers false (and visits nothing) when there is no evidence file: the rows were decided
 * offline.
 */
export function scanEvidence(
  source: string | JobEvidence,
  visit: (row: number, evidence: Evidence, address: string) => void,
): Promise<boolean> {
  return walk(source, undefined, visit);
}

/** The evidence of some rows (a report's missed rows): one pass, keeping only those rows. */
export async function readEvidence(
  source: string | JobEvidence,
  rows: Iterable<number>,
): Promise<Map<number, Evidence>> {
  const wanted = new Set(rows);
  const found = new Map<number, Evidence>();
  if (wanted.size === 0) return found;
  await walk(
    source,
    (row) => wanted.has(row),
    (row, evidence) => found.set(row, evidence),
  );
  return found;
}

/**
 * The mail host that answered each row's SMTP check ('' for none), for a report's provider families, with the
 * row's whole evidence on demand (`evidence()`, for the few rows a report lists): one pass that decodes a row's
 * Step and Host (its Checked and Why in files from before those columns). A re-checked row's are its latest
 * re-check's.
 */
export async function scanMailHosts(
  source: string | JobEvidence,
  visit: (row: number, host: string, evidence: () => Evidence) => void,
): Promise<void> {
  const job: JobEvidence = typeof source === 'string' ? { path: source, rechecks: [] } : source;
  const later = job.rechecks.length > 0 ? await readRecheckEvidence(job.rechecks) : undefined;
  const hostOf = (evidence: Evidence) => (evidence.step === 'smtp' ? evidence.host : '');
  if (!existsSync(job.path)) {
    if (later) await walk(job, undefined, (row, evidence) => visit(row, hostOf(evidence), () => evidence));
    return;
  }
  let columns: Columns | undefined;
  await scanExplain(
    job.path,
    (names) => {
      columns = columnsOf(names);
    },
    (scanned) => {
      const c = columns;
      if (!c) return;
      const row = Number(scanned.field(c.row));
      if (!Number.isInteger(row) || row < 1) return;
      const again = later?.get(addressKey(scanned.field(c.email)));
      if (again) return visit(row, hostOf(again), () => again);
      const evidence = () => evidenceOf((index) => (index < 0 ? '' : scanned.field(index)), c);
      if (c.host >= 0) visit(row, scanned.field(c.step) === 'smtp' ? scanned.field(c.host) : '', evidence);
      else visit(row, scanned.field(c.checked) === 'smtp' ? hostOf(evidence()) : '', evidence);
    },
  );
}
