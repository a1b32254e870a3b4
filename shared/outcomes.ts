// After the campaign (issue 37): what a job's verdicts were worth against the campaign's real bounces, what
// changed between two runs of the same addresses, and exports planned against a bounce budget. The shapes are
// shared by the engine (electron/core/outcomes/), the CLI (`mailsieve outcomes`, `clean --compare-with`,
// `clean --max-bounce-rate`) and the app (History → a job → Campaign results), so all three say the same
// numbers. Pure: no node:*, no DOM.
import { z } from 'zod';
import { formatCount } from './count.js';

// ---------------------------------------------------------------------------------------------------------
// Evidence: why a row got its code (the deciding check, the host and its reply, the source, and when)

/** The check that decided a row: syntax, a list (allow, suppression, known bouncers, disposable), DNS, SMTP. */
export const EVIDENCE_STEPS = ['syntax', 'list', 'dns', 'smtp'] as const;
export type EvidenceStep = (typeof EVIDENCE_STEPS)[number];

export const evidenceSchema = z.object({
  step: z.enum(EVIDENCE_STEPS),
  /** The mail host (SMTP) or the domain asked (DNS) that decided; '' when none did (syntax, a list). */
  host: z.string(),
  /** The reply that decided, code and text ("550 5.1.1 User unknown", "NXDOMAIN"); '' when none. */
  reply: z.string(),
  /** The source address or proxy the check went out from; '' offline. */
  source: z.string(),
  /** When the row was checked (ISO 8601); '' when not known. */
  checkedAt: z.string(),
  /** The explain line in words ("mx1.example.com: 550 5.1.1 User unknown"). */
  why: z.string(),
});
export type Evidence = z.infer<typeof evidenceSchema>;

/**
 * The step that decided a row checked without the network, by its code: a list (the client's allow or
 * suppression lists, known bouncers, traps, opt-outs: 55, 255, 520, 525–540), else the address itself.
 */
export function offlineStepOf(code: number): EvidenceStep {
  return code === 55 || code === 255 || code === 520 || (code >= 525 && code <= 540) ? 'list' : 'syntax';
}

/** An instant as evidence says it: ISO 8601 UTC to the second ("2026-11-12T09:00:02Z"; a list keeps one a row). */
export function evidenceTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The SMTP reply code at the start of an evidence's reply (550 of "550 5.1.1 …"), or undefined. */
export function replyCodeOf(reply: string): number | undefined {
  const match = /^([2-5]\d\d)\b/.exec(reply.trim());
  return match ? Number(match[1]) : undefined;
}

/** An evidence in one short line: "550 5.1.1 from mx1.example.com on 12 Nov 2026". */
export function evidenceWords(evidence: Evidence | null | undefined): string {
  if (!evidence) return 'no evidence kept';
  const when = evidence.checkedAt ? ` on ${shortDate(evidence.checkedAt)}` : '';
  if (evidence.step === 'smtp' || evidence.step === 'dns') {
    const reply = evidence.reply || evidence.why || 'an answer';
    return `${reply}${evidence.host ? ` from ${evidence.host}` : ''}${when}`;
  }
  return `${evidence.why || `decided by ${evidence.step}`}${when}`;
}

function shortDate(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return at.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
}

// ---------------------------------------------------------------------------------------------------------
// Mail provider families, named from the MX hosts a job saw (else from the address's own domain)

export const PROVIDER_FAMILIES = ['google', 'microsoft', 'yahoo', 'apple', 'gateway', 'other'] as const;
export type ProviderFamily = (typeof PROVIDER_FAMILIES)[number];

export const PROVIDER_FAMILY_LABELS: Readonly<Record<ProviderFamily, string>> = {
  google: 'Google',
  microsoft: 'Microsoft',
  yahoo: 'Yahoo/AOL',
  apple: 'Apple',
  gateway: 'Proofpoint/Mimecast/Barracuda gateways',
  other: 'Other',
};

