// The service's limit of rows per list, in words: said only from an exact count of a file's data rows (the
// mapper's estimate from its first 256 KB is never the ground for it), by the inspection and the mapper alike.
import { formatCount } from '../count.js';
import { PART_LIMIT } from './constants.js';

export interface RowLimitWarning {
  readonly code: 'too-many-rows';
  readonly message: string;
}

/** The warning for `rows` data rows (an exact count) over the limit; undefined at or under it. */
export function rowLimitWarning(rows: number, partLimit = PART_LIMIT): RowLimitWarning | undefined {
  if (rows <= partLimit) return undefined;
  const parts = Math.ceil(rows / partLimit);
  return {
    code: 'too-many-rows',
    message:
      `${formatCount(rows)} rows: the service takes at most ${formatCount(partLimit)} rows per list. ` +
      `Split the file into ${parts} parts to send every row.`,
  };
}
