// Column detection for list files: the spec's header synonyms, and the delimiter, header row and email
// column of a delimited text file, read from a sample of its first rows. Pure TypeScript (no node:*, no DOM):
// the service decides a list's layout with it, the CLI says what it detected with it, and the desktop
// column mapper proposes a mapping with it.
//
// Header names are matched case-insensitively, ignoring spaces, dots, dashes and underscores (DESIGN.md),
// so "E-Mail", "e_mail" and "EMAIL" are one name. Content beats names where they disagree about email
// columns: the spec requires `email_column` "when more than one email column exists", and whether a column
// holds addresses is a fact of its values, not of its title.

import Papa from 'papaparse';
import { COLUMN_KINDS, type ColumnKind } from './columnKinds.js';

// ---------------------------------------------------------------------------------------------------------
// Header synonyms

export { COLUMN_KINDS, type ColumnKind } from './columnKinds.js';

/**
 * Recognised header names per kind, as the spec lists them (E7 "File rules"). The spec names no synonyms for
 * the email column itself; ours are the usual spellings. `zipcode` is added beside the spec's zip names.
 */
export const HEADER_SYNONYMS: Readonly<Record<ColumnKind, readonly string[]>> = {
  email: ['email', 'e-mail', 'email address', 'e-mail address', 'mail', 'email addr'],
  first_name: ['first name', 'first', 'fname'],
  last_name: ['last name', 'last', 'lname', 'surname'],
  full_name: ['full name', 'name'],
  street: ['street', 'address', 'address 1'],
  street2: ['street 2', 'address 2'],
  city: ['city', 'town'],
  state: ['state', 'region', 'province'],
  zip: ['zip', 'postal code', 'plus4', 'zip code'],
  country: ['country'],
  md5: ['md5'],
  sha1: ['sha1'],
};

/** A header name as it is compared: lower case, without spaces, dots, dashes and underscores. */
export function normaliseHeaderName(name: string): string {
  return name
    .trim()
    .replace(/^\uFEFF/, '')
    .toLowerCase()
    .replace(/[\s._-]+/g, '');
}

const KIND_BY_NAME = new Map<string, ColumnKind>();
for (const kind of COLUMN_KINDS) {
  for (const synonym of HEADER_SYNONYMS[kind]) KIND_BY_NAME.set(normaliseHeaderName(synonym), kind);
}

/** The kind a header name stands for, or undefined for a name that is none of the synonyms. */
export function columnKindOf(headerName: string): ColumnKind | undefined {
  return KIND_BY_NAME.get(normaliseHeaderName(headerName));
}

// ---------------------------------------------------------------------------------------------------------
// Values

/**
 * Whether a value looks like an email address, for telling columns apart (not a verification): one @ with
 * something before it and a dotted domain after it, no white space inside. Surrounding white space and
 * angle brackets are allowed, as lists carry them.
 */
export function looksLikeEmail(value: string): boolean {
  const v = value.trim();
  if (v.length < 5 || v.length > 320) return false;
  return /^<?[^\s@<>,;]+@[^\s@<>,;]+\.[^\s@<>,;.]+>?$/.test(v);
}

// ---------------------------------------------------------------------------------------------------------
// A small parser for samples

export interface SampleRows {
  /** Complete rows of the sample, blank lines left out. */
  readonly rows: string[][];
  /** Whether the sample holds the whole file (the last row is complete). */
  readonly isWhole: boolean;
}

/** A row without content: one field, empty or spaces (a blank line). */
function isBlankRow(row: readonly string[]): boolean {
  return row.length === 1 && row[0].trim() === '';
}

/**
 * Splits the start of a file into rows and fields, by papaparse (RFC 4180 quoting: a field that starts with
 * a quote runs to the closing quote, `""` is a quote inside it). Blank lines are left out; a row cut off by
 * the end of a partial sample is dropped. Meant for samples of a few hundred KiB; the service scans whole
 * files with its own byte scanner (service/lists/read/scan.ts).
 */
export function parseSampleRows(
  text: string,
  delimiter: string,
  options: { maxRows?: number; isWhole?: boolean } = {},
): SampleRows {
  const maxRows = options.maxRows ?? 1000;
  const isWhole = options.isWhole ?? true;
  const rows: string[][] = [];
  // A row is complete once papaparse has gone on to the next one; the last is complete only in a whole file.
  let last: string[] | undefined;
  let isCut = false;
  Papa.parse<string[]>(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, {
    delimiter,
    skipEmptyLines: false,
    step: (result, parser) => {
      if (last && !isBlankRow(last)) rows.push(last);
      last = result.data;
      if (rows.length >= maxRows) {
        isCut = true;
        parser.abort();
      }
    },
  });
  if (!isCut && isWhole && last && !isBlankRow(last)) rows.push(last);
  return { rows, isWhole: isWhole && !isCut };
}

// ---------------------------------------------------------------------------------------------------------
// Delimiter

/** Delimiters tried by content sniffing, in order of preference when they fit equally. */
export const SNIFFED_DELIMITERS = [',', '\t', ';', '|'] as const;

