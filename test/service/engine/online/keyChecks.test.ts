// Migration 0030: a checks level on every key. Existing keys stay offline; nothing else is accepted.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../../../service/store/migrate.js';
import { SERVICE_MIGRATIONS } from '../../../../service/store/migrations/index.js';
import { createKey, getKeyById, setKeyChecks } from '../../../../service/store/keys.js';

describe('migration 0030 (key checks)', () => {
  it('gives keys made before it the offline level and refuses an unknown level', () => {
    const db = new Database(':memory:');
    migrate(
      db,
      SERVICE_MIGRATIONS.filter((m) => m.version < 30),
    );
    db.prepare(
      `INSERT INTO keys (key_hash, key_hint, mode, services, created_at) VALUES ('h', 'abcd', 'safe_to_send', '["validation"]', 'now')`,
    ).run();
    migrate(db, SERVICE_MIGRATIONS);
    expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(30);
    expect(getKeyById(db, 1)?.checks).toBe('offline');
    expect(() => db.prepare(`UPDATE keys SET checks = 'bogus' WHERE id = 1`).run()).toThrow(
      /CHECK constraint/,
    );
    db.close();
  });

  it('stores the level a key is created with, and changes it', () => {
    const db = new Database(':memory:');
    migrate(db, SERVICE_MIGRATIONS);
    const { record } = createKey(db, { mode: 'safe_to_send', services: ['validation'], checks: 'dns' });
    expect(record.checks).toBe('dns');
    expect(setKeyChecks(db, record.id, 'smtp')).toBe(true);
    expect(getKeyById(db, record.id)?.checks).toBe('smtp');
    db.close();
  });
});