/** MX host suffixes of each family (a host matches a suffix at a label boundary). */
const MX_SUFFIXES: readonly (readonly [string, ProviderFamily])[] = [
  ['google.com', 'google'],
  ['googlemail.com', 'google'],
  ['outlook.com', 'microsoft'],
  ['hotmail.com', 'microsoft'],
  ['yahoodns.net', 'yahoo'],
  ['yahoo.com', 'yahoo'],
  ['aol.com', 'yahoo'],
  ['icloud.com', 'apple'],
  ['me.com', 'apple'],
  ['pphosted.com', 'gateway'],
  ['ppe-hosted.com', 'gateway'],
  ['mimecast.com', 'gateway'],
  ['mimecast.co.za', 'gateway'],
  ['barracudanetworks.com', 'gateway'],
];

/** Mailbox domains whose provider is known without asking DNS (an offline job saw no MX host). */
const MAILBOX_DOMAINS: ReadonlyMap<string, ProviderFamily> = new Map<string, ProviderFamily>([
  ['gmail.com', 'google'],
  ['googlemail.com', 'google'],
  ['outlook.com', 'microsoft'],
  ['hotmail.com', 'microsoft'],
  ['hotmail.co.uk', 'microsoft'],
  ['live.com', 'microsoft'],
  ['msn.com', 'microsoft'],
  ['yahoo.com', 'yahoo'],
  ['yahoo.co.uk', 'yahoo'],
  ['ymail.com', 'yahoo'],
  ['aol.com', 'yahoo'],
  ['icloud.com', 'apple'],
  ['me.com', 'apple'],
  ['mac.com', 'apple'],
]);

function hasSuffix(host: string, suffix: string): boolean {
  return host === suffix || host.endsWith(`.${suffix}`);
}

/**
 * The family of a row's mail provider: from the MX host that answered when there was one, else from the
 * address's domain when it is a well-known mailbox domain, else other.
 */
export function providerFamilyOf(mxHost: string, domain: string): ProviderFamily {
  const host = mxHost.trim().toLowerCase().replace(/\.$/, '');
  if (host !== '') for (const [suffix, family] of MX_SUFFIXES) if (hasSuffix(host, suffix)) return family;
  return MAILBOX_DOMAINS.get(domain.trim().toLowerCase()) ?? 'other';
}

// ---------------------------------------------------------------------------------------------------------
// Bounce risk: what a verdict predicts, by status code

/**
 * The stated default share of rows of each code that hard-bounce when mailed, used where the user's own past
 * outcomes hold too few rows of that code (MIN_MEASURED_ROWS). Valid mailboxes bounce rarely; an accept-all
 * domain says nothing of the mailbox; an unknown or a syntax-only verdict says less.
 */
export function defaultBounceRisk(code: number): number {
  if (code === 50 || code === 55) return 0.005;
  if (code === 45) return 0.08;
  if (code === 20) return 0.1;
  if (code === 10) return 0.12;
  if (code === 5 || code === 999) return 0.15;
  if (code >= 525 && code <= 540) return 0.3;
  if (code >= 100) return 0.9;
  return 0.15;
}

/** Rows of a code the user's past outcomes must hold before their measured rate replaces the default. */
export const MIN_MEASURED_ROWS = 100;

/** Per status code, rows mailed and hard bounces among them, over the outcomes a user imported. */
export const measuredRiskSchema = z.array(
  z.object({ code: z.number().int(), sent: z.number(), hardBounced: z.number() }),
);
export type MeasuredRisk = z.infer<typeof measuredRiskSchema>;

/** The risk of a code: measured when the user's outcomes hold enough rows of it, else the default. */
export function riskOf(
  code: number,
  measured: ReadonlyMap<number, { sent: number; hardBounced: number }>,
): { rate: number; source: 'measured' | 'default' } {
  const seen = measured.get(code);
  if (seen && seen.sent >= MIN_MEASURED_ROWS)
    return { rate: seen.hardBounced / seen.sent, source: 'measured' };
  return { rate: defaultBounceRisk(code), source: 'default' };
}

