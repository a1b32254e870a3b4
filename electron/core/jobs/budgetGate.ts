// The row-by-row half of an export planned against a bounce budget (issue 37; the plan is budget.ts): which
// rows a budget export may hold, and, once the plan is made, which of the accept-all and unknown rows it takes.
// It lives apart from the planner so that the exporter's rules (exports.ts) can use it without a cycle: the
// planner reads a results file (results/resultsFile.ts), which itself uses the exporter.
//
// A row of a budget export is one of three things:
//   - base: a row the export judges safe (valid, corrected; for `clean` also any other status it keeps that is
//     neither accept-all nor unknown): always written, its risk counted;
//   - a candidate: accept-all (code 45) or unknown (codes 5, 10, 20, 999; without a code, the legacy statuses
//     unknown, unverifiable, catchall): written only as the plan allows, the first rows of its code in file
//     order;
//   - out: invalid, risky and trap rows, and what the kind leaves out.
// The gate is asked twice per row: before the export's choices (may the row be written at all) and after them
// (the row survived duplicates, role and disposable: is it counted, and is it taken). Both passes of a budget
// export run the choices over the same rows, so the rows the plan counted are exactly those the write meets.
import { exportKeepsStatus, type ExportChoice } from '../../../shared/exports.js';
import type { ResultRow } from './exports.js';

/** The results' column of each row's status code. */
export const CODE_COLUMN = 'Validation Code';

/** Codes of accept-all (45) and unknown rows (5 timeout, 10 syntax only, 20 domain only, 999 system error). */
export const BUDGET_CODES: readonly number[] = [5, 10, 20, 45, 999];

/** Statuses without a mailbox verdict: accept-all in the legacy and safe_to_send vocabularies, unknown. */
const UNSURE_STATUSES: ReadonlySet<string> = new Set(['unknown', 'unverifiable', 'catchall']);
/** Statuses a budget export never holds. */
const NEVER_STATUSES: ReadonlySet<string> = new Set(['invalid', 'risky', 'trap']);

/**
 * How many rows of each candidate code the export takes: `[code, rows]` pairs (a code absent: none); null
 * for the planning pass, which takes every row to count it. Plain data: it crosses to the export worker with
 * the rest of the export's spec.
 */
export interface BudgetTake {
  readonly take: readonly (readonly [number, number])[] | null;
}

/** What a budget export met, after its choices: base rows by the code their risk is read from, candidates by code. */
export interface BudgetTally {
  readonly base: Map<number, number>;
  readonly candidates: Map<number, number>;
  /** Candidates the plan left out (the write pass). */
  leftOut: number;
}

/** The row's code, or NaN when the results have none for it. */
function codeOf(raw: string | undefined): number {
  if (raw === undefined) return Number.NaN;
  const text = raw.trim();
  return /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
}

const OUT = -1;

/**
 * The gate of one budget export. `take` null: the planning pass (every row the export may hold is let through
 * and counted). Given: the writing pass (candidates beyond their code's share are left out).
 */
export class BudgetGate {
  readonly tally: BudgetTally = { base: new Map(), candidates: new Map(), leftOut: 0 };
  private readonly left: Map<number, number> | undefined;
  /** The row under decision: its code key (OUT when it is not for this export), and whether it is a candidate. */
  private key = OUT;
  private isCandidate = false;

  constructor(
    private readonly kind: ExportChoice,
    budget: BudgetTake,
  ) {
    this.left = budget.take ? new Map(budget.take.map(([code, rows]) => [code, rows])) : undefined;
  }

  /** Before the choices: whether the export may hold the row at all. */
  keeps(row: ResultRow): boolean {
    const { status } = row;
    this.key = OUT;
    if (NEVER_STATUSES.has(status)) return false;
    const code = codeOf(row.column(CODE_COLUMN));
    const isKnown = !Number.isNaN(code);
    if (status === 'corrected') {
      // A corrected row's code says what was wrong with the address as the list had it (210, a typo's 310…);
      // the correction mailed was checked no further than its syntax unless its own code says more.
      this.key = isKnown && code < 100 ? code : 10;
      this.isCandidate = false;
    } else if ((isKnown && BUDGET_CODES.includes(code)) || UNSURE_STATUSES.has(status)) {
      this.key = isKnown ? code : status === 'unknown' ? 999 : 45;
      this.isCandidate = true;
    } else if (exportKeepsStatus(this.kind, status)) {
      this.key = isKnown ? code : 50;
      this.isCandidate = false;
    }
    return this.key !== OUT;
  }

  /** After the choices kept the row: counts it, and answers whether the export writes it. */
  admit(): boolean {
    const key = this.key;
    if (!this.isCandidate) {
      this.tally.base.set(key, (this.tally.base.get(key) ?? 0) + 1);
      return true;
    }
    this.tally.candidates.set(key, (this.tally.candidates.get(key) ?? 0) + 1);
    if (!this.left) return true;
    const left = this.left.get(key) ?? 0;
    if (left > 0) {
      this.left.set(key, left - 1);
      return true;
    }
    this.tally.leftOut++;
    return false;
  }
}
