// Exports planned against a bounce budget (issue 37): "Keep the expected bounce rate under X%". One engine for
// the desktop's export dialog (desktopExport.ts) and `mailsieve clean --export safe --max-bounce-rate X`.
//
// The export starts from the rows it judges safe and adds the accept-all and unknown rows, the least risky
// code first (a code's risk: measured from this user's own campaign outcomes when they hold enough rows of it,
// else the stated default, shared/outcomes.ts riskOf), while the file's expected bounce rate (the sum of its
// rows' risks over its rows) stays within the budget. Two streamed passes over the results, memory bounded by
// the number of codes: the first counts the rows by code as the export would meet them (its choices —
// duplicates, role, disposable — applied: budgetGate.ts), the plan says how many rows of each candidate code
// fit, and the second is the one exporter (exports.ts) writing the export with that plan, the first rows of a
// code in file order.
import { riskOf, type BudgetOutcome } from '../../../shared/outcomes.js';
import { scanResultRows } from '../results/resultsFile.js';
import type { BudgetTake, BudgetTally } from './budgetGate.js';
import {
  ResultsProblem,
  STATUS_COLUMN,
  exportResultsFile,
  ruleOf,
  type ExportRequest,
  type ExportSpec,
  type ResultsSummary,
} from './exports.js';

/** Per status code, rows mailed and hard bounces among them (outcomes/store.ts measuredRisks). */
export type MeasuredRisks = ReadonlyMap<number, { readonly sent: number; readonly hardBounced: number }>;

/** A results file as the exporter reads it. */
export interface BudgetResults {
  readonly path: string;
  /** The file's name (whether it is a zip). */
  readonly name: string;
  readonly delimiter: string;
}

export interface BudgetPlan {
  /** What the writing pass takes of each candidate code (ExportSpec.budget). */
  readonly take: BudgetTake;
  readonly outcome: BudgetOutcome;
}

/**
 * Whether rows of total risk `risk` keep within `rate` (a share). Sums of shares carry rounding of the order
 * of 1e-16 per row: a file exactly at its budget is within it.
 */
const fits = (risk: number, rows: number, rate: number) => risk <= rate * rows * (1 + 1e-9);

/**
 * The plan of a budget export from what its first pass met: every base row, then the candidate codes from the
 * least risky (ties by code), each whole while the expected rate stays within the budget, then as many rows of
 * the next code as fit. Every later code is riskier, so none of it would fit: the rest is left out. A code
 * whose risk is within the budget is taken whole even when the safe rows alone exceed it (it brings the rate
 * down).
 */
export function planBudget(
  tally: Pick<BudgetTally, 'base' | 'candidates'>,
  maxRatePercent: number,
  measured: MeasuredRisks,
): BudgetPlan {
  const budget = maxRatePercent / 100;
  const sources = new Set<'measured' | 'default'>();
  const rateOf = (code: number) => {
    const risk = riskOf(code, measured);
    sources.add(risk.source);
    return risk.rate;
  };
  let rows = 0;
  let risk = 0;
  for (const [code, count] of [...tally.base].sort((a, b) => a[0] - b[0])) {
    rows += count;
    risk += count * rateOf(code);
  }
  const candidates = [...tally.candidates]
    .map(([code, count]) => ({ code, count, rate: rateOf(code) }))
    .sort((a, b) => a.rate - b.rate || a.code - b.code);
  const take: [number, number][] = [];
  let leftOut = 0;
  let isFull = false;
  for (const { code, count, rate } of candidates) {
    let taken = 0;
    if (!isFull) {
      if (rate <= budget) taken = count;
      else {
        // risk + k·rate ≤ budget·(rows + k)  ⇔  k ≤ (budget·rows − risk) / (rate − budget)
        taken = Math.max(0, Math.min(count, Math.floor((budget * rows - risk) / (rate - budget))));
        while (taken < count && fits(risk + (taken + 1) * rate, rows + taken + 1, budget)) taken++;
        while (taken > 0 && !fits(risk + taken * rate, rows + taken, budget)) taken--;
      }
      isFull = taken < count;
    }
    if (taken > 0) {
      take.push([code, taken]);
      rows += taken;
      risk += taken * rate;
    }
    leftOut += count - taken;
  }
  // In percent to four places (a share to the millionth): past that the sums' rounding shows, not the risks.
  const rate = rows === 0 ? 0 : Math.round((1e6 * risk) / rows) / 1e4;
  return {
    take: { take },
    outcome: {
      maxRatePercent,
      // Within the budget by the plan: never said as a hair above it for the rounding of the sums.
      expectedRatePercent: fits(risk, rows, budget) ? Math.min(rate, maxRatePercent) : rate,
      written: rows,
      leftOut,
      riskSource: sources.size === 2 ? 'mixed' : sources.has('measured') ? 'measured' : 'default',
    },
  };
}

/**
 * The first pass: the rows of the results the export would hold, by code, after its choices (the export's own
 * rule, budgetGate.ts, over every row).
 */
export async function countBudgetRows(results: BudgetResults, spec: ExportSpec): Promise<BudgetTally> {
  const rule = ruleOf({ ...spec, budget: { take: null } });
  await scanResultRows(
    results.path,
    results.name,
    results.delimiter,
    (columns, header) => {
      if (!columns.has(STATUS_COLUMN))
        throw new ResultsProblem(
          `The results file has no “${STATUS_COLUMN}” column (the list ran no validation): a bounce budget needs the rows' verdicts.`,
        );
      rule.header?.(header);
    },
    (row) => {
      rule.row(row);
    },
  );
  return rule.budget!();
}

/**
 * Writes an export planned against a bounce budget (`maxRatePercent`, in percent): plans it (the first pass),
 * then writes it with the one exporter (the second). Answers the exporter's summary and the budget's outcome.
 */
export async function exportWithBudget(
  results: BudgetResults,
  request: ExportRequest,
  maxRatePercent: number,
  measured: MeasuredRisks,
  /** The size up to which the calling thread writes (exportResultsFile's; tests try both ways). */
  inThreadUpTo?: number,
): Promise<{ summary: ResultsSummary; budget: BudgetOutcome }> {
  const tally = await countBudgetRows(results, request.spec);
  const plan = planBudget(tally, maxRatePercent, measured);
  const summary = await exportResultsFile(
    results.path,
    results.name,
    results.delimiter,
    [{ ...request, spec: { ...request.spec, budget: plan.take } }],
    undefined,
    inThreadUpTo,
  );
  return { summary, budget: plan.outcome };
}
