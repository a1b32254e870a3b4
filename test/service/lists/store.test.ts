// Migration 0020 (the lists table) and the list store's queries on a real SQLite file.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../../service/store/migrate.js';
import { openServiceDb } from '../../../service/store/db.js';
import { SERVICE_MIGRATIONS } from '../../../service/store/migrations/index.js';
import { createKey } from '../../../service/store/keys.js';
import {
  getList,
  insertList,
  listDocument,
  markFailed,
  markProcessing,
  markResults,
  unfinishedLists,
  updateProgress,
} from '../../../service/lists/backend/store.js';
import { DuplicateTable, NO_SLOT } from '../../../service/lists/read/dupTable.js';
import { tempDir } from '../../helpers/service.js';

describe('migration 0020: lists', () => {
  const dirs: { remove(): void }[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

  it('upgrades a version-10 database, keeping its keys, to a strict lists table', () => {
    const db = new Database(':memory:');
    migrate(
      db,
      SERVICE_MIGRATIONS.filter((m) => m.version === 10),
    );
    db.prepare(
      `INSERT INTO keys (key_hash, key_hint, mode, services, created_at) VALUES ('h', 'abcd', 'safe_to_send', '[]', 'now')`,
    ).run();
    migrate(
      db,
      SERVICE_MIGRATIONS.filter((m) => m.version <= 20),
    );
    expect(db.pragma('user_version', { simple: true })).toBe(20);
    expect(db.prepare('SELECT count(*) AS n FROM keys').get()).toEqual({ n: 1 });
    const insert = (status: string, size: unknown) =>
      db
        .prepare(
          `INSERT INTO lists (key_id, name, input_file, options, status, size_bytes, created_at, updated_at) VALUES (1, 'a.csv', 'input.csv', '{}', ?, ?, 'now', 'now')`,
        )
        .run(status, size);
    expect(() => insert('Done', 1)).toThrow(/CHECK constraint/);
    expect(() => insert('Pending', 'many')).toThrow(/cannot store TEXT value in INTEGER column/); // STRICT
    expect(() =>
      db
        .prepare(
          `INSERT INTO lists (key_id, name, input_file, options, size_bytes, created_at, updated_at) VALUES (7, 'a', 'b', '{}', 1, 'n', 'n')`,
        )
        .run(),
    ).toThrow(/FOREIGN KEY/); // a list belongs to a key
    db.close();
  });

  it('records a list through its statuses, as the status document shows them', () => {
    const dir = tempDir();
    dirs.push(dir);
    const db = openServiceDb(dir.path);
    const { record: key } = createKey(db, { mode: 'safe_to_send', services: ['validation'] });
    const id = insertList(db, {
      keyId: key.id,
      name: 'a.csv',
      options: { header: true, callback_url: 'https://example.com/h' },
      sizeBytes: 10,
      inputFile: (n) => `input-${n}.csv`,
    });
    expect(getList(db, id)).toMatchObject({
      status: 'Pending',
      serviceStatus: 'Pending',
      inputFile: `input-${id}.csv`,
      options: { header: true },
    });
    expect(unfinishedLists(db).map((l) => l.id)).toEqual([id]);
    markProcessing(db, id);
    updateProgress(db, id, 100, 90, 40);
    expect(listDocument(getList(db, id)!)).toMatchObject({
      status: 'Processing',
      records: 100,
      services: { email_validation: { input_count: 90, completed_count: 40, status: 'Processing' } },
    });
    // input_count never exceeds the records, completed_count never the input count; neither goes back
    // (a run started again after a restart counts from 0).
    updateProgress(db, id, 100, 250, 400);
    expect(listDocument(getList(db, id)!).services.email_validation).toMatchObject({
      input_count: 100,
      completed_count: 100,
    });
    updateProgress(db, id, 10, 5, 1);
    expect(listDocument(getList(db, id)!)).toMatchObject({
      records: 100,
      services: { email_validation: { input_count: 100, completed_count: 100 } },
    });
    markResults(db, id, { records: 120, reporting: { role_accounts: 3 }, resultsFile: 'results.csv' });
    const done = listDocument(getList(db, id)!);
    expect(done).toMatchObject({
      status: 'Results',
      records: 120,
      services: {
        email_validation: {
          input_count: 120,
          completed_count: 120,
          status: 'Completed',
          reporting: { role_accounts: 3 },
        },
      },
    });
    expect(done).not.toHaveProperty('reason');
    expect(unfinishedLists(db)).toEqual([]);
    const other = insertList(db, {
      keyId: key.id,
      name: 'b.csv',
      options: {},
      sizeBytes: 1,
      inputFile: () => 'input.csv',
    });
    markFailed(db, other, 'Invalid', 'No column holds email addresses.');
    expect(listDocument(getList(db, other)!)).toMatchObject({
      status: 'Invalid',
      reason: 'No column holds email addresses.',
      services: { email_validation: { status: 'Error' } },
    });
    expect(getList(db, other)!.attempts).toBe(0);
    db.close();
  });
});

describe('DuplicateTable', () => {
  it('counts by 64-bit hash and keeps each address in one slot', () => {
    const table = new DuplicateTable(1000);
    const a = table.add(1, 2);
    const b = table.add(1, 3);
    expect(table.add(1, 2)).toBe(a);
    expect(table.isDuplicate(a)).toBe(true);
    expect(table.isDuplicate(b)).toBe(false);
    expect(table.add(0, 0)).toBe(NO_SLOT);
    expect(table.isDuplicate(NO_SLOT)).toBe(false);
  });

  it('marks each row whose address is met again, the first row once the second comes (addRow)', () => {
    const table = new DuplicateTable(1000);
    const duplicates = new Uint8Array(8);
    // Rows 0..7: a, b, a, c, (no address), b, b, d; `add` beside them counts alike.
    const hashes: [number, number][] = [
      [1, 2],
      [1, 3],
      [1, 2],
      [5, 5],
      [0, 0],
      [1, 3],
      [1, 3],
      [9, 9],
    ];
    hashes.forEach(([h1, h2], row) => table.addRow(h1, h2, row, duplicates));
    expect([...duplicates]).toEqual([1, 1, 1, 0, 0, 1, 1, 0]);
    expect(table.isDuplicate(table.add(1, 2))).toBe(true);
    expect(table.isDuplicate(table.add(9, 9))).toBe(true); // counted twice now, once by addRow
    expect(table.isDuplicate(table.add(7, 7))).toBe(false);
  });

  it('holds as many distinct addresses as it was made for, with colliding slots', () => {
    const table = new DuplicateTable(5000);
    const slots = Array.from({ length: 5000 }, (_, i) => table.add(i * 2048, 7)); // same low bits: long probes
    expect(new Set(slots).size).toBe(5000);
    for (let i = 0; i < 5000; i += 2) table.add(i * 2048, 7);
    expect(slots.filter((slot) => table.isDuplicate(slot))).toHaveLength(2500);
  });
});
