// What changed since the last run of the same addresses (issue 37, point 4): a job's results against the
// latest earlier run holding the same addresses, address by address, with both verdicts and both pieces of
// evidence ("was 250 from mx1 on 12 Nov 2026, now 550 5.1.1 from mx1 on 20 Nov 2026"). One engine for the app
// (Results → "Changes since the last run", its export) and the CLI (`mailsieve clean --compare-with JOB`).
//
// Matching: two rows are the same address when their canonical address (canonicalEmail: the normalisation of
// the duplicates and the known bouncers) is the same, taken from `Valid Email` when the row has one, else from
// the list's email column. A list's duplicate rows of one address carry one verdict: the address is compared
// once, at its first row in each run. An address changed when its Validation Status or its Validation Code did.
//
// Memory is bounded by what must be kept, not by the files: the earlier run's addresses as 64-bit hashes with
// their row, status and code (about 40 bytes an address), then per changed address a few numbers. Each file is
// streamed: the two results files once each, each explain file once; the changed rows' evidence is spilled to
// temporary files as it is found and joined at the end.
//
// The earlier run (decided here, docs/desktop.md says it): a job whose results were re-checked is compared
// with its own previous version (a re-check is a run, and it is later than any job before this one); else with
// the latest earlier job (a lower id) that completed with validation and still has its results, of the same
// file — the same file_sha256, else (no such job) the same file name — and the same part of a split file.
//
// A comparison of a 1,000,000-row job takes seconds: it is computed once per (job, earlier run) and kept beside
// the job's results (`changes.json`, `changes.jsonl`, `changes.index`: deleted with the job's folder); pages
// and the export read the kept rows. It is computed again when either side's results or evidence change.
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ExportInfo } from '../../../shared/desktop/contract.js';
import { outputNameFor } from '../../../shared/fileName.js';
import { describeStatusCode } from '../../../shared/api/codes.js';
import {
  evidenceWords,
  type ChangedRow,
  type Evidence,
  type EvidenceStep,
  type JobChanges,
} from '../../../shared/outcomes.js';
import { canonicalEmail } from '../../../service/identity/normalise.js';
import { hashInto } from '../../../service/lists/read/dupTable.js';
import { quoteField } from '../../../service/lists/read/scan.js';
import { getJob as getJobOf, insertExport, type HistoryDb, type JobRecord } from '../history/db.js';
import { jobChecksOf, jobVersions, type JobVersion } from '../history/jobVersions.js';
import { exportFileName } from '../jobs/exports.js';
import { temporaryPathOf } from '../jobs/outputs.js';
import { evidencePathOf, offlineEvidence, scanEvidence } from '../results/evidence.js';
import { recheckExplainPath } from '../results/jobView.js';
import { scanResultRows } from '../results/resultsFile.js';
import { ReplyFailure, type CoreContext } from '../channels/context.js';

/** A comparison that cannot run, in words (a results file without verdicts, a job without results). */
export class CompareError extends Error {}

// ---------------------------------------------------------------------------------------------------------
// The two sides

/** Where the evidence of a results file's rows is. */
export interface EvidenceSources {
  /** An explain file by row number (a job's explain.csv, the CLI's `<results>.explain.csv`); null when none. */
  readonly byRow: string | null;
  /** Re-checks' explain files by address, newest first: a re-checked address reads its latest answer. */
  readonly byAddress: readonly string[];
  /** Rows no file explains were decided offline (their code says why); else no evidence is kept for them. */
  readonly isOfflineFallback: boolean;
}

/** One side of a comparison: a results file, how it is read, and its evidence. */
export interface ResultSet {
  /** Who the results are, in words ("job 12"), for messages. */
  readonly label: string;
  readonly path: string;
  /** The file's name (its format: a zipped results file). */
  readonly name: string;
  readonly delimiter: string;
  /** 0-based column of the list's addresses. */
  readonly emailIndex: number;
  readonly evidence: EvidenceSources;
}

const STATUS_COLUMN = 'Validation Status';
const CODE_COLUMN = 'Validation Code';
const VALID_EMAIL_COLUMN = 'Valid Email';

