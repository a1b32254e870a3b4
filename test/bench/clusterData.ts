// The list of the cluster benchmark (issue 21): every row of the cluster mail world (clusterWorld.ts) once,
// as a CSV with a header (`email,first_name,customer_id`), shuffled by a seeded Fisher–Yates shuffle so that
// domains are interleaved as in a real export: a domain's rows land in different parts of the list (the team
// server cuts lists into parts of 10,000 rows, so one domain is worked on by several nodes). The same seed
// gives the same file. With the file comes the code each row should get, in file order.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import {
  clusterWorldConfig,
  expectedCodeOfRow,
  rowAddress,
  type ClusterWorldConfig,
  type ClusterWorldOptions,
} from './clusterWorld.js';
import { prng } from './listData.js';

export interface ClusterList {
  readonly path: string;
  readonly rows: number;
  /** The code each row of the file should get, in file order (row 0: the first line after the header). */
  readonly expected: Uint16Array;
  /** How many rows should get each code. */
  readonly expectedCounts: Readonly<Record<number, number>>;
}

const FIRST_NAMES = ['Ada', 'Ben', 'Chloé', 'Dev', 'Eva', 'Femi', 'Gus', 'Hana', 'Ivo', 'Jun', 'Kai', 'Lena'];

/** The world's row numbers in list order: a seeded shuffle. */
export function listOrder(config: ClusterWorldConfig): Uint32Array {
  const order = new Uint32Array(config.rows);
  for (let i = 0; i < order.length; i++) order[i] = i;
  const random = prng(config.seed);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = order[i];
    order[i] = order[j];
    order[j] = swap;
  }
  return order;
}

/** Writes the list to `path` (whole: a temporary name, then renamed) and answers the expected codes. */
export async function writeClusterList(
  path: string,
  options: ClusterWorldOptions = {},
): Promise<ClusterList> {
  const config = clusterWorldConfig(options);
  const order = listOrder(config);
  const expected = new Uint16Array(config.rows);
  const expectedCounts: Record<number, number> = {};
  const temporary = `${path}.partial`;
  const out = createWriteStream(temporary);
  try {
    let chunk = 'email,first_name,customer_id\n';
    for (let i = 0; i < order.length; i++) {
      const row = order[i];
      const code = expectedCodeOfRow(config, row);
      expected[i] = code;
      expectedCounts[code] = (expectedCounts[code] ?? 0) + 1;
      chunk += `${rowAddress(config, row)},${FIRST_NAMES[row % FIRST_NAMES.length]},C${String(row).padStart(7, '0')}\n`;
      if (chunk.length >= 1 << 16) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    out.end(chunk);
    await once(out, 'finish');
    await rename(temporary, path);
  } catch (error) {
    out.destroy();
    await rm(temporary, { force: true });
    throw error;
  }
  return { path, rows: config.rows, expected, expectedCounts };
}
