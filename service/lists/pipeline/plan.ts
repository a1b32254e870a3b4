// The list pipeline, run by the pipeline worker: stored input in, the list's plan out (pass 1); the results
// are then written part by part (partWriter.ts) once each part's online checks, if any, are done.
//
//   1. A zip input: check it and stream its one file out beside it.
//   2. Check the text: no UTF-16/32 byte-order mark, UTF-8, no NUL bytes (while reading, window by window).
//   3. Decide the layout from a sample of the first rows (shared/columns.ts): the header row, the email column.
//   4. Pass 1: scan every row (scan.ts) — each must have the header's number of fields — and send the bytes of
//      its email field in batches to the verify workers; their verdicts come back as typed arrays, and each
//      address's 64-bit hash is counted for duplicates.
//   5. Cut the rows into parts (parts.ts) and make the head of the results (the header and the appended
//      column names). Rows left undecided offline (code 10) are checked online per part, by whichever node
//      takes the part; pass 2 writes each part knowing every duplicate.
//
// Per row, pass 1 keeps 17 bytes in typed arrays (offset, length, code, flags, duplicate) and nothing else
// but the `Valid Email` of valid and corrected rows, so a 1,000,000-row list needs ~25 MB here, whatever its width.
import { closeSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { detectDelimiter, resolveLayout, parseSampleRows } from '../../../shared/columns.js';
import { effectiveDelimiter, listFileExtension, type ListServiceKey } from '../../../shared/api/list.js';
import { VALIDATION_COLUMNS } from '../../../shared/api/listServices.js';
import { DuplicateTable } from '../read/dupTable.js';
import { formatCount } from '../read/format.js';
import { canRun, cannotRunReason, identityColumnsOf, IdentityPass } from './identityPass.js';
import { InputWindow, lineAt, NotTextError } from '../read/input.js';
import { rowTooLongMessage } from '../read/rowWalk.js';
import { resultsFileName } from '../names.js';
import {
  CR,
  detectLineBreak,
  isBlank,
  LF,
  QUOTE,
  quoteField,
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
} from '../read/scan.js';
import type { IdentityListService, ListJob, ListPolicy, PartBounds, PartContext } from '../types.js';
import { toVerifyPolicy, verifyBatch, type BatchVerdicts } from '../verdicts.js';
import { withKnownBouncers } from '../../identity/bounces.list.js';
import type { VerifierPool } from '../verify/verifierPool.js';
import { PART_BYTES, rowsPerPart, type PartRows } from '../parts.js';
import { resultsHead } from './partWriter.js';
import { extractZipEntry, inspectZip, ZipProblem } from '../read/zip.js';

/** How much of the file the layout is decided from. */
const SAMPLE_BYTES = 1024 * 1024;
const SAMPLE_ROWS = 1000;
const BATCH_ROWS = 4096;
const BATCH_BYTES = 128 * 1024;
const PROGRESS_EVERY_MS = 100;
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

class InvalidList extends Error {
  constructor(
    message: string,
    readonly records = 0,
  ) {
    super(message);
  }
}

/**
 * Progress: records found so far, the input count (the records found so far: never more than the list's
 * records), and records verified (never more than the input count).
 */
/** What the file showed: the services that run (once its columns are known), and the delimiter read with. */
export type ServicesListener = (services: readonly ListServiceKey[] | undefined, delimiter?: string) => void;

export type ProgressListener = (
  records: number,
  inputCount: number,
  completedCount: number,
  /** Rows done by the services other than validation, once they run (pass 2). */
  identityCompleted?: number,
) => void;

/** A list planned: what pass 1 found, cut into parts, kept by the pipeline worker until its parts are written. */
export interface ListPlan {
  readonly listId: number;
  /** The list's text (the input, or its one file extracted from a zip): parts are read from it. */
  readonly textPath: string;
  /** Whether `textPath` was extracted from a zip for this plan (removed once the list is done). */
  readonly isExtracted: boolean;
  readonly records: number;
  /** The results' first bytes: BOM, header row, appended column names. */
  readonly head: Buffer;
  readonly context: PartContext;
  readonly parts: readonly PartBounds[];
  /** Rows complete before any online check (all of them, for offline checks). */
  readonly completedOffline: number;
  /** A part's rows, offsets relative to the part's first byte (fresh arrays: its online verdicts go in them). */
  partRows(index: number): PartRows;
  /** A part's rows complete before any online check, its rows to check online and their distinct domains. */
  partStart(index: number): { completed: number; rowsToCheck: number; domains: number };
  /** Gives back what the plan holds (the extracted text). */
  close(): void;
}

export type PlanOutcome =
  | { readonly kind: 'planned'; readonly plan: ListPlan }
  | { readonly kind: 'invalid'; readonly reason: string; readonly records: number }
  | { readonly kind: 'error'; readonly reason: string };

/** Plans one list (pass 1); never throws (failures are outcomes). */
export async function planList(
  job: ListJob,
  pool: VerifierPool,
  onProgress: ProgressListener,
  /** Told the services that run, once the file's columns are known. */
  onServices?: ServicesListener,
): Promise<PlanOutcome> {
  const temporary: string[] = [];
  try {
    // The key's known bouncers (code 520) that count today, read once for the whole list.
    const verified = { ...job, policy: withKnownBouncers(job.policy) };
    return { kind: 'planned', plan: await processList(verified, pool, onProgress, temporary, onServices) };
  } catch (error) {
    for (const path of temporary) rmSync(path, { force: true });
    if (error instanceof InvalidList)
      return { kind: 'invalid', reason: error.message, records: error.records };
    if (error instanceof ZipProblem) return { kind: 'invalid', reason: error.message, records: 0 };
    const message = error instanceof Error ? error.message : String(error);
    return { kind: 'error', reason: `Processing failed: ${message}` };
  }
}

/**
 * What pass 1 keeps of each row, 17 bytes of typed arrays: where its bytes are, its code and packed flags,
 * and whether it is a duplicate. Grows by doubling (NOTE: read the arrays again after a push).
 */
class RowStore {
  start: Float64Array;
  length: Uint32Array;
  codes: Uint16Array;
  flags: Uint16Array;
  /** 1 for a row whose address is met elsewhere in the list (DuplicateTable.addRow marks them). */
  dup: Uint8Array;
  count = 0;

  constructor(capacity: number) {
    this.start = new Float64Array(capacity);
    this.length = new Uint32Array(capacity);
    this.codes = new Uint16Array(capacity);
    this.flags = new Uint16Array(capacity);
    this.dup = new Uint8Array(capacity);
  }

  push(start: number, length: number): void {
    if (this.count === this.start.length) this.grow();
    this.start[this.count] = start;
    this.length[this.count] = length;
    this.count++;
  }

  private grow(): void {
    const capacity = this.start.length * 2;
    const grown = <T extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(
      a: T,
      make: (n: number) => T,
      n: number,
    ): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.start = grown(this.start, (n) => new Float64Array(n), capacity);
    this.length = grown(this.length, (n) => new Uint32Array(n), capacity);
    this.codes = grown(this.codes, (n) => new Uint16Array(n), capacity);
    this.flags = grown(this.flags, (n) => new Uint16Array(n), capacity);
    this.dup = grown(this.dup, (n) => new Uint8Array(n), capacity);
  }
}

function describeBom(head: Uint8Array): string | undefined {
  const [a, b, c, d] = head;
  if (a === 0xff && b === 0xfe && c === 0 && d === 0) return 'UTF-32';
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return 'UTF-32';
  if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) return 'UTF-16';
  return undefined;
}