/** The level the first results of a job were checked at (older local jobs ran offline). */
function firstLevelOf(db: HistoryDb, job: JobRecord, versions: readonly JobVersion[]): string {
  return (
    versions[0]?.checks.level ??
    jobChecksOf(db, job.id)?.level ??
    (job.connectionKind === 'embedded' ? 'offline' : 'provider')
  );
}

/**
 * A job's results as a side of a comparison: its current results, or version `version` of them (a re-check
 * writes a new version beside the first: results/recheckJob.ts), with the evidence of that version — the
 * re-checks' explain files up to it by address, then the first run's explain.csv by row.
 */
export function jobResultSet(db: HistoryDb, resultsDir: string, job: JobRecord, version?: number): ResultSet {
  const versions = jobVersions(db, job.id);
  const at =
    version === undefined
      ? versions.findIndex((v) => v.resultsPath === job.resultsPath)
      : versions.findIndex((v) => v.version === version);
  const chosen = at >= 0 ? versions[at] : undefined;
  const path = chosen?.resultsPath ?? job.resultsPath;
  const name = chosen?.resultsName ?? job.resultsName;
  if (!path || !name) throw new CompareError(`Job ${job.id} has no results: it did not complete.`);
  const byAddress: string[] = [];
  if (at > 0)
    for (const v of versions.slice(1, at + 1).reverse()) {
      const explain = recheckExplainPath(v.resultsPath, v.version);
      if (existsSync(explain)) byAddress.push(explain);
    }
  const byRow = evidencePathOf(resultsDir, job.id);
  const hasByRow = existsSync(byRow);
  return {
    label: chosen && versions.length > 1 ? `version ${chosen.version} of job ${job.id}` : `job ${job.id}`,
    path,
    name,
    delimiter: job.mapping.delimiter,
    emailIndex: job.mapping.roles.indexOf('email'),
    evidence: {
      byRow: hasByRow ? byRow : null,
      byAddress,
      isOfflineFallback: hasByRow || firstLevelOf(db, job, versions) === 'offline',
    },
  };
}

/** Why a job's results cannot be compared, in words; undefined when they can. */
export function notComparable(job: JobRecord): string | undefined {
  if (job.status !== 'completed') return `Job ${job.id} did not complete: it has no results to compare.`;
  if (!job.options.services.includes('email_validation'))
    return `Job ${job.id} ran no validation: its rows have no status to compare.`;
  if (!job.mapping.roles.includes('email')) return `Job ${job.id} has no email column to match rows by.`;
  if (!job.resultsPath || !existsSync(job.resultsPath))
    return `The results file of job ${job.id} is no longer on disk.`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Small stores: a hash index of 64-bit keys, a synchronous buffered writer

/** An open-addressing index from 64-bit hashes (hashInto) to numbers ≥ 0; 12 bytes a slot, load ≤ 1/2. */
class HashIndex64 {
  private keys = new Uint32Array(2 * 1024);
  private values = new Int32Array(1024).fill(-1);
  private mask = 1023;
  private size = 0;

  get(h1: number, h2: number): number {
    const { keys, values, mask } = this;
    let i = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
    for (;;) {
      const value = values[i];
      if (value < 0) return -1;
      if (keys[2 * i] === h1 && keys[2 * i + 1] === h2) return value;
      i = (i + 1) & mask;
    }
  }

  /** Sets the value of a key not in the index. */
  add(h1: number, h2: number, value: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const { keys, values, mask } = this;
    let i = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
    while (values[i] >= 0) i = (i + 1) & mask;
    keys[2 * i] = h1;
    keys[2 * i + 1] = h2;
    values[i] = value;
    this.size++;
  }

  private grow(): void {
    const { keys, values } = this;
    const capacity = values.length * 2;
    this.keys = new Uint32Array(capacity * 2);
    this.values = new Int32Array(capacity).fill(-1);
    this.mask = capacity - 1;
    this.size = 0;
    for (let i = 0; i < values.length; i++)
      if (values[i] >= 0) this.add(keys[2 * i], keys[2 * i + 1], values[i]);
  }
}

/** A growing Int32Array. */
class Int32List {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
}

/**
 * A file written synchronously through a buffer, knowing where each piece starts: the scans' visits are
 * synchronous, and what they find is written as they find it.
 */
class SyncWriter {
  private readonly fd: number;
  private readonly buf = Buffer.allocUnsafe(1024 * 1024);
  private at = 0;
  private isClosed = false;
  /** Bytes written so far (the offset of the next piece). */
  position = 0;
  constructor(readonly path: string) {
    this.fd = openSync(path, 'w', 0o600);
  }
  /** Appends text as UTF-8; answers its length in bytes. */
  write(text: string): number {
    // A UTF-16 code unit takes at most three bytes of UTF-8.
    if (this.at + text.length * 3 > this.buf.length) this.flush();
    let bytes: number;
    if (text.length * 3 > this.buf.length) {
      const encoded = Buffer.from(text, 'utf8');
      bytes = encoded.length;
      let done = 0;
      while (done < bytes) done += writeSync(this.fd, encoded, done, bytes - done);
    } else {
      bytes = this.buf.write(text, this.at, 'utf8');
      this.at += bytes;
    }
    this.position += bytes;
    return bytes;
  }
  flush(): void {
    let done = 0;
    while (done < this.at) done += writeSync(this.fd, this.buf, done, this.at - done);
    this.at = 0;
  }
  /** Flushes and closes (once: a second call does nothing). */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }
}

