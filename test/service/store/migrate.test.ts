import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, NewerDatabaseError, type Migration } from '../../../service/store/migrate.js';
import { openServiceDb } from '../../../service/store/db.js';
import { SERVICE_MIGRATIONS } from '../../../service/store/migrations/index.js';
import { tempDir } from '../../helpers/service.js';
import {
  DEFAULT_MAX_BYTES_DAY,
  DEFAULT_MAX_LISTS,
  DEFAULT_MAX_UPLOADS,
} from '../../../service/store/keys.js';
import { loadDemo } from '../../../service/identity/demo.js';
import { answersWaiting, prepareAnswers } from '../../../service/identity/prepared.js';

describe('migrations', () => {
  const dirs: { remove(): void }[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

  it('bring a new database to the latest version, in WAL mode, and are idempotent', () => {
    const dir = tempDir();
    dirs.push(dir);
    const db = openServiceDb(dir.path);
    const latest = Math.max(...SERVICE_MIGRATIONS.map((m) => m.version));
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    const again = openServiceDb(dir.path);
    expect(again.pragma('user_version', { simple: true })).toBe(latest);
    again.close();
  });

  it('0070 leaves the answers of a store from before it to prepare, which gives the same texts', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const db = openServiceDb(dir.path);
    await loadDemo(db, { people: 200, seed: 5 });
    prepareAnswers(db);
    const people = (at: typeof db) =>
      at.prepare('SELECT id, answer_json, postal_json FROM ref_people ORDER BY id').raw().all();
    const addresses = (at: typeof db) =>
      at.prepare('SELECT id, activity_packed FROM ref_emails ORDER BY id').raw().all();
    const rendered = people(db);
    const packed = addresses(db);
    expect(rendered.length).toBeGreaterThan(150);
    expect(
      db.prepare('SELECT count(*) FROM ref_emails WHERE length(activity_packed) > 0').pluck().get(),
    ).toBeGreaterThan(100);
    // The store as it was at version 60: no prepared answers (nor what later steps added).
    db.exec(`
      DROP TABLE met_block_lists;
      ALTER TABLE keys DROP COLUMN max_uploads;
      ALTER TABLE lists DROP COLUMN text_bytes;
      DROP INDEX lists_by_key_created;
      ALTER TABLE lists DROP COLUMN charged_period;
      ALTER TABLE keys DROP COLUMN max_lists;
      ALTER TABLE keys DROP COLUMN max_bytes_day;
      DROP TABLE ref_bounces;
      DROP TABLE ref_bounce_imports;
      ALTER TABLE keys DROP COLUMN known_bouncers;
      ALTER TABLE keys DROP COLUMN bounce_max_age_days;
      DROP TABLE key_usage;
      ALTER TABLE keys DROP COLUMN quota;
      ALTER TABLE keys DROP COLUMN quota_period;
      ALTER TABLE keys DROP COLUMN is_trial;
      DROP TABLE list_verdicts;
      DROP TABLE list_parts;
      ALTER TABLE lists DROP COLUMN run;
      ALTER TABLE lists DROP COLUMN plan;
      ALTER TABLE lists DROP COLUMN reserved;
      ALTER TABLE lists DROP COLUMN parts_done;
      DROP INDEX ref_people_unrendered;
      DROP INDEX ref_emails_unpacked;
      ALTER TABLE ref_people DROP COLUMN answer_json;
      ALTER TABLE ref_people DROP COLUMN postal_json;
      ALTER TABLE ref_emails DROP COLUMN activity_packed;
    `);
    db.pragma('user_version = 60');
    db.close();
    const reopened = openServiceDb(dir.path);
    expect(answersWaiting(reopened)).toEqual({ people: rendered.length, addresses: packed.length });
    prepareAnswers(reopened);
    expect(people(reopened)).toEqual(rendered);
    expect(addresses(reopened)).toEqual(packed);
    reopened.close();
  });

  it('0100 gives the keys made before it no known bouncers and a 365-day max age, and keeps bounces strict', () => {
    const db = new Database(':memory:');
    migrate(
      db,
      SERVICE_MIGRATIONS.filter((m) => m.version < 100),
    );
    db.prepare(
      `INSERT INTO keys (key_hash, key_hint, mode, services, created_at) VALUES ('h', 'abcd', 'safe_to_send', '[]', 'now')`,
    ).run();
    migrate(db, SERVICE_MIGRATIONS);
    expect(db.prepare('SELECT known_bouncers, bounce_max_age_days FROM keys').get()).toEqual({
      known_bouncers: 0,
      bounce_max_age_days: 365,
    });
    expect(() => db.exec('UPDATE keys SET bounce_max_age_days = 0')).toThrow(/CHECK constraint/);
    expect(() =>
      db.exec("INSERT INTO ref_bounces (email, bounced_at, import_id) VALUES ('a@b.com', 'soon', 1)"),
    ).toThrow(/cannot store TEXT value in INTEGER column/);
    db.close();
  });

  it('0110 gives the keys made before it the default limits, and lists no charged period', () => {
    const db = new Database(':memory:');
    migrate(
      db,
      SERVICE_MIGRATIONS.filter((m) => m.version < 110),
    );
    db.prepare(
      `INSERT INTO keys (key_hash, key_hint, mode, services, created_at) VALUES ('h', 'abcd', 'safe_to_send', '[]', 'now')`,
    ).run();
    db.prepare(
      `INSERT INTO lists (key_id, name, input_file, options, size_bytes, created_at, updated_at) VALUES (1, 'a', 'input.csv', '{}', 1, 'now', 'now')`,
    ).run();
    migrate(db, SERVICE_MIGRATIONS);
    expect(db.prepare('SELECT max_lists, max_bytes_day FROM keys').get()).toEqual({
      max_lists: DEFAULT_MAX_LISTS,
      max_bytes_day: DEFAULT_MAX_BYTES_DAY,
    });
    expect(db.prepare('SELECT charged_period FROM lists').pluck().get()).toBeNull();
    expect(() => db.exec('UPDATE keys SET max_lists = -1')).toThrow(/CHECK constraint/);
    db.close();
  });

  it('0120 gives the keys made before it the default uploads at once, and lists no text bytes', () => {
    const db = new Database(':memory:');
    migrate(
      db,
      SERVICE_MIGRATIONS.filter((m) => m.version < 120),
    );
    db.prepare(
      `INSERT INTO keys (key_hash, key_hint, mode, services, created_at) VALUES ('h', 'abcd', 'safe_to_send', '[]', 'now')`,
    ).run();
    db.prepare(
      `INSERT INTO lists (key_id, name, input_file, options, size_bytes, created_at, updated_at) VALUES (1, 'a', 'input.csv', '{}', 1, 'now', 'now')`,
    ).run();
    migrate(db, SERVICE_MIGRATIONS);
    expect(db.prepare('SELECT max_uploads FROM keys').pluck().get()).toBe(DEFAULT_MAX_UPLOADS);
    expect(db.prepare('SELECT text_bytes FROM lists').pluck().get()).toBeNull();
    expect(() => db.exec('UPDATE keys SET max_uploads = -1')).toThrow(/CHECK constraint/);
    db.close();
  });

  it('0130 keeps the block lists met, one row per list and source address', async () => {
    const db = new Database(':memory:');
    migrate(db, SERVICE_MIGRATIONS);
    const { recordBlockList, blockListsMetSince } = await import('../../../service/store/blockLists.js');
    const met = {
      list: 'zen.spamhaus.org',
      source: '127.0.0.2',
      host: 'mx.a',
      reply: '554 blocked',
      at: '2026-11-01T00:00:00.000Z',
    };
    recordBlockList(db, met);
    recordBlockList(db, { ...met, host: 'mx.b', at: '2026-11-03T00:00:00.000Z' });
    recordBlockList(db, { ...met, source: '127.0.0.3', at: '2026-10-01T00:00:00.000Z' });
    expect(blockListsMetSince(db, '2026-10-15T00:00:00.000Z')).toEqual([
      {
        list: 'zen.spamhaus.org',
        source: '127.0.0.2',
        host: 'mx.b',
        reply: '554 blocked',
        firstAt: '2026-11-01T00:00:00.000Z',
        lastAt: '2026-11-03T00:00:00.000Z',
        times: 2,
      },
    ]);
    expect(db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get('met_block_lists')).toMatch(
      /STRICT$/,
    );
    db.close();
  });

  it('0010 creates strict key tables that refuse a wrong mode', () => {
    const db = new Database(':memory:');
    migrate(
      db,
      SERVICE_MIGRATIONS.filter((m) => m.version === 10),
    );
    expect(() =>
      db
        .prepare(
          `INSERT INTO keys (key_hash, key_hint, mode, services, created_at) VALUES ('h', 'abcd', 'bogus', '[]', 'now')`,
        )
        .run(),
    ).toThrow(/CHECK constraint/);
    db.close();
  });

  it('refuse a database written by a newer version', () => {
    const db = new Database(':memory:');
    db.pragma('user_version = 9990');
    expect(() => migrate(db, SERVICE_MIGRATIONS)).toThrow(NewerDatabaseError);
    db.close();
  });

  it('roll back a failing step whole, leaving the previous version', () => {
    const db = new Database(':memory:');
    const steps: Migration[] = [
      { version: 10, name: 'a', up: (d) => d.exec('CREATE TABLE a (x INTEGER) STRICT') },
      {
        version: 20,
        name: 'b',
        up: (d) => {
          d.exec('CREATE TABLE b (x INTEGER) STRICT');
          throw new Error('boom');
        },
      },
    ];
    expect(() => migrate(db, steps)).toThrow('boom');
    expect(db.pragma('user_version', { simple: true })).toBe(10);
    expect(db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'b'`).get()).toEqual({ n: 0 });
    db.close();
  });
});