async function processList(
  job: ListJob,
  pool: VerifierPool,
  onProgress: ProgressListener,
  temporary: string[],
  onServices: ServicesListener | undefined,
): Promise<ListPlan> {
  const { limits } = job;
  // 1. A zip input: its one file, streamed out beside it.
  let textPath = job.inputPath;
  let fileName = job.name;
  const isZip = listFileExtension(job.name) === '.zip';
  let zipEntryTime: { date: number; time: number } | undefined;
  if (isZip) {
    const entry = await inspectZip(textPath, limits);
    zipEntryTime = entry.modified;
    fileName = entry.fileName.split('/').pop() ?? entry.fileName;
    const extracted = join(job.workDir, `source-${job.listId}${listFileExtension(fileName) ?? '.txt'}`);
    temporary.push(extracted);
    await extractZipEntry(textPath, entry.fileName, extracted, limits);
    textPath = extracted;
  }
  // The `delimiter` parameter, else the one the content shows (tab, comma, semicolon, pipe), read from the
  // first rows below; where the content shows none (one column), the name's (.csv comma, else tab).
  let delimiter = job.delimiter ?? effectiveDelimiter({}, fileName);

  // 2. Text checks. A byte-order mark of UTF-16 or UTF-32 is named for what it is (such files are full of NULs).
  const head = Buffer.alloc(4);
  const headFd = openSync(textPath, 'r');
  const headBytes = readSync(headFd, head, 0, 4, 0);
  closeSync(headFd);
  if (headBytes === 0) throw new InvalidList('The file is empty: it has no records.');
  const wideEncoding = describeBom(head);
  if (wideEncoding)
    throw new InvalidList(
      `The file is ${wideEncoding} text; lists must be UTF-8 text. Save it as UTF-8 and submit it again.`,
    );
  const bomLength = head.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;

  // The window's arena also holds the batch being gathered (addresses are short: copyWithin, no allocation).
  const window = new InputWindow(textPath, limits.maxRowBytes, true, BATCH_BYTES + limits.maxRowBytes + 16);
  let breakByte = LF;
  const notText = (error: NotTextError): InvalidList =>
    new InvalidList(
      `Line ${formatCount(lineAt(textPath, error.offset, breakByte))} cannot be read: ${error.message}. ` +
        'Lists must be delimited text in UTF-8 (CSV or tab-delimited); save the file as UTF-8 text and submit it again.',
    );
  try {
    try {
      window.fill(0);
    } catch (error) {
      if (error instanceof NotTextError) throw notText(error);
      throw error;
    }
    const { buf } = window;

    // 3. The layout, from the first rows.
    const lineBreak = detectLineBreak(
      buf.subarray(bomLength, Math.min(window.end, bomLength + SAMPLE_BYTES)),
    );
    breakByte = lineBreak.mode === 'cr' ? CR : LF;
    let sampleEnd = Math.min(window.end, bomLength + SAMPLE_BYTES);
    const isWholeSample = window.isEof && sampleEnd === window.end;
    if (!isWholeSample) {
      const cut = buf.lastIndexOf(breakByte, sampleEnd - 1);
      sampleEnd = cut >= bomLength ? cut + 1 : bomLength;
    }
    const sampleText = buf.toString('utf8', bomLength, sampleEnd);
    // (White space alone shows no delimiter: a tab there is a blank line's, not a column's.)
    if (job.delimiter === undefined && sampleText.trim() !== '')
      delimiter = detectDelimiter(sampleText, fileName).delimiter;
    onServices?.(undefined, delimiter);
    const sample = parseSampleRows(sampleText, delimiter, {
      maxRows: SAMPLE_ROWS,
      isWhole: isWholeSample,
    });
    if (sample.rows.length === 0) {
      if (isWholeSample) throw new InvalidList('The file holds only blank lines: it has no records.');
      // The first row that is not blank starts after the sample's blank lines and runs past the sample.
      throw new InvalidList(
        rowTooLongMessage(
          lineAt(textPath, sampleEnd, breakByte),
          limits.maxRowBytes,
          buf,
          sampleEnd,
          window.end,
        ),
      );
    }
    // Email append, and intelligence by hashes or name and address, need no email column.
    const needsEmail = !job.services.some((s) => s === 'email_append' || s === 'email_intelligence');
    const resolved = resolveLayout(sample.rows, {
      delimiter,
      header: job.header ?? false,
      ...(job.emailColumn !== undefined ? { emailColumn: job.emailColumn } : {}),
      ...(needsEmail ? {} : { emailOptional: true }),
    });
    if (!resolved.ok) throw new InvalidList(resolved.reason);
    const layout = resolved.layout;

    // The services that run: those asked for whose columns the file has (named ones must have them).
    const columns = identityColumnsOf(layout.columnNames, layout.header, layout.emailColumn);
    for (const service of job.services)
      if (job.servicesExplicit && !canRun(service, columns))
        throw new InvalidList(cannotRunReason(service, layout.header));
    const services = job.services.filter((service) => canRun(service, columns));
    if (services.length === 0)
      throw new InvalidList(
        layout.emailColumn === 0
          ? 'No column holds email addresses, and no other service of this list finds the columns it needs (name and postal address, or MD5/SHA1).'
          : 'None of the services of this list can run on this file.',
      );
    onServices?.(services);
    const runsValidation = services.includes('email_validation');
    const identityServices = services.filter(
      (service): service is IdentityListService => service !== 'email_validation',
    );
    if (identityServices.length > 0 && !job.identity)
      throw new Error('the list runs identity services without their settings');
    const isReportOnly = identityServices.length > 0 && job.identity?.report === true;

    // 4. Pass 1.
    const fileBytes = statSync(textPath).size;
    const estimate = Math.min(
      limits.maxRecords + 1,
      Math.ceil(
        (fileBytes / Math.max(8, averageRowBytes(sampleEnd - bomLength, sample.rows.length))) * 1.05,
      ) + 1024,
    );
    const rows = new RowStore(Math.max(1024, estimate));
    const delimiterBytes = Buffer.from(delimiter, 'utf8');
    // At most one address per row, and a row takes at least two bytes (a character and a line break).
    const duplicates = new DuplicateTable(Math.min(limits.maxRecords, Math.ceil(fileBytes / 2) + 1));
    const validEmails = new Map<number, string>();
    const isOnline = job.online !== undefined && job.policy.online === true;
    /** With online checks: the addresses of the rows of code 10 (see BatchVerdicts.undecided). */
    const undecided = new Map<number, string>();
    let completed = 0;
    let lastProgress = 0;
    let pos = bomLength;
    const progress = (force = false) => {
      const now = Date.now();
      if (!force && now - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = now;
      // input_count is the records found so far: an estimate of the whole could exceed the list's records
      // (the spec compares completed_count with input_count; both only grow, and completed ≤ input ≤ records).
      onProgress(rows.count, rows.count, Math.min(completed, rows.count));
    };
    const onVerdicts = (result: BatchVerdicts, firstRow: number) => {
      const count = result.codes.length;
      rows.codes.set(result.codes, firstRow);
      rows.flags.set(result.flags, firstRow);
      const h = result.hashes;
      const dup = rows.dup;
      for (let k = 0; k < count; k++) duplicates.addRow(h[2 * k], h[2 * k + 1], firstRow + k, dup);
      const v = result.validEmails;
      for (let j = 0; j < v.length; j += 2) validEmails.set(firstRow + (v[j] as number), v[j + 1] as string);
      if (isOnline) {
        // Rows of code 10 are completed by their online verdicts.
        const u = result.undecided;
        for (let j = 0; j < u.length; j += 2) undecided.set(firstRow + (u[j] as number), u[j + 1] as string);
        let pending = 0;
        for (let k = 0; k < count; k++) if (result.codes[k] === 10) pending++;
        completed += count - pending;
      } else completed += count;
      progress();
    };
    pool.begin(job.policy, onVerdicts);
    const verifyPolicy = toVerifyPolicy(job.policy);
    const decoder = new TextDecoder('utf-8');

    const scanner = new RowScanner(delimiterBytes, lineBreak.mode, Math.max(64, layout.columnCount + 1));
    const emailIndex = layout.emailColumn - 1;
    const arena = window.arena;
    const batchBase = window.extraStart;
    let batchLength = 0;
    let batchRows = 0;
    let batchFirstRow = 0;
    const flushBatch = async () => {
      if (batchRows === 0) return;
      const first = batchFirstRow;
      const end = batchBase + batchLength;
      batchFirstRow = rows.count;
      batchLength = 0;
      batchRows = 0;
      if (!pool.trySubmit(arena.slice(batchBase, end), first)) {
        const addresses = decoder.decode(arena.subarray(batchBase, end)).split('\0');
        onVerdicts(verifyBatch(addresses, job.policy, verifyPolicy), first);
      }
      // Let the verify workers' answers in.
      await new Promise<void>((resolve) => setImmediate(resolve));
    };

    let columnCount = -1;
    let headerStart = -1;
    let headerLength = 0;
    const lineNumberOf = (bufferOffset: number) => lineAt(textPath, window.offset + bufferOffset, breakByte);
    const lineOf = (bufferOffset: number) => formatCount(lineNumberOf(bufferOffset));
    for (;;) {
      const result = scanner.scan(buf, pos, window.end, window.isEof);
      if (result === SCAN_NEED_MORE) {
        // (Past the limit with the \r a \r\n break may start with: the window holds that much of any row.)
        if (window.end - pos > limits.maxRowBytes + 1)
          throw tooLong(lineNumberOf(pos), limits.maxRowBytes, buf, pos, window.end);
        try {
          window.fill(pos);
        } catch (error) {
          if (error instanceof NotTextError) throw notText(error);
          throw error;
        }
        scanner.windowChanged();
        pos = 0;
        continue;
      }
      if (result === SCAN_END) break;
      if (result === SCAN_ERROR) {
        if (scanner.errorKind === 'unterminated-quote')
          throw new InvalidList(
            `Line ${lineOf(scanner.errorAt)}: a quoted field opens there and is never closed: is a closing quote (") missing?`,
          );
        throw new InvalidList(
          `Line ${lineOf(scanner.errorAt)}: text follows the closing quote of a quoted field; inside a quoted field, write a quote as two quotes ("").`,
        );
      }
      const start = scanner.start;
      const contentEnd = scanner.contentEnd;
      pos = scanner.next;
      if (contentEnd - start > limits.maxRowBytes)
        throw tooLong(lineNumberOf(start), limits.maxRowBytes, buf, start, contentEnd);
      const fields = scanner.fields;
      if (fields === 1 && isBlank(buf, start, contentEnd)) continue;
      if (columnCount < 0) {
        columnCount = fields;
        if (layout.header) {
          headerStart = window.offset + start;
          headerLength = contentEnd - start;
          continue;
        }
      }
      if (fields !== columnCount) {
        throw new InvalidList(
          `Line ${lineOf(start)} has ${fields} ${fields === 1 ? 'field' : 'fields'} where ${layout.header ? 'the header' : 'the first row'} has ${columnCount} ` +
            `(split by ${delimiter === '\t' ? 'tab' : `'${delimiter}'`}): every row needs the same number of fields. ` +
            'Check the delimiter, and quote fields that hold it.',
          rows.count,
        );
      }
      if (emailIndex < 0) {
        if (isEmptyRow(scanner, buf)) continue;
        if (rows.count >= limits.maxRecords)
          throw new InvalidList(
            `The file has more than ${formatCount(limits.maxRecords)} records, the most a list may have: split it into smaller lists.`,
            rows.count,
          );
        rows.push(window.offset + start, contentEnd - start);
        completed++;
        continue;
      }
      if (emailIndex >= fields)
        throw new InvalidList(
          `email_column is ${emailIndex + 1}, but the rows have ${fields} fields.`,
          rows.count,
        );
      const emailStart = scanner.fieldStart[emailIndex];
      const emailEnd = scanner.fieldEnd[emailIndex];
      if (isBlank(buf, emailStart, emailEnd) && isEmptyRow(scanner, buf)) continue;
      if (rows.count >= limits.maxRecords)
        throw new InvalidList(
          `The file has more than ${formatCount(limits.maxRecords)} records, the most a list may have: split it into smaller lists.`,
          rows.count,
        );
      rows.push(window.offset + start, contentEnd - start);
      // The email field's bytes into the batch, NUL-separated; a quoted field's "" read as one quote.
      // (The batch area holds BATCH_BYTES plus one longest row: a batch is sent once past BATCH_BYTES.)
      if (batchRows > 0) arena[batchBase + batchLength++] = 0;
      if (scanner.fieldQuoted[emailIndex] === 1) {
        for (let i = emailStart; i < emailEnd; i++) {
          const c = buf[i];
          arena[batchBase + batchLength++] = c;
          if (c === QUOTE) i++;
        }
      } else {
        arena.copyWithin(batchBase + batchLength, emailStart, emailEnd);
        batchLength += emailEnd - emailStart;
      }
      batchRows++;
      if (batchRows >= BATCH_ROWS || batchLength >= BATCH_BYTES) {
        await flushBatch();
        progress();
      }
    }
    await flushBatch();
    await pool.drain();
    progress(true);
    const records = rows.count;
    if (records === 0)
      throw new InvalidList(
        layout.header
          ? 'The file has a header row but no records below it.'
          : 'The file holds only blank lines: it has no records.',
      );

    // 5. The parts, and the head of the results.
    const parts: PartBounds[] = [];
    {
      let firstRow = 0;
      const partRows = rowsPerPart(records, job.partRows, job.spreadParts);
      let byteStart = layout.header ? headerStart + headerLength : bomLength;
      while (firstRow < records) {
        let last = firstRow;
        const limit = Math.min(records, firstRow + partRows);
        while (last + 1 < limit && rows.start[last + 1] + rows.length[last + 1] - byteStart <= PART_BYTES)
          last++;
        const isLast = last === records - 1;
        const byteEnd = isLast ? fileBytes : rows.start[last] + rows.length[last];
        parts.push({ index: parts.length, firstRow, rowCount: last - firstRow + 1, byteStart, byteEnd });
        firstRow = last + 1;
        byteStart = byteEnd;
      }
    }
    let identityColumns: string[] = [];
    if (identityServices.length > 0 && job.identity) {
      const identity = new IdentityPass(job.identity, identityServices, columns, delimiter, quoteField);
      identityColumns = identity.columnNames();
      identity.close();
    }
    let headerBytes: Buffer | undefined;
    if (layout.header) {
      headerBytes = Buffer.alloc(headerLength);
      const fd = openSync(textPath, 'r');
      try {
        readSync(fd, headerBytes, 0, headerLength, headerStart);
      } finally {
        closeSync(fd);
      }
    }
    const head = resultsHead({
      hasBom: bomLength > 0,
      headerBytes,
      columnNames: layout.columnNames,
      runsValidation,
      identityColumns,
      delimiter,
      newline: lineBreak.sequence,
    });
    const context: PartContext = {
      listId: job.listId,
      delimiter,
      newline: lineBreak.sequence,
      breakByte,
      columnCount: layout.columnCount,
      emailIndex,
      runsValidation,
      appendedCount: (runsValidation ? VALIDATION_COLUMNS.length : 0) + identityColumns.length,
      hasHeader: layout.header,
      partCount: parts.length,
      explain: isOnline && job.explain === true && !isReportOnly && runsValidation,
      isReportOnly,
      ...(identityServices.length > 0 && job.identity
        ? { identity: { job: job.identity, services: identityServices, columns } }
        : {}),
      services,
      // (The known bouncers are this node's: the rows they decide are decided here, not online.)
      ...(isOnline && job.online ? { check: { level: job.online, policy: portablePolicy(job.policy) } } : {}),
      ...(isZip ? { zipEntryName: resultsFileName(fileName, job.listId, services), zipEntryTime } : {}),
    };
    const completedOffline = completed;
    const extracted = isZip;
    // The few strings pass 1 kept (Valid Email; the addresses to check online), by part, in one pass each.
    const partOf = (row: number): number => {
      let lo = 0;
      let hi = parts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (parts[mid].firstRow <= row) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    const byPart = (map: Map<number, string>): Map<number, string>[] => {
      const out = parts.map(() => new Map<number, string>());
      // (Batches of verdicts come back in any order: a map's rows are not in order.)
      for (const [row, value] of map) {
        const p = partOf(row);
        out[p].set(row - parts[p].firstRow, value);
      }
      return out;
    };
    const validByPart = byPart(validEmails);
    const undecidedByPart = byPart(undecided);
    validEmails.clear();
    undecided.clear();
    return {
      listId: job.listId,
      textPath,
      isExtracted: extracted,
      records,
      head,
      context,
      parts,
      completedOffline,
      partRows(index) {
        const part = parts[index];
        const from = part.firstRow;
        const n = part.rowCount;
        const start = new Uint32Array(n);
        const length = new Uint32Array(n);
        for (let k = 0; k < n; k++) {
          const i = from + k;
          start[k] = rows.start[i] - part.byteStart;
          length[k] = rows.length[i];
        }
        return {
          count: n,
          start,
          length,
          codes: rows.codes.slice(from, from + n),
          flags: rows.flags.slice(from, from + n),
          dup: rows.dup.slice(from, from + n),
          // A copy where online verdicts will go into it; a part decided offline reads the plan's own.
          validEmails: undecidedByPart[index].size > 0 ? new Map(validByPart[index]) : validByPart[index],
          undecided: undecidedByPart[index],
        };
      },
      partStart(index) {
        const waiting = undecidedByPart[index];
        const rowCount = parts[index].rowCount;
        if (waiting.size === 0) return { completed: rowCount, rowsToCheck: 0, domains: 0 };
        const from = parts[index].firstRow;
        let rowsToCheck = 0;
        const domains = new Set<string>();
        for (const [k, address] of waiting) {
          if (rows.codes[from + k] !== 10) continue;
          rowsToCheck++;
          domains.add(address.slice(address.lastIndexOf('@') + 1).toLowerCase());
        }
        return { completed: rowCount - rowsToCheck, rowsToCheck, domains: domains.size };
      },
      close() {
        if (extracted) rmSync(textPath, { force: true });
      },
    };
  } finally {
    window.close();
  }
}

function averageRowBytes(bytes: number, rows: number): number {
  return rows > 0 ? bytes / rows : 64;
}

function isEmptyRow(scanner: RowScanner, buf: Buffer): boolean {
  for (let f = 0; f < scanner.fields; f++)
    if (!isBlank(buf, scanner.fieldStart[f], scanner.fieldEnd[f])) return false;
  return true;
}

function tooLong(line: number, maxRowBytes: number, buf: Buffer, start: number, end: number): InvalidList {
  return new InvalidList(rowTooLongMessage(line, maxRowBytes, buf, start, end));
}

/** A list's policy without what belongs to this node (its known bouncers' database and set). */
function portablePolicy(policy: ListPolicy): ListPolicy {
  const { knownBouncers: _known, bounceSet: _set, ...portable } = policy;
  return portable;
}
