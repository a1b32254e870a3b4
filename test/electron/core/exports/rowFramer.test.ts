// The exporter's two halves (electron/core/jobs/rowFramer.ts finds rows and fields, exports.ts writes them):
// the framer against papaparse's reading of random results (quotes, escapes, delimiters and line breaks in
// fields, quotes inside unquoted fields, over-quoted fields, wide rows, blank lines), fed in chunks of every
// size; its batches at their limits (more rows than a batch holds, a row longer than a window); and a stored
// results file exported by the two worker threads, byte for byte as in one thread, errors included.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BatchPool,
  F_CANONICAL,
  F_DUPLICATE,
  R_BASE,
  R_CONTENT_END,
  R_FIELDS,
  R_FLAGS,
  R_NEXT,
  R_START,
  R_STATUS,
  ROW_STRIDE,
  RowFramer,
  STATUS_NONE,
  STATUS_OTHER,
  STATUS_WORDS,
  type FramedBatch,
} from '../../../../electron/core/jobs/rowFramer.js';
import {
  ResultsProblem,
  exportResultsFile,
  type ExportRequest,
} from '../../../../electron/core/jobs/exports.js';
import { quoteField } from '../../../../service/lists/read/scan.js';
import { defaultExportChoices } from '../../../../shared/exportChoices.js';
import { tempDir } from '../../../helpers/service.js';

const HEADER = ['email', 'note', 'Validation Status', 'Validation Code', 'Duplicate', 'Valid Email'];
const STATUSES = ['unknown', 'Valid', 'invalid', 'corrected', 'risky', 'catchall', 'odd-status', ''];

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A field's text as it appears in the file, for value `value`. */
function fieldText(value: string, next: () => number): string {
  const roll = next();
  if (roll < 0.1) return `"${value.replaceAll('"', '""')}"`; // quoted whether or not it needs it
  if (roll < 0.15 && !/[",\r\n]/.test(value))
    return value.length > 1 ? `${value[0]}"${value.slice(1)}` : value;
  return quoteField(value, ',');
}

function randomResults(rows: number, seed: number): string {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)];
  const values = [
    'plain',
    '',
    'a,b',
    'say "hi"',
    'two\nlines',
    'crlf\r\nin',
    'lone\rcr',
    'Zoë ✓',
    ' spaced ',
  ];
  const lines = [HEADER.join(',')];
  for (let i = 0; i < rows; i++) {
    if (next() < 0.02) lines.push('');
    const wide = next() < 0.01 ? Array.from({ length: 300 }, (_, k) => `w${k}`) : [];
    const fields = [
      `user${i}@example.com`,
      pick(values),
      ...wide,
      pick(STATUSES),
      String(10 + (i % 5)),
      next() < 0.2 ? 'true' : '',
      next() < 0.1 ? 'a,b@example.com' : '',
    ];
    // Wide rows put their extra fields before the appended ones, as a list with many columns would.
    lines.push(fields.map((value) => fieldText(value, next)).join(','));
  }
  return lines.join('\n') + (next() < 0.5 ? '\n' : '');
}

interface FramedRow {
  readonly text: string;
  readonly fields: string[];
  readonly status: string;
  readonly isDuplicate: boolean;
  readonly isCanonical: boolean;
}

