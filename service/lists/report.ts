// The `reporting` of the email_validation service, shaped as the spec's list resource shows it.
import { invalidCategoryForCode, statusForCode } from '../../shared/api/codes.js';
import {
  REPORT_DOMAIN_TYPE_KEYS,
  REPORT_INVALID_CATEGORY_KEYS,
  REPORT_STATUS_KEYS,
  type EmailValidationReporting,
} from '../../shared/api/list.js';
import { DOMAIN_TYPES } from '../../shared/api/verification.js';
import { DOMAIN_TYPE_REPORT_KEYS } from '../../shared/vocabulary.js';
import {
  FLAG_DOMAIN_MASK,
  FLAG_DOMAIN_SHIFT,
  FLAG_ROLE,
  FLAG_STATUS_MASK,
  LIST_ROW_STATUSES,
} from './rowFlags.js';
import type { ReportState } from './types.js';

const INVALID = LIST_ROW_STATUSES.indexOf('invalid');

const STATUS_KEY: Record<(typeof LIST_ROW_STATUSES)[number], (typeof REPORT_STATUS_KEYS)[number]> = {
  valid: 'Valid',
  invalid: 'Invalid',
  risky: 'Risky',
  unverifiable: 'Unverifiable',
  unknown: 'Unknown',
  corrected: 'Corrected',
};

/**
 * Counts rows as they are written. Every key of `statuses`, `invalid_categories` and `domain_type` is present,
 * zeros included, so a report reads the same whatever the list held:
 * - `statuses` counts each row once, by its list status (a corrected row under Corrected only);
 * - `invalid_categories` counts the rows whose status is invalid, by the category of their code;
 * - `domain_type` counts every row, those whose domain has no known type (or no domain at all) under Unknown;
 * - `status_codes` counts every row by the engine's code, a corrected row by the code of its original address;
 * - `trap_hits` counts rows whose code is a trap in the spec's table (525–540: offline, disposable domains).
 */
export class ReportCounter {
  private readonly statuses = new Float64Array(LIST_ROW_STATUSES.length);
  private readonly domainTypes = new Float64Array(DOMAIN_TYPES.length + 1);
  /** Rows by status code (codes run from 5 to 999), and the invalid rows among them by code. */
  private readonly codes = new Float64Array(1024);
  private readonly invalidCodes = new Float64Array(1024);
  private roles = 0;

  /** The counts as plain data (a part's, kept with it until the list is complete). */
  toState(): ReportState {
    const sparse = (counts: Float64Array) => {
      const out: [number, number][] = [];
      counts.forEach((count, code) => {
        if (count > 0) out.push([code, count]);
      });
      return out;
    };
    return {
      statuses: [...this.statuses],
      domainTypes: [...this.domainTypes],
      codes: sparse(this.codes),
      invalidCodes: sparse(this.invalidCodes),
      roles: this.roles,
    };
  }

  /** Adds the counts of another counter (a part's), as if its rows had been counted here. */
  addState(state: ReportState): void {
    state.statuses.forEach((count, i) => (this.statuses[i] += count));
    state.domainTypes.forEach((count, i) => (this.domainTypes[i] += count));
    for (const [code, count] of state.codes) this.codes[code] += count;
    for (const [code, count] of state.invalidCodes) this.invalidCodes[code] += count;
    this.roles += state.roles;
  }

  /** Counts a row. NOTE: codes outside 0–1023 are counted as 999 (system error); the engine gives none. */
  add(code: number, flags: number): void {
    const c = code >= 0 && code < 1024 ? code : 999;
    this.statuses[flags & FLAG_STATUS_MASK]++;
    this.domainTypes[(flags & FLAG_DOMAIN_MASK) >> FLAG_DOMAIN_SHIFT]++;
    if (flags & FLAG_ROLE) this.roles++;
    this.codes[c]++;
    if ((flags & FLAG_STATUS_MASK) === INVALID) this.invalidCodes[c]++;
  }

  reporting(): EmailValidationReporting {
    const statuses = Object.fromEntries(REPORT_STATUS_KEYS.map((key) => [key, 0])) as Record<string, number>;
    LIST_ROW_STATUSES.forEach((status, i) => (statuses[STATUS_KEY[status]] = this.statuses[i]!));
    const categories = Object.fromEntries(REPORT_INVALID_CATEGORY_KEYS.map((key) => [key, 0])) as Record<
      string,
      number
    >;
    this.invalidCodes.forEach((count, code) => {
      const category = count > 0 ? invalidCategoryForCode(code) : undefined;
      if (category) categories[category] = (categories[category] ?? 0) + count;
    });
    const domainType = Object.fromEntries(REPORT_DOMAIN_TYPE_KEYS.map((key) => [key, 0])) as Record<
      string,
      number
    >;
    domainType.Unknown = this.domainTypes[0]!;
    DOMAIN_TYPES.forEach((type, i) => (domainType[DOMAIN_TYPE_REPORT_KEYS[type]] = this.domainTypes[i + 1]!));
    const statusCodes: Record<string, number> = {};
    let trapHits = 0;
    this.codes.forEach((count, code) => {
      if (count === 0) return;
      statusCodes[String(code)] = count;
      if (statusForCode(code, 'safe_to_send') === 'trap') trapHits += count;
    });
    return {
      statuses,
      invalid_categories: categories,
      domain_type: domainType,
      role_accounts: this.roles,
      status_codes: statusCodes,
      trap_hits: { 'Trap Hits': trapHits },
    };
  }
}
