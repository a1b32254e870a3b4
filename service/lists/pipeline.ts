// The list pipeline, run by the pipeline worker: stored input in, results file and report out.
//
//   1. A zip input: check it and stream its one file out beside it.
//   2. Check the text: no UTF-16/32 byte-order mark, UTF-8, no NUL bytes (while reading, window by window).
//   3. Decide the layout from a sample of the first rows (shared/columns.ts): the header row, the email column.
//   4. Pass 1: scan every row (scan.ts) — each must have the header's number of fields — and send the bytes of
//      its email field in batches to the verify workers; their verdicts come back as typed arrays, and each
//      address's 64-bit hash is counted for duplicates.
//   4b. With online checks (job.online): the distinct addresses of the rows left undecided offline (code 10)
//      go to the main thread's online verifier (checkOnline); their verdicts replace those rows' as they come.
//   5. Pass 2: knowing every duplicate, write the results: each row's bytes as they were in the input, then the
//      appended columns, into a temporary file renamed when complete (zipped for a zip input).
//
// Per row, pass 1 keeps 24 bytes in typed arrays (offset, length, code, flags, hash) and nothing else but the
// `Valid Email` of valid and corrected rows, so a 1,000,000-row list needs ~25 MB here, whatever its width.
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { detectDelimiter, resolveLayout, parseSampleRows } from '../../shared/columns.js';
import { effectiveDelimiter, listFileExtension, type ListServiceKey } from '../../shared/api/list.js';
import { VALIDATION_COLUMNS } from '../../shared/api/listServices.js';
import { DuplicateTable } from './dupTable.js';
import { ExplainWriter, OnlineExplained } from './explain.js';
import { formatBytes, formatCount } from './format.js';
import { canRun, cannotRunReason, identityColumnsOf, IdentityPass } from './identityPass.js';
import { InputWindow, lineAt, NotTextError } from './input.js';
import { resultsFileName } from './names.js';
import { ReportCounter } from './report.js';
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
} from './scan.js';
import type { IdentityListService } from './store.js';
import type { ListJob, ListOutcome, OnlineVerdicts } from './types.js';
import {
  FLAG_HAS_KEY,
  FLAG_ROLE,
  FLAG_STATUS_MASK,
  LIST_ROW_STATUSES,
  domainTypeOfFlags,
  statusOfFlags,
} from './rowFlags.js';
import { toVerifyPolicy, verifyBatch, type BatchVerdicts } from './verdicts.js';
import { withKnownBouncers } from '../identity/bounces.list.js';
import type { VerifierPool } from './verifierPool.js';
import { extractZipEntry, fileSink, inspectZip, zipSink, ZipProblem, type ByteSink } from './zip.js';

/** How much of the file the layout is decided from. */
const SAMPLE_BYTES = 1024 * 1024;
const SAMPLE_ROWS = 1000;
const BATCH_ROWS = 4096;
const BATCH_BYTES = 128 * 1024;
const OUTPUT_BYTES = 4 * 1024 * 1024;
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

/**
 * Checks distinct addresses online (on the main thread), calling `onVerdicts` as verdicts come in; resolves
 * once every address has its verdict.
 */
export type OnlineChecker = (
  addresses: string[],
  /** How many rows hold each address. */
  rowCounts: number[],
  onVerdicts: (verdicts: OnlineVerdicts) => void,
) => Promise<void>;

/** Runs one list; never throws (failures are outcomes). */
export async function runPipeline(
  job: ListJob,
  pool: VerifierPool,
  onProgress: ProgressListener,
  /** Called once every verdict is in (the verify workers are not needed for pass 2). */
  onVerified?: () => Promise<void>,
  /** Online checks of the rows undecided offline, for a job with `online`. */
  checkOnline?: OnlineChecker,
  /** Told the services that run, once the file's columns are known. */
  onServices?: ServicesListener,
): Promise<ListOutcome> {
  const temporary: string[] = [];
  try {
    // The key's known bouncers (code 520) that count today, read once for the whole list.
    const verified = { ...job, policy: withKnownBouncers(job.policy) };
    return await processList(verified, pool, onProgress, temporary, onVerified, checkOnline, onServices);
  } catch (error) {
    if (error instanceof InvalidList)
      return { kind: 'invalid', reason: error.message, records: error.records };
    if (error instanceof ZipProblem) return { kind: 'invalid', reason: error.message, records: 0 };
    const message = error instanceof Error ? error.message : String(error);
    return { kind: 'error', reason: `Processing failed: ${message}` };
  } finally {
    for (const path of temporary) rmSync(path, { force: true });
  }
}

