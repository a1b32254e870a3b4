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
import { HashSet64, hashInto } from '../../../service/lists/read/dupTable.js';
import { ResultsProblem } from '../jobs/rowFramer.js';

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
    throw new ResultsProblem(
      'The results file has no “Validation Status” column (the job ran no validation).',
    );
  if (emailIndex < 0 || emailIndex >= layout.status)
    throw new ResultsProblem('The results file has no email column before its appended columns.');
  return layout;
}

/** A row of a results file as a shaper reads it. */
export interface ShapeRow {
  /** The row's Validation Status, lower case. */
  readonly status: string;
  /** Field `index`, decoded ('' past the row's last field). */
  field(index: number): string;
  /**
   * Writes the 64-bit hash (hashInto) of field `index`'s address key (`addressKey`) to `out[0]`, `out[1]`;
   * answers false, writing nothing, when the key is empty.
   */
  fieldKeyHash(index: number, out: Uint32Array): boolean;
}

/** hashInto of a field's address key, for a row read as strings. */
export function keyHashOf(field: string, out: Uint32Array): boolean {
  const key = addressKey(field);
  if (key === '') return false;
  hashInto(key, out, 0);
  return true;
}

/**
 * What a shaper does with a row: leave it out (false), write it mailed at its own address (true), or mailed
 * at this correction of it.
 */
export type Shaped = boolean | string;

/**
 * Shapes rows for one export. `decide` answers whether a row is written, and the address it is mailed at
 * (leaving it out is counted in `leftOut`); `build` makes the row written. Remove duplicates keeps a 64-bit
 * hash of every address written (HashSet64: about 18 bytes each, not a string), as the service's
 * `Duplicate` column does.
 */
export class RowShaper {
  readonly header: readonly string[];
  /** Fields of a results row: the header's, without `Original Email`. */
  readonly width: number;
  private readonly seen: HashSet64;
  private readonly hash = new Uint32Array(2);
  private counts = { duplicates: 0, role: 0, disposable: 0 };
  written = 0;

  constructor(
    header: readonly string[],
    private readonly layout: ResultsLayout,
    private readonly choices: Pick<ExportChoices, 'dedupe' | 'dropRole' | 'dropDisposable'>,
    /** The rows of the results, when known: the set of addresses written is made with room for them. */
    rows?: number,
  ) {
    this.header = [...header, ORIGINAL_EMAIL_COLUMN];
    this.width = header.length;
    this.seen = new HashSet64(choices.dedupe ? rows : 0);
  }

  get leftOut(): LeftOut {
    return { ...this.counts };
  }

  /**
   * Whether the row is written and at which address: a corrected row is mailed at its correction (its
   * `Valid Email`), any other at its own address.
   */
  decide(row: ShapeRow): Shaped {
    const { layout, choices } = this;
    if (choices.dropRole && layout.role >= 0 && row.field(layout.role).toLowerCase() === 'true') {
      this.counts.role++;
      return false;
    }
    if (
      choices.dropDisposable &&
      layout.domainType >= 0 &&
      row.field(layout.domainType).toLowerCase() === 'disposable'
    ) {
      this.counts.disposable++;
      return false;
    }
    const correction =
      row.status === 'corrected' && layout.validEmail >= 0 ? row.field(layout.validEmail) : '';
    if (choices.dedupe) {
      const at = correction !== '' ? layout.validEmail : layout.email;
      if (row.fieldKeyHash(at, this.hash) && this.seen.add(this.hash[0], this.hash[1])) {
        this.counts.duplicates++;
        return false;
      }
    }
    this.written++;
    return correction !== '' && correction !== row.field(layout.email) ? correction : true;
  }

  /**
   * The row written for a row `decide` kept: its fields cut or padded to the header's, the address to mail
   * in the address column, and the original address (when it differs) in `Original Email`.
   */
  build(row: readonly string[], shaped: true | string): string[] {
    const out = row.slice(0, this.width);
    while (out.length < this.width) out.push('');
    if (shaped === true) out.push('');
    else {
      out.push(out[this.layout.email]);
      out[this.layout.email] = shaped;
    }
    return out;
  }
}
