// Exports planned against a bounce budget (issue 37, electron/core/jobs/budget.ts): a results file whose codes
// are known, and a history whose campaign outcomes make some codes measured (enough rows) and one not (too few
// rows). The export holds its bound: exactly the rows it should write, in file order within a code, the rows
// left out, the expected rate at most the budget; the measured risk is used over the default where the history
// holds enough rows of a code. The same through the desktop's jobs:export, and in the export worker.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import {
  HISTORY_DB_FILE,
  insertJob,
  openHistoryDb,
  setJobResults,
  setJobStatus,
  type HistoryDb,
} from '../../../electron/core/history/db.js';
import { exportWithBudget, planBudget, type MeasuredRisks } from '../../../electron/core/jobs/budget.js';
import { measuredRisks } from '../../../electron/core/outcomes/store.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { defaultExportChoices } from '../../../shared/exportChoices.js';
import { defaultBounceRisk, type BudgetOutcome } from '../../../shared/outcomes.js';
import { tempDir } from '../../helpers/service.js';

const HEADER = 'Email,Name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';

interface FixtureRow {
  readonly email: string;
  readonly status: string;
  readonly code: number;
  readonly isDuplicate: boolean;
}

/**
 * 100 valid (50), 20 accept-all (45, legacy unverifiable), 10 unknown with a domain (20), 30 syntax only (10),
 * 30 timed out (5), 5 invalid (400), interleaved; then two repeats (other case) of accept-all addresses.
 */
function fixtureRows(): FixtureRow[] {
  const groups: FixtureRow[][] = [
    [100, 'valid', 50],
    [20, 'unverifiable', 45],
    [10, 'unknown', 20],
    [30, 'unknown', 10],
    [30, 'unknown', 5],
    [5, 'invalid', 400],
  ].map(([count, status, code]) =>
    Array.from({ length: count as number }, (_, i) => ({
      email: `c${code}.n${i + 1}@example.com`,
      status: status as string,
      code: code as number,
      isDuplicate: false,
    })),
  );
  const rows: FixtureRow[] = [];
  for (let i = 0; i < 100; i++) for (const group of groups) if (i < group.length) rows.push(group[i]);
  rows.push({ email: 'C45.N3@EXAMPLE.COM', status: 'unverifiable', code: 45, isDuplicate: true });
  rows.push({ email: 'C45.N7@EXAMPLE.COM', status: 'unverifiable', code: 45, isDuplicate: true });
  return rows;
}

function writeFixture(path: string): FixtureRow[] {
  const rows = fixtureRows();
  writeFileSync(
    path,
    [
      HEADER,
      ...rows.map(
        (row, i) => `${row.email},Person ${i + 1},${row.status},${row.code},biz,false,${row.isDuplicate},`,
      ),
    ].join('\n') + '\n',
  );
  return rows;
}

/**
 * The campaign outcomes of an earlier job: code 50 and 45 measured (1,000 and 200 rows mailed), code 10 with
 * too few rows mailed (50 < MIN_MEASURED_ROWS) for its measured 50% to count.
 */
const OUTCOMES: readonly [number, number, number][] = [
  [50, 1000, 0],
  [45, 200, 2],
  [10, 50, 25],
];

function seedOutcomes(db: HistoryDb, jobId: number): void {
  const insert = db.prepare(
    'INSERT INTO job_outcome_codes (job_id, code, sent, hard_bounced) VALUES (?, ?, ?, ?)',
  );
  for (const [code, sent, hard] of OUTCOMES) insert.run(jobId, code, sent, hard);
}

function addJob(db: HistoryDb, name: string): number {
  return insertJob(db, {
    fileName: name,
    filePath: `/nowhere/${name}`,
    uploadName: name,
    uploadHeader: true,
    fileSize: 100,
    fileSha256: null,
    fileFormat: 'csv',
    fileEncoding: 'utf-8',
    mapping: { delimiter: ',', header: true, roles: ['email', 'first_name'] },
    options: { reportOnly: false, split: false, services: ['email_validation'] },
    connectionKind: 'embedded',
    connectionUrl: null,
  });
}

/** The rows a budget export writes: valid, accept-all but the repeats, then the first `take` rows of a code. */
function expectedEmails(rows: readonly FixtureRow[], take: ReadonlyMap<number, number>): string[] {
  const taken = new Map<number, number>();
  return rows
    .filter((row) => {
      if (row.isDuplicate || row.code === 400) return false;
      if (row.code === 50) return true;
      const n = (taken.get(row.code) ?? 0) + 1;
      taken.set(row.code, n);
      return n <= (take.get(row.code) ?? 0);
    })
    .map((row) => row.email);
}