let scratch = Buffer.allocUnsafe(64 * 1024);

/** Reads `length` bytes at `offset` of an open file as text. */
function readAt(fd: number, offset: number, length: number): string {
  if (length > scratch.length) scratch = Buffer.allocUnsafe(length);
  const buf = scratch;
  let done = 0;
  while (done < length) {
    const read = readSync(fd, buf, done, length - done, offset + done);
    if (read === 0) break;
    done += read;
  }
  return buf.toString('utf8', 0, done);
}

// ---------------------------------------------------------------------------------------------------------
// The comparison

/** What a comparison found (its changed rows are in its rows file). */
export interface Comparison {
  /** Addresses found in both runs. */
  readonly compared: number;
  /** Addresses whose status or code changed (one row each, at the later run's first row of the address). */
  readonly changed: number;
  readonly byChange: JobChanges['byChange'];
}

/** A piece of evidence as the rows file keeps it: its fields in order, 0 for "decided offline", null for none. */
type KeptEvidence = readonly [EvidenceStep, string, string, string, string, string] | 0 | null;
/** A changed row as the rows file keeps it, one JSON array a line. */
type KeptRow = readonly [number, string, string, number, KeptEvidence, string, number, KeptEvidence];

const keptOf = (evidence: Evidence): KeptEvidence => [
  evidence.step,
  evidence.host,
  evidence.reply,
  evidence.source,
  evidence.checkedAt,
  evidence.why,
];

function evidenceOfKept(kept: KeptEvidence, code: number): Evidence | null {
  if (kept === null) return null;
  if (kept === 0) return offlineEvidence(code);
  const [step, host, reply, source, checkedAt, why] = kept;
  return { step, host, reply, source, checkedAt, why };
}

/** A verdict in words: its evidence when some is kept, else its status and code. */
function verdictWords(verdict: ChangedRow['before']): string {
  return verdict.evidence ? evidenceWords(verdict.evidence) : `${verdict.status} (code ${verdict.code})`;
}

/** "was 250 from mx1 on 12 Nov 2026, now 550 5.1.1 from mx1 on 20 Nov 2026". */
export function changeWords(before: ChangedRow['before'], after: ChangedRow['after']): string {
  const was = verdictWords(before);
  const now = verdictWords(after);
  // The same answer to the address, a different verdict (a domain turned accept-all): the codes say the change.
  if (was === now)
    return `was ${before.status} (${before.code}), now ${after.status} (${after.code} ${describeStatusCode(after.code)}): ${now}`;
  return `was ${was}, now ${now}`;
}