/**
 * What pass 1 keeps of each row, 20 bytes of typed arrays: where its bytes are, its code and packed flags,
 * and its slot in the duplicate table. Grows by doubling (NOTE: read the arrays again after a push).
 */
class RowStore {
  start: Float64Array;
  length: Uint32Array;
  codes: Uint16Array;
  flags: Uint16Array;
  slots: Uint32Array;
  count = 0;

  constructor(capacity: number) {
    this.start = new Float64Array(capacity);
    this.length = new Uint32Array(capacity);
    this.codes = new Uint16Array(capacity);
    this.flags = new Uint16Array(capacity);
    this.slots = new Uint32Array(capacity);
  }

  push(start: number, length: number): void {
    if (this.count === this.start.length) this.grow();
    this.start[this.count] = start;
    this.length[this.count] = length;
    this.count++;
  }

  private grow(): void {
    const capacity = this.start.length * 2;
    const grown = <T extends Float64Array | Uint32Array | Uint16Array>(
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
    this.slots = grown(this.slots, (n) => new Uint32Array(n), capacity);
  }
}

/**
 * A buffered writer of the results, in two 4 MiB halves of the reader's arena: rows are copied in with
 * copyWithin, and a full half is written by the thread pool (fs.write) while the other one fills, so the
 * disk does not hold up the copying.
 */
class Output {
  private readonly halves: [Buffer, Buffer];
  private readonly bases: [number, number];
  private half = 0;
  /** The half being filled, and its offset in the arena. */
  buf: Buffer;
  base: number;
  at = 0;
  constructor(
    private readonly sink: ByteSink,
    private readonly arena: Uint8Array,
    start: number,
  ) {
    this.bases = [start, start + OUTPUT_BYTES];
    this.halves = [
      Buffer.from(arena.buffer, arena.byteOffset + start, OUTPUT_BYTES),
      Buffer.from(arena.buffer, arena.byteOffset + start + OUTPUT_BYTES, OUTPUT_BYTES),
    ];
    this.buf = this.halves[0];
    this.base = this.bases[0];
  }

