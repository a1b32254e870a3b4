// Pass 2 for one part of a list: each row's bytes as they were in the input, then the appended columns, with
// the blank lines between rows kept as empty rows (so that results line N is input line N). The head (the
// header row and the appended column names) is the plan's; the results file is the head, then every part's
// bytes in order, which is byte for byte what one pass over the whole file writes.
//
// A part's text and its output share one arena, so a row is placed with copyWithin (no view allocated per row,
// as Buffer#copy and TypedArray#set make): the text at the front, a 4 MiB output area behind it, cut into
// chunks as it fills, and behind that the part's appended columns (`suffixFor`: a few dozen distinct ones a
// list), each copied from there the same way.
import { VALIDATION_COLUMNS } from '../../../shared/api/listServices.js';
import { describeStatusCode } from '../../../shared/api/codes.js';
import { evidenceTime, offlineStepOf } from '../../../shared/outcomes.js';
import type { IdentityPass } from './identityPass.js';
import { ReportCounter } from '../report.js';
import {
  FLAG_HAS_KEY,
  FLAG_ROLE,
  FLAG_STATUS_MASK,
  LIST_ROW_STATUSES,
  domainTypeOfFlags,
  statusOfFlags,
} from '../rowFlags.js';
import { quoteField, RowScanner } from '../read/scan.js';
import type { PartAddresses, PartRows } from '../parts.js';
import type { IdentityReportState, OnlineVerdicts, PartBounds, PartContext, ReportState } from '../types.js';

const OUTPUT_BYTES = 4 * 1024 * 1024;
/** Room for a part's distinct appended columns (each under 100 bytes), copied from there to every row's end. */
const SUFFIX_BYTES = 64 * 1024;

/** What writing a part gave: its results bytes (none for a report-only run), explain rows and counts. */
export interface PartOutput {
  readonly index: number;
  readonly chunks: Uint8Array[];
  readonly size: number;
  /** The part's rows of the explain CSV (no header), for a list with online checks. */
  readonly explain: string;
  readonly report: ReportState;
  readonly identity?: IdentityReportState;
}

/** An arena holding a part's text (`text`, filled by the caller) with room behind it for the output. */
export interface PartArena {
  readonly arena: Uint8Array;
  /** The part's text: `arena[0, textLength)`, as a Buffer over the same memory. */
  readonly text: Buffer;
}

/** The arena of the last part written, reused (zeroing 5 MB of fresh memory a part was a tenth of pass 2). */
let spare: ArrayBuffer | undefined;

/**
 * An arena for a part of `textLength` bytes. NOTE: the same memory serves the next part; the output leaves it
 * as copies (PartOutput.chunks), so a part is written before the next one asks for an arena.
 */
export function partArena(textLength: number): PartArena {
  const need = textLength + OUTPUT_BYTES + SUFFIX_BYTES;
  if (!spare || spare.byteLength < need) spare = new ArrayBuffer(need);
  return { arena: new Uint8Array(spare, 0, need), text: Buffer.from(spare, 0, textLength) };
}

/**
 * Online verdicts of a part's distinct addresses (indexes into `addresses.addresses`) into its rows: code,
 * flags (keeping whether the row has an address) and `Valid Email`. NOTE: mutates `rows`.
 */
export function applyOnlineVerdicts(
  rows: PartRows,
  addresses: PartAddresses,
  verdicts: OnlineVerdicts,
): void {
  const validEmails = rows.validEmails as Map<number, string>;
  for (let k = 0; k < verdicts.indexes.length; k++) {
    const index = verdicts.indexes[k];
    const code = verdicts.codes[k];
    const flags = verdicts.flags[k];
    const validEmail = verdicts.validEmails[k];
    for (const i of addresses.rowsOf[index] ?? []) {
      rows.codes[i] = code;
      rows.flags[i] = (flags & ~FLAG_HAS_KEY) | (rows.flags[i] & FLAG_HAS_KEY);
      if (validEmail === '' || validEmail === undefined) validEmails.delete(i);
      else validEmails.set(i, validEmail);
    }
  }
}