function rowOfKept(kept: KeptRow): ChangedRow {
  const [row, email, beforeStatus, beforeCode, beforeEvidence, afterStatus, afterCode, afterEvidence] = kept;
  const before = {
    status: beforeStatus,
    code: beforeCode,
    evidence: evidenceOfKept(beforeEvidence, beforeCode),
  };
  const after = { status: afterStatus, code: afterCode, evidence: evidenceOfKept(afterEvidence, afterCode) };
  return { row, email, before, after, words: changeWords(before, after) };
}

/** Reads a results file's rows: `visit(number, keyHash, email, status, code)` for each row with an address. */
async function scanVerdicts(
  set: ResultSet,
  visit: (number: number, h1: number, h2: number, email: string, status: string, code: number) => void,
): Promise<void> {
  let statusAt = -1;
  let codeAt = -1;
  let validAt = -1;
  const hash = new Uint32Array(2);
  await scanResultRows(
    set.path,
    set.name,
    set.delimiter,
    (columns) => {
      statusAt = columns.get(STATUS_COLUMN) ?? -1;
      codeAt = columns.get(CODE_COLUMN) ?? -1;
      validAt = columns.get(VALID_EMAIL_COLUMN) ?? -1;
      if (statusAt < 0 || codeAt < 0)
        throw new CompareError(
          `The results of ${set.label} have no “${STATUS_COLUMN}” and “${CODE_COLUMN}” columns (it ran no validation).`,
        );
    },
    (row, number) => {
      const email = row.field(set.emailIndex).trim();
      const valid = validAt < 0 ? '' : row.field(validAt).trim();
      const key = (valid === '' ? undefined : canonicalEmail(valid)) ?? canonicalEmail(email);
      if (key === undefined) return;
      hashInto(key, hash, 0);
      visit(number, hash[0], hash[1], email, row.status, Number(row.field(codeAt)));
    },
  );
}

/**
 * The evidence of the changed rows of one side, spilled to `spill` as found: by address from the re-checks'
 * explain files (newest first), then by row from the first run's. Answers each changed row's place in the
 * spill (offset, length; -1 where none was found).
 */
async function spillEvidence(
  sources: EvidenceSources,
  rowOfChanged: Int32Array,
  changedOfHash: () => HashIndex64,
  spill: SyncWriter,
): Promise<{ offsets: Float64Array; lengths: Int32Array }> {
  const count = rowOfChanged.length;
  const offsets = new Float64Array(count).fill(-1);
  const lengths = new Int32Array(count);
  const keep = (c: number, evidence: Evidence) => {
    if (c < 0 || offsets[c] >= 0) return;
    offsets[c] = spill.position;
    lengths[c] = spill.write(JSON.stringify(keptOf(evidence)));
  };
  if (count === 0) return { offsets, lengths };
  if (sources.byAddress.length > 0) {
    const index = changedOfHash();
    const hash = new Uint32Array(2);
    for (const path of sources.byAddress)
      await scanEvidence(path, (_row, evidence, email) => {
        const key = canonicalEmail(email ?? '');
        if (key === undefined) return;
        hashInto(key, hash, 0);
        keep(index.get(hash[0], hash[1]), evidence);
      });
  }
  if (sources.byRow) {
    let maxRow = 0;
    for (let c = 0; c < count; c++) maxRow = Math.max(maxRow, rowOfChanged[c]);
    // Row → changed row: 4 bytes a row up to the last changed one.
    const changedOfRow = new Int32Array(maxRow + 1).fill(-1);
    for (let c = 0; c < count; c++) changedOfRow[rowOfChanged[c]] = c;
    await scanEvidence(sources.byRow, (row, evidence) => {
      if (row <= maxRow) keep(changedOfRow[row], evidence);
    });
  }
  return { offsets, lengths };
}

/**
 * Compares two result sets and writes the changed rows to `rowsPath` (whole: a temporary name, then renamed),
 * one JSON line each in the later run's row order. Answers the counts and each line's offset (the last entry is
 * the file's size), for reading a page by seeking.
 */
