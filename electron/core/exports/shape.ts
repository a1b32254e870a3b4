// Rows of a results file shaped for import (issue #12): the exporter hands each row it selected (by status)
// to a RowShaper, which puts the address to mail in the address column (the correction, for corrected rows,
// with the original kept in `Original Email`), and leaves out duplicates (keeping the first), role and
// disposable addresses as the choices say. The results file itself is never changed.
import type { VALIDATION_COLUMNS } from '../../../shared/api/listServices.js';
import { columnKindOf } from '../../../shared/columns.js';
import {
  ORIGINAL_EMAIL_COLUMN,
  addressKey,
  type ExportChoices,
  type LeftOut,
} from '../../../shared/exportChoices.js';

export class ShapeProblem extends Error {
  readonly code = 'results-unreadable';
}

/** Where the columns a shaper reads are, in a results header. */
export interface ResultsLayout {
  /** The address column (0-based). */
  readonly email: number;
  readonly status: number;
  readonly domainType: number;
  readonly role: number;
  readonly validEmail: number;
}

/**
 * The layout of a results header. The appended columns come last (searched from the end, in case the input
 * has a column of the same name). `emailIndex`: the list's email column, 0-based (-1: the one its header names).
 */
export function resultsLayout(header: readonly string[], emailIndex: number): ResultsLayout {
  const at = (name: (typeof VALIDATION_COLUMNS)[number]) => header.lastIndexOf(name);
  const status = at('Validation Status');
  // Unknown (-1, e.g. a list bought later by its id): the input column the header names as the email.
  if (emailIndex < 0 && status > 0)
    emailIndex = header.slice(0, status).findIndex((name) => columnKindOf(name) === 'email');
  const layout = {
    email: emailIndex,
    status,
    domainType: at('Domain Type'),
    role: at('Role Account'),
    validEmail: at('Valid Email'),
  };
  if (layout.status < 0)
    throw new ShapeProblem('The results file has no “Validation Status” column (the job ran no validation).');
  if (emailIndex < 0 || emailIndex >= layout.status)
    throw new ShapeProblem('The results file has no email column before its appended columns.');
  return layout;
}

/**
 * Shapes rows for one export. `shape` answers the row to write, or null when the choices leave it out
 * (counted in `leftOut`). NOTE: `shape` keeps the key of every address written, for duplicates: one string
 * per written row.
 */
export class RowShaper {
  readonly header: readonly string[];
  private readonly seen = new Set<string>();
  private counts = { duplicates: 0, role: 0, disposable: 0 };
  written = 0;

  constructor(
    header: readonly string[],
    private readonly layout: ResultsLayout,
    private readonly choices: Pick<ExportChoices, 'dedupe' | 'dropRole' | 'dropDisposable'>,
  ) {
    this.header = [...header, ORIGINAL_EMAIL_COLUMN];
  }

  get leftOut(): LeftOut {
    return { ...this.counts };
  }

  /** The address a row is mailed at: the correction for a corrected row, else the row's own. */
  addressToMail(row: readonly string[]): string {
    const own = row[this.layout.email] ?? '';
    if ((row[this.layout.status] ?? '').toLowerCase() === 'corrected') {
      const corrected = this.layout.validEmail >= 0 ? (row[this.layout.validEmail] ?? '') : '';
      if (corrected !== '') return corrected;
    }
    return own;
  }

  shape(row: readonly string[]): string[] | null {
    const { layout, choices } = this;
    if (choices.dropRole && layout.role >= 0 && (row[layout.role] ?? '').toLowerCase() === 'true') {
      this.counts.role++;
      return null;
    }
    if (
      choices.dropDisposable &&
      layout.domainType >= 0 &&
      (row[layout.domainType] ?? '').toLowerCase() === 'disposable'
    ) {
      this.counts.disposable++;
      return null;
    }
    const own = row[layout.email] ?? '';
    const address = this.addressToMail(row);
    if (choices.dedupe) {
      const key = addressKey(address);
      if (key !== '') {
        if (this.seen.has(key)) {
          this.counts.duplicates++;
          return null;
        }
        this.seen.add(key);
      }
    }
    const out = row.slice(0, this.header.length - 1);
    while (out.length < this.header.length - 1) out.push('');
    out[layout.email] = address;
    out.push(address !== own ? own : '');
    this.written++;
    return out;
  }
}
