// The outcomes of a job (issue 37), one engine for the app (History → a job → Campaign results) and the CLI
// (`mailsieve outcomes import|report`): the mailing platform's bounce export, read by the bounces import
// (service/identity/import.ts: every shape `data import bounces` reads, its hard bounces stored as known
// bouncers in the same pass), and the platform's sent list when the user has one, matched to the job's rows
// by address (canonicalEmail: the normalisation the job's duplicates and the known bouncers use). The job's
// results file and its evidence are each streamed once; memory holds the export's addresses, not the job's.
//
// Which rows were mailed: those of the sent list when given, else the job's Ready to mail export (the
// desktop's default export, decided row by row by the exporter's own rule, so the two cannot differ).
import type { Database } from 'better-sqlite3';
import { basename } from 'node:path';
import { describeStatusCode } from '../../../shared/api/codes.js';
import { HEADER_SYNONYMS, looksLikeEmail, normaliseHeaderName } from '../../../shared/columns.js';
import {
  MAX_MISSED_LISTED,
  PROVIDER_FAMILIES,
  PROVIDER_FAMILY_LABELS,
  providerFamilyOf,
  riskOf,
  type Evidence,
  type MissedRow,
  type OutcomeGroup,
  type OutcomesReport,
  type ProviderFamily,
} from '../../../shared/outcomes.js';
import { ImportFileError, importBouncesFile, readCsv } from '../../../service/identity/import.js';
import type { BounceRecord } from '../../../service/identity/import.bounces.js';
import { canonicalEmail } from '../../../service/identity/normalise.js';
import type { HistoryDb, JobRecord } from '../history/db.js';
import { jobChecksOf } from '../history/jobVersions.js';
import { desktopExportSpec } from '../jobs/desktopExport.js';
import { ruleOf } from '../jobs/exports.js';
import { jobEvidenceOf, offlineEvidence, readEvidence, scanEvidence } from '../results/evidence.js';
import { scanResultRows } from '../results/resultsFile.js';
import { measuredRisks, saveOutcomes } from './store.js';

/** A failure of an outcomes import the user reads (the file, or the job, is not what it needs). */
export class OutcomesError extends Error {}

export interface OutcomesFile {
  readonly path: string;
  /** The name to show (a browser-mode upload is a copy under another name). */
  readonly name: string;
}

export interface OutcomesInput {
  readonly db: HistoryDb;
  readonly job: JobRecord;
  /** `<home>/results`: the job's evidence is in its folder. */
  readonly resultsDir: string;
  /** The local service's store: the hard bounces go to its known bouncers. */
  readonly serviceDb: Database;
  readonly bounces: OutcomesFile;
  readonly sent?: OutcomesFile;
  readonly signal?: AbortSignal;
  readonly now?: Date;
}

const VALIDATION_CODE_COLUMN = 'Validation Code';
const VALID_EMAIL_COLUMN = 'Valid Email';
/** Statuses of a row called deliverable: valid (either vocabulary), corrected, and accept-all. */
const CALLED_GOOD: ReadonlySet<string> = new Set([
  'valid',
  'corrected',
  'safetosend',
  'catchall',
  'unverifiable',
]);
const DAY_MS = 86_400_000;
/** A check this much older than the bounce may have been right when it ran. */
const STALE_CHECK_DAYS = 30;
/** Hard bounces at one domain, all of whose rows the server accepted, that make "accepts every address". */
const ACCEPTS_ALL_MIN = 3;

/** The level a job ran with (offline jobs' good rows read unknown and are mailable: the `clean` export). */
function isOfflineJob(db: HistoryDb, job: JobRecord): boolean {
  return (
    (jobChecksOf(db, job.id)?.level ?? (job.connectionKind === 'embedded' ? 'offline' : 'provider')) ===
    'offline'
  );
}

/** Reads a sent or delivered list: the canonical addresses of its email column (found as everywhere). */
async function readSentList(file: OutcomesFile, signal?: AbortSignal): Promise<Set<string>> {
  const sent = new Set<string>();
  let emailAt = -1;
  const emailNames = new Set(
    [...HEADER_SYNONYMS.email, 'recipient', 'recipient email', 'recipient address', 'address'].map(
      normaliseHeaderName,
    ),
  );
  await readCsv(
    file.path,
    (_line, row) => {
      if (emailAt < 0) {
        if (row.length === 1 && looksLikeEmail(row[0])) emailAt = 0;
        else {
          emailAt = row.findIndex((name) => emailNames.has(normaliseHeaderName(name)));
          if (emailAt < 0)
            throw new OutcomesError(
              `The sent list ${file.name} names no email column (email, email address, recipient or address).`,
            );
          return;
        }
      }
      const email = canonicalEmail((row[emailAt] ?? '').trim());
      if (email !== undefined) sent.add(email);
    },
    signal,
  );
  return sent;
}

interface Counter {
  sent: number;
  hardBounced: number;
  predicted: number;
}

const counter = (): Counter => ({ sent: 0, hardBounced: 0, predicted: 0 });