/**
 * The explain CSV: per row its address, code, how far its check went and why in words, then the evidence of
 * the verdict (issue 37): the step that decided it (syntax, list, dns, smtp), the host and its reply, the
 * source the check went out from, and when (ISO 8601). Readers find the columns by name (older files have the
 * first five only).
 */
export const EXPLAIN_COLUMNS = [
  'Row',
  'Email',
  'Status Code',
  'Checked',
  'Why',
  'Step',
  'Host',
  'Reply',
  'Source',
  'Checked At',
] as const;
export const EXPLAIN_HEADER = `${EXPLAIN_COLUMNS.join(',')}\n`;

const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

/**
 * Writes one part. `identity` is the list's pass of the other services, when they run (its counts grow).
 * `emit`: each filled stretch of the output is handed to it as a view of the arena (valid only during the
 * call: the single node writes it to the part's file) instead of copied into `chunks`, which stays empty.
 */
export function writePart(
  ctx: PartContext,
  bounds: PartBounds,
  source: PartArena,
  rows: PartRows,
  online: { readonly addresses: PartAddresses; readonly verdicts: OnlineVerdicts } | undefined,
  identity: IdentityPass | undefined,
  emit?: (bytes: Uint8Array) => void,
): PartOutput {
  const { arena, text } = source;
  const textLength = text.length;
  const report = new ReportCounter();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const writes = !ctx.isReportOnly;
  const outBase = textLength;
  let at = 0;
  const flush = () => {
    if (at === 0) return;
    if (emit) emit(arena.subarray(outBase, outBase + at));
    else chunks.push(arena.slice(outBase, outBase + at));
    size += at;
    at = 0;
  };
  const room = (bytes: number) => {
    if (at + bytes > OUTPUT_BYTES) flush();
  };
  const putBytes = (bytes: Uint8Array) => {
    for (let i = 0; i < bytes.length; i++) arena[outBase + at++] = bytes[i]!;
  };
  const outView = Buffer.from(arena.buffer, arena.byteOffset + outBase, OUTPUT_BYTES);
  const putText = (value: string) => {
    at += outView.write(value, at, 'utf8');
  };

  const delimiter = ctx.delimiter;
  const newline = Buffer.from(ctx.newline, 'utf8');
  const emptyRow = Buffer.from(delimiter.repeat(ctx.columnCount - 1 + ctx.appendedCount), 'utf8');
  const writeBlankLines = (count: number) => {
    for (let n = 0; writes && n < count; n++) {
      room(emptyRow.length + newline.length);
      putBytes(emptyRow);
      putBytes(newline);
    }
  };
  const countBreaks = (from: number, to: number) => {
    let n = 0;
    for (let i = from; i < to; i++) if (text[i] === ctx.breakByte) n++;
    return n;
  };

  // The explain rows: which address each row checked online holds, and what its check said. A row decided
  // offline was decided by the time its part is written.
  const explained = ctx.explain && online ? explainedRows(rows.count, online) : undefined;
  const writtenAt = ctx.explain ? evidenceTime(Date.now()) : '';
  let explain = '';
  const fieldScanner =
    identity || ctx.explain
      ? new RowScanner(
          Buffer.from(delimiter, 'utf8'),
          ctx.breakByte === 13 ? 'cr' : 'lf',
          Math.max(64, ctx.columnCount + 1),
        )
      : undefined;
  const readField = (index: number): string => {
    const scanner = fieldScanner!;
    if (index >= scanner.fields) return '';
    const value = text.toString('utf8', scanner.fieldStart[index], scanner.fieldEnd[index]);
    return scanner.fieldQuoted[index] === 1 ? value.replaceAll('""', '"') : value;
  };

  // Each distinct suffix once in the arena (at `at`), copied from there by copyWithin: a loop over its bytes
  // cost twice as much, and pass 2 runs on one thread. One that does not fit stays a loop (`at` -1).
  const suffixes = new Map<number, { readonly bytes: Uint8Array; readonly at: number }>();
  const suffixBase = outBase + OUTPUT_BYTES;
  let suffixEnd = suffixBase;
  const { start, length, codes, flags, dup, validEmails } = rows;
  const isLast = bounds.index === ctx.partCount - 1;
  // The bytes before the next row: the line break of the one before (if any) and blank lines.
  let gapStart = 0;
  let gapHasTerminator = bounds.index > 0 || ctx.hasHeader;
  for (let i = 0; i < rows.count; i++) {
    const rowStart = start[i];
    const rowLength = length[i];
    // (A gap of one byte is the row before's line break alone: nearly every row, and nothing to count.)
    if (writes && rowStart - gapStart > (gapHasTerminator ? 1 : 0)) {
      const breaks = countBreaks(gapStart, rowStart);
      writeBlankLines(gapHasTerminator ? breaks - 1 : breaks);
    }
    gapStart = rowStart + rowLength;
    gapHasTerminator = true;
    const code = codes[i];
    const flag = flags[i];
    if (ctx.runsValidation) report.add(code, flag);
    if (fieldScanner) {
      fieldScanner.windowChanged();
      fieldScanner.scan(text, rowStart, rowStart + rowLength, true);
    }
    if (ctx.explain) {
      const checked = explained?.of(i);
      const email = checked ? checked.email : readField(ctx.emailIndex).trim();
      explain += explainLine(bounds.firstRow + i + 1, email, code, checked, writtenAt);
    }
    const identityText = identity ? identity.row(readField) : '';
    if (!writes) continue;
    let suffix: { readonly bytes: Uint8Array; readonly at: number } | undefined;
    let validEmail: string | undefined;
    if (ctx.runsValidation) {
      const isDuplicate = dup[i];
      const key = code * 1024 + (flag & 0xff) * 2 + isDuplicate;
      suffix = suffixes.get(key);
      if (!suffix) {
        const bytes = suffixFor(code, flag, isDuplicate === 1, delimiter);
        const fits = suffixEnd + bytes.length <= arena.length;
        if (fits) arena.set(bytes, suffixEnd);
        suffix = { bytes, at: fits ? suffixEnd : -1 };
        if (fits) suffixEnd += bytes.length;
        suffixes.set(key, suffix);
      }
      const status = flag & FLAG_STATUS_MASK;
      validEmail = status === VALID || status === CORRECTED ? validEmails.get(i) : undefined;
    }
    room(
      rowLength +
        (suffix?.bytes.length ?? 0) +
        newline.length +
        (validEmail === undefined ? 0 : validEmail.length * 3 + 2) +
        identityText.length * 3,
    );
    arena.copyWithin(outBase + at, rowStart, rowStart + rowLength);
    at += rowLength;
    if (suffix) {
      if (suffix.at >= 0) {
        arena.copyWithin(outBase + at, suffix.at, suffix.at + suffix.bytes.length);
        at += suffix.bytes.length;
      } else putBytes(suffix.bytes);
      if (validEmail !== undefined) putText(quoteField(validEmail, delimiter));
    }
    if (identityText !== '') putText(identityText);
    putBytes(newline);
  }
  // Blank lines after the list's last row (its own line break excepted).
  if (writes && isLast && rows.count > 0) writeBlankLines(countBreaks(gapStart, textLength) - 1);
  flush();
  return {
    index: bounds.index,
    chunks,
    size,
    explain,
    report: report.toState(),
    ...(identity ? { identity: identity.toState() } : {}),
  };
}