export async function compareResultSets(
  earlier: ResultSet,
  later: ResultSet,
  rowsPath: string,
): Promise<Comparison & { offsets: Float64Array }> {
  for (const set of [earlier, later])
    if (set.emailIndex < 0) throw new CompareError(`The results of ${set.label} have no email column.`);

  // The earlier run: each address once (its first row), with its row, status and code.
  const earlierOf = new HashIndex64();
  const statuses: string[] = [];
  const statusIdOf = new Map<string, number>();
  const statusId = (status: string) => {
    let id = statusIdOf.get(status);
    if (id === undefined) {
      id = statuses.length;
      statuses.push(status);
      statusIdOf.set(status, id);
    }
    return id;
  };
  const earlierRow = new Int32List();
  const earlierCode = new Int32List();
  const earlierStatus = new Int32List();
  await scanVerdicts(earlier, (number, h1, h2, _email, status, code) => {
    if (earlierOf.get(h1, h2) >= 0) return;
    earlierOf.add(h1, h2, earlierRow.length);
    earlierRow.push(number);
    earlierCode.push(code);
    earlierStatus.push(statusId(status));
  });

  // The later run: each address of the earlier run once; the changed ones written to a temporary as found.
  const matched = new Uint8Array(earlierRow.length);
  const changedRow = new Int32List();
  const changedEarlier = new Int32List();
  const changedH1 = new Int32List();
  const changedH2 = new Int32List();
  const byChange = new Map<string, { before: string; after: string; rows: number }>();
  let compared = 0;
  const firstPass = new SyncWriter(temporaryPathOf(`${rowsPath}.found`));
  const spills = [
    new SyncWriter(temporaryPathOf(`${rowsPath}.before`)),
    new SyncWriter(temporaryPathOf(`${rowsPath}.after`)),
  ] as const;
  const temporary = temporaryPathOf(rowsPath);
  const temporaries = [firstPass, ...spills];
  try {
    await scanVerdicts(later, (number, h1, h2, email, status, code) => {
      const e = earlierOf.get(h1, h2);
      if (e < 0 || matched[e] === 1) return;
      matched[e] = 1;
      compared++;
      const before = statuses[earlierStatus.data[e]];
      const beforeCode = earlierCode.data[e];
      if (before === status && beforeCode === code) return;
      changedRow.push(number);
      changedEarlier.push(e);
      changedH1.push(h1);
      changedH2.push(h2);
      const key = `${before}\u0000${status}`;
      const counted = byChange.get(key);
      if (counted) counted.rows++;
      else byChange.set(key, { before, after: status, rows: 1 });
      // The row's fields before and after its evidence, as the rows file has them (a tab between the two
      // halves: JSON writes a tab inside a string as \t).
      firstPass.write(
        `${number},${JSON.stringify(email)},${JSON.stringify(before)},${beforeCode}\t${JSON.stringify(status)},${code}\n`,
      );
    });
    firstPass.close();
    const changed = changedRow.length;

    // The evidence of the changed rows, each side in its own spill.
    let hashIndex: HashIndex64 | undefined;
    const changedOfHash = () => {
      if (!hashIndex) {
        hashIndex = new HashIndex64();
        for (let c = 0; c < changed; c++) hashIndex.add(changedH1.data[c] >>> 0, changedH2.data[c] >>> 0, c);
      }
      return hashIndex;
    };
    const earlierRowOfChanged = new Int32Array(changed);
    for (let c = 0; c < changed; c++) earlierRowOfChanged[c] = earlierRow.data[changedEarlier.data[c]];
    const placesBefore = await spillEvidence(earlier.evidence, earlierRowOfChanged, changedOfHash, spills[0]);
    const placesAfter = await spillEvidence(
      later.evidence,
      changedRow.data.subarray(0, changed),
      changedOfHash,
      spills[1],
    );
    for (const spill of spills) spill.close();

    // The rows file: the first pass's lines in order, each with its two pieces of evidence.
    const offsets = new Float64Array(changed + 1);
    const out = new SyncWriter(temporary);
    const fds = spills.map((spill) => openSync(spill.path, 'r'));
    try {
      const evidenceText = (side: 0 | 1, c: number, fallback: boolean): string => {
        const places = side === 0 ? placesBefore : placesAfter;
        if (places.offsets[c] >= 0) return readAt(fds[side], places.offsets[c], places.lengths[c]);
        return fallback ? '0' : 'null';
      };
      let c = 0;
      const lines = createInterface({ input: createReadStream(firstPass.path), crlfDelay: Infinity });
      for await (const line of lines) {
        if (line === '') continue;
        const tab = line.indexOf('\t');
        offsets[c] = out.position;
        out.write(
          `[${line.slice(0, tab)},${evidenceText(0, c, earlier.evidence.isOfflineFallback)},` +
            `${line.slice(tab + 1)},${evidenceText(1, c, later.evidence.isOfflineFallback)}]\n`,
        );
        c++;
      }
      offsets[changed] = out.position;
    } finally {
      for (const fd of fds) closeSync(fd);
      out.close();
    }
    renameSync(temporary, rowsPath);
    return {
      compared,
      changed,
      byChange: [...byChange.values()].sort(
        (a, b) => b.rows - a.rows || a.before.localeCompare(b.before) || a.after.localeCompare(b.after),
      ),
      offsets,
    };
  } finally {
    for (const writer of temporaries) {
      writer.close();
      rmSync(writer.path, { force: true });
    }
    rmSync(temporary, { force: true });
  }
}