function groupOf(key: string, label: string, c: Counter): OutcomeGroup {
  return {
    key,
    label,
    sent: c.sent,
    hardBounced: c.hardBounced,
    measuredRate: c.sent === 0 ? 0 : c.hardBounced / c.sent,
    predictedRate: c.sent === 0 ? 0 : c.predicted / c.sent,
  };
}

/** The domain of an address ('' when it has none). */
function domainOf(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).toLowerCase();
}

/** A one-line why of a verdict that missed, where a pattern is known; '' otherwise. */
function missedWhy(
  row: { code: number; email: string; bouncedAt: string | null },
  evidence: Evidence,
  acceptsAll: ReadonlyMap<string, number>,
): string {
  if (row.code === 45)
    return 'The domain accepts mail for every address (accept-all): its yes said nothing of this mailbox.';
  const domain = domainOf(row.email);
  const others = acceptsAll.get(domain) ?? 0;
  if (others >= ACCEPTS_ALL_MIN && evidence.step === 'smtp')
    return `${evidence.host || domain} answered 250 to every address asked at ${domain}, and ${others} of them bounced: it accepts first and bounces later.`;
  if (evidence.checkedAt && row.bouncedAt) {
    const days = Math.floor((Date.parse(row.bouncedAt) - Date.parse(evidence.checkedAt)) / DAY_MS);
    if (days >= STALE_CHECK_DAYS)
      return `The check ran ${days} days before the send: the mailbox may have closed since.`;
  }
  if (evidence.step === 'syntax' || evidence.step === 'list')
    return 'Only the address itself was checked (offline): the mailbox was never asked.';
  if (evidence.step === 'dns') return 'The domain takes mail, but the mailbox itself was never asked.';
  return '';
}

/**
 * Imports a job's outcomes: reads the bounce export (its hard bounces stored as known bouncers) and the sent
 * list, matches them to the job's rows, keeps the report with the job (replacing an earlier import) and
 * answers it.
 */
