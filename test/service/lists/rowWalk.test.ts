// The walk of a list's rows outside the pipeline (service/lists/read/rowWalk.ts: E7's count of records, the
// desktop's count and upload preparation) against a hostile file: a row that never ends. Its cost grows with
// the row's length, not with its square (the scanner's work is counted: every byte it is handed), and a row
// longer than the plan's limit (1 MiB) stops the walk with the plan's words as soon as its bytes pass the
// limit, reading the stream (and inflating a zip) no further.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRecords } from '../../../service/lists/node/records.js';
import { DEFAULT_LIST_LIMITS } from '../../../service/lists/node/processor.js';
import { RowTooLongError, walkRows, type RowWalkOptions } from '../../../service/lists/read/rowWalk.js';
import { RowScanner, SCAN_ROW } from '../../../service/lists/read/scan.js';
import { openZipEntry } from '../../../service/lists/read/zip.js';
import { tempDir } from '../../helpers/service.js';

const MIB = 1024 * 1024;
const CHUNK = 64 * 1024;

/** `bytes` as a stream delivers it, in chunks of `size`; `pulled` counts what the walk took. */
function streamOf(bytes: Buffer, size = CHUNK) {
  const seen = { pulled: 0, isClosed: false };
  async function* chunks(): AsyncGenerator<Buffer> {
    try {
      for (let i = 0; i < bytes.length; i += size) {
        const chunk = bytes.subarray(i, i + size);
        seen.pulled += chunk.length;
        // (A stream's chunks come asynchronously.)
        yield await Promise.resolve(chunk);
      }
    } finally {
      seen.isClosed = true;
    }
  }
  return { stream: chunks(), seen };
}

/** Rows the walk visits, as their fields' text. */
async function rowsOf(
  bytes: Buffer,
  options: Partial<RowWalkOptions> = {},
  size = CHUNK,
): Promise<string[][]> {
  const rows: string[][] = [];
  await walkRows(streamOf(bytes, size).stream, { delimiter: ',', ...options }, (buf, scanner) => {
    rows.push(
      Array.from({ length: scanner.fields }, (_, f) =>
        buf.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]),
      ),
    );
  });
  return rows;
}

/**
 * The scanner's work while `run` runs: the bytes each scan is handed and reads (to the row's end, or to the
 * window's end when the row goes on).
 */
async function scannedBytes(run: () => Promise<unknown>): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with each scanner as `this` below
  const scan = RowScanner.prototype.scan;
  let work = 0;
  RowScanner.prototype.scan = function (this: RowScanner, buf, pos, end, isLast) {
    const result = scan.call(this, buf, pos, end, isLast);
    work += result === SCAN_ROW ? this.next - pos : end - pos;
    return result;
  };
  try {
    await run();
  } finally {
    RowScanner.prototype.scan = scan;
  }
  return work;
}