  /** Whether `bytes` more fit; when not, `await flush()` first. */
  fits(bytes: number): boolean {
    return this.at + bytes <= OUTPUT_BYTES;
  }
  async flush(): Promise<void> {
    if (this.at === 0) return;
    // The sink has at most one write in flight, of the other half: once this resolves, that half is free.
    await this.sink.write(this.buf, this.at);
    this.half = 1 - this.half;
    this.buf = this.halves[this.half]!;
    this.base = this.bases[this.half]!;
    this.at = 0;
  }
  /** Copies `arena[start, start + length)` (the reader's window); the caller made room. */
  copy(start: number, length: number): void {
    this.arena.copyWithin(this.base + this.at, start, start + length);
    this.at += length;
  }
  bytes(bytes: Uint8Array): void {
    const { buf } = this;
    let at = this.at;
    for (let i = 0; i < bytes.length; i++) buf[at++] = bytes[i]!;
    this.at = at;
  }
  text(text: string): void {
    this.at += this.buf.write(text, this.at, 'utf8');
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
  onVerified: (() => Promise<void>) | undefined,
  checkOnline: OnlineChecker | undefined,
  onServices: ServicesListener | undefined,
): Promise<ListOutcome> {
  const { limits } = job;
  // 1. A zip input: its one file, streamed out beside it.
  let textPath = join(job.dir, job.inputFile);
  let fileName = job.name;
  const isZip = listFileExtension(job.name) === '.zip';
  if (isZip) {
    const entry = await inspectZip(textPath, limits);
    fileName = entry.fileName.split('/').pop() ?? entry.fileName;
    const extracted = join(job.dir, `source${listFileExtension(fileName) ?? '.txt'}`);
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
      throw new InvalidList(`Line 1 is longer than ${formatBytes(limits.maxRowBytes)}: is this a list file?`);
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
    const isOnline = job.online !== undefined && job.policy.online === true && checkOnline !== undefined;
    /** With online checks: the addresses of the rows of code 10 (see BatchVerdicts.undecided). */
    const undecided = new Map<number, string>();
    /** With an explain file: each online address, how far its check went and why (by the row's address index). */
    const explained = isOnline && job.explainFile ? new OnlineExplained() : undefined;
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
      const slots = rows.slots;
      for (let k = 0; k < count; k++) slots[firstRow + k] = duplicates.add(h[2 * k], h[2 * k + 1]);
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

    /** 4b. The rows of code 10, by distinct address, checked online; their verdicts replace the offline ones. */
    const checkUndecided = async () => {
      const addressIndex = new Map<string, number>();
      const addresses: string[] = [];
      const rowsOf: number[][] = [];
      const { codes } = rows;
      for (let i = 0; i < rows.count; i++) {
        if (codes[i] !== 10) continue;
        const address = undecided.get(i);
        if (address === undefined) {
          completed++;
          continue;
        }
        let index = addressIndex.get(address);
        if (index === undefined) {
          index = addresses.length;
          addressIndex.set(address, index);
          addresses.push(address);
          rowsOf.push([]);
        }
        rowsOf[index].push(i);
      }
      if (addresses.length === 0) return;
      addressIndex.clear();
      undecided.clear();
      if (explained) explained.begin(rows.count, addresses, rowsOf);
      await checkOnline!(
        addresses,
        rowsOf.map((r) => r.length),
        (verdicts) => {
          explained?.add(verdicts);
          const { codes: rowCodes, flags: rowFlags } = rows;
          for (let k = 0; k < verdicts.indexes.length; k++) {
            const index = verdicts.indexes[k];
            const code = verdicts.codes[k];
            const flags = verdicts.flags[k];
            const validEmail = verdicts.validEmails[k];
            for (const i of rowsOf[index] ?? []) {
              rowCodes[i] = code;
              rowFlags[i] = (flags & ~FLAG_HAS_KEY) | (rowFlags[i] & FLAG_HAS_KEY);
              if (validEmail === '') validEmails.delete(i);
              else validEmails.set(i, validEmail);
            }
            completed += rowsOf[index]?.length ?? 0;
            rowsOf[index] = [];
          }
          progress();
        },
      );
      progress(true);
    };

    let columnCount = -1;
    let headerStart = -1;
    let headerLength = 0;
    const lineOf = (bufferOffset: number) =>
      formatCount(lineAt(textPath, window.offset + bufferOffset, breakByte));
    for (;;) {
      const result = scanner.scan(buf, pos, window.end, window.isEof);
      if (result === SCAN_NEED_MORE) {
        if (window.end - pos >= limits.maxRowBytes)
          throw tooLong(lineOf(pos), limits.maxRowBytes, buf, pos, window.end);
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
        throw tooLong(lineOf(start), limits.maxRowBytes, buf, start, contentEnd);
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
    await onVerified?.();
    progress(true);
    if (isOnline) await checkUndecided();
    const records = rows.count;
    if (records === 0)
      throw new InvalidList(
        layout.header
          ? 'The file has a header row but no records below it.'
          : 'The file holds only blank lines: it has no records.',
      );

    // 5. Pass 2: the results (for a report-only run of services to buy, only the counts: nothing is written).
    const resultsPath = join(job.dir, job.resultsFile);
    const partPath = `${resultsPath}.tmp`;
    temporary.push(partPath);
    const report = new ReportCounter();
    const identity =
      identityServices.length > 0 && job.identity
        ? new IdentityPass(job.identity, identityServices, columns, delimiter, quoteField)
        : undefined;
    const explainWriter =
      explained && job.explainFile && !isReportOnly && runsValidation
        ? new ExplainWriter(join(job.dir, job.explainFile))
        : undefined;
    if (explainWriter) temporary.push(join(job.dir, `${job.explainFile}.tmp`));
    const fieldScanner =
      identity || explainWriter
        ? new RowScanner(delimiterBytes, lineBreak.mode, Math.max(64, layout.columnCount + 1))
        : undefined;
    const fd = isReportOnly ? -1 : openSync(partPath, 'w', 0o600);
    try {
      const sink = isReportOnly
        ? undefined
        : isZip
          ? zipSink(fd, resultsFileName(fileName, job.listId, services))
          : fileSink(fd);
      const reader = new InputWindow(textPath, limits.maxRowBytes, false, 2 * OUTPUT_BYTES);
      const out = sink ? new Output(sink, reader.arena, reader.extraStart) : undefined;
      const newline = Buffer.from(lineBreak.sequence, 'utf8');
      const appendedNames = [
        ...(runsValidation ? VALIDATION_COLUMNS : []),
        ...(identity?.columnNames() ?? []),
      ];
      let lastIdentityProgress = 0;
      try {
        if (out) {
          if (bomLength > 0) out.bytes(UTF8_BOM);
          if (layout.header) {
            reader.seek(headerStart);
            out.copy(0, headerLength);
          } else {
            out.text(layout.columnNames.map((name) => quoteField(name, delimiter)).join(delimiter));
          }
          if (appendedNames.length > 0)
            out.text(delimiter + appendedNames.map((name) => quoteField(name, delimiter)).join(delimiter));
          out.bytes(newline);
        }
        const suffixes = new Map<number, Uint8Array>();
        const { start, length, codes, flags, slots } = rows;
        const rbuf = reader.buf;
        // A field of the row the field scanner last read (its offsets are into the reader's window).
        const readField = (index: number): string => {
          const scanner = fieldScanner!;
          if (index >= scanner.fields) return '';
          const text = rbuf.toString('utf8', scanner.fieldStart[index], scanner.fieldEnd[index]);
          return scanner.fieldQuoted[index] === 1 ? text.replaceAll('""', '"') : text;
        };
        // Row alignment: the blank lines pass 1 skipped stay in the results, as empty rows (empty appended
        // fields too), so that results line N is always input line N.
        const emptyRow = Buffer.from(delimiter.repeat(layout.columnCount - 1 + appendedNames.length), 'utf8');
        const blankLines = new BlankLineCounter(textPath, breakByte);
        const writeBlankLines = async (count: number) => {
          for (let n = 0; out && n < count; n++) {
            if (!out.fits(emptyRow.length + newline.length)) await out.flush();
            out.bytes(emptyRow);
            out.bytes(newline);
          }
        };
        /** The bytes before the next row: the terminator of the one before (if any) and blank lines. */
        let gapStart = layout.header ? headerStart + headerLength : bomLength;
        let gapHasTerminator = layout.header;
        reader.seek(start[0]);
        for (let i = 0; i < records; i++) {
          const rowStart = start[i];
          const rowLength = length[i];
          // (A gap of one byte is the row before's terminator alone: nearly every row, and nothing to count.)
          if (out && rowStart - gapStart > (gapHasTerminator ? 1 : 0)) {
            const breaks = blankLines.count(gapStart, rowStart, reader);
            await writeBlankLines(gapHasTerminator ? breaks - 1 : breaks);
          }
          gapStart = rowStart + rowLength;
          gapHasTerminator = true;
          if (rowStart + rowLength > reader.offset + reader.end) reader.seek(rowStart);
          const code = codes[i];
          const flag = flags[i];
          if (runsValidation) report.add(code, flag);
          let identityText = '';
          if (fieldScanner) {
            // The row's fields, scanned again (its bytes are in the window): the identity services and the
            // explain file read them.
            const inWindow = rowStart - reader.offset;
            fieldScanner.windowChanged();
            fieldScanner.scan(rbuf, inWindow, inWindow + rowLength, true);
          }
          if (explainWriter && explained) {
            const online = explained.of(i);
            explainWriter.row(i + 1, online ? '' : readField(emailIndex).trim(), code, online);
          }
          if (identity && fieldScanner) {
            identityText = identity.row(readField);
            const now = Date.now();
            if (now - lastIdentityProgress >= PROGRESS_EVERY_MS) {
              lastIdentityProgress = now;
              onProgress(records, records, completed, identity.done);
            }
          }
          if (!out) continue;
          let suffix: Uint8Array | undefined;
          let validEmail: string | undefined;
          if (runsValidation) {
            const isDuplicate = duplicates.isDuplicate(slots[i]) ? 1 : 0;
            const key = code * 1024 + (flag & 0xff) * 2 + isDuplicate;
            suffix = suffixes.get(key);
            if (!suffix) {
              suffix = suffixFor(code, flag, isDuplicate === 1, delimiter);
              suffixes.set(key, suffix);
            }
            const status = flag & FLAG_STATUS_MASK;
            validEmail = status === VALID || status === CORRECTED ? validEmails.get(i) : undefined;
          }
          const need =
            rowLength +
            (suffix?.length ?? 0) +
            newline.length +
            (validEmail === undefined ? 0 : validEmail.length * 3 + 2) +
            identityText.length * 3;
          if (!out.fits(need)) await out.flush();
          out.copy(rowStart - reader.offset, rowLength);
          if (suffix) {
            out.bytes(suffix);
            if (validEmail !== undefined) out.text(quoteField(validEmail, delimiter));
          }
          if (identityText !== '') out.text(identityText);
          out.bytes(newline);
        }
        // Blank lines after the last row (the last row's own terminator excepted).
        if (out && records > 0) await writeBlankLines(blankLines.count(gapStart, fileBytes, reader) - 1);
        blankLines.close();
        explainWriter?.finish();
      } finally {
        reader.close();
        identity?.close();
        explainWriter?.abandon();
      }
      if (out && sink) {
        await out.flush();
        await sink.finish();
      }
    } finally {
      if (fd >= 0) closeSync(fd);
    }
    if (!isReportOnly) renameSync(partPath, resultsPath);
    return {
      kind: 'results',
      records,
      reporting: report.reporting(),
      services,
      serviceReporting: identity?.reporting() ?? {},
      isAwaitingPurchase: isReportOnly,
    };
  } finally {
    window.close();
    if (isZip && existsSync(textPath)) rmSync(textPath, { force: true });
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

function tooLong(line: string, maxRowBytes: number, buf: Buffer, start: number, end: number): InvalidList {
  const hasQuote = buf.indexOf(QUOTE, start) >= 0 && buf.indexOf(QUOTE, start) < end;
  return new InvalidList(
    `Line ${line} is longer than ${formatBytes(maxRowBytes)}, the most a row may hold` +
      (hasQuote ? ': is a closing quote (") missing?' : '.'),
  );
}

const VALID = LIST_ROW_STATUSES.indexOf('valid');
const CORRECTED = LIST_ROW_STATUSES.indexOf('corrected');

/** The appended columns of a row up to `Valid Email` (its value follows, then the line break). */
/**
 * Counts line breaks in a span of the input: from the reader's window when the span is in it, else read
 * from the file (a gap of blank lines is rare: rows are read in order and the window holds them).
 */
class BlankLineCounter {
  private fd = -1;
  private readonly chunk = Buffer.alloc(1 << 16);

  constructor(
    private readonly path: string,
    private readonly breakByte: number,
  ) {}

  count(from: number, to: number, reader: InputWindow): number {
    if (to <= from) return 0;
    if (from >= reader.offset && to <= reader.offset + reader.end)
      return countByte(reader.buf, from - reader.offset, to - reader.offset, this.breakByte);
    if (this.fd < 0) this.fd = openSync(this.path, 'r');
    let breaks = 0;
    for (let at = from; at < to;) {
      const read = readSync(this.fd, this.chunk, 0, Math.min(this.chunk.length, to - at), at);
      if (read <= 0) break;
      breaks += countByte(this.chunk, 0, read, this.breakByte);
      at += read;
    }
    return breaks;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

function countByte(buf: Uint8Array, from: number, to: number, byte: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (buf[i] === byte) n++;
  return n;
}

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
