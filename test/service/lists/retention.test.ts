// Retention of the stored lists: a list completed longer ago than the retention is deleted (row and files),
// a recent one and one still waiting are kept, a folder of no list goes after its grace; the disk use counts
// what is left.
import { mkdirSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listDir } from '../../../service/lists/names.js';
import { listFilesUsage, sweepListFiles } from '../../../service/lists/backend/retention.js';
import { getList, insertList, markResults } from '../../../service/lists/backend/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { createKey } from '../../../service/store/keys.js';
import { tempDir } from '../../helpers/service.js';

const DAY = 24 * 60 * 60 * 1000;

describe('list retention', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: ServiceDb;
  let keyId: number;
  beforeEach(() => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    keyId = createKey(db, { mode: 'safe_to_send', services: ['validation'] }).record.id;
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  function storedList(finishedDaysAgo: number | null): number {
    const id = insertList(db, {
      keyId,
      name: 'people.csv',
      options: {},
      sizeBytes: 10,
      inputFile: () => 'input.csv',
    });
    mkdirSync(listDir(dir.path, id), { recursive: true });
    writeFileSync(join(listDir(dir.path, id), 'input.csv'), 'email\na@example.com\n');
    if (finishedDaysAgo !== null) {
      writeFileSync(join(listDir(dir.path, id), 'results.csv'), 'email,status\na@example.com,valid\n');
      markResults(db, id, {
        records: 1,
        reporting: {},
        resultsFile: 'results.csv',
      });
      db.prepare('UPDATE lists SET finished_at = ? WHERE id = ?').run(
        new Date(Date.now() - finishedDaysAgo * DAY).toISOString(),
        id,
      );
    }
    return id;
  }

  it('deletes lists completed longer ago than the retention, and keeps recent and unfinished ones', () => {
    const old = storedList(31);
    const recent = storedList(29);
    const waiting = storedList(null);
    const orphan = join(dir.path, 'lists', '999');
    mkdirSync(orphan);
    writeFileSync(join(orphan, 'results.csv'), 'x');
    const freshOrphan = join(dir.path, 'lists', '998');
    mkdirSync(freshOrphan);
    const longAgo = new Date(Date.now() - 2 * DAY);
    utimesSync(orphan, longAgo, longAgo);
    expect(listFilesUsage(dir.path).lists).toBe(5);

    expect(sweepListFiles(db, dir.path, 30)).toEqual([old]);
    expect(getList(db, old)).toBeUndefined();
    expect(existsSync(listDir(dir.path, old))).toBe(false);
    for (const kept of [recent, waiting]) {
      expect(getList(db, kept)).toBeDefined();
      expect(existsSync(join(listDir(dir.path, kept), 'input.csv'))).toBe(true);
    }
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(freshOrphan)).toBe(true);
    const usage = listFilesUsage(dir.path);
    expect(usage.lists).toBe(3);
    expect(usage.bytes).toBeGreaterThan(0);

    // A shorter retention takes the recent one too.
    expect(sweepListFiles(db, dir.path, 7)).toEqual([recent]);
  });
});
