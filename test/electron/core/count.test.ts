// Exact row counts for the column mapper (issue #12): the row scanner's rows, quoted line breaks included.
import { writeFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countRows } from '../../../electron/core/files/count.js';
import { inspectFile } from '../../../electron/core/files/inspect.js';
import { tempDir } from '../../helpers/service.js';

describe('exact row counts', () => {
  let dir: ReturnType<typeof tempDir>;
  const write = (name: string, content: string | Uint8Array) => {
    const path = join(dir.path, name);
    writeFileSync(path, content);
    return { path, name, size: Buffer.byteLength(content) };
  };
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('counts a row with a quoted line break once, skips blank rows and the header', async () => {
    const file = write(
      'q.csv',
      'email,note\r\na@x.com,"two\r\nlines"\r\n\r\n ,\r\nb@x.com,plain\r\n"c@x.com","x,y"',
    );
    const count = (header: boolean) =>
      countRows(createReadStream(file.path, { highWaterMark: 3 }), { delimiter: ',', header });
    expect(await count(true)).toBe(3);
    expect(await count(false)).toBe(4);
  });

  it('summarises a 3,000-row file as 3,000 rows, past the sample', async () => {
    const rows = Array.from(
      { length: 3000 },
      (_, i) =>
        `person${i}@example.com,"Name ${i}\nsecond line of a long note that makes the file bigger than the sample ${'x'.repeat(80)}"`,
    );
    const file = write('three.csv', `email,note\n${rows.join('\n')}\n`);
    const inspection = await inspectFile({ fileId: 'f', ...file });
    expect(inspection.rowCount).toBe(3000);
    expect(inspection.isRowCountEstimate).toBe(false);
  });

  it('gives no split warning from an estimate, however far it overshoots the limit', async () => {
    // 256 KB of short rows, then few long ones: the sample's bytes per row make ~2,000,000 of ~30,000.
    const short = Array.from({ length: 30_000 }, (_, i) => `p${i}@x.io\n`).join('');
    const long = Array.from({ length: 1000 }, (_, i) => `someone${i}@example.org${' '.repeat(20_000)}\n`);
    const file = write('overshoot.csv', `email\n${short}${long.join('')}`);
    const estimated = await inspectFile({ fileId: 'f', ...file, isCountExact: false });
    expect(estimated.isRowCountEstimate).toBe(true);
    expect(estimated.rowCount).toBeGreaterThan(1_000_000);
    expect(estimated.warnings.map((w) => w.code)).not.toContain('too-many-rows');
    const counted = await inspectFile({ fileId: 'f', ...file });
    expect(counted.rowCount).toBe(31_000);
  });

  it('counts a 1,000,000-row file exactly and gives no split warning', async () => {
    // Rows of varying length, so an estimate from the first rows would be off.
    const parts: string[] = ['email,name,company\n'];
    for (let i = 0; i < 1_000_000; i++)
      parts.push(
        i < 2000
          ? `p${i}@example.com,A,B\n`
          : `someone.with.a.longer.name${i}@example.org,"Firstname, Lastname",Company ${i % 97}\n`,
      );
    const file = write('million.csv', parts.join(''));
    const inspection = await inspectFile({ fileId: 'f', ...file });
    expect(inspection.rowCount).toBe(1_000_000);
    expect(inspection.isRowCountEstimate).toBe(false);
    expect(inspection.warnings.map((w) => w.code)).not.toContain('too-many-rows');
  }, 60_000);
});