/** The changed rows `[from, from + limit)` of a rows file, by its line offsets. */
export function readChangedRows(
  rowsPath: string,
  offsets: Float64Array,
  from: number,
  limit: number,
): ChangedRow[] {
  const count = offsets.length - 1;
  const end = Math.min(count, from + limit);
  if (from >= end) return [];
  const fd = openSync(rowsPath, 'r');
  try {
    const text = readAt(fd, offsets[from], offsets[end] - offsets[from]);
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => rowOfKept(JSON.parse(line) as KeptRow));
  } finally {
    closeSync(fd);
  }
}

/** The columns of an export of the changed rows. */
export const CHANGES_COLUMNS = [
  'Email',
  'Before Status',
  'Before Code',
  'Before Evidence',
  'After Status',
  'After Code',
  'After Evidence',
  'Words',
] as const;

/**
 * Writes the changed rows as CSV (CHANGES_COLUMNS) to `outPath`, whole (a temporary name, then renamed);
 * answers the rows written and the file's size.
 */
export async function writeChangesCsv(
  rowsPath: string,
  outPath: string,
): Promise<{ rows: number; bytes: number }> {
  const temporary = temporaryPathOf(outPath);
  const out = new SyncWriter(temporary);
  let rows = 0;
  try {
    out.write(`${CHANGES_COLUMNS.join(',')}\n`);
    const lines = createInterface({ input: createReadStream(rowsPath), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line === '') continue;
      const row = rowOfKept(JSON.parse(line) as KeptRow);
      const fields = [
        row.email,
        row.before.status,
        String(row.before.code),
        row.before.evidence ? evidenceWords(row.before.evidence) : '',
        row.after.status,
        String(row.after.code),
        row.after.evidence ? evidenceWords(row.after.evidence) : '',
        row.words,
      ];
      out.write(`${fields.map((field) => quoteField(field, ',')).join(',')}\n`);
      rows++;
    }
    out.close();
    renameSync(temporary, outPath);
    return { rows, bytes: statSync(outPath).size };
  } catch (error) {
    out.close();
    rmSync(temporary, { force: true });
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The earlier run of a job, and the comparison kept beside its results

/** The earlier run a job's current results are compared with. */
export interface EarlierRun {
  readonly jobId: number;
  /** The version of its results compared (a re-check's own earlier version), or null: its current results. */
  readonly version: number | null;
  /** When those results were made. */
  readonly at: string;
  readonly set: ResultSet;
}

interface JobRow {
  id: number;
}

/**
 * The latest earlier run holding the same addresses as `job`'s current results (see the header): its own
 * previous version when it was re-checked, else the latest earlier job of the same file; null when none.
 */
export function earlierRunOf(db: HistoryDb, resultsDir: string, job: JobRecord): EarlierRun | null {
  const versions = jobVersions(db, job.id);
  const current = versions.findIndex((v) => v.resultsPath === job.resultsPath);
  if (current > 0) {
    const previous = versions[current - 1];
    if (existsSync(previous.resultsPath))
      return {
        jobId: job.id,
        version: previous.version,
        at: previous.createdAt,
        set: jobResultSet(db, resultsDir, job, previous.version),
      };
  }
  // Candidates of the same part of the same file, latest first: the same bytes before the same name.
  const candidates = db
    .prepare(
      `SELECT id FROM jobs
        WHERE id < @id AND status = 'completed' AND results_path IS NOT NULL
          AND part_index IS @part
          AND ((@sha IS NOT NULL AND file_sha256 = @sha) OR file_name = @name)
        ORDER BY (@sha IS NOT NULL AND file_sha256 = @sha) DESC, id DESC`,
    )
    .all({ id: job.id, part: job.partIndex, sha: job.fileSha256, name: job.fileName }) as JobRow[];
  for (const { id } of candidates) {
    const earlier = getJobOf(db, id);
    if (!earlier || notComparable(earlier) !== undefined) continue;
    const earlierVersions = jobVersions(db, id);
    const shown = earlierVersions.find((v) => v.resultsPath === earlier.resultsPath);
    return {
      jobId: id,
      version: null,
      at: shown && earlierVersions.length > 1 ? shown.createdAt : earlier.createdAt,
      set: jobResultSet(db, resultsDir, earlier),
    };
  }
  return null;
}

/** What identifies a side's inputs: its results file and evidence files, each by path, size and time. */
function keyOf(set: ResultSet): string {
  const fileKey = (path: string) => {
    try {
      const stats = statSync(path);
      return `${path}|${stats.size}|${stats.mtimeMs}`;
    } catch {
      return `${path}|missing`;
    }
  };
  return [
    fileKey(set.path),
    set.evidence.byRow ? fileKey(set.evidence.byRow) : 'no explain',
    ...set.evidence.byAddress.map(fileKey),
    set.evidence.isOfflineFallback ? 'offline' : 'none',
  ].join('\n');
}

/** The comparison kept beside a job's results. */
interface Kept {
  readonly format: 1;
  readonly key: string;
  readonly earlierJobId: number;
  readonly earlierVersion: number | null;
  readonly earlierAt: string;
  readonly compared: number;
  readonly changed: number;
  readonly byChange: JobChanges['byChange'];
  readonly rowsBytes: number;
}

const KEPT_FILE = 'changes.json';
const ROWS_FILE = 'changes.jsonl';
const INDEX_FILE = 'changes.index';

interface Sidecar {
  readonly kept: Kept;
  readonly rowsPath: string;
  readonly offsets: Float64Array;
}

function readKept(dir: string, key: string): Sidecar | undefined {
  try {
    const kept = JSON.parse(readFileSync(join(dir, KEPT_FILE), 'utf8')) as Kept;
    const rowsPath = join(dir, ROWS_FILE);
    if (kept.format !== 1 || kept.key !== key || statSync(rowsPath).size !== kept.rowsBytes) return undefined;
    const bytes = readFileSync(join(dir, INDEX_FILE));
    const offsets = new Float64Array(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    );
    if (offsets.length !== kept.changed + 1 || offsets[kept.changed] !== kept.rowsBytes) return undefined;
    return { kept, rowsPath, offsets };
  } catch {
    return undefined;
  }
}

/** Writes a small file whole. */
function writeWhole(path: string, data: string | Uint8Array): void {
  const temporary = temporaryPathOf(path);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/** Comparisons under way, by job folder and key: every page asked meanwhile waits for the same one. */
const computing = new Map<string, Promise<Sidecar>>();

/**
 * The comparison of `job`'s current results with its earlier run, computed once and kept beside the results
 * (`changes.json` last: a comparison is kept whole or not at all); null when the job has no earlier run.
 */
export async function jobComparison(
  db: HistoryDb,
  resultsDir: string,
  job: JobRecord,
): Promise<(Sidecar & { earlier: EarlierRun }) | null> {
  const problem = notComparable(job);
  if (problem) throw new CompareError(problem);
  const earlier = earlierRunOf(db, resultsDir, job);
  if (!earlier) return null;
  const later = jobResultSet(db, resultsDir, job);
  const key = [
    `earlier ${earlier.jobId} ${earlier.version ?? 'current'}`,
    keyOf(earlier.set),
    keyOf(later),
  ].join('\n');
  const dir = join(resultsDir, String(job.id));
  const found = readKept(dir, key);
  if (found) return { ...found, earlier };
  const running = computing.get(`${dir}\n${key}`);
  if (running) return { ...(await running), earlier };
  const made = (async (): Promise<Sidecar> => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The kept comparison of another pair goes first: its rows file is about to be replaced.
    rmSync(join(dir, KEPT_FILE), { force: true });
    const rowsPath = join(dir, ROWS_FILE);
    const comparison = await compareResultSets(earlier.set, later, rowsPath);
    const { offsets } = comparison;
    writeWhole(join(dir, INDEX_FILE), new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength));
    const kept: Kept = {
      format: 1,
      key,
      earlierJobId: earlier.jobId,
      earlierVersion: earlier.version,
      earlierAt: earlier.at,
      compared: comparison.compared,
      changed: comparison.changed,
      byChange: comparison.byChange,
      rowsBytes: offsets[comparison.changed],
    };
    writeWhole(join(dir, KEPT_FILE), JSON.stringify(kept));
    return { kept, rowsPath, offsets };
  })();
  computing.set(`${dir}\n${key}`, made);
  try {
    return { ...(await made), earlier };
  } finally {
    computing.delete(`${dir}\n${key}`);
  }
}

function failureOf(error: unknown): never {
  if (error instanceof CompareError) throw new ReplyFailure('invalid-input', error.message);
  throw error;
}

/** A page of what changed since a job's earlier run (jobs:changes). */
export async function jobChanges(
  ctx: CoreContext,
  job: JobRecord,
  offset: number,
  limit: number,
): Promise<JobChanges> {
  // A job that has just completed may still be saving its why per row: its evidence.
  await ctx.results.whenExplained(job.id);
  const comparison = await jobComparison(ctx.db, ctx.resultsDir, job).catch(failureOf);
  if (!comparison)
    return {
      jobId: job.id,
      earlierJobId: null,
      earlierVersion: null,
      earlierAt: null,
      compared: 0,
      changed: 0,
      byChange: [],
      rows: [],
    };
  const { kept } = comparison;
  return {
    jobId: job.id,
    earlierJobId: kept.earlierJobId,
    earlierVersion: kept.earlierVersion,
    earlierAt: kept.earlierAt,
    compared: kept.compared,
    changed: kept.changed,
    byChange: kept.byChange,
    rows: readChangedRows(comparison.rowsPath, comparison.offsets, offset, limit),
  };
}

/** An export of only the changed rows, kept as the job's export of kind `changed` (jobs:export-changes). */
export async function exportJobChanges(ctx: CoreContext, job: JobRecord): Promise<ExportInfo> {
  await ctx.results.whenExplained(job.id);
  const comparison = await jobComparison(ctx.db, ctx.resultsDir, job).catch(failureOf);
  if (!comparison)
    throw new ReplyFailure(
      'invalid-input',
      'No earlier run of this list is in the history: there is nothing to compare with.',
    );
  if (comparison.kept.changed === 0)
    throw new ReplyFailure('invalid-input', 'No row changed status since the last run: nothing to export.');
  const dir = join(ctx.resultsDir, String(job.id), 'exports');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const upload = outputNameFor(job.fileName);
  const fileName = exportFileName(basename(upload, extname(upload)), 'changed', '.csv');
  const path = join(dir, `${Date.now()}-${fileName}`);
  const written = await writeChangesCsv(comparison.rowsPath, path);
  const record = insertExport(ctx.db, {
    jobId: job.id,
    kind: 'changed',
    statuses: [],
    path,
    fileName,
    rows: written.rows,
    bytes: written.bytes,
  });
  ctx.emit('jobs:changed', { jobIds: [job.id] });
  const { path: _path, ...info } = record;
  return info;
}
