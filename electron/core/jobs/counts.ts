// The Results screen's numbers of a results file, counted row by row: statuses, (code, final status) pairs,
// domain types, role and duplicate rows, and what the default export writes and leaves out, by the exporter's
// own rule. One counter, fed either by the download pass (the export worker, exports.ts: the numbers are
// ready when the job completes) or by a read of a stored results file (results/resultsFile.ts `countResults`: older jobs,
// re-check versions).
import { groupOf } from '../../../shared/vocabulary.js';
import { DuplicateTable } from '../../../service/lists/read/dupTable.js';
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

/** What the counter reads of a row; rows that read alike are counted as one tally (ResultsCounter). */
interface RowReading {
  readonly status: string;
  /** `Validation Code`, trimmed. */
  readonly code: string;
  /** `Domain Type`, trimmed, in lower case. */
  readonly domainType: string;
  readonly isRole: boolean;
  readonly isDuplicate: boolean;
  /** The default export writes the row. */
  readonly isReady: boolean;
}

/**
 * The most tallies of rows read alike (a list has a few dozen: statuses × codes × domain types): rows of a
 * reading met past them are read one by one.
 */
const MAX_TALLIES = 4096;

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
   * Rows whose status and fields the counter reads have the same bytes are read once and counted together
   * (rows that give `tupleKeyHash`: the export worker's): reading three fields of a million rows as strings,
   * trimmed and in lower case, was most of the counter's cost (issue 38). A tally's key is the 64-bit hash of
   * those bytes, as the Duplicate column's is of an address.
   */
  private tallyKeys: DuplicateTable | undefined = new DuplicateTable(MAX_TALLIES);
  /** The tallies by their key's slot in `tallyKeys`, and in the order of their first rows (`result`'s order). */
  private readonly bySlot: { reading: RowReading; rows: number }[] = [];
  private readonly tallies: { reading: RowReading; rows: number }[] = [];
  /** The fields of a tally's key: code, domain type, role. */
  private tallyFields: readonly number[] = [];
  private readonly key = new Uint32Array(2);

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
    this.tallyFields = [this.at.code, this.at.domainType, this.at.role];
    if (!this.isRuleShared) this.rule.header?.(names);
    return true;
  }

  /** `isWritten`: whether the default export wrote the row, when its rule is shared (see the constructor). */
  row(row: ResultRow, isWritten?: boolean): void {
    const isReady = this.isRuleShared ? isWritten === true : this.rule.row(row) !== false;
    const keys = this.tallyKeys;
    if (keys === undefined || row.tupleKeyHash === undefined) {
      this.count(this.read(row, isReady), 1);
      return;
    }
    const { key } = this;
    row.tupleKeyHash(this.tallyFields, (row.isDuplicate ? 1 : 0) | (isReady ? 2 : 0), key);
    let slot: number;
    try {
      slot = keys.add(key[0], key[1]);
    } catch {
      // More readings than MAX_TALLIES: the tallies so far stay, every further row is read on its own.
      this.tallyKeys = undefined;
      this.count(this.read(row, isReady), 1);
      return;
    }
    const tally = this.bySlot[slot];
    if (tally !== undefined) tally.rows++;
    else this.tallies.push((this.bySlot[slot] = { reading: this.read(row, isReady), rows: 1 }));
  }

  private read(row: ResultRow, isReady: boolean): RowReading {
    const { at } = this;
    return {
      status: row.status,
      code: at.code < 0 ? '' : row.field(at.code).trim(),
      domainType: at.domainType < 0 ? '' : row.field(at.domainType).trim().toLowerCase(),
      isRole: at.role >= 0 && row.field(at.role).trim().toLowerCase() === 'true',
      isDuplicate: row.isDuplicate,
      isReady,
    };
  }

  /** Counts `rows` rows that read as `reading`. */
  private count(reading: RowReading, rows: number): void {
    const { status, code, domainType } = reading;
    this.rows += rows;
    this.statuses[status] = (this.statuses[status] ?? 0) + rows;
    this.groups[groupOf(status, this.isOffline)] += rows;
    if (code !== '') {
      let byStatus = this.codes.get(code);
      if (byStatus === undefined) this.codes.set(code, (byStatus = new Map<string, number>()));
      byStatus.set(status, (byStatus.get(status) ?? 0) + rows);
    }
    if (domainType !== '') this.domainTypes[domainType] = (this.domainTypes[domainType] ?? 0) + rows;
    if (reading.isRole) this.roleAccounts += rows;
    if (reading.isDuplicate) this.duplicates += rows;
    if (reading.isReady) this.ready += rows;
  }

  result(): ResultsCounts {
    for (const tally of this.tallies) {
      if (tally.rows === 0) continue;
      this.count(tally.reading, tally.rows);
      tally.rows = 0;
    }
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