describe('walking rows', () => {
  it('scans a long row in time proportional to its length: twice the row, twice the work', async () => {
    // No limit here (a row of 64 MiB may pass): the cost of the walk itself. Today's walk scanned an unfinished
    // row again from its start at every chunk: 8 MiB in 64 KiB chunks was some 500 MiB of scanning.
    const unlimited = { maxRowBytes: 64 * MIB };
    const plain = (mib: number) =>
      Buffer.concat([
        Buffer.from('email,note\nx@example.com,'),
        Buffer.alloc(mib * MIB, 'a'),
        Buffer.from('\nlast@example.com,1\n'),
      ]);
    // A quoted field with a line break every 100 bytes: a break comes in every chunk, and still no row ends.
    const quoted = (mib: number) =>
      Buffer.from(
        `email,note\nx@example.com,"${`${'b'.repeat(99)}\n`.repeat((mib * MIB) / 100)}"\nlast@example.com,1\n`,
      );
    for (const make of [plain, quoted]) {
      const small = make(4);
      const large = make(8);
      let rows: string[][] = [];
      const smallWork = await scannedBytes(async () => (rows = await rowsOf(small, unlimited)));
      expect(rows.length).toBe(3);
      const largeWork = await scannedBytes(() => rowsOf(large, unlimited));
      expect(largeWork / smallWork).toBeGreaterThan(1.6);
      expect(largeWork / smallWork).toBeLessThan(2.4);
      // (A row a break reached but did not end is scanned again after as many new bytes as it has: <3 passes.)
      expect(largeWork).toBeLessThan(3 * large.length);
    }
  });

  it('keeps the speed of ordinary rows: each scanned once', async () => {
    const lines = ['email,first,note'];
    for (let i = 0; i < 60_000; i++)
      lines.push(i % 5 === 0 ? `p${i}@example.com,"Ann, ""A""",x` : `p${i}@example.com,Bob,note ${i}`);
    const bytes = Buffer.from(`${lines.join('\r\n')}\r\n`);
    let rows: string[][] = [];
    const work = await scannedBytes(async () => (rows = await rowsOf(bytes)));
    expect(rows.length).toBe(60_001);
    expect(work).toBe(bytes.length);
  });

  it('refuses a row longer than 1 MiB as soon as it passes the limit, in the plan’s words, and reads no further', async () => {
    const { stream, seen } = streamOf(Buffer.alloc(8 * MIB, 'a'));
    let work = 0;
    const walked = scannedBytes(() => walkRows(stream, { delimiter: ',' }, () => undefined)).then(
      (w) => (work = w),
    );
    await expect(walked).rejects.toThrow(
      new RowTooLongError(1, 'Line 1 is longer than 1 MB: is this a list file?'),
    );
    expect(seen.pulled).toBeLessThanOrEqual(MIB + 2 * CHUNK);
    expect(seen.isClosed).toBe(true);
    expect(work).toBeLessThanOrEqual(MIB + 2 * CHUNK);
  });

  it('names the line as the plan does (line breaks inside quotes counted), and a missing closing quote', async () => {
    const head = 'email,note\r\na@example.com,"one\r\ntwo"\r\n\r\nb@example.com,"x\ny\rz"\r\n';
    const cases = [
      { text: `${head}c@example.com,${'a'.repeat(2 * MIB)}\r\n`, line: 7, hint: '.' },
      {
        text: `${head}c@example.com,"${'a'.repeat(2 * MIB)}\r\n`,
        line: 7,
        hint: ': is a closing quote (") missing?',
      },
      // (A quote past the bytes that broke the limit says nothing of them.)
      { text: `${head}c@example.com,${'a'.repeat(MIB)}"${'a'.repeat(MIB)}\r\n`, line: 7, hint: '.' },
      { text: `\ufeffemail\r${'r@example.com\r'.repeat(1000)}${'a'.repeat(MIB + 2)}`, line: 1002, hint: '.' },
    ];
    for (const size of [1000, CHUNK, 3 * MIB]) {
      for (const { text, line, hint } of cases)
        await expect(rowsOf(Buffer.from(text), {}, size)).rejects.toThrow(
          `Line ${line.toLocaleString('en-US')} is longer than 1 MB, the most a row may hold${hint}`,
        );
      // A first line that long: most likely no list at all.
      await expect(rowsOf(Buffer.from(`"${'a'.repeat(MIB + 1)}\n`), {}, size)).rejects.toThrow(
        /^Line 1 is longer than 1 MB: is this a list file\?$/,
      );
    }
  });

  it('takes a row of exactly the limit, its line break aside, and refuses one byte more', async () => {
    const max = 1000;
    for (const lineBreak of ['\n', '\r\n', '\r'])
      for (const size of [1, 7, 999, 1000, 1001, 4096]) {
        const row = (length: number, quote = false) =>
          quote ? `"${'q'.repeat(length - 2)}"` : 'a'.repeat(length);
        const ok = ['e', row(max), row(max, true), 'f'].join(lineBreak) + lineBreak;
        expect(
          (await rowsOf(Buffer.from(ok), { maxRowBytes: max }, size)).map((r) => r.join(',').length),
        ).toEqual([1, max, max - 2, 1]);
        for (const [text, line] of [
          [['e', row(max + 1), 'f'].join(lineBreak), 2],
          [['e', lineBreak, row(max + 1, true)].join(lineBreak), 4],
          [row(max + 1), 1],
        ] as const)
          await expect(rowsOf(Buffer.from(text), { maxRowBytes: max }, size)).rejects.toThrow(
            `Line ${line} is longer than 1,000 bytes`,
          );
      }
  });
});

describe('a zip of one endless line', () => {
  let dir: ReturnType<typeof tempDir>;
  let zipPath: string;
  beforeAll(() => {
    dir = tempDir();
    zipPath = join(dir.path, 'list.zip');
    // 16 MiB of one byte zip to 16 KB; a larger entry would be refused as a zip bomb by its ratio.
    writeFileSync(
      zipPath,
      zipSync({ 'list.csv': new Uint8Array(Buffer.alloc(16 * MIB, 'a')) }, { level: 9 }),
    );
  });
  afterAll(() => dir.remove());

  it('is counted no further than the limit: E7’s count stops, and the zip is inflated no further', async () => {
    await expect(countRecords(zipPath, 'list.zip', {}, DEFAULT_LIST_LIMITS)).rejects.toThrow(
      'Line 1 is longer than 1 MB: is this a list file?',
    );
    const entry = await openZipEntry(zipPath, 'list.csv');
    let inflated = 0;
    async function* counted() {
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        inflated += chunk.length;
        yield chunk;
      }
    }
    await expect(walkRows(counted(), { delimiter: ',' }, () => undefined)).rejects.toBeInstanceOf(
      RowTooLongError,
    );
    expect(inflated).toBeLessThan(2 * MIB);
    expect(entry.destroyed).toBe(true);
  });
});
