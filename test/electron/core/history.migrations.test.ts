// One test per migration of the history database, each applied to a database at the version before it.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, NewerDatabaseError } from '../../../service/store/migrate.js';
import { createJobs } from '../../../electron/core/history/migrations/0010-create-jobs.js';
import { createPresets } from '../../../electron/core/history/migrations/0020-create-presets.js';
import { createSettings } from '../../../electron/core/history/migrations/0030-create-settings.js';
import { listServices } from '../../../electron/core/history/migrations/0040-list-services.js';
import { HISTORY_MIGRATIONS } from '../../../electron/core/history/migrations/index.js';
import {
  getJob,
  insertJob,
  listJobs,
  openHistoryDb,
  setJobDocument,
  setJobPurchase,
  setJobPurchaseSent,
  setJobResults,
} from '../../../electron/core/history/db.js';
import { setJobCounts } from '../../../electron/core/history/counts.js';
import { tempDir } from '../../helpers/service.js';

function tables(db: Database.Database): Record<string, string> {
  const rows = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
    name: string;
    sql: string;
  }[];
  return Object.fromEntries(rows.map((row) => [row.name, row.sql]));
}

const job = {
  fileName: 'list.csv',
  filePath: '/tmp/list.csv',
  uploadName: 'list.csv',
  uploadHeader: true,
  fileSize: 10,
  fileSha256: null,
  fileFormat: 'csv' as const,
  fileEncoding: 'utf-8',
  mapping: { delimiter: ',', header: true, roles: ['email' as const] },
  options: { reportOnly: false, split: false },
  connectionKind: 'embedded' as const,
  connectionUrl: null,
};

