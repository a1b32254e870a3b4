// BufferedFile (electron/core/jobs/outputs.ts), the buffer every export and results file is written through:
// rows copied from a staged batch (`stage`, copyWithin from one copy of it) give the same bytes as rows copied
// from the batch itself, and once unstaged a batch's memory may change without the old copy leaking into the file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BufferedFile } from '../../../electron/core/jobs/outputs.js';
import { tempDir } from '../../helpers/service.js';

let dir: { path: string; remove: () => void };
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

/** A batch of `rows` rows of `width` bytes each ("r<n>,…" then a line break), and each row's bounds. */
function batchOf(rows: number, width: number, tag: string): { buf: Buffer; bounds: [number, number][] } {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) lines.push(`${tag}${i},`.padEnd(width, String.fromCharCode(97 + (i % 26))));
  const buf = Buffer.from(lines.map((line) => `${line}\n`).join(''));
  return { buf, bounds: lines.map((_, i) => [i * (width + 1), i * (width + 1) + width]) };
}

/** Writes every row of each batch with `tryAppend` (or `append` when the buffer is full), ", \n" after each. */
async function writeRows(
  path: string,
  batches: { buf: Buffer; bounds: [number, number][] }[],
  isStaged: boolean,
  reuse?: Buffer,
): Promise<void> {
  const file = await BufferedFile.create(path);
  const tail = Buffer.from(',\n');
  for (const batch of batches) {
    // A reused batch memory: the next batch's bytes written over the one before's, as the framer's sets go round.
    let buf = batch.buf;
    if (reuse) {
      batch.buf.copy(reuse, 0);
      buf = reuse;
    }
    if (isStaged) file.stage(buf, batch.buf.length);
    for (const [start, end] of batch.bounds)
      if (!file.tryAppend(buf, start, end, tail)) await file.append(buf, start, end, tail);
    if (isStaged) file.unstage();
  }
  await file.close();
}

describe('BufferedFile', () => {
  it('copies staged rows as it copies them from the batch, over many buffers and reused batch memory', async () => {
    // Rows short (copied in a loop unstaged) and long (Buffer#copy), 6 MiB in all: three buffers' worth.
    const batches = [batchOf(9_000, 90, 'a'), batchOf(3_000, 300, 'b'), batchOf(9_000, 90, 'c')];
    const reuse = Buffer.alloc(Math.max(...batches.map((b) => b.buf.length)));
    await writeRows(join(dir.path, 'plain'), batches, false);
    await writeRows(join(dir.path, 'staged'), batches, true);
    await writeRows(join(dir.path, 'reused'), batches, true, reuse);
    const expected = batches
      .flatMap(({ buf, bounds }) => bounds.map(([s, e]) => `${buf.toString('latin1', s, e)},\n`))
      .join('');
    expect(readFileSync(join(dir.path, 'plain'), 'latin1')).toBe(expected);
    expect(readFileSync(join(dir.path, 'staged'), 'latin1')).toBe(expected);
    expect(readFileSync(join(dir.path, 'reused'), 'latin1')).toBe(expected);
  });

  it('copies from the batch itself once unstaged, and stages nothing past its room', async () => {
    const path = join(dir.path, 'out');
    const file = await BufferedFile.create(path);
    const buf = Buffer.from('first\n');
    file.stage(buf, buf.length);
    expect(file.tryAppend(buf, 0, 5, Buffer.from('\n'))).toBe(true);
    file.unstage();
    buf.write('again');
    expect(file.tryAppend(buf, 0, 5, Buffer.from('\n'))).toBe(true);
    // A batch longer than the stage (2 MiB) is not staged: its rows still come out right.
    const long = Buffer.alloc(3 * 1024 * 1024, 'x');
    long.write('tail', long.length - 4);
    file.stage(long, long.length);
    expect(file.tryAppend(long, long.length - 4, long.length, Buffer.from('\n'))).toBe(true);
    file.unstage();
    await file.close();
    expect(readFileSync(path, 'latin1')).toBe('first\nagain\ntail\n');
  });
});