/** Words for a delimiter in messages. */
export function describeDelimiter(delimiter: string): string {
  switch (delimiter) {
    case ',':
      return 'comma';
    case '\t':
      return 'tab';
    case ';':
      return 'semicolon';
    case '|':
      return 'pipe';
    case ' ':
      return 'space';
    default:
      return `'${delimiter}'`;
  }
}

/** The delimiter a file name implies: `.csv` comma, otherwise tab (the spec's default). */
export function delimiterForName(fileName: string): string {
  return /\.csv$/i.test(fileName) ? ',' : '\t';
}

/**
 * The delimiter of a sample, by papaparse's guessing: the candidate that splits the first rows into the same
 * number of fields (two or more) most consistently, the file name's delimiter winning ties. A file whose rows
 * all have one field gives the name's delimiter (a one-column list has no delimiter to see).
 */
export function detectDelimiter(
  sample: string,
  fileName: string,
): { delimiter: string; how: 'content' | 'extension' } {
  const byName = delimiterForName(fileName);
  const guessed = Papa.parse<string[]>(sample.charCodeAt(0) === 0xfeff ? sample.slice(1) : sample, {
    delimitersToGuess: [byName, ...SNIFFED_DELIMITERS.filter((d) => d !== byName)],
    skipEmptyLines: true,
    preview: 1,
  });
  const isGuessed = !guessed.errors.some((error) => error.code === 'UndetectableDelimiter');
  return isGuessed && guessed.meta.delimiter
    ? { delimiter: guessed.meta.delimiter, how: 'content' }
    : { delimiter: byName, how: 'extension' };
}

// ---------------------------------------------------------------------------------------------------------
// Layout: header row and email column

export interface LayoutRequest {
  readonly delimiter: string;
  /** Whether the first row is a header; undefined to detect it. */
  readonly header?: boolean;
  /** 1-based index of the email column; undefined to detect it. */
  readonly emailColumn?: number;
  /**
   * A file with a header may have no email column (a list for email append, or intelligence by hashes or
   * name and address): the layout then has `emailColumn` 0 rather than failing.
   */
  readonly emailOptional?: boolean;
}

export interface Layout {
  readonly header: boolean;
  readonly headerHow: 'given' | 'detected';
  /** 1-based; 0 for none (only with `emailOptional`). */
  readonly emailColumn: number;
  readonly emailColumnHow: 'given' | 'content' | 'header';
  /** Fields per row, as the first row has them. */
  readonly columnCount: number;
  /** Names of the columns: the header's cells, or `Email` / `Column N` for a file without one. */
  readonly columnNames: readonly string[];
}

export type LayoutResult =
  { readonly ok: true; readonly layout: Layout } | { readonly ok: false; readonly reason: string };

/** Share of a column's non-empty sample values that must look like addresses for it to be an email column. */
const EMAIL_COLUMN_SHARE = 0.5;

/** 0-based indexes of the columns whose values mostly look like email addresses. */
function emailColumnsByContent(rows: readonly (readonly string[])[], columnCount: number): number[] {
  const columns: number[] = [];
  for (let c = 0; c < columnCount; c++) {
    let filled = 0;
    let emails = 0;
    for (const row of rows) {
      const value = row[c];
      if (value === undefined || value.trim() === '') continue;
      filled++;
      if (looksLikeEmail(value)) emails++;
    }
    if (emails > 0 && emails >= filled * EMAIL_COLUMN_SHARE) columns.push(c);
  }
  return columns;
}

/** 0-based indexes of the header cells that name an email column. */
function emailColumnsByName(headerRow: readonly string[]): number[] {
  const columns: number[] = [];
  headerRow.forEach((name, c) => {
    if (columnKindOf(name) === 'email') columns.push(c);
  });
  return columns;
}

/** Whether a first row reads as column names: some cell is a known header name and none is an address. */
function looksLikeHeaderRow(row: readonly string[]): boolean {
  return row.some((cell) => columnKindOf(cell) !== undefined) && !row.some((cell) => looksLikeEmail(cell));
}

function quoteForMessage(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must not be echoed
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return `'${clean.length > 40 ? `${clean.slice(0, 40)}…` : clean}'`;
}

/** Column names for a file without a header row: `Email` for the email column, `Column N` for the others. */
export function synthesisedColumnNames(columnCount: number, emailColumn: number): string[] {
  return Array.from({ length: columnCount }, (_, c) => (c + 1 === emailColumn ? 'Email' : `Column ${c + 1}`));
}

/**
 * Decides the header row and the email column of a file from its first rows (parsed with the list's
 * delimiter), under the rules of E7:
 * - `email_column` is required when more than one column holds addresses;
 * - a file whose first row is plainly column names needs `header=true` (the spec's rule that a file with
 *   fields besides email must have one), and `header=true` on a file whose first row holds an address is a
 *   header said to be there but missing;
 * - without a header row, a file of several columns is accepted when its email column is plain.
 * Passing `header` or `emailColumn` as undefined detects them (what the CLI does before submitting).
 */
