// The evidence of every verdict of a job (issue 37): per row, the check that decided its code (syntax, a list,
// DNS, SMTP), the host and the reply that decided, the source address or proxy, and when. A local job with
// online checks keeps its list's explain CSV (`results/<job>/explain.csv`, jobView.ts), whose columns say it;
// a row checked offline, or a job with no explain file, has the evidence its code gives (the code alone
// decided it, without the network).
//
// Readers stream the file once in row order (scanEvidence) or fetch a few rows (readEvidence): the outcomes
// report, the changed rows of a new run and the Results screen all read the evidence here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeStatusCode } from '../../../shared/api/codes.js';
import type { Evidence, EvidenceStep } from '../../../shared/outcomes.js';
import { scanResults } from './resultsFile.js';

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
 * Streams a job's evidence in row order: `visit(row, evidence, email)` for each row the explain file holds (the
 * address it checked: a re-check's explain file is read by address). Answers false (and visits nothing) when
 * the job has no explain file: its rows were decided offline.
 */
export async function scanEvidence(
  path: string,
  visit: (row: number, evidence: Evidence, email: string) => void,
): Promise<boolean> {
  if (!existsSync(path)) return false;
  let columns: Columns | undefined;
  let rowAt = -1;
  let emailAt = -1;
  await scanResults(
    path,
    EVIDENCE_FILE,
    ',',
    (names) => {
      columns = columnsOf(names);
      rowAt = names.indexOf('Row');
      emailAt = names.indexOf('Email');
    },
    (scanned) => {
      const row = Number(scanned.field(rowAt));
      if (!Number.isInteger(row) || row < 1 || !columns) return;
      visit(
        row,
        evidenceOf((index) => (index < 0 ? '' : scanned.field(index)), columns),
        emailAt < 0 ? '' : scanned.field(emailAt),
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
