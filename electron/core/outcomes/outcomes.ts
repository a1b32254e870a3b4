// The outcomes of a job (issue 37), one engine for the app (History → a job → Campaign results) and the CLI
// (`mailsieve outcomes import|report`): the mailing platform's bounce export, read by the bounces import
// (service/identity/import.ts: every shape `data import bounces` reads, its hard bounces stored as known
// bouncers in the same pass), and the platform's sent list when the user has one, matched to the job's rows
// by address as the job compared them (addressKey: case ignored, after NFC, the correction when there is one). The job's
// results file and its evidence are each streamed once; memory holds the export's addresses, not the job's.
//
// Which rows were mailed: those of the sent list when given, else the job's Ready to mail export (the
// desktop's default export, decided row by row by the exporter's own rule, so the two cannot differ).
import type { Database } from 'better-sqlite3';
import { basename } from 'node:path';
import { describeStatusCode } from '../../../shared/api/codes.js';
import { looksLikeEmail } from '../../../shared/columns.js';
import { addressKey } from '../../../shared/exportChoices.js';
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
import { emailColumnOf, type BounceRecord } from '../../../service/identity/import.bounces.js';
import type { HistoryDb, JobRecord } from '../history/db.js';
import { jobChecksOf } from '../history/jobVersions.js';
import { desktopExportSpec } from '../jobs/desktopExport.js';
import { ruleOf } from '../jobs/exports.js';
import { jobEvidenceOf, offlineEvidence, scanMailHosts } from '../results/evidence.js';
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

/** Reads a sent or delivered list: the addresses of its email column (found as a bounces file's is). */
async function readSentList(file: OutcomesFile, signal?: AbortSignal): Promise<Set<string>> {
  const sent = new Set<string>();
  let emailAt = -1;
  await readCsv(
    file.path,
    (_line, row) => {
      if (emailAt < 0) {
        if (row.length === 1 && looksLikeEmail(row[0])) emailAt = 0;
        else {
          emailAt = emailColumnOf(row) ?? -1;
          if (emailAt < 0)
            throw new OutcomesError(
              `The sent list ${file.name} names no email column (email, email address, recipient or address).`,
            );
          return;
        }
      }
      const email = addressKey(row[emailAt] ?? '');
      if (email !== '') sent.add(email);
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

function groupOf(id: string, label: string, c: Counter): OutcomeGroup {
  return {
    id,
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
      const email = addressKey(record.email);
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

  // Each file once: the results first (what was mailed and what bounced, per row: 4 bytes a row), then the
  // evidence (the mail host of each mailed row, for its provider family, and the missed rows' evidence).
  /** Per row: its risk's code + 1 when it was mailed (0: not mailed), its outcome, its domain's family. */
  let mailedCode = new Int16Array(1024);
  let outcomeOf = new Uint8Array(1024);
  let domainFamilyOf = new Uint8Array(1024);
  const familyIndex = new Map<ProviderFamily, number>(PROVIDER_FAMILIES.map((family, i) => [family, i]));
  const familyOfDomain = new Map<string, number>();
  const grow = (row: number) => {
    while (row >= mailedCode.length) {
      const size = mailedCode.length * 2;
      const codes = new Int16Array(size);
      codes.set(mailedCode);
      mailedCode = codes;
      const outcomes = new Uint8Array(size);
      outcomes.set(outcomeOf);
      outcomeOf = outcomes;
      const families = new Uint8Array(size);
      families.set(domainFamilyOf);
      domainFamilyOf = families;
    }
  };

  const risks = measuredRisks(db, job.id);
  const riskCache = new Map<number, number>();
  const riskFor = (code: number) => {
    let rate = riskCache.get(code);
    if (rate === undefined) riskCache.set(code, (rate = riskOf(code, risks).rate));
    return rate;
  };
  const total = counter();
  const byCode = new Map<number, Counter>();
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
    (columns, header) => {
      // The export's rule reads the header first, as the exporter has it do (its shaper knows the columns).
      rule?.header?.(header);
      codeAt = columns.get(VALIDATION_CODE_COLUMN) ?? -1;
      validAt = columns.get(VALID_EMAIL_COLUMN) ?? -1;
      if (codeAt < 0)
        throw new OutcomesError(`The results of job ${job.id} have no “${VALIDATION_CODE_COLUMN}” column.`);
    },
    (row, number) => {
      // The job's own key of an address (its duplicates are found by it): the correction when there is one.
      const originalText = row.field(emailIndex);
      const validText = validAt < 0 ? '' : row.field(validAt);
      const original = addressKey(originalText);
      // Nearly every valid row's Valid Email is its own address: one key serves.
      const valid = validText === '' ? '' : validText === originalText ? original : addressKey(validText);
      const email = valid || original;
      // The rule sees every row: it removes duplicates as the export did, keeping the first. An address of the
      // sent list was mailed once: its first row counts, not its duplicates too.
      const isSent = sentList
        ? sentList.delete(email) || sentList.delete(original)
        : rule!.row(row) !== false;
      if (!isSent) return;
      const code = Number(row.field(codeAt));
      const outcome = bounced.get(email) ?? bounced.get(original);
      const domain = domainOf(email);
      let domainFamily = familyOfDomain.get(domain);
      if (domainFamily === undefined)
        familyOfDomain.set(domain, (domainFamily = familyIndex.get(providerFamilyOf('', domain))!));
      grow(number);
      mailedCode[number] = code + 1;
      domainFamilyOf[number] = domainFamily;
      const risk = riskFor(code);
      let byC = byCode.get(code);
      if (!byC) byCode.set(code, (byC = counter()));
      total.sent++;
      total.predicted += risk;
      byC.sent++;
      byC.predicted += risk;
      if (!outcome) return;
      outcome.matched = true;
      outcomeOf[number] = outcome.kind + 1;
      if (outcome.kind === KIND.soft) softBounced++;
      if (outcome.kind !== KIND.hard) return;
      total.hardBounced++;
      byC.hardBounced++;
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

  // The evidence: each mailed row's family by the mail host that answered it (else by its domain), and the
  // missed rows' evidence.
  const familyOfHost = new Map<string, number>();
  const hostFamilyOf = new Uint8Array(mailedCode.length).fill(255);
  const wanted = new Set(missed.map((row) => row.row));
  const evidence = new Map<number, Evidence>();
  await scanMailHosts(jobEvidenceOf(db, input.resultsDir, job), (row, host, evidenceOf) => {
    if (row >= mailedCode.length || mailedCode[row] === 0) return;
    if (wanted.has(row)) evidence.set(row, evidenceOf());
    if (host === '') return;
    let family = familyOfHost.get(host);
    if (family === undefined) familyOfHost.set(host, (family = familyIndex.get(providerFamilyOf(host, ''))!));
    // A company's own mail host says nothing of a provider: its domain may still (a well-known mailbox domain).
    if (family !== familyIndex.get('other')) hostFamilyOf[row] = family;
  });
  const byFamily = PROVIDER_FAMILIES.map(() => counter());
  for (let row = 0; row < mailedCode.length; row++) {
    if (mailedCode[row] === 0) continue;
    const c = byFamily[hostFamilyOf[row] !== 255 ? hostFamilyOf[row] : domainFamilyOf[row]];
    c.sent++;
    c.predicted += riskFor(mailedCode[row] - 1);
    if (outcomeOf[row] === KIND.hard + 1) c.hardBounced++;
  }
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
    byProvider: PROVIDER_FAMILIES.flatMap((family, i) =>
      byFamily[i].sent === 0 ? [] : [groupOf(family, PROVIDER_FAMILY_LABELS[family], byFamily[i])],
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