/** What the online check of a row's address said (explainedRows). */
export interface ExplainedRow {
  readonly email: string;
  readonly checked: string;
  readonly why: string;
  readonly host: string;
  readonly reply: string;
  readonly source: string;
  readonly checkedAt: string;
}

/**
 * One row of the explain CSV. A row decided offline (not checked online, or its check stopped before the
 * network) has its step by code, no host, reply or source, and `decidedAt` (when its part was written).
 */
export function explainLine(
  row: number,
  email: string,
  code: number,
  explained: ExplainedRow | undefined,
  decidedAt: string,
): string {
  const checked = explained?.checked || 'offline';
  const why = explained?.why || `decided offline: ${describeStatusCode(code)}`;
  const online = checked === 'dns' || checked === 'smtp';
  const evidence = online
    ? `${checked},${csvField(explained!.host)},${csvField(explained!.reply)},${csvField(explained!.source)},${explained!.checkedAt}`
    : `${offlineStepOf(code)},,,,${decidedAt}`;
  return `${row},${csvField(explained?.email ?? email)},${code},${checked},${csvField(why)},${evidence}\n`;
}

/** For each row of a part checked online: its address, how far its check went and why. */
function explainedRows(
  rowCount: number,
  online: { readonly addresses: PartAddresses; readonly verdicts: OnlineVerdicts },
) {
  const rowAddress = new Int32Array(rowCount).fill(-1);
  online.addresses.rowsOf.forEach((rowList, index) => {
    for (const row of rowList) rowAddress[row] = index;
  });
  const count = online.addresses.addresses.length;
  // Per distinct address, the index of its verdict (-1: none).
  const verdictOf = new Int32Array(count).fill(-1);
  const { verdicts } = online;
  for (let k = 0; k < verdicts.indexes.length; k++) verdictOf[verdicts.indexes[k]] = k;
  return {
    of(row: number): ExplainedRow | undefined {
      const index = row < rowAddress.length ? rowAddress[row] : -1;
      if (index < 0) return undefined;
      const k = verdictOf[index];
      return {
        email: online.addresses.addresses[index] ?? '',
        checked: k < 0 ? '' : (verdicts.checked[k] ?? ''),
        why: k < 0 ? '' : (verdicts.whys[k] ?? ''),
        host: k < 0 ? '' : (verdicts.hosts[k] ?? ''),
        reply: k < 0 ? '' : (verdicts.replies[k] ?? ''),
        source: k < 0 ? '' : (verdicts.sources[k] ?? ''),
        checkedAt: k < 0 ? '' : (verdicts.checkedAts[k] ?? ''),
      };
    },
  };
}

