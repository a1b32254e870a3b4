// Which rows of a job's results a drill-down shows and "Export these rows" writes (issue #12: "drill down
// anywhere"): rows of a status, a code (under the status the rows ended in), a domain type, role accounts or
// rows marked duplicate. One matcher for the row view (electron/core/results.ts) and the exporter
// (electron/core/jobs/exports.ts), so the rows shown and the rows exported are the same rows.
import { z } from 'zod';

export const rowFilterSchema = z
  .object({
    /** The row's `Validation Status`, lower case (either vocabulary). */
    status: z.string().min(1).max(32).optional(),
    /** The row's `Validation Code`. */
    code: z.number().int().min(0).max(9999).optional(),
    /** The row's `Domain Type` (e.g. `disposable`, `freeisp`). */
    domainType: z.string().min(1).max(32).optional(),
    /** `Role Account` is true. */
    role: z.literal(true).optional(),
    /** `Duplicate` is true (every occurrence of an address seen more than once). */
    duplicate: z.literal(true).optional(),
    /**
     * Rows the default export of this kind leaves out as repeats of an address it already wrote (the
     * headline's Duplicates left out). Decided by the exporter's rule row by row (electron/core/jobs/exports.ts),
     * not by `rowMatches`.
     */
    leftOutBy: z.enum(['clean', 'safe']).optional(),
  })
  .strict();
export type RowFilter = z.infer<typeof rowFilterSchema>;

/** The appended columns a filter reads (spec: "Results file"). */
export const FILTER_COLUMNS = {
  status: 'Validation Status',
  code: 'Validation Code',
  domainType: 'Domain Type',
  role: 'Role Account',
  duplicate: 'Duplicate',
} as const;

const isTrue = (value: string | undefined) => (value ?? '').trim().toLowerCase() === 'true';

/**
 * Whether a row matches the filter's conditions on its own columns (`leftOutBy` is the exporter's to decide):
 * `column` answers a field by its header name (undefined: no such column).
 */
export function rowMatches(filter: RowFilter, column: (name: string) => string | undefined): boolean {
  if (
    filter.status !== undefined &&
    (column(FILTER_COLUMNS.status) ?? '').trim().toLowerCase() !== filter.status
  )
    return false;
  if (filter.code !== undefined && Number(column(FILTER_COLUMNS.code) ?? 'x') !== filter.code) return false;
  if (
    filter.domainType !== undefined &&
    (column(FILTER_COLUMNS.domainType) ?? '').trim().toLowerCase() !== filter.domainType
  )
    return false;
  if (filter.role && !isTrue(column(FILTER_COLUMNS.role))) return false;
  if (filter.duplicate && !isTrue(column(FILTER_COLUMNS.duplicate))) return false;
  return true;
}

/** A filter with no condition: every row. */
export const isEveryRow = (filter: RowFilter): boolean => Object.keys(filter).length === 0;
