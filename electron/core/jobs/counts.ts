// The Results screen's numbers of a results file, counted row by row: statuses, (code, final status) pairs,
// domain types, role and duplicate rows, and what the default export writes and leaves out, by the exporter's
// own rule. One counter, fed either by the download pass (the export worker, exports.ts: the numbers are
// ready when the job completes) or by a read of a stored results file (results/resultsFile.ts `countResults`: older jobs,
// re-check versions).
import { groupOf } from '../../../shared/vocabulary.js';
import { STATUS_COLUMN, type ExportRule, type ExportSpec, type ResultRow } from './exports.js';

/** One line of the status-code table: rows of a code under the status they ended in. */
export interface CodeCount {
  readonly code: number;
  readonly status: string;
  readonly rows: number;
}

export interface ResultsCounts {
  /** Data rows. */
  readonly rows: number;
  /** The default export's kind, and the rows it writes with its default choices (the headline's Ready to mail). */
  readonly exportKind: string;
  readonly ready: number;
  readonly invalid: number;
  readonly risky: number;
  readonly unknown: number;
  /** Rows the default export leaves out as repeats of an address it already wrote. */
  readonly duplicatesLeftOut: number;
  /** Rows by final status (lower case). */
  readonly statuses: Readonly<Record<string, number>>;
  /** (code, final status) pairs, most rows first. */
  readonly codes: CodeCount[];
  /** Rows by `Domain Type` (as the results file has it). */
  readonly domainTypes: Readonly<Record<string, number>>;
  readonly roleAccounts: number;
  /** Rows whose `Duplicate` is true (every occurrence). */
  readonly duplicates: number;
}

/** What to count a results file for (it crosses to the export worker): the default export, the checks run. */
export interface CountsRequest {
  /** The desktop's default export (jobs/desktopExport.ts `desktopExportSpec`): its rows are Ready to mail. */
  readonly spec: ExportSpec;
  /** The job ran offline checks (unknown rows are mailable). */
  readonly isOffline: boolean;
}

/**
 * Counts rows as they pass: `header` once with the results' column names, `row` for each data row (its
 * `status` lower case, `isDuplicate` from its `Duplicate`), then `result`. `rule` is the default export's
 * (exports.ts `ruleOf`), run alongside to count what it writes.
 */
export class ResultsCounter {
  private at = { code: -1, domainType: -1, role: -1 };
  private readonly statuses: Record<string, number> = {};
  /** Rows by code, then by final status (both strings as the results have them). */
  private readonly codes = new Map<string, Map<string, number>>();
  private readonly domainTypes: Record<string, number> = {};
  private readonly groups = { ready: 0, invalid: 0, risky: 0, unknown: 0 };
  private rows = 0;
  private ready = 0;
  private roleAccounts = 0;
  private duplicates = 0;

  /**
   * `isRuleShared`: `rule` is an export's own, run by the exporter for that export (the default export
   * written in the same pass): each row's decision is then given to `row`, not asked again (a rule that
   * removes duplicates would take a row for a repeat of itself), and its header is the exporter's to read.
   */
  constructor(
    private readonly rule: ExportRule,
    private readonly kind: string,
    private readonly isOffline: boolean,
    private readonly isRuleShared = false,
  ) {}

  /** False when the results have no `Validation Status` (the job ran no validation): nothing to count. */
  header(names: readonly string[]): boolean {
    const index = (name: string) => names.lastIndexOf(name);
    if (index(STATUS_COLUMN) < 0) return false;
    this.at = {
      code: index('Validation Code'),
      domainType: index('Domain Type'),
      role: index('Role Account'),
    };
    if (!this.isRuleShared) this.rule.header?.(names);
    return true;
  }

  /** `isWritten`: whether the default export wrote the row, when its rule is shared (see the constructor). */
  row(row: ResultRow, isWritten?: boolean): void {
    const { status, isDuplicate } = row;
    this.rows++;
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
    this.groups[groupOf(status, this.isOffline)]++;
    const at = this.at;
    const code = at.code < 0 ? '' : row.field(at.code).trim();
    if (code !== '') {
      let byStatus = this.codes.get(code);
      if (byStatus === undefined) this.codes.set(code, (byStatus = new Map<string, number>()));
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    }
    const domainType = at.domainType < 0 ? '' : row.field(at.domainType).trim().toLowerCase();
    if (domainType !== '') this.domainTypes[domainType] = (this.domainTypes[domainType] ?? 0) + 1;
    if (at.role >= 0 && row.field(at.role).trim().toLowerCase() === 'true') this.roleAccounts++;
    if (isDuplicate) this.duplicates++;
    if (this.isRuleShared ? isWritten === true : this.rule.row(row) !== false) this.ready++;
  }

  result(): ResultsCounts {
    return {
      rows: this.rows,
      exportKind: this.kind,
      ready: this.ready,
      invalid: this.groups.invalid,
      risky: this.groups.risky,
      unknown: this.groups.unknown,
      duplicatesLeftOut: this.rule.leftOut?.().duplicates ?? 0,
      statuses: { ...this.statuses },
      codes: [...this.codes.entries()]
        .flatMap(([code, byStatus]) =>
          [...byStatus.entries()].map(([status, count]) => ({ code: Number(code), status, rows: count })),
        )
        .sort((a, b) => b.rows - a.rows || a.code - b.code || a.status.localeCompare(b.status)),
      domainTypes: { ...this.domainTypes },
      roleAccounts: this.roleAccounts,
      duplicates: this.duplicates,
    };
  }
}
