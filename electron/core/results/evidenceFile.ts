// The form a job keeps its evidence in (issue 37): the list's explain CSV, row for row, as a gzip file made of
// blocks (gzip members, as BGZF does) of about 256 KiB of text each. Any gunzip reads it whole (`zcat
// explain.csv.gz` is the CSV); the Results screen reads one row by inflating only its block. Each member's
// header carries, in an extra field (RFC 1952 §2.3.1.1, subfield "MS"), the first and last row number it holds
// and its own size in bytes, so the blocks are found by hopping from header to header: an index of a
// 1,000,000-row file is about 900 entries, read without inflating anything.
//
// The first member holds the header line alone (rows 0 to 0); the others hold whole rows, each ending in \n.
// The explain CSV is about 220 bytes a row as the service writes it (a why in words, the host, the reply, the
// source and the time); kept so, about 22 bytes a row (docs/desktop.md, "Evidence of every verdict").
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { crc32, deflateRaw, inflateRawSync } from 'node:zlib';

const deflateRawAsync = promisify(deflateRaw);

/** Text of one block before it is compressed: small enough to inflate for one row, large enough to pack well. */
export const BLOCK_TEXT_BYTES = 256 * 1024;

const HEADER_BYTES = 28;
const NEWLINE = Buffer.from('\n');
const SUBFIELD_M = 0x4d;
const SUBFIELD_S = 0x53;

/** Whether the file at `fd` starts as gzip (a kept evidence file) rather than as plain text. */
export function isGzipAt(fd: number): boolean {
  const head = Buffer.alloc(2);
  return readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** The header of one gzip member whose deflated text is `deflatedBytes` long and holds rows `first`–`last`. */
function memberHeader(deflatedBytes: number, first: number, last: number): Buffer {
  const head = Buffer.alloc(HEADER_BYTES);
  head.set([0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255], 0);
  head.writeUInt16LE(16, 10); // XLEN: one subfield of 12 bytes
  head[12] = SUBFIELD_M;
  head[13] = SUBFIELD_S;
  head.writeUInt16LE(12, 14);
  head.writeUInt32LE(first, 16);
  head.writeUInt32LE(last, 20);
  head.writeUInt32LE(HEADER_BYTES + deflatedBytes + 8, 24);
  return head;
}

/** One gzip member of `text`, deflated on the thread pool (the main thread goes on splitting rows). */
async function member(text: Buffer, first: number, last: number): Promise<Buffer> {
  const deflated = await deflateRawAsync(text, { level: 6 });
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(text) >>> 0, 0);
  trailer.writeUInt32LE(text.length >>> 0, 4);
  return Buffer.concat([memberHeader(deflated.length, first, last), deflated, trailer]);
}

/** Blocks being deflated at once (each ~256 KiB of text). */
const IN_FLIGHT = 3;

/**
 * Writes a kept evidence file: the header line, then the rows in order, cut into blocks. `row` answers a
 * promise when the caller should wait (blocks are being deflated); the file is written in order.
 */
export class EvidenceWriter {
  private readonly fd: number;
  private block: Buffer[] = [];
  private blockBytes = 0;
  private first = 0;
  private last = 0;
  /** Blocks being deflated, in file order. */
  private readonly pending: Promise<Buffer>[] = [];
  /** Bytes written so far. */
  size = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'w', 0o600);
  }

  /** The header line (without its line break). */
  async header(line: Buffer): Promise<void> {
    this.pending.push(member(Buffer.concat([line, NEWLINE]), 0, 0));
    await this.drain(0);
  }

  /** One row (without its line break: a view the writer copies) and its row number. */
  row(number: number, line: Buffer): Promise<void> | undefined {
    if (this.block.length === 0) this.first = this.last = number;
    else if (number < this.first) this.first = number;
    else if (number > this.last) this.last = number;
    this.block.push(line, NEWLINE);
    this.blockBytes += line.length + 1;
    if (this.blockBytes < BLOCK_TEXT_BYTES) return undefined;
    this.cut();
    return this.pending.length >= IN_FLIGHT ? this.drain(IN_FLIGHT - 1) : undefined;
  }

  /** The last block, and the file closed. */
  async finish(): Promise<void> {
    this.cut();
    await this.drain(0);
    closeSync(this.fd);
  }

  /** Closes the file without finishing it (the caller removes it). */
  async abandon(): Promise<void> {
    await Promise.allSettled(this.pending);
    closeSync(this.fd);
  }

  private cut(): void {
    if (this.block.length === 0) return;
    // (Concatenated into a copy: the rows were views of the caller's buffers.)
    this.pending.push(member(Buffer.concat(this.block, this.blockBytes), this.first, this.last));
    this.block = [];
    this.blockBytes = 0;
  }

  /** Writes finished blocks, in order, until at most `left` are being deflated. */
  private async drain(left: number): Promise<void> {
    while (this.pending.length > left) {
      const bytes = await this.pending.shift()!;
      for (let at = 0; at < bytes.length;) at += writeSync(this.fd, bytes, at, bytes.length - at);
      this.size += bytes.length;
    }
  }
}