// ---------------------------------------------------------------------------------------------------------
// Outcomes of a job: its verdicts against the campaign's bounces

export const outcomeGroupSchema = z.object({
  /** The status code (byCode) or the provider family (byProvider). */
  id: z.string(),
  label: z.string(),
  sent: z.number(),
  hardBounced: z.number(),
  /** hardBounced / sent (0 when nothing was sent). */
  measuredRate: z.number(),
  /** What the verdicts predicted for these rows (mean risk of their codes). */
  predictedRate: z.number(),
});
export type OutcomeGroup = z.infer<typeof outcomeGroupSchema>;

export const missedRowSchema = z.object({
  /** 1-based data row of the job's results (blank lines not counted). */
  row: z.number().int(),
  email: z.string(),
  code: z.number().int(),
  status: z.string(),
  /** When the platform says it bounced (ISO 8601), or null. */
  bouncedAt: z.string().nullable(),
  evidence: evidenceSchema.nullable(),
  /** A one-line why in words where a pattern is known; '' otherwise. */
  why: z.string(),
});
export type MissedRow = z.infer<typeof missedRowSchema>;

/** Missed rows a report lists (all are counted in missedTotal). */
export const MAX_MISSED_LISTED = 1000;

export const outcomesReportSchema = z.object({
  jobId: z.number().int(),
  importedAt: z.string(),
  /** The bounce or suppression export's file name, and how it was read (bounceLayout's description). */
  bounceFile: z.string(),
  bounceLayout: z.string(),
  /** The sent or delivered list's file name, when the user gave one. */
  sentFile: z.string().nullable(),
  /** Which rows count as mailed: the job's Ready to mail export, or those of the sent list. */
  basis: z.enum(['ready-to-mail', 'sent-list']),
  /** Rows of the bounce export by kind, and those matching no row of the job. */
  exportRows: z.object({
    hard: z.number(),
    soft: z.number(),
    other: z.number(),
    rejected: z.number(),
    unmatched: z.number(),
  }),
  /** Rows of the job counted as mailed, and the hard and soft bounces among them. */
  sent: z.number(),
  hardBounced: z.number(),
  softBounced: z.number(),
  measuredRate: z.number(),
  predictedRate: z.number(),
  byCode: z.array(outcomeGroupSchema),
  byProvider: z.array(outcomeGroupSchema),
  /** Rows called valid or accept-all that hard-bounced: the first MAX_MISSED_LISTED, all counted. */
  missed: z.array(missedRowSchema),
  missedTotal: z.number(),
  /** The hard bounces put in the known-bouncers store (code 520 next time). */
  knownBouncers: z.object({ added: z.number(), updated: z.number() }),
  seconds: z.number(),
});
export type OutcomesReport = z.infer<typeof outcomesReportSchema>;

// ---------------------------------------------------------------------------------------------------------
// What changed since the last run of the same addresses

export const changedVerdictSchema = z.object({
  status: z.string(),
  code: z.number().int(),
  evidence: evidenceSchema.nullable(),
});

export const changedRowSchema = z.object({
  /** The row in the newer job. */
  row: z.number().int(),
  email: z.string(),
  before: changedVerdictSchema,
  after: changedVerdictSchema,
  /** "was 250 from mx1 on 12 Nov 2026, now 550 5.1.1 from mx1 on 20 Nov 2026". */
  words: z.string(),
});
export type ChangedRow = z.infer<typeof changedRowSchema>;

