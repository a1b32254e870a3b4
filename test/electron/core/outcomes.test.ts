// The outcomes of a job (issue 37): a mailing platform's bounce export matched to a job's rows, in every shape
// `data import bounces` reads, with the numbers checked exactly against a job whose truth is known; the
// sent list instead of Ready to mail; the hard bounces stored as known bouncers in the same step; the report
// kept with the job and deleted with it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  deleteJob,
  getJob,
  insertJob,
  openHistoryDb,
  setJobResults,
  setJobStatus,
  type HistoryDb,
} from '../../../electron/core/history/db.js';
import { setJobChecks } from '../../../electron/core/history/jobVersions.js';
import { OutcomesError, importJobOutcomes } from '../../../electron/core/outcomes/outcomes.js';
import { measuredRisks, storedOutcomes } from '../../../electron/core/outcomes/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import {
  BOUNCE_FIXTURES,
  BOUNCE_FIXTURE_FILES,
  fixtureAddresses,
} from '../../service/identity/bounces.fixtures.js';
import { tempDir } from '../../helpers/service.js';

const HEADER = 'Email,Name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';
const EXPLAIN_HEADER = 'Row,Email,Status Code,Checked,Why,Step,Host,Reply,Source,Checked At';

describe('outcomes of a job', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: HistoryDb;
  let serviceDb: ServiceDb;
  let resultsDir: string;
  beforeEach(() => {
    dir = tempDir();
    db = openHistoryDb(join(dir.path, 'history.sqlite'));
    serviceDb = openServiceDb(join(dir.path, 'service'));
    resultsDir = join(dir.path, 'results');
  });
  afterEach(() => {
    db.close();
    serviceDb.close();
    dir.remove();
  });

  /** A completed job whose results file holds `rows` (after the header), checked at `level`. */
  function jobWith(rows: readonly string[], level: 'smtp' | 'offline' = 'smtp', explain?: string[]) {
    const id = insertJob(db, {
      fileName: 'list.csv',
      filePath: join(dir.path, 'list.csv'),
      uploadName: 'list.csv',
      uploadHeader: true,
      fileSize: 1,
      fileSha256: null,
      fileFormat: 'csv',
      fileEncoding: null,
      mapping: { delimiter: ',', header: true, roles: ['email', 'first_name'] },
      connectionKind: 'embedded',
      connectionUrl: null,
      options: { reportOnly: false, split: false, services: ['email_validation'] },
    });
    const path = join(dir.path, `results-${id}.csv`);
    writeFileSync(path, `${[HEADER, ...rows].join('\n')}\n`);
    setJobResults(db, id, { path, name: 'list-results.csv', duplicates: 0 });
    setJobStatus(db, id, 'completed', null);
    setJobChecks(db, id, { level, reason: 'test' });
    if (explain) {
      const jobDir = join(resultsDir, String(id));
      mkdirSync(jobDir, { recursive: true });
      writeFileSync(join(jobDir, 'explain.csv'), `${[EXPLAIN_HEADER, ...explain].join('\n')}\n`);
    }
    return id;
  }

  const file = (name: string, text: string) => {
    const path = join(dir.path, name);
    writeFileSync(path, text);
    return { path, name };
  };
  const SENDGRID = { path: join(BOUNCE_FIXTURES, 'sendgrid-bounces.csv'), name: 'sendgrid-bounces.csv' };
  /** importJobOutcomes of `bounces` against job `id` of this history, with `more` of its input. */
  const importInto = (
    id: number,
    bounces: { path: string; name: string } = SENDGRID,
    more: Partial<Parameters<typeof importJobOutcomes>[0]> = {},
  ) => importJobOutcomes({ db, job: getJob(db, id)!, resultsDir, serviceDb, bounces, ...more });

  it('measures a job against a SendGrid export: mailed rows, hard bounces, rates, codes, providers, misses', async () => {
    const id = jobWith(
      [
        'sg.hard1@example.com,Ann,valid,50,,,,sg.hard1@example.com',
        'sg.hard2@example.org,Bo,valid,45,,,,sg.hard2@example.org',
        'sg.soft1@example.net,Cy,valid,50,,,,sg.soft1@example.net',
        'okayone1@gmail.com,Di,valid,50,free,,,okayone1@gmail.com',
        'ok2@example.com,Ed,valid,50,,,,ok2@example.com',
        'bad@example.com,Fa,invalid,400,,,,',
        'unk@example.com,Gu,unknown,5,,,,',
        'SG.Hard1@Example.com,Ann,valid,50,,,true,SG.Hard1@Example.com',
      ],
      'smtp',
      [
        '1,sg.hard1@example.com,50,smtp,mx1.example.com: the mailbox was accepted,smtp,mx1.example.com,250 2.1.5 OK,127.0.0.2,2026-05-01T10:00:00.000Z',
        '2,sg.hard2@example.org,45,smtp,mx.example.org: the mailbox was accepted,smtp,mx.example.org,250 2.1.5 OK,127.0.0.2,2026-05-01T10:00:01.000Z',
        '3,sg.soft1@example.net,50,smtp,mx.example.net: ok,smtp,mx.example.net,250 OK,127.0.0.2,2026-05-01T10:00:02.000Z',
        '4,okayone1@gmail.com,50,smtp,gmail-smtp-in.l.google.com: ok,smtp,gmail-smtp-in.l.google.com,250 2.1.5 OK,127.0.0.2,2026-05-01T10:00:03.000Z',
        '5,ok2@example.com,50,smtp,mx1.example.com: ok,smtp,mx1.example.com,250 2.1.5 OK,127.0.0.2,2026-05-01T10:00:04.000Z',
        '6,bad@example.com,400,smtp,mx1.example.com: 550 5.1.1 User unknown,smtp,mx1.example.com,550 5.1.1 User unknown,127.0.0.2,2026-05-01T10:00:05.000Z',
      ],
    );
    const report = await importInto(id, SENDGRID, { now: new Date('2026-06-01T00:00:00Z') });
    // Mailed: the Ready to mail rows (safe after online checks, duplicates removed): rows 1–5.
    expect(report.basis).toBe('ready-to-mail');
    expect(report.sent).toBe(5);
    expect(report.hardBounced).toBe(2);
    expect(report.softBounced).toBe(1);
    expect(report.measuredRate).toBeCloseTo(2 / 5, 10);
    // Four valid (0.5%) and one accept-all (8%): (4 × 0.005 + 0.08) / 5.
    expect(report.predictedRate).toBeCloseTo((4 * 0.005 + 0.08) / 5, 10);
    // sg.hard3@example.net bounced too, but the job has no such row.
    expect(report.exportRows).toEqual({ hard: 3, soft: 1, other: 0, rejected: 0, unmatched: 1 });
    expect(report.byCode.map((g) => [g.id, g.sent, g.hardBounced])).toEqual([
      ['50', 4, 1],
      ['45', 1, 1],
    ]);
    expect(report.byProvider.map((g) => [g.label, g.sent, g.hardBounced])).toEqual([
      ['Google', 1, 0],
      ['Other', 4, 2],
    ]);
    expect(report.missedTotal).toBe(2);
    expect(report.missed.map((row) => [row.row, row.email, row.code, row.status])).toEqual([
      [1, 'sg.hard1@example.com', 50, 'valid'],
      [2, 'sg.hard2@example.org', 45, 'valid'],
    ]);
    expect(report.missed[0].evidence).toEqual({
      step: 'smtp',
      host: 'mx1.example.com',
      reply: '250 2.1.5 OK',
      source: '127.0.0.2',
      checkedAt: '2026-05-01T10:00:00.000Z',
      why: 'mx1.example.com: the mailbox was accepted',
    });
    expect(report.missed[1].why).toMatch(/accept-all/);
    // Bounced on 5 May, checked on 1 May: not stale.
    expect(report.missed[0].why).toBe('');
    expect(report.knownBouncers).toEqual({ added: 3, updated: 0 });
    const stored = serviceDb.prepare('SELECT email FROM ref_bounces ORDER BY email').pluck().all();
    expect(stored).toEqual(['sg.hard1@example.com', 'sg.hard2@example.org', 'sg.hard3@example.net']);
    // Kept with the job, with its per-code counts; deleted with it.
    expect(storedOutcomes(db, id)).toEqual(report);
    expect(measuredRisks(db).get(50)).toEqual({ sent: 4, hardBounced: 1 });
    deleteJob(db, id);
    expect(storedOutcomes(db, id)).toBeNull();
    expect(measuredRisks(db).size).toBe(0);
  });

  it('counts the rows of the sent list when one is given, and says a stale check', async () => {
    const id = jobWith(
      [
        'sg.hard1@example.com,Ann,valid,50,,,,sg.hard1@example.com',
        'okayone1@gmail.com,Di,valid,50,free,,,okayone1@gmail.com',
        'sg.hard2@example.org,Bo,unknown,5,,,,',
        'never@example.com,Ed,valid,50,,,,never@example.com',
      ],
      'smtp',
      ['1,sg.hard1@example.com,50,smtp,x,smtp,mx1.example.com,250 OK,127.0.0.2,2026-01-02T00:00:00.000Z'],
    );
    const sent = file(
      'sent.csv',
      'Recipient,Delivered At\nSG.HARD1@example.com,2026-05-01\nokayone1@gmail.com,2026-05-01\nsg.hard2@example.org,2026-05-01\n',
    );
    const report = await importInto(id, SENDGRID, { sent, now: new Date('2026-06-01T00:00:00Z') });
    expect(report.basis).toBe('sent-list');
    expect(report.sentFile).toBe('sent.csv');
    expect([report.sent, report.hardBounced, report.softBounced]).toEqual([3, 2, 0]);
    // The unknown row hard-bounced, but it was never called good: only the valid one missed.
    expect(report.missedTotal).toBe(1);
    expect(report.missed[0].why).toMatch(/^The check ran 123 days before the send/);
    // sg.soft1 and sg.hard3 are no row of the job.
    expect(report.exportRows.unmatched).toBe(2);
  });

  it('reads a sent list’s email column as a bounces file’s, past a postal Address before it', async () => {
    const id = jobWith([
      'sg.hard1@example.com,Ann,valid,50,,,,sg.hard1@example.com',
      'kept@example.com,K,valid,50,,,,kept@example.com',
    ]);
    const report = await importInto(id, SENDGRID, {
      sent: file('contacts.csv', 'Address,Email\n"1 Main St, Springfield",sg.hard1@example.com\n'),
    });
    expect([report.sent, report.hardBounced]).toEqual([1, 1]);
  });

  it.each(BOUNCE_FIXTURE_FILES)('reads %s and matches each of its addresses to the job', async (name) => {
    const addresses = fixtureAddresses(name);
    const unique = [...new Map(addresses.map((a) => [a.email, a])).values()];
    const id = jobWith(
      [
        ...unique.map((a, i) => `${a.email},P${i},valid,50,,,,${a.email}`),
        'kept@example.com,K,valid,50,,,,kept@example.com',
      ],
      'smtp',
    );
    const report = await importInto(
      id,
      { path: join(BOUNCE_FIXTURES, name), name },
      { now: new Date('2026-06-01T00:00:00Z') },
    );
    const hard = unique.filter((a) => a.kind === 'hard').length;
    expect(report.sent).toBe(unique.length + 1);
    expect(report.hardBounced).toBe(hard);
    expect(report.missedTotal).toBe(hard);
    expect(report.exportRows.unmatched).toBe(0);
    expect(report.knownBouncers.added).toBe(hard);
    // No explain file (no evidence kept): the missed rows say the code decided offline.
    expect(report.missed.every((row) => row.evidence?.step === 'syntax')).toBe(true);
  });

  it('mails the clean export after offline checks, and refuses a job without results in words', async () => {
    const id = jobWith(
      ['sg.hard1@example.com,Ann,unknown,10,,,,', 'bad@example,Bo,invalid,145,,,,'],
      'offline',
    );
    const report = await importInto(id);
    expect([report.sent, report.hardBounced, report.missedTotal]).toEqual([1, 1, 0]);
    expect(report.predictedRate).toBeCloseTo(0.12, 10);
    setJobResults(db, id, null);
    await expect(importInto(id, file('b.csv', 'email,type\na@example.com,hard\n'))).rejects.toThrow(
      new OutcomesError(`Job ${id} has no results to measure: it did not complete.`),
    );
  });

  it('says in words when the export is not a bounce export', async () => {
    const id = jobWith(['a@example.com,A,valid,50,,,,a@example.com']);
    await expect(
      importInto(id, file('people.csv', 'email,first name,city\na@example.com,A,Paris\n')),
    ).rejects.toThrow(/No column says which rows are bounces/);
  });
});
