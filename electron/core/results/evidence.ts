// The evidence of every verdict of a job (issue 37): per row, the check that decided its code (syntax, a list,
// DNS, SMTP), the host and the reply that decided, the source address or proxy, and when. A local job with
// online checks keeps its list's explain CSV (`results/<job>/explain.csv`, jobView.ts), whose columns say it;
// a row checked offline, or a job with no explain file, has the evidence its code gives (the code alone
// decided it, without the network).
//
// Readers stream the file once in row order (scanEvidence) or fetch a few rows (readEvidence): the outcomes
// report, the changed rows of a new run and the Results screen all read the evidence here.
import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describeStatusCode } from '../../../shared/api/codes.js';
import type { Evidence, EvidenceStep } from '../../../shared/outcomes.js';
import { rowReader, scanResults } from './resultsFile.js';

export const EVIDENCE_FILE = 'explain.csv';

/** Where a job keeps its evidence (deleted with the job's folder). */
export function evidencePathOf(resultsDir: string, jobId: number): string {
  return join(resultsDir, String(jobId), EVIDENCE_FILE);
}

/** Codes decided by a list: allowed or suppressed by the client's lists, known bouncers, traps, opt-outs. */
function isListCode(code: number): boolean {
  return code === 55 || code === 255 || code === 520 || (code >= 525 && code <= 540);
}

/** The step a code was decided by when the row was not checked online. */
function offlineStep(code: number): EvidenceStep {
  return isListCode(code) ? 'list' : 'syntax';
}

/** The evidence of a row decided without the network: its code says it all. */
export function offlineEvidence(code: number): Evidence {
  return {
    step: offlineStep(code),
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
      : offlineStep(code);
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

/**
 * Streams a job's evidence in row order: `visit(row, evidence)` for each row the explain file holds. Answers
 * false (and visits nothing) when the job has no explain file: its rows were decided offline.
 */
export async function scanEvidence(
  path: string,
  visit: (row: number, evidence: Evidence) => void,
): Promise<boolean> {
  if (!existsSync(path)) return false;
  let columns: Columns | undefined;
  let rowAt = -1;
  await scanResults(
    path,
    EVIDENCE_FILE,
    ',',
    (names) => {
      columns = columnsOf(names);
      rowAt = names.indexOf('Row');
    },
    (scanned) => {
      const row = Number(scanned.field(rowAt));
      if (!Number.isInteger(row) || row < 1 || !columns) return;
      visit(
        row,
        evidenceOf((index) => (index < 0 ? '' : scanned.field(index)), columns),
      );
    },
  );
  return true;
}

/** The evidence of some rows (a report's missed rows): one pass over the file, keeping only those rows. */
export async function readEvidence(path: string, rows: Iterable<number>): Promise<Map<number, Evidence>> {
  const wanted = new Set(rows);
  const found = new Map<number, Evidence>();
  if (wanted.size === 0) return found;
  await scanEvidence(path, (row, evidence) => {
    if (wanted.has(row)) found.set(row, evidence);
  });
  return found;
}

/**
 * What a report needs of every row's evidence, in one pass that decodes two fields a row: the mail host of
 * each row (an id into `hosts`, 0 for none) and where its line starts, so the few rows a report lists are
 * read afterwards by offset (readEvidenceAt) rather than by a second pass. 12 bytes a row.
 */
export interface EvidenceIndex {
  readonly hosts: readonly string[];
  /** By row number (1-based); 0: no host. */
  readonly hostOfRow: Int32Array;
  /** Byte offset of each row's line by row number (1-based); -1: none. */
  readonly offsets: Float64Array;
}

export async function indexEvidence(path: string): Promise<EvidenceIndex> {
  const hosts: string[] = [''];
  const hostIdOf = new Map<string, number>([['', 0]]);
  let hostOfRow = new Int32Array(1024);
  let offsets = new Float64Array(1024).fill(-1);
  if (!existsSync(path)) return { hosts, hostOfRow, offsets };
  let rowAt = -1;
  let hostAt = -1;
  let whyAt = -1;
  let checkedAt = -1;
  await scanResults(
    path,
    EVIDENCE_FILE,
    ',',
    (names) => {
      rowAt = names.indexOf('Row');
      hostAt = names.indexOf('Host');
      whyAt = names.indexOf('Why');
      checkedAt = names.indexOf('Checked');
    },
    (scanned) => {
      const row = Number(scanned.field(rowAt));
      if (!Number.isInteger(row) || row < 1) return;
      while (row >= offsets.length) {
        const grownHosts = new Int32Array(offsets.length * 2);
        grownHosts.set(hostOfRow);
        hostOfRow = grownHosts;
        const grown = new Float64Array(offsets.length * 2).fill(-1);
        grown.set(offsets);
        offsets = grown;
      }
      offsets[row] = scanned.offset;
      let host = hostAt >= 0 ? scanned.field(hostAt) : '';
      // Files written before the Host column say it in the why of an SMTP verdict.
      if (hostAt < 0 && scanned.field(checkedAt) === 'smtp')
        host = HOST_REPLY.exec(scanned.field(whyAt))?.[1] ?? '';
      if (host === '') return;
      let id = hostIdOf.get(host);
      if (id === undefined) {
        id = hosts.length;
        hosts.push(host);
        hostIdOf.set(host, id);
      }
      hostOfRow[row] = id;
    },
  );
  return { hosts, hostOfRow, offsets };
}

/** The evidence of some rows, read by their offsets in an index of the file (indexEvidence). */
export function readEvidenceAt(
  path: string,
  index: EvidenceIndex,
  rows: Iterable<number>,
): Map<number, Evidence> {
  const found = new Map<number, Evidence>();
  const wanted = [...rows].filter((row) => row < index.offsets.length && index.offsets[row] >= 0);
  if (wanted.length === 0) return found;
  const fd = openSync(path, 'r');
  try {
    const reader = rowReader(fd, statSync(path).size, ',');
    const columns = columnsOf(reader.headerAt());
    for (const row of wanted) {
      const fields = reader.rowAt(index.offsets[row]);
      found.set(
        row,
        evidenceOf((i) => (i < 0 ? '' : (fields[i] ?? '')), columns),
      );
    }
  } finally {
    closeSync(fd);
  }
  return found;
}