/**
 * Finds the rows of CSV text one after another without reading their fields: a row ends at a line break
 * outside quotes (a quoted field may hold one). Each quote and line break is looked for once, so a block is
 * split in one quick pass.
 */
export class RowSplitter {
  private nextQuote = -2;
  private nextBreak = -2;
  constructor(private readonly text: Buffer) {}

  /** The index of the \n ending the row that starts at `from`; -1 when the text ends inside it. */
  rowEnd(from: number): number {
    const text = this.text;
    let at = from;
    let inQuotes = false;
    for (;;) {
      if (this.nextQuote !== -1 && this.nextQuote < at) this.nextQuote = text.indexOf(0x22, at);
      if (this.nextBreak !== -1 && this.nextBreak < at) this.nextBreak = text.indexOf(0x0a, at);
      const quote = this.nextQuote < 0 ? text.length : this.nextQuote;
      if (inQuotes) {
        // A quote ends the field unless doubled ("" is a quote in it: two toggles).
        if (quote >= text.length) return -1;
        inQuotes = false;
        at = quote + 1;
        continue;
      }
      if (this.nextBreak < 0) return -1;
      if (this.nextBreak < quote) return this.nextBreak;
      inQuotes = true;
      at = quote + 1;
    }
  }
}

/** The number at the start of a row (its `Row` field, the first column), or -1. */
export function leadingNumber(text: Buffer, from: number, to: number): number {
  let at = from;
  if (text[at] === 0x22) at++;
  let value = 0;
  let digits = 0;
  for (; at < to; at++) {
    const byte = text[at];
    if (byte < 0x30 || byte > 0x39) break;
    value = value * 10 + (byte - 0x30);
    digits++;
  }
  return digits > 0 && digits < 16 ? value : -1;
}

/** The blocks of a kept evidence file: where each is and which rows it holds (the header's is block 0). */
export interface EvidenceBlocks {
  readonly offsets: Float64Array;
  readonly sizes: Uint32Array;
  readonly firsts: Uint32Array;
  readonly lasts: Uint32Array;
}

/** Reads the blocks' headers of a kept evidence file (open at `fd`, `size` bytes); undefined when not one. */
export function readBlocks(fd: number, size: number): EvidenceBlocks | undefined {
  const offsets: number[] = [];
  const sizes: number[] = [];
  const firsts: number[] = [];
  const lasts: number[] = [];
  const head = Buffer.alloc(HEADER_BYTES);
  for (let at = 0; at < size;) {
    const read = readSync(fd, head, 0, HEADER_BYTES, at);
    const isBlock =
      read === HEADER_BYTES &&
      head[0] === 0x1f &&
      head[1] === 0x8b &&
      head[3] === 4 &&
      head[12] === SUBFIELD_M &&
      head[13] === SUBFIELD_S;
    if (!isBlock) return undefined;
    const length = head.readUInt32LE(24);
    if (length <= HEADER_BYTES + 8 || at + length > size) return undefined;
    offsets.push(at);
    sizes.push(length);
    firsts.push(head.readUInt32LE(16));
    lasts.push(head.readUInt32LE(20));
    at += length;
  }
  return {
    offsets: Float64Array.from(offsets),
    sizes: Uint32Array.from(sizes),
    firsts: Uint32Array.from(firsts),
    lasts: Uint32Array.from(lasts),
  };
}

/** The text of block `index`. */
export function readBlock(fd: number, blocks: EvidenceBlocks, index: number): Buffer {
  const bytes = Buffer.allocUnsafe(blocks.sizes[index]);
  readSync(fd, bytes, 0, bytes.length, blocks.offsets[index]);
  return inflateRawSync(bytes.subarray(HEADER_BYTES, bytes.length - 8));
}

/** The blocks that may hold row `number` (rows in order: one; a row never written: none). */
export function blocksOfRow(blocks: EvidenceBlocks, number: number): number[] {
  const found: number[] = [];
  for (let i = 1; i < blocks.firsts.length; i++)
    if (blocks.firsts[i] <= number && number <= blocks.lasts[i]) found.push(i);
  return found;
}