/** With the outcomes: 50 at 0%, 45 at 1%, 20, 10 (too few rows measured) and 5 at their defaults. */
const MEASURED_OUTCOME: BudgetOutcome = {
  maxRatePercent: 2,
  // 100·0 + 20·0.01 + 10·0.10 + 14·0.12 = 2.88 over 144 rows: exactly at the budget.
  expectedRatePercent: 2,
  written: 144,
  leftOut: 16 + 30,
  riskSource: 'mixed',
};
const MEASURED_TAKE = new Map([
  [45, 20],
  [20, 10],
  [10, 14],
]);

/** Without outcomes: every code at its default. */
const DEFAULT_OUTCOME: BudgetOutcome = {
  maxRatePercent: 2,
  // 100·0.005 + 20·0.08 + 3·0.10 = 2.4 over 123 rows: 1.95122%, said to four places.
  expectedRatePercent: 1.9512,
  written: 123,
  leftOut: 7 + 30 + 30,
  riskSource: 'default',
};
const DEFAULT_TAKE = new Map([
  [45, 20],
  [20, 3],
]);

const parse = (text: string) => Papa.parse<string[]>(text, { skipEmptyLines: true }).data;

describe('an export planned against a bounce budget', () => {
  let dir: ReturnType<typeof tempDir>;
  let results: string;
  let rows: FixtureRow[];
  let measured: MeasuredRisks;
  beforeEach(() => {
    dir = tempDir();
    results = join(dir.path, 'results.csv');
    rows = writeFixture(results);
    const db = openHistoryDb(join(dir.path, HISTORY_DB_FILE));
    seedOutcomes(db, addJob(db, 'earlier.csv'));
    measured = measuredRisks(db);
    db.close();
  });
  afterEach(() => dir.remove());

  const spec = { kind: 'safe' as const, choices: defaultExportChoices('safe'), emailIndex: 0 };

  for (const inThreadUpTo of [undefined, 0])
    it(`writes exactly the rows the measured risks allow, and no more than the budget (${inThreadUpTo === 0 ? 'export worker' : 'in thread'})`, async () => {
      const path = join(dir.path, 'safe.csv');
      const { summary, budget } = await exportWithBudget(
        { path: results, name: 'results.csv', delimiter: ',' },
        { name: 'safe', path, spec },
        2,
        measured,
        inThreadUpTo,
      );
      expect(budget).toEqual(MEASURED_OUTCOME);
      expect(budget.expectedRatePercent).toBeLessThanOrEqual(budget.maxRatePercent);
      const [header, ...written] = parse(readFileSync(path, 'utf8'));
      expect(header).toEqual([...HEADER.split(','), 'Original Email']);
      expect(written.map((row) => row[0])).toEqual(expectedEmails(rows, MEASURED_TAKE));
      expect(summary.exported.safe).toBe(budget.written);
      // The export's choices still apply: the repeats are left out as duplicates, not counted in the budget.
      expect(summary.leftOut?.safe).toEqual({ duplicates: 2, role: 0, disposable: 0 });
      // The expected rate is that of the rows written, by their codes' risks.
      const risk: Record<number, number> = { 50: 0, 45: 0.01, 20: 0.1, 10: defaultBounceRisk(10) };
      const sum = written.reduce((total, row) => total + risk[Number(row[3])], 0);
      expect((100 * sum) / written.length).toBeCloseTo(budget.expectedRatePercent, 4);
    });

  it('takes the stated defaults where there are no outcomes: another plan, under the budget', async () => {
    const path = join(dir.path, 'safe.csv');
    const { budget } = await exportWithBudget(
      { path: results, name: 'results.csv', delimiter: ',' },
      { name: 'safe', path, spec },
      2,
      new Map(),
    );
    expect(budget).toEqual(DEFAULT_OUTCOME);
    expect(budget.expectedRatePercent).toBeLessThanOrEqual(2);
    const [, ...written] = parse(readFileSync(path, 'utf8'));
    expect(written.map((row) => row[0])).toEqual(expectedEmails(rows, DEFAULT_TAKE));
  });

  it('plans a results copy as it is (no choices) the same way', async () => {
    const path = join(dir.path, 'clean.csv');
    const { summary, budget } = await exportWithBudget(
      { path: results, name: 'results.csv', delimiter: ',' },
      { name: 'clean', path, spec: { kind: 'clean' } },
      2,
      new Map(),
    );
    // No duplicates removed: the two repeats are accept-all rows too (22 at 8%), then 2 of code 20 (10%):
    // 100·0.005 + 22·0.08 + 2·0.10 = 2.46 over 124 rows.
    expect(budget).toEqual({
      maxRatePercent: 2,
      expectedRatePercent: 1.9839,
      written: 124,
      leftOut: 8 + 30 + 30,
      riskSource: 'default',
    });
    expect(summary.exported.clean).toBe(124);
    expect(parse(readFileSync(path, 'utf8'))[0]).toEqual(HEADER.split(','));
  });

  it('keeps the rows judged safe when they alone exceed the budget, and says so', () => {
    const plan = planBudget(
      {
        base: new Map([
          [50, 10],
          [10, 10],
        ]),
        candidates: new Map([
          [45, 5],
          [5, 5],
        ]),
      },
      1,
      new Map(),
    );
    // 10·0.005 + 10·0.12 = 1.25 over 20 rows = 6.25%: no accept-all (8%) or unknown row brings it under 1%.
    expect(plan.take.take).toEqual([]);
    expect(plan.outcome).toEqual({
      maxRatePercent: 1,
      expectedRatePercent: 6.25,
      written: 20,
      leftOut: 10,
      riskSource: 'default',
    });
    // A budget of 100% takes every row.
    expect(planBudget({ base: new Map(), candidates: new Map([[5, 3]]) }, 100, new Map()).take.take).toEqual([
      [5, 3],
    ]);
  });
});

