// ChangeWatch (service/store/changes.ts): what the request path's caches learn of a change to the database.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeWatch, tickerRunning } from '../../../service/store/changes.js';
import { openServiceDb, SERVICE_DB_FILE, type ServiceDb } from '../../../service/store/db.js';
import { tempDir } from '../../helpers/service.js';

describe('ChangeWatch', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));
  const open = (): { db: ServiceDb; file: string } => {
    const dir = tempDir();
    const db = openServiceDb(dir.path);
    cleanups.push(
      () => dir.remove(),
      () => db.close(),
    );
    return { db, file: join(dir.path, SERVICE_DB_FILE) };
  };

  it('moves on a commit of another connection and on this connection’s own writes, not on reads', () => {
    const { db, file } = open();
    const watch = new ChangeWatch(db, 0);
    const first = watch.generation();
    db.prepare('SELECT count(*) FROM keys').get();
    expect(watch.generation()).toBe(first);
    const other = new Database(file);
    other.prepare("INSERT INTO ref_sources (name) VALUES ('elsewhere')").run();
    other.close();
    const second = watch.generation();
    expect(second).not.toBe(first);
    expect(watch.generation()).toBe(second);
    db.prepare("INSERT INTO ref_sources (name) VALUES ('here')").run();
    expect(watch.generation()).not.toBe(second);
  });

  it('asks the database at most every recheckMs', () => {
    const { db } = open();
    const watch = new ChangeWatch(db, 3_600_000);
    const first = watch.generation();
    db.prepare("INSERT INTO ref_sources (name) VALUES ('here')").run();
    expect(watch.generation()).toBe(first);
  });

  it('asks the database again once recheckMs have passed', async () => {
    const { db, file } = open();
    const watch = new ChangeWatch(db, 50);
    const first = watch.generation();
    const other = new Database(file);
    other.prepare("INSERT INTO ref_sources (name) VALUES ('elsewhere')").run();
    other.close();
    expect(watch.generation()).toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(watch.generation()).not.toBe(first);
  });
  it('stops its clock while nobody asks, and counts the time it stood still', async () => {
    const { db, file } = open();
    const often = new ChangeWatch(db, 1_500);
    const seldom = new ChangeWatch(db, 3_600_000);
    const first = often.generation();
    const seldomFirst = seldom.generation();
    expect(tickerRunning()).toBe(true);
    // An idle process: after IDLE_TICKS (1 s) unread, its timer stops.
    for (let i = 0; i < 40 && tickerRunning(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(tickerRunning()).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 700));
    const other = new Database(file);
    other.prepare("INSERT INTO ref_sources (name) VALUES ('elsewhere')").run();
    other.close();
    // Over 1.5 s went by, part of it uncounted by the timer: the first question after asks the database again…
    expect(often.generation()).not.toBe(first);
    expect(tickerRunning()).toBe(true);
    // …while an hour has not gone by.
    expect(seldom.generation()).toBe(seldomFirst);
  });
});