describe('history migrations', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Database.Database;
  beforeEach(() => {
    dir = tempDir();
    db = new Database(join(dir.path, 'history.sqlite'));
    db.pragma('foreign_keys = ON');
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('are numbered in steps of 10 and in order', () => {
    expect(HISTORY_MIGRATIONS.map((m) => m.version)).toEqual([10, 20, 30, 40, 50, 60, 70]);
  });

  it('0010 creates jobs, their timeline and exports as STRICT tables, deleted together', () => {
    migrate(db, [createJobs]);
    const all = tables(db);
    expect(Object.keys(all)).toEqual(['exports', 'job_events', 'jobs']);
    for (const sql of Object.values(all)) expect(sql).toMatch(/\) STRICT$/);
    expect(db.pragma('user_version', { simple: true })).toBe(10);
    // STRICT: a text in an INTEGER column is refused.
    expect(() =>
      db
        .prepare(
          `INSERT INTO jobs (created_at, updated_at, status, file_name, file_path, upload_name, upload_header, file_size, file_format, mapping, options, connection_kind)
           VALUES ('t', 't', 'queued', 'a', 'b', 'c', 1, 'ten', 'csv', '{}', '{}', 'embedded')`,
        )
        .run(),
    ).toThrow(/cannot store TEXT value in INTEGER column/);
    const id = db
      .prepare(
        `INSERT INTO jobs (created_at, updated_at, status, file_name, file_path, upload_name, upload_header, file_size, file_format, mapping, options, connection_kind)
         VALUES ('t', 't', 'queued', 'a', 'b', 'c', 1, 10, 'csv', '{}', '{}', 'embedded')`,
      )
      .run().lastInsertRowid;
    db.prepare("INSERT INTO job_events (job_id, at, status) VALUES (?, 't', 'queued')").run(id);
    db.prepare(
      "INSERT INTO exports (job_id, created_at, kind, statuses, path, file_name, rows, bytes) VALUES (?, 't', 'all', '[]', 'p', 'f', 1, 1)",
    ).run(id);
    db.prepare('DELETE FROM jobs WHERE id = ?').run(id);
    expect(db.prepare('SELECT count(*) AS n FROM job_events').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT count(*) AS n FROM exports').get()).toEqual({ n: 0 });
  });

  it('0020 adds mapping presets and recent files to a version-10 database, keeping its jobs', () => {
    migrate(db, [createJobs]);
    db.prepare(
      `INSERT INTO jobs (created_at, updated_at, status, file_name, file_path, upload_name, upload_header, file_size, file_format, mapping, options, connection_kind)
       VALUES ('t', 't', 'completed', 'kept.csv', 'b', 'c', 1, 10, 'csv', '{}', '{}', 'embedded')`,
    ).run();
    migrate(db, [createJobs, createPresets]);
    expect(db.pragma('user_version', { simple: true })).toBe(20);
    expect(Object.keys(tables(db))).toEqual([
      'exports',
      'job_events',
      'jobs',
      'mapping_presets',
      'recent_files',
    ]);
    expect(tables(db).mapping_presets).toMatch(/STRICT$/);
    expect(db.prepare('SELECT file_name FROM jobs').all()).toEqual([{ file_name: 'kept.csv' }]);
  });

  it('0030 adds settings and an index for searching file names to a version-20 database', () => {
    migrate(db, [createJobs, createPresets]);
    migrate(db, [createJobs, createPresets, createSettings]);
    expect(db.pragma('user_version', { simple: true })).toBe(30);
    expect(tables(db).settings).toMatch(/STRICT$/);
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'jobs_file_name'")
      .all();
    expect(indexes).toHaveLength(1);
  });

  it('0040 adds match reports and the purchase to the jobs of a version-30 database, which ran validation only', () => {
    migrate(db, [createJobs, createPresets, createSettings]);
    db.prepare(
      `INSERT INTO jobs (created_at, updated_at, status, file_name, file_path, upload_name, upload_header, file_size, file_format, mapping, options, connection_kind)
       VALUES ('t', 't', 'completed', 'old.csv', 'b', 'c', 1, 10, 'csv', '{"delimiter":",","header":true,"roles":["email"]}', '{"reportOnly":false,"split":false}', 'embedded')`,
    ).run();
    migrate(db, [createJobs, createPresets, createSettings, listServices]);
    expect(db.pragma('user_version', { simple: true })).toBe(40);
    const columns = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
    expect(columns).toEqual(
      expect.arrayContaining(['match_reports', 'purchase', 'purchase_sent_at', 'original_header']),
    );
    // STRICT still: the new columns refuse what is no text.
    expect(() => db.prepare("UPDATE jobs SET match_reports = x'00'").run()).toThrow(/cannot store BLOB/);
    const old = getJob(db, 1)!;
    expect(old.options.services).toEqual(['email_validation']);
    expect(old.matchReports).toBeNull();
    expect(old.purchase).toBeNull();
    expect(old.originalHeader).toBeNull();
  });

  it('keeps a job’s match reports while a purchase runs its list again, and what was bought', () => {
    db.close();
    db = openHistoryDb(join(dir.path, 'h3.sqlite'));
    const id = insertJob(db, {
      ...job,
      options: { reportOnly: true, split: false, services: ['email_validation', 'email_intelligence'] },
    });
    const services = (reporting?: unknown) => ({
      email_validation: { input_count: 2, completed_count: 2, status: 'Completed' },
      email_intelligence: {
        input_count: 2,
        completed_count: reporting ? 2 : 0,
        status: reporting ? 'Completed' : 'Pending',
        ...(reporting ? { reporting } : {}),
      },
    });
    setJobDocument(
      db,
      id,
      {
        status: 'Processed',
        services: services({ age: { 'Total Count': 2 }, gender: { 'Total Count': 1 } }),
      },
      2,
      null,
    );
    expect(getJob(db, id)!.matchReports).toEqual({ email_intelligence: { age: 2, gender: 1 } });
    setJobPurchase(db, id, { fields: ['age'], matchType: 'H', at: '2026-01-01T00:00:00.000Z' });
    setJobPurchaseSent(db, id);
    // Running again: no reporting in the document, the last reports stay.
    setJobDocument(db, id, { status: 'Pending', services: services() }, 2, null);
    const bought = getJob(db, id)!;
    expect(bought.matchReports).toEqual({ email_intelligence: { age: 2, gender: 1 } });
    expect(bought.purchase).toEqual({ fields: ['age'], matchType: 'H', at: '2026-01-01T00:00:00.000Z' });
    expect(bought.purchaseSentAt).not.toBeNull();
    expect(bought.options.services).toEqual(['email_validation', 'email_intelligence']);
  });

  it('0070 adds a job’s outcomes and their counts per code to a version-60 database, deleted with the job', () => {
    migrate(db, HISTORY_MIGRATIONS.filter((m) => m.version <= 60));
    db.prepare(
      `INSERT INTO jobs (id, created_at, updated_at, status, file_name, file_path, upload_name, upload_header,
         file_size, file_format, mapping, options, connection_kind)
       VALUES (1, 'a', 'a', 'completed', 'f.csv', '/f.csv', 'f.csv', 1, 1, 'csv', '{}', '{}', 'embedded')`,
    ).run();
    migrate(db, HISTORY_MIGRATIONS);
    expect(db.pragma('user_version', { simple: true })).toBe(70);
    const made = tables(db);
    expect(made.job_outcomes).toMatch(/STRICT$/);
    expect(made.job_outcome_codes).toMatch(/STRICT$/);
    db.pragma('foreign_keys = ON');
    db.prepare(
      "INSERT INTO job_outcomes (job_id, imported_at, bounce_file, sent_file, report) VALUES (1, 'a', 'b.csv', NULL, '{}')",
    ).run();
    db.prepare('INSERT INTO job_outcome_codes (job_id, code, sent, hard_bounced) VALUES (1, 50, 10, 1)').run();
    db.prepare('DELETE FROM jobs WHERE id = 1').run();
    expect(db.prepare('SELECT COUNT(*) FROM job_outcomes').pluck().get()).toBe(0);
    expect(db.prepare('SELECT COUNT(*) FROM job_outcome_codes').pluck().get()).toBe(0);
  });

  it('opens in WAL mode and refuses a database from a newer version', () => {
    db.close();
    const file = join(dir.path, 'history.sqlite');
    const opened = openHistoryDb(file);
    expect(opened.pragma('journal_mode', { simple: true })).toBe('wal');
    opened.pragma('user_version = 999');
    opened.close();
    expect(() => openHistoryDb(file)).toThrow(NewerDatabaseError);
    db = new Database(file);
  });

  it('lists jobs by search, status, date and sort order', () => {
    db.close();
    db = openHistoryDb(join(dir.path, 'h2.sqlite'));
    insertJob(db, { ...job, fileName: 'alpha_list.csv', createdAt: '2026-01-05T10:00:00.000Z' });
    insertJob(db, { ...job, fileName: 'beta.csv', createdAt: '2026-02-01T10:00:00.000Z', rows: 5 });
    insertJob(db, { ...job, fileName: 'alpha%.csv', createdAt: '2026-03-01T10:00:00.000Z', rows: 9 });
    expect(listJobs(db, {}).items.map((j) => j.fileName)).toEqual([
      'alpha%.csv',
      'beta.csv',
      'alpha_list.csv',
    ]);
    expect(listJobs(db, { search: 'ALPHA' }).total).toBe(2);
    // LIKE wildcards in the search are literal characters.
    expect(listJobs(db, { search: '%' }).items.map((j) => j.fileName)).toEqual(['alpha%.csv']);
    expect(listJobs(db, { search: '_' }).items.map((j) => j.fileName)).toEqual(['alpha_list.csv']);
    expect(listJobs(db, { from: '2026-02-01', to: '2026-02-01' }).items.map((j) => j.fileName)).toEqual([
      'beta.csv',
    ]);
    expect(listJobs(db, { sort: 'name', direction: 'asc' }).items.map((j) => j.fileName)).toEqual([
      'alpha%.csv',
      'alpha_list.csv',
      'beta.csv',
    ]);
    expect(listJobs(db, { sort: 'rows', direction: 'desc' }).items.map((j) => j.rows)).toEqual([9, 5, null]);
    expect(listJobs(db, { status: 'completed' }).total).toBe(0);
    expect(listJobs(db, { status: 'queued' }).total).toBe(3);
  });

  it('gives each job the Ready to mail its Results count, not the valid and corrected rows (issue 39)', () => {
    db.close();
    db = openHistoryDb(join(dir.path, 'h3.sqlite'));
    const counted = insertJob(db, { ...job, fileName: 'counted.csv' });
    const stale = insertJob(db, { ...job, fileName: 'stale.csv' });
    insertJob(db, { ...job, fileName: 'new.csv' });
    // The service's reporting says 72 valid and corrected rows, duplicates included.
    const reporting = { statuses: { Valid: 60, Corrected: 12, Invalid: 5 } };
    for (const id of [counted, stale]) {
      setJobDocument(db, id, {}, 302, reporting);
      setJobResults(db, id, { path: `/r/${id}.csv`, name: 'r.csv', duplicates: 40 });
    }
    const counts = { ready: 46 } as unknown as Parameters<typeof setJobCounts>[3];
    setJobCounts(db, counted, `/r/${counted}.csv`, counts);
    // Counts of another results file (before a re-check) are not this one's.
    setJobCounts(db, stale, '/r/old.csv', counts);
    const ready = Object.fromEntries(listJobs(db, {}).items.map((j) => [j.fileName, j.ready]));
    expect(ready).toEqual({ 'counted.csv': 46, 'stale.csv': null, 'new.csv': null });
    expect(listJobs(db, { sort: 'ready', direction: 'desc' }).items[0].fileName).toBe('counted.csv');
  });
});