export async function importJobOutcomes(input: OutcomesInput): Promise<OutcomesReport> {
  const started = performance.now();
  const { db, job } = input;
  if (!job.resultsPath || !job.resultsName)
    throw new OutcomesError(`Job ${job.id} has no results to measure: it did not complete.`);
  if (!job.options.services.includes('email_validation'))
    throw new OutcomesError(`Job ${job.id} ran no validation: it has no verdicts to measure.`);
  const now = input.now ?? new Date();

  // The export, by address: its kind (the worst of the address's rows) and when it bounced.
  const KIND = { hard: 2, soft: 1, other: 0 } as const;
  const bounced = new Map<string, { kind: number; at: number | undefined; matched: boolean }>();
  const exportRows = { hard: 0, soft: 0, other: 0, rejected: 0, unmatched: 0 };
  const onRecords = (records: readonly BounceRecord[]) => {
    for (const record of records) {
      exportRows[record.kind]++;
      const kind = KIND[record.kind];
      const email = canonicalEmail(record.email) ?? record.email.toLowerCase();
      const seen = bounced.get(email);
      if (!seen) bounced.set(email, { kind, at: record.bouncedAt, matched: false });
      else if (kind > seen.kind || (kind === seen.kind && (record.bouncedAt ?? 0) > (seen.at ?? 0))) {
        seen.kind = kind;
        seen.at = record.bouncedAt;
      }
    }
  };
  let imported;
  try {
    imported = await importBouncesFile(input.serviceDb, input.bounces.path, {
      onRecords,
      maxErrors: 0,
      nowS: Math.floor(now.getTime() / 1000),
      ...(input.signal ? { signal: input.signal } : {}),
    });
  } catch (error) {
    if (error instanceof ImportFileError) throw new OutcomesError(error.message);
    throw error;
  }
  exportRows.rejected = imported.rejected;
  const sentList = input.sent ? await readSentList(input.sent, input.signal) : undefined;

  // The evidence's mail host per row, for the provider families (one pass; 4 bytes a row). A re-checked row's
  // is its latest re-check's.
  const jobEvidence = jobEvidenceOf(db, input.resultsDir, job);
  const hostIds: string[] = [''];
  const hostIdOf = new Map<string, number>([['', 0]]);
  let hostOfRow = new Int32Array(1024);
  await scanEvidence(jobEvidence, (row, evidence) => {
    // (A DNS verdict's host is the domain asked, not a mail host.)
    if (!evidence.host || evidence.step !== 'smtp') return;
    let id = hostIdOf.get(evidence.host);
    if (id === undefined) {
      id = hostIds.length;
      hostIds.push(evidence.host);
      hostIdOf.set(evidence.host, id);
    }
    while (row >= hostOfRow.length) {
      const grown = new Int32Array(hostOfRow.length * 2);
      grown.set(hostOfRow);
      hostOfRow = grown;
    }
    hostOfRow[row] = id;
  });

  const risks = measuredRisks(db, job.id);
  const riskCache = new Map<number, number>();
  const riskFor = (code: number) => {
    let rate = riskCache.get(code);
    if (rate === undefined) riskCache.set(code, (rate = riskOf(code, risks).rate));
    return rate;
  };
  const total = counter();
  const byCode = new Map<number, Counter>();
  const byFamily = new Map<ProviderFamily, Counter>();
  let softBounced = 0;
  const missed: { row: number; email: string; code: number; status: string; bouncedAt: string | null }[] = [];
  let missedTotal = 0;
  /** Per domain, hard bounces of rows whose mailbox the server accepted (code 50). */
  const acceptedThenBounced = new Map<string, number>();

  const rule = sentList
    ? undefined
    : ruleOf(desktopExportSpec(job, isOfflineJob(db, job) ? 'clean' : 'safe', []));
  const emailIndex = job.mapping.roles.indexOf('email');
  let codeAt = -1;
  let validAt = -1;
  await scanResultRows(
    job.resultsPath,
    job.resultsName,
    job.mapping.delimiter,
    (columns) => {
      codeAt = columns.get(VALIDATION_CODE_COLUMN) ?? -1;
      validAt = columns.get(VALID_EMAIL_COLUMN) ?? -1;
      if (codeAt < 0)
        throw new OutcomesError(`The results of job ${job.id} have no “${VALIDATION_CODE_COLUMN}” column.`);
    },
    (row, number) => {
      const original = canonicalEmail(row.field(emailIndex).trim());
      const valid = validAt < 0 ? undefined : canonicalEmail(row.field(validAt).trim());
      const email = valid ?? original;
      if (email === undefined) return;
      const isSent = sentList
        ? sentList.has(email) || (original !== undefined && sentList.has(original))
        : rule!.row(row) !== false;
      if (!isSent) return;
      const code = Number(row.field(codeAt));
      const outcome = bounced.get(email) ?? (original === undefined ? undefined : bounced.get(original));
      const domain = domainOf(email);
      const family = providerFamilyOf(
        number < hostOfRow.length ? hostIds[hostOfRow[number]] : '',
        domain,
      );
      const risk = riskFor(code);
      let byC = byCode.get(code);
      if (!byC) byCode.set(code, (byC = counter()));
      let byF = byFamily.get(family);
      if (!byF) byFamily.set(family, (byF = counter()));
      for (const c of [total, byC, byF]) {
        c.sent++;
        c.predicted += risk;
      }
      if (!outcome) return;
      outcome.matched = true;
      if (outcome.kind === KIND.soft) softBounced++;
      if (outcome.kind !== KIND.hard) return;
      total.hardBounced++;
      byC.hardBounced++;
      byF.hardBounced++;
      if (code === 50) acceptedThenBounced.set(domain, (acceptedThenBounced.get(domain) ?? 0) + 1);
      if (CALLED_GOOD.has(row.status) && code !== 55) {
        missedTotal++;
        if (missed.length < MAX_MISSED_LISTED)
          missed.push({
            row: number,
            email: row.field(emailIndex).trim(),
            code,
            status: row.status,
            bouncedAt: outcome.at === undefined ? null : new Date(outcome.at * 1000).toISOString(),
          });
      }
    },
  );
  for (const entry of bounced.values()) if (!entry.matched) exportRows.unmatched++;

  const evidence = await readEvidence(
    jobEvidence,
    missed.map((row) => row.row),
  );
  const missedRows: MissedRow[] = missed.map((row) => {
    const kept = evidence.get(row.row) ?? offlineEvidence(row.code);
    return { ...row, evidence: kept, why: missedWhy(row, kept, acceptedThenBounced) };
  });

  const report: OutcomesReport = {
    jobId: job.id,
    importedAt: now.toISOString(),
    bounceFile: input.bounces.name,
    bounceLayout: imported.warnings[0] ?? '',
    sentFile: input.sent ? input.sent.name : null,
    basis: sentList ? 'sent-list' : 'ready-to-mail',
    exportRows,
    sent: total.sent,
    hardBounced: total.hardBounced,
    softBounced,
    measuredRate: total.sent === 0 ? 0 : total.hardBounced / total.sent,
    predictedRate: total.sent === 0 ? 0 : total.predicted / total.sent,
    byCode: [...byCode.entries()]
      .sort((a, b) => b[1].sent - a[1].sent || a[0] - b[0])
      .map(([code, c]) => groupOf(String(code), `${code} ${describeStatusCode(code)}`, c)),
    byProvider: PROVIDER_FAMILIES.filter((family) => byFamily.has(family)).map((family) =>
      groupOf(family, PROVIDER_FAMILY_LABELS[family], byFamily.get(family)!),
    ),
    missed: missedRows,
    missedTotal,
    knownBouncers: { added: imported.added, updated: imported.updated },
    seconds: (performance.now() - started) / 1000,
  };
  saveOutcomes(
    db,
    report,
    new Map([...byCode].map(([code, c]) => [code, { sent: c.sent, hardBounced: c.hardBounced }])),
  );
  return report;
}

/** The name of a file as the user knows it. */
export function outcomesFile(path: string, name = basename(path)): OutcomesFile {
  return { path, name };
}
