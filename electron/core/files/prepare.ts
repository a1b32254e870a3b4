// Before a list is sent: the offline pre-check (rows to send, how many fail the syntax check, how many are
// duplicates), and the file(s) to upload: the original when it can go as it is, else a UTF-8 copy whose header
// row names the roles the user chose, split into parts of at most the service's per-list limit when asked.
//
// The service finds name, postal and hash columns by the spec's header synonyms (shared/columns.ts), so the
// header row sent is what tells it the mapping: a column mapped to a role goes under a name of that role,
// and when the job reads such columns (intelligence, email append), a column the user set aside goes under a
// name that is no synonym, so it is not read.
import { createWriteStream, mkdirSync, renameSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import type { ListServiceKey } from '../../../shared/api/list.js';
import { columnKindOf } from '../../../shared/columns.js';
import {
  COLUMN_ROLE_HEADERS,
  PART_LIMIT,
  type Mapping,
  type Precheck,
} from '../../../shared/desktop/contract.js';
import { readsNamedColumns } from '../../../shared/desktop/listServices.js';
import { quoteField } from '../../../service/lists/read/scan.js';
import { checkAddresses, type CheckedAddresses } from './addressCheck.js';
import { SyntaxHelper } from './syntaxHelper.js';
import { fieldText, walkRows } from './count.js';
import { detectEncoding, openListSource, readHead, type ListSource, type SheetOptions } from './source.js';

/** A list file; an .xlsx list's sheet (the sheet picker's choice) and where its CSV copy is kept. */
export interface FileRef extends SheetOptions {
  readonly path: string;
  readonly name: string;
  readonly size: number;
}

async function encodingOf(source: ListSource) {
  const head = await readHead(await source.open(), 64 * 1024);
  return detectEncoding(head.bytes, head.isWhole).encoding;
}

/** The bytes of a stream as they pass, counted. */
async function* counted(
  stream: AsyncIterable<Buffer>,
  onBytes: (bytes: number) => void,
): AsyncGenerator<Buffer> {
  for await (const chunk of stream) {
    onBytes(chunk.length);
    yield chunk;
  }
}

/** Files from this size get the pre-check's helper thread (below it, starting a thread costs more). */
const HELPER_MIN_BYTES = 8 * 1024 * 1024;

/** How far the pre-check is: bytes of text read of the total, data rows seen. */
export interface PrecheckProgress {
  readonly bytesRead: number;
  readonly totalBytes: number;
  readonly rows: number;
}

/** The offline pre-check: what the service will be sent, and what the syntax check already says of it. */
export async function precheck(
  file: FileRef,
  mapping: Mapping,
  split: boolean,
  partLimit = PART_LIMIT,
  onProgress?: (progress: PrecheckProgress) => void,
  /** `helper`: check addresses on a second thread too (the pre-check worker; not worth it for small files). */
  options: { readonly helper?: boolean } = {},
): Promise<Precheck> {
  const source = await openListSource(file.path, file.name, file.size, file);
  let bytesRead = 0;
  const emailIndex = mapping.roles.indexOf('email');
  // The addresses' hashes, sorted at the end to count duplicates: a million Map entries cost seconds.
  let hashes = new Float64Array(1 << 16);
  let hashCount = 0;
  let rowsToSend = 0;
  let invalid = 0;
  let blank = 0;
  let isHeaderRow = mapping.header;
  const add = (checked: CheckedAddresses) => {
    invalid += checked.invalid;
    if (hashCount + checked.hashes.length > hashes.length) {
      const bigger = new Float64Array(Math.max(hashes.length * 2, hashCount + checked.hashes.length));
      bigger.set(hashes.subarray(0, hashCount));
      hashes = bigger;
    }
    hashes.set(checked.hashes, hashCount);
    hashCount += checked.hashes.length;
  };
  // A large file's addresses are checked on two threads: this one and a helper (it takes a batch when free).
  const helper = options.helper && file.size >= HELPER_MIN_BYTES ? new SyntaxHelper() : undefined;
  const handedOver: { values: string[]; checked: Promise<CheckedAddresses> }[] = [];
  // The batch of email fields gathered since the last window: checked here or handed to the helper.
  let values: string[] = [];
  const handOver = () => {
    if (values.length === 0) return;
    const checked = helper?.tryCheck(values);
    if (checked) handedOver.push({ values, checked });
    else add(checkAddresses(values));
    values = [];
  };
  try {
    const stream = (await source.open()) as AsyncIterable<Buffer>;
    await walkRows(
      counted(stream, (bytes) => (bytesRead += bytes)),
      {
        delimiter: mapping.delimiter,
        encoding: await encodingOf(source),
        afterWindow: () => {
          onProgress?.({ bytesRead, totalBytes: source.textSize, rows: rowsToSend + blank });
          handOver();
        },
      },
      (buf, scanner, isBlankRow) => {
        if (isHeaderRow) {
          isHeaderRow = false;
          return;
        }
        if (isBlankRow) {
          blank++;
          return;
        }
        rowsToSend++;
        // Without an email column (email append, intelligence by name and address) there is nothing to check.
        if (emailIndex >= 0) values.push(fieldText(buf, scanner, emailIndex));
      },
    );
    // The helper's answers; a batch it could not check is checked here.
    for (const { values, checked } of handedOver) add(await checked.catch(() => checkAddresses(values)));
  } finally {
    await helper?.close();
  }
  let duplicates = 0;
  const sorted = hashes.subarray(0, hashCount).sort();
  for (let i = 0; i < hashCount;) {
    let j = i + 1;
    while (j < hashCount && sorted[j] === sorted[i]) j++;
    if (j - i > 1) duplicates += j - i;
    i = j;
  }
  const parts = split ? Math.max(1, Math.ceil(rowsToSend / partLimit)) : 1;
  return {
    rowsToSend,
    invalid,
    duplicates,
    blank,
    overLimit: split ? 0 : Math.max(0, rowsToSend - partLimit),
    parts,
  };
}

/**
 * The header row to send: the file's own names where they already say the role, the role's name otherwise.
 * When the services read columns by name (anything beyond validation and alternate email append), a column
 * set aside, or the email column, whose own name is a synonym of another role is renamed too — `City
 * (ignored)`, `Email` — so the service reads the columns the user mapped and no others.
 */
export function headerFor(
  mapping: Mapping,
  names: readonly string[],
  services: readonly ListServiceKey[] = ['email_validation'],
): { cells: string[]; isChanged: boolean } {
  const isByName = readsNamedColumns(services);
  let isChanged = !mapping.header;
  const cells = mapping.roles.map((role, c) => {
    const own = mapping.header ? (names[c] ?? '') : '';
    const ownKind = own ? columnKindOf(own) : undefined;
    if (role === 'ignore') {
      if (isByName && ownKind !== undefined) {
        isChanged = true;
        return `${own} (ignored)`;
      }
      return own || `Column ${c + 1}`;
    }
    if (role === 'email') {
      if (isByName && ownKind !== undefined && ownKind !== 'email') {
        isChanged = true;
        return COLUMN_ROLE_HEADERS.email;
      }
      return own || COLUMN_ROLE_HEADERS.email;
    }
    if (mapping.header && ownKind === role) return own;
    isChanged = true;
    return COLUMN_ROLE_HEADERS[role];
  });
  // A file without a header whose only role is email needs none.
  if (!mapping.header && mapping.roles.every((role) => role === 'email' || role === 'ignore'))
    isChanged = false;
  return { cells, isChanged };
}

export interface UploadPart {
  readonly path: string;
  /** The name the list is submitted under. */
  readonly name: string;
  readonly size: number;
  readonly header: boolean;
  readonly rows: number | null;
}

/**
 * The file(s) to submit. The original goes as it is when it can; otherwise copies are written to `dir`
 * (named after the original, `-part2` etc. when split). Each part repeats the header row.
 */
export async function prepareUpload(
  file: FileRef,
  mapping: Mapping,
  options: {
    split: boolean;
    dir: string;
    headerNames: readonly string[];
    partLimit?: number;
    /** The services the job runs (default validation only): they decide which names must change. */
    services?: readonly ListServiceKey[];
  },
): Promise<UploadPart[]> {
  const source = await openListSource(file.path, file.name, file.size, file);
  const { cells, isChanged } = headerFor(mapping, options.headerNames, options.services);
  const encoding = await encodingOf(source);
  // An .xlsx list always goes as the CSV of its sheet.
  const needsCopy = isChanged || options.split || encoding !== 'utf-8' || source.format === 'xlsx';
  if (!needsCopy)
    return [{ path: file.path, name: file.name, size: file.size, header: mapping.header, rows: null }];

  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const stem = source.textName.replace(/\.(csv|txt)$/i, '');
  const extension = /\.txt$/i.test(source.textName) ? '.txt' : '.csv';
  const writesHeader = mapping.header || isChanged;
  const partLimit = options.partLimit ?? PART_LIMIT;
  const headerLine = cells.map((cell) => quoteField(cell, mapping.delimiter)).join(mapping.delimiter);
  const parts: UploadPart[] = [];
  let lineBreak = '\n';
  let out: ReturnType<typeof createWriteStream> | undefined;
  let partPath = '';
  let partName = '';
  let isHeaderRow = mapping.header;
  // The rows of the window read last, as copies of runs of their bytes, each piece for one part (1, 2, …).
  let pieces: { part: number; bytes: Buffer[] }[] = [];
  const rowsOfPart: number[] = [];
  let part = 0;
  let runStart = -1;
  let runEnd = -1;
  let window: Buffer | undefined;

  const close = async () => {
    if (!out) return;
    out.end();
    await once(out, 'finish');
    renameSync(`${partPath}.tmp`, partPath);
    parts.push({
      path: partPath,
      name: partName,
      size: statSync(partPath).size,
      header: writesHeader,
      rows: rowsOfPart[parts.length] ?? 0,
    });
    out = undefined;
  };
  const open = () => {
    const index = parts.length + 1;
    partName = options.split ? `${stem}-part${index}${extension}` : `${stem}${extension}`;
    partPath = join(options.dir, partName);
    out = createWriteStream(`${partPath}.tmp`, { mode: 0o600 });
    if (writesHeader) out.write(headerLine + lineBreak);
  };
  const endRun = () => {
    if (runStart >= 0) pieces.at(-1)!.bytes.push(Buffer.from(window!.subarray(runStart, runEnd)));
    runStart = runEnd = -1;
  };
  const write = async () => {
    for (const piece of pieces) {
      while (parts.length + (out ? 1 : 0) < piece.part) {
        await close();
        open();
      }
      if (!out!.write(Buffer.concat(piece.bytes))) await once(out!, 'drain');
    }
    pieces = [];
  };

  await walkRows(
    (await source.open()) as AsyncIterable<Buffer>,
    {
      delimiter: mapping.delimiter,
      encoding,
      onLineBreak: (sequence) => (lineBreak = sequence),
      windowRead: endRun,
      afterWindow: write,
    },
    (buf, scanner, isBlankRow) => {
      window = buf;
      if (isHeaderRow) {
        isHeaderRow = false;
        return;
      }
      if (isBlankRow) return;
      if (part === 0 || (options.split && rowsOfPart[part - 1] >= partLimit)) {
        endRun();
        part++;
        rowsOfPart.push(0);
      }
      if (pieces.at(-1)?.part !== part) pieces.push({ part, bytes: [] });
      rowsOfPart[part - 1]++;
      const { start, contentEnd, next } = scanner;
      // A row with its own line break joins the run of rows copied in one piece; the last row gets one.
      if (next > contentEnd) {
        if (runEnd !== start) {
          endRun();
          runStart = start;
        }
        runEnd = next;
        return;
      }
      endRun();
      pieces.at(-1)!.bytes.push(Buffer.from(buf.subarray(start, contentEnd)), Buffer.from(lineBreak));
    },
  );
  if (!out) open();
  await close();
  return parts;
}

export { sha256FileAside } from './hash.js';