/** Frames `bytes` pushed in chunks of `chunkSize`: the rows, and the bytes of the batches joined. */
async function frame(bytes: Buffer, chunkSize: number): Promise<{ rows: FramedRow[]; joined: Buffer }> {
  const pool = new BatchPool(2);
  const rows: FramedRow[] = [];
  const parts: Buffer[] = [];
  const take = (batch: FramedBatch) => {
    const { window, rows: records, starts, ends, quoted } = batch.set;
    parts.push(Buffer.from(window.subarray(0, batch.length)));
    let other = 0;
    for (let r = 0; r < batch.rowCount; r++) {
      const at = r * ROW_STRIDE;
      const fields: string[] = [];
      for (let f = records[at + R_BASE]; f < records[at + R_BASE] + records[at + R_FIELDS]; f++) {
        const text = window.toString('utf8', starts[f], ends[f]);
        fields.push(quoted[f] ? text.replaceAll('""', '"') : text);
      }
      const id = records[at + R_STATUS];
      rows.push({
        text: window.toString('utf8', records[at + R_START], records[at + R_CONTENT_END]),
        fields,
        status:
          id === STATUS_OTHER ? batch.otherStatuses![other++] : id === STATUS_NONE ? '' : STATUS_WORDS[id],
        isDuplicate: (records[at + R_FLAGS] & F_DUPLICATE) !== 0,
        isCanonical: (records[at + R_FLAGS] & F_CANONICAL) !== 0,
      });
      expect(records[at + R_NEXT]).toBeGreaterThanOrEqual(records[at + R_CONTENT_END]);
    }
  };
  const framer = new RowFramer(',', {
    take: (minBytes) => pool.take(minBytes),
    give: (set) => pool.give(set),
    emit: (batch) => {
      take(batch);
      pool.give(batch.set);
    },
  });
  for (let at = 0; at < bytes.length; at += chunkSize) await framer.push(bytes.subarray(at, at + chunkSize));
  await framer.finish();
  return { rows, joined: Buffer.concat(parts) };
}

describe('RowFramer', () => {
  const text = randomResults(3000, 7);
  const bytes = Buffer.from(text);
  const parsed = Papa.parse<string[]>(text, { delimiter: ',', newline: '\n' })
    .data.slice(1)
    .filter((row) => !(row.length === 1 && row[0] === ''));

  for (const chunkSize of [1, 13, 4096, 1 << 20]) {
    it(`finds each row and field as papaparse reads them (chunks of ${chunkSize} bytes)`, async () => {
      const { rows, joined } = await frame(bytes, chunkSize);
      expect(joined.equals(bytes)).toBe(true);
      expect(rows.map((row) => row.fields)).toEqual(parsed);
      for (const row of rows) {
        // The status and duplicate columns of rows as wide as the header (a wider row's are not defined).
        if (row.fields.length === HEADER.length) {
          expect(row.status).toBe(row.fields[2].toLowerCase());
          expect(row.isDuplicate).toBe(row.fields[4] === 'true');
        }
        // Canonical: the row's bytes are what quoting its fields again gives.
        expect(row.isCanonical).toBe(
          row.fields.map((field) => quoteField(field, ',')).join(',') === row.text,
        );
      }
    });
  }

  it('ends a batch early when its rows fill it, and takes a row longer than its window', async () => {
    const short = Array.from({ length: 40_000 }, (_, i) => `a${i}@b.co,x,unknown,10,,`);
    const long = `long@b.co,${'y'.repeat(3 * 1024 * 1024)},valid,50,true,`;
    const text = [HEADER.join(','), ...short, long, ...short.slice(0, 10)].join('\n') + '\n';
    const { rows, joined } = await frame(Buffer.from(text), 64 * 1024);
    expect(joined.equals(Buffer.from(text))).toBe(true);
    expect(rows).toHaveLength(40_011);
    expect(rows[40_000].fields[1]).toHaveLength(3 * 1024 * 1024);
    expect(rows[40_000].isDuplicate).toBe(true);
    expect(rows.at(-1)!.fields[0]).toBe('a9@b.co');
  });
});