export function resolveLayout(rows: readonly (readonly string[])[], request: LayoutRequest): LayoutResult {
  const fail = (reason: string): LayoutResult => ({ ok: false, reason });
  const first = rows[0];
  if (!first) return fail('The file has no rows with data.');
  const columnCount = first.length;
  const described = describeDelimiter(request.delimiter);

  let header = request.header;
  const headerHow = header === undefined ? 'detected' : 'given';
  if (header === undefined) {
    const byContent = emailColumnsByContent(rows.slice(1), columnCount);
    const firstIsData = first.some((cell) => looksLikeEmail(cell));
    header =
      looksLikeHeaderRow(first) ||
      (!firstIsData &&
        byContent.length > 0 &&
        (rows.length > 1 || columnKindOf(first[0] ?? '') !== undefined));
  }
  const data = header ? rows.slice(1) : rows;

  if (request.emailColumn !== undefined && request.emailColumn > columnCount) {
    return fail(
      `email_column is ${request.emailColumn}, but the rows have ${columnCount} ${columnCount === 1 ? 'field' : 'fields'} ` +
        `when split by ${described}: check the column number and the delimiter.`,
    );
  }

  let emailColumn: number; // 0-based
  let emailColumnHow: Layout['emailColumnHow'];
  if (request.emailColumn !== undefined) {
    emailColumn = request.emailColumn - 1;
    emailColumnHow = 'given';
  } else if (columnCount === 1) {
    emailColumn = 0;
    emailColumnHow = 'content';
  } else {
    const byContent = emailColumnsByContent(data, columnCount);
    const byName = header ? emailColumnsByName(first) : [];
    if (byContent.length > 1) {
      const names = byContent.map((c) =>
        header ? `${c + 1} ${quoteForMessage(first[c] ?? '')}` : String(c + 1),
      );
      return fail(
        `More than one column holds email addresses (columns ${names.join(', ')}): give email_column to say which to verify.`,
      );
    }
    if (byName.length === 1 && (byContent.length === 0 || byContent[0] === byName[0])) {
      emailColumn = byName[0]!;
      emailColumnHow = 'header';
    } else if (byContent.length === 1) {
      emailColumn = byContent[0]!;
      emailColumnHow = 'content';
    } else if (byName.length > 1) {
      return fail(
        `More than one column is named as an email column (${byName.map((c) => quoteForMessage(first[c] ?? '')).join(', ')}): ` +
          'give email_column to say which to verify.',
      );
    } else if (request.emailOptional && header) {
      emailColumn = -1;
      emailColumnHow = 'header';
    } else {
      return fail(
        `No column holds email addresses (the rows have ${columnCount} fields when split by ${described}): ` +
          'check the delimiter, or give email_column.',
      );
    }
  }

  if (header && request.header === true && emailColumn >= 0 && looksLikeEmail(first[emailColumn] ?? '')) {
    return fail(
      `header=true, but the first row holds an address (${quoteForMessage(first[emailColumn] ?? '')}) rather than ` +
        'column names: the header row is missing. Add one, or submit with header=false.',
    );
  }
  if (!header && looksLikeHeaderRow(first) && !looksLikeEmail(first[emailColumn] ?? '')) {
    return fail(
      `The first row (${quoteForMessage(first.join(request.delimiter))}) is a header row, but header is false: ` +
        'submit with header=true.',
    );
  }

  const columnNames = header ? [...first] : synthesisedColumnNames(columnCount, emailColumn + 1);
  return {
    ok: true,
    layout: { header, headerHow, emailColumn: emailColumn + 1, emailColumnHow, columnCount, columnNames },
  };
}

export interface DetectedLayout extends Layout {
  readonly delimiter: string;
  readonly delimiterHow: 'given' | 'content' | 'extension';
}

/**
 * Detects what a caller did not give: the delimiter (by content, else by the file name), the header row and
 * the email column. `sample`: the start of the file as text; `isWhole` when it is the whole file.
 */
export function detectLayout(
  sample: string,
  fileName: string,
  given: {
    delimiter?: string;
    header?: boolean;
    emailColumn?: number;
    isWhole?: boolean;
    emailOptional?: boolean;
  } = {},
): { ok: true; layout: DetectedLayout } | { ok: false; reason: string } {
  const delimiter =
    given.delimiter !== undefined
      ? { delimiter: given.delimiter, how: 'given' as const }
      : detectDelimiter(sample, fileName);
  const { rows } = parseSampleRows(sample, delimiter.delimiter, {
    maxRows: 1000,
    isWhole: given.isWhole ?? false,
  });
  const resolved = resolveLayout(rows, {
    delimiter: delimiter.delimiter,
    ...(given.header !== undefined ? { header: given.header } : {}),
    ...(given.emailColumn !== undefined ? { emailColumn: given.emailColumn } : {}),
    ...(given.emailOptional ? { emailOptional: true } : {}),
  });
  if (!resolved.ok) return resolved;
  return {
    ok: true,
    layout: { ...resolved.layout, delimiter: delimiter.delimiter, delimiterHow: delimiter.how },
  };
}