export const jobChangesSchema = z.object({
  jobId: z.number().int(),
  /** The latest earlier job holding the same addresses; null when there is none. */
  earlierJobId: z.number().int().nullable(),
  /**
   * The version of the earlier job's results compared when it is the job's own previous version (a re-check
   * is a run: results/recheckJob.ts); null when the earlier job's current results were compared, or none.
   */
  earlierVersion: z.number().int().nullable(),
  earlierAt: z.string().nullable(),
  /**
   * Addresses found in both jobs, and those whose status or code changed (one row each: the newer job's first
   * row of the address; a list's duplicate rows share one verdict).
   */
  compared: z.number(),
  changed: z.number(),
  /** Changes by (before → after) status, most first. */
  byChange: z.array(z.object({ before: z.string(), after: z.string(), rows: z.number() })),
  /** A page of the changed rows. */
  rows: z.array(changedRowSchema),
});
export type JobChanges = z.infer<typeof jobChangesSchema>;

// ---------------------------------------------------------------------------------------------------------
// Exports planned against a bounce budget

/** The exports a budget plans (`--max-bounce-rate`, the dialog's budget): those that start from the safe rows. */
export const BUDGET_EXPORT_KINDS = ['safe', 'clean'] as const;
export type BudgetExportKind = (typeof BUDGET_EXPORT_KINDS)[number];

export function isBudgetExportKind(kind: string): kind is BudgetExportKind {
  return (BUDGET_EXPORT_KINDS as readonly string[]).includes(kind);
}

/** The budget the export dialog offers first, in percent. */
export const DEFAULT_MAX_BOUNCE_PERCENT = 2;

/** What a budget export wrote: its expected bounce rate and what it left out to keep under the budget. */
export const budgetOutcomeSchema = z.object({
  /** The budget asked for, in percent. */
  maxRatePercent: z.number(),
  /** The expected hard-bounce rate of the rows written, in percent. */
  expectedRatePercent: z.number(),
  written: z.number(),
  /** Accept-all and unknown rows left out to keep under the budget. */
  leftOut: z.number(),
  /** Whether the risks came from the user's own outcomes (for some codes) or from the stated defaults. */
  riskSource: z.enum(['measured', 'default', 'mixed']),
});
export type BudgetOutcome = z.infer<typeof budgetOutcomeSchema>;

/**
 * A budget export in words (the CLI's line, the export dialog's notice): "Expected bounce rate 1.84% — 120
 * accept-all and unknown rows left out.", saying so when the rows judged safe alone expect more than the budget.
 */
export function budgetWords(outcome: BudgetOutcome): string {
  const over =
    outcome.expectedRatePercent > outcome.maxRatePercent
      ? `, above the ${outcome.maxRatePercent}% budget (the rows judged safe alone expect more)`
      : '';
  const left =
    outcome.leftOut === 0
      ? 'no accept-all or unknown row left out'
      : `${formatCount(outcome.leftOut)} accept-all and unknown row${outcome.leftOut === 1 ? '' : 's'} left out`;
  return `Expected bounce rate ${outcome.expectedRatePercent.toFixed(2)}%${over} — ${left}.`;
}

/** Where a budget export's risks came from, in words. */
export function budgetRiskWords(source: BudgetOutcome['riskSource']): string {
  switch (source) {
    case 'measured':
      return 'Risks measured from your own campaigns (Campaign results).';
    case 'mixed':
      return `Risks measured from your own campaigns where they hold ${MIN_MEASURED_ROWS} mailed rows of a code, the stated defaults for the rest.`;
    case 'default':
      return 'Risks are the stated defaults: import campaign results to measure your own.';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Words

/** A rate as a person reads it: "0.97%". */
export function percentWords(rate: number): string {
  return `${(rate * 100).toFixed(2)}%`;
}

/** The headline of a report in one sentence (the CLI's first line, the app's summary). */
export function outcomesHeadline(report: OutcomesReport): string {
  const mailed =
    report.basis === 'sent-list' ? `the sent list (${report.sentFile})` : 'the Ready to mail export';
  return (
    `Of ${formatCount(report.sent)} rows mailed (${mailed}), ${formatCount(report.hardBounced)} ` +
    `hard-bounced: ${percentWords(report.measuredRate)} measured against ${percentWords(report.predictedRate)} ` +
    `the verdicts predicted.`
  );
}