describe('jobs:export with a bounce budget', () => {
  let home: ReturnType<typeof tempDir>;
  let core: DesktopCore;
  let jobId: number;
  beforeEach(() => {
    home = tempDir();
    const results = join(home.path, 'job-results.csv');
    writeFixture(results);
    const db = openHistoryDb(join(home.path, HISTORY_DB_FILE));
    seedOutcomes(db, addJob(db, 'earlier.csv'));
    jobId = addJob(db, 'list.csv');
    setJobResults(db, jobId, { path: results, name: 'job-results.csv', duplicates: 2 });
    setJobStatus(db, jobId, 'completed');
    db.close();
    core = createDesktopCore({
      home: home.path,
      secrets: new FileSecretStore(home.path),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
    });
  });
  afterEach(async () => {
    await core.close();
    home.remove();
  });

  it('honours maxBounceRate with this user’s measured risks and fills the export’s budget', async () => {
    const reply = await core.handle('jobs:export', { jobId, kind: 'safe', maxBounceRate: 2 });
    if (!reply.ok) throw new Error(reply.error.message);
    const info = reply.value as { rows: number; budget?: BudgetOutcome; fileName: string };
    expect(info.budget).toEqual(MEASURED_OUTCOME);
    expect(info.rows).toBe(144);
    expect(info.fileName).toBe('list-safe.csv');
    // Without a budget: the safe rows only (valid), no budget said.
    const plain = await core.handle('jobs:export', { jobId, kind: 'safe' });
    if (!plain.ok) throw new Error(plain.error.message);
    expect(plain.value).not.toHaveProperty('budget');
    expect((plain.value as { rows: number }).rows).toBe(100);
  });

  it('refuses a budget for an export that does not start from the safe rows', async () => {
    const reply = await core.handle('jobs:export', { jobId, kind: 'invalid', maxBounceRate: 2 });
    expect(reply).toMatchObject({
      ok: false,
      error: {
        code: 'invalid-input',
        message: 'A bounce budget plans the “Safe to send only” or the “Clean” export: choose one of them.',
      },
    });
  });

  it('says in words that a results file changed on disk cannot be read', async () => {
    // Its status column gone (the file edited by hand): the export finds it, and the reply says so.
    const results = join(home.path, 'job-results.csv');
    const rows = Papa.parse<string[]>(readFileSync(results, 'utf8').trim()).data;
    const status = rows[0].indexOf('Validation Status');
    writeFileSync(results, Papa.unparse(rows.map((row) => row.filter((_, i) => i !== status))));
    for (const kind of ['safe', 'clean'] as const)
      expect(await core.handle('jobs:export', { jobId, kind })).toMatchObject({
        ok: false,
        error: {
          code: 'results-unreadable',
          message:
            'The results file has no “Validation Status” column (the list ran no validation): export all rows.',
        },
      });
  });
});