describe('exportResultsFile in two worker threads', () => {
  const dirs: { remove(): void }[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => dir.remove()));

  it('writes the same files and numbers as in one thread', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const results = join(dir.path, 'list-1-Validation.csv');
    writeFileSync(results, randomResults(20_000, 11));
    const requests = (tag: string): ExportRequest[] => [
      { name: 'all', path: join(dir.path, `${tag}-all.csv`), spec: { kind: 'all' } },
      { name: 'invalid', path: join(dir.path, `${tag}-invalid.csv`), spec: { kind: 'invalid' } },
      {
        name: 'clean',
        path: join(dir.path, `${tag}-clean.csv`),
        spec: { kind: 'clean', choices: defaultExportChoices('clean'), emailIndex: 0 },
      },
      {
        name: 'tsv',
        path: join(dir.path, `${tag}-clean.tsv`),
        spec: { kind: 'clean', choices: { ...defaultExportChoices('clean'), format: 'tsv' }, emailIndex: 0 },
      },
    ];
    const counts = {
      spec: { kind: 'clean' as const, choices: defaultExportChoices('clean'), emailIndex: 0 },
      isOffline: true,
    };
    const inThread = await exportResultsFile(results, 'list.csv', ',', requests('one'), counts);
    const inWorkers = await exportResultsFile(results, 'list.csv', ',', requests('two'), counts, 0);
    expect(inWorkers).toEqual(inThread);
    expect(inThread.rows).toBeGreaterThan(19_000);
    for (const name of ['all.csv', 'invalid.csv', 'clean.csv', 'clean.tsv'])
      expect(
        readFileSync(join(dir.path, `two-${name}`)).equals(readFileSync(join(dir.path, `one-${name}`))),
      ).toBe(true);
  });

  it('counts with the default export’s own decisions what a count alone gives', async () => {
    // The desktop's download writes the default export and counts the Results numbers in one pass: the
    // counter takes the export's decision for each row instead of deciding again. Repeated addresses (in
    // other cases) and a quarter of the rows duplicates: a second decision by the same rule would take
    // every row for a repeat of itself.
    const dir = tempDir();
    dirs.push(dir);
    const results = join(dir.path, 'list-3-Validation.csv');
    const lines = [HEADER.join(',')];
    for (let i = 0; i < 4_000; i++) {
      const address = i % 4 === 3 ? `User${i % 97}@Example.com` : `user${i % 1_000}@example.com`;
      const status = ['valid', 'invalid', 'unknown', 'corrected', 'risky'][i % 5];
      lines.push([address, 'n', status, String(10 + (i % 7)), i % 4 === 3 ? 'true' : 'false', ''].join(','));
    }
    writeFileSync(results, `${lines.join('\n')}\n`);
    const spec = { kind: 'clean' as const, choices: defaultExportChoices('clean'), emailIndex: 0 };
    const counts = { spec, isOffline: true };
    const alone = await exportResultsFile(results, 'list.csv', ',', [], counts);
    const exports = (tag: string): ExportRequest[] => [
      { name: 'clean', path: join(dir.path, `${tag}-clean.csv`), spec },
    ];
    const inThread = await exportResultsFile(results, 'list.csv', ',', exports('one'), counts);
    const inWorkers = await exportResultsFile(results, 'list.csv', ',', exports('two'), counts, 0);
    expect(alone.counts!.duplicatesLeftOut).toBeGreaterThan(1_000);
    expect(alone.counts!.ready).toBeGreaterThan(0);
    for (const shared of [inThread, inWorkers]) {
      expect(shared.counts).toEqual(alone.counts);
      expect(shared.counts!.ready).toBe(shared.exported.clean);
      expect(shared.leftOut?.clean?.duplicates).toBe(alone.counts!.duplicatesLeftOut);
    }
  });

  it('refuses results it cannot read, and leaves no temporary file', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const results = join(dir.path, 'list-2-Validation.csv');
    writeFileSync(results, `${HEADER.join(',')}\na@b.co,"never closed,unknown,10,,\n`);
    const out = join(dir.path, 'clean.csv');
    await expect(
      exportResultsFile(
        results,
        'list.csv',
        ',',
        [{ name: 'clean', path: out, spec: { kind: 'clean' } }],
        undefined,
        0,
      ),
    ).rejects.toBeInstanceOf(ResultsProblem);
    expect(readdirSync(dir.path)).toEqual(['list-2-Validation.csv']);
  });
});
