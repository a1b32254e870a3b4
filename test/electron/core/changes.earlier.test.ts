// What changed since the last run (issue 37): which earlier run a job is compared with, how rows are matched
// (the canonical address of `Valid Email`, else of the email column; each address once), and the comparison
// kept beside the job's results — over a real history database and real results files whose truth is known.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  insertJob,
  openHistoryDb,
  setJobResults,
  setJobStatus,
  getJob,
  type HistoryDb,
  type NewJob,
} from '../../../electron/core/history/db.js';
import {
  compareResultSets,
  earlierRunOf,
  jobComparison,
  readChangedRows,
} from '../../../electron/core/outcomes/compare.js';
import { tempDir } from '../../helpers/service.js';

const HEADER = 'email,name,Validation Status,Validation Code,Valid Email';

let home: ReturnType<typeof tempDir>;
let db: HistoryDb;
let resultsDir: string;

beforeEach(() => {
  home = tempDir();
  db = openHistoryDb(join(home.path, 'history.sqlite'));
  resultsDir = join(home.path, 'results');
});
afterEach(() => {
  db.close();
  home.remove();
});

const base: NewJob = {
  fileName: 'people.csv',
  filePath: '/nowhere/people.csv',
  uploadName: 'people.csv',
  uploadHeader: true,
  fileSize: 1,
  fileSha256: 'sha-x',
  fileFormat: 'csv',
  fileEncoding: 'utf-8',
  mapping: { delimiter: ',', header: true, roles: ['email', 'ignore'] },
  options: { reportOnly: false, split: false },
  connectionKind: 'embedded',
  connectionUrl: null,
};

/** A job of the history with its results file (`rows` under HEADER); completed unless told otherwise. */
function job(
  rows: readonly string[],
  patch: Partial<NewJob> = {},
  status: 'completed' | 'failed' = 'completed',
): number {
  const id = insertJob(db, { ...base, ...patch });
  const dir = join(resultsDir, String(id));
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `people-${id}-Validation.csv`);
  writeFileSync(path, [HEADER, ...rows].join('\n') + '\n');
  setJobResults(db, id, { path, name: `people-${id}-Validation.csv`, duplicates: 0 });
  setJobStatus(db, id, status);
  return id;
}

const ROWS = ['ann@x.example.net,Ann,valid,50,ann@x.example.net'];

describe('the earlier run of a job', () => {
  it('is the latest earlier completed job of the same bytes, else of the same name, of the same part', () => {
    const sameName = job(ROWS, { fileSha256: 'sha-y' });
    const sameBytes = job(ROWS, { fileName: 'renamed.csv' });
    job(ROWS, {}, 'failed');
    const other = job(ROWS, { fileName: 'other.csv', fileSha256: 'sha-z' });
    const target = job(ROWS);
    // The same bytes first, whatever their name; a failed job is not a run.
    expect(earlierRunOf(db, resultsDir, getJob(db, target)!)?.jobId).toBe(sameBytes);
    // New bytes under the same name: the latest job of that name.
    const edited = job(ROWS, { fileSha256: 'sha-new' });
    expect(earlierRunOf(db, resultsDir, getJob(db, edited)!)?.jobId).toBe(target);
    // Nothing of that name or those bytes before it.
    expect(earlierRunOf(db, resultsDir, getJob(db, other)!)).toBeNull();
    expect(earlierRunOf(db, resultsDir, getJob(db, sameName)!)).toBeNull();
    // A part of a split file is compared with the same part only.
    const part2 = job(ROWS, { partIndex: 2, partCount: 2 });
    expect(earlierRunOf(db, resultsDir, getJob(db, part2)!)).toBeNull();
    const part2Again = job(ROWS, { partIndex: 2, partCount: 2 });
    expect(earlierRunOf(db, resultsDir, getJob(db, part2Again)!)?.jobId).toBe(part2);
    // A job whose results are gone from disk is passed over.
    setJobResults(db, target, { path: join(resultsDir, 'gone.csv'), name: 'gone.csv', duplicates: 0 });
    expect(earlierRunOf(db, resultsDir, getJob(db, edited)!)?.jobId).toBe(sameName);
  });
});