const VALID = LIST_ROW_STATUSES.indexOf('valid');
const CORRECTED = LIST_ROW_STATUSES.indexOf('corrected');

/** The appended columns of a row up to `Valid Email` (its value follows, then the line break). */
function suffixFor(code: number, flags: number, isDuplicate: boolean, delimiter: string): Uint8Array {
  const values = [
    statusOfFlags(flags),
    String(code),
    domainTypeOfFlags(flags) ?? '',
    flags & FLAG_ROLE ? 'true' : '',
    isDuplicate ? 'true' : '',
  ];
  return Buffer.from(
    `${delimiter}${values.map((v) => quoteField(v, delimiter)).join(delimiter)}${delimiter}`,
    'utf8',
  );
}

/** The head of the results: BOM, the header row (the input's, or the column names made up) and the appended names. */
export function resultsHead(options: {
  readonly hasBom: boolean;
  /** The input's header row, as its bytes; undefined when the list has none. */
  readonly headerBytes: Uint8Array | undefined;
  readonly columnNames: readonly string[];
  readonly runsValidation: boolean;
  readonly identityColumns: readonly string[];
  readonly delimiter: string;
  readonly newline: string;
}): Buffer {
  const { delimiter } = options;
  const parts: Buffer[] = [];
  if (options.hasBom) parts.push(Buffer.from([0xef, 0xbb, 0xbf]));
  if (options.headerBytes) parts.push(Buffer.from(options.headerBytes));
  else
    parts.push(
      Buffer.from(options.columnNames.map((name) => quoteField(name, delimiter)).join(delimiter), 'utf8'),
    );
  const appended = [...(options.runsValidation ? VALIDATION_COLUMNS : []), ...options.identityColumns];
  if (appended.length > 0)
    parts.push(
      Buffer.from(delimiter + appended.map((name) => quoteField(name, delimiter)).join(delimiter), 'utf8'),
    );
  parts.push(Buffer.from(options.newline, 'utf8'));
  return Buffer.concat(parts);
}