describe('comparing two results files', () => {
  it('matches rows by canonical address (Valid Email first), each address once, and keeps only the changed', async () => {
    const dir = join(home.path, 'files');
    mkdirSync(dir);
    const write = (name: string, rows: readonly string[]) => {
      writeFileSync(join(dir, name), [HEADER, ...rows].join('\n') + '\n');
      return {
        label: name,
        path: join(dir, name),
        name,
        delimiter: ',',
        emailIndex: 0,
        evidence: { byRow: null, byAddress: [], isOfflineFallback: true },
      };
    };
    const earlier = write('earlier.csv', [
      'Ann@X.example.net,Ann,valid,50,ann@x.example.net',
      'bobby.b@gmial.com,"Bob, B",corrected,50,bobby.b@gmail.com',
      'cat@x.example.net,Cat,invalid,400,',
      'dan@x.example.net,Dan,unknown,10,',
      'only-before@x.example.net,Old,valid,50,only-before@x.example.net',
      'not an address,Nobody,invalid,150,',
    ]);
    const later = write('later.csv', [
      // Upper case and white space do not make another address.
      ' ann@x.example.net ,Ann,valid,50,ann@x.example.net',
      // The correction is the address: the same one, its code changed.
      'bobby.b@gmail.com,"Bob, B",valid,45,bobby.b@gmail.com',
      'cat@x.example.net,Cat,valid,50,cat@x.example.net',
      'new@x.example.net,New,valid,50,new@x.example.net',
      // A duplicate row of cat: compared once, at its first row.
      'CAT@x.example.net,Cat again,invalid,400,',
      'dan@x.example.net,Dan,unknown,10,',
      'not an address,Nobody,invalid,150,',
    ]);
    const rowsPath = join(dir, 'rows.jsonl');
    const comparison = await compareResultSets(earlier, later, rowsPath);
    expect({ ...comparison, offsets: undefined }).toEqual({
      compared: 4,
      changed: 2,
      byChange: [
        { before: 'corrected', after: 'valid', rows: 1 },
        { before: 'invalid', after: 'valid', rows: 1 },
      ],
      offsets: undefined,
    });
    const rows = readChangedRows(rowsPath, comparison.offsets, 0, 10);
    expect(rows.map((row) => [row.row, row.email, row.before.code, row.after.code])).toEqual([
      [2, 'bobby.b@gmail.com', 50, 45],
      [3, 'cat@x.example.net', 400, 50],
    ]);
    expect(rows[1]).toEqual({
      row: 3,
      email: 'cat@x.example.net',
      before: {
        status: 'invalid',
        code: 400,
        evidence: {
          step: 'syntax',
          host: '',
          reply: '',
          source: '',
          checkedAt: '',
          why: 'decided offline: Mailbox does not exist',
        },
      },
      after: {
        status: 'valid',
        code: 50,
        evidence: {
          step: 'syntax',
          host: '',
          reply: '',
          source: '',
          checkedAt: '',
          why: 'decided offline: Valid address',
        },
      },
      words: 'was decided offline: Mailbox does not exist, now decided offline: Valid address',
    });
    expect(readChangedRows(rowsPath, comparison.offsets, 1, 10).map((row) => row.row)).toEqual([3]);
  });

  it('keeps a job’s comparison and computes it again when the results change', async () => {
    const first = job([
      'ann@x.example.net,Ann,valid,50,ann@x.example.net',
      'bob@x.example.net,Bob,valid,50,',
    ]);
    const second = job(['ann@x.example.net,Ann,invalid,400,', 'bob@x.example.net,Bob,valid,50,']);
    const made = await jobComparison(db, resultsDir, getJob(db, second)!);
    expect(made?.kept).toMatchObject({ earlierJobId: first, compared: 2, changed: 1 });
    const kept = join(resultsDir, String(second), 'changes.json');
    const at = statSync(kept).mtimeMs;
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Asked again: read from what was kept.
    expect((await jobComparison(db, resultsDir, getJob(db, second)!))?.kept.changed).toBe(1);
    expect(statSync(kept).mtimeMs).toBe(at);
    // The job's results change: compared again.
    const path = getJob(db, second)!.resultsPath!;
    writeFileSync(
      path,
      [HEADER, 'ann@x.example.net,Ann,invalid,400,', 'bob@x.example.net,Bob,invalid,400,'].join('\n'),
    );
    const again = await jobComparison(db, resultsDir, getJob(db, second)!);
    expect(again?.kept).toMatchObject({ compared: 2, changed: 2 });
    expect(JSON.parse(readFileSync(kept, 'utf8'))).toMatchObject({ changed: 2 });
  });
});
