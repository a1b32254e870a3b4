import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openServiceDb, SERVICE_DB_FILE } from '../../../service/store/db.js';
import {
  createKey,
  findActiveKey,
  getKeyById,
  KeyRegistry,
  listKeys,
  revokeKey,
  setKeyKnownBouncers,
} from '../../../service/store/keys.js';
import { tempDir } from '../../helpers/service.js';

describe('keys', () => {
  const dirs: { remove(): void }[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => d.remove()));
  const open = () => {
    const dir = tempDir();
    dirs.push(dir);
    return { db: openServiceDb(dir.path), dir: dir.path };
  };

  it('stores only a hash of the key, with its configuration and lists', () => {
    const { db } = open();
    const { key, record } = createKey(db, {
      mode: 'safe_to_send',
      services: ['validation', 'corrections'],
      allow: ['VIP@Example.com', '', '# comment', '@partner.org'],
      suppress: ['blocked.com'],
      rateLimit: 0,
    });
    expect(key).toMatch(/^msk_[A-Za-z0-9_-]{32}$/);
    const dump = JSON.stringify(db.prepare('SELECT * FROM keys').all());
    expect(dump).not.toContain(key);
    expect(record.hint).toBe(key.slice(-4));
    const found = findActiveKey(db, key)!;
    expect(found.mode).toBe('safe_to_send');
    expect([...found.services]).toEqual(['validation', 'corrections']);
    expect([...found.allow].sort()).toEqual(['partner.org', 'vip@example.com']);
    expect([...found.suppress]).toEqual(['blocked.com']);
    expect(found.rateLimit).toBe(0);
    db.close();
  });

  it('keeps known bouncers off by default with a 365-day max age, and turns them on', () => {
    const { db } = open();
    const plain = createKey(db, { mode: 'safe_to_send', services: ['validation'] }).record;
    expect(plain).toMatchObject({ knownBouncers: false, bounceMaxAgeDays: 365 });
    const known = createKey(db, {
      mode: 'email_validation',
      services: ['validation'],
      knownBouncers: true,
      bounceMaxAgeDays: 90,
    }).record;
    expect(known).toMatchObject({ knownBouncers: true, bounceMaxAgeDays: 90 });
    expect(setKeyKnownBouncers(db, plain.id, true)).toBe(true);
    expect(getKeyById(db, plain.id)?.knownBouncers).toBe(true);
    expect(setKeyKnownBouncers(db, 999, true)).toBe(false);
    expect(() =>
      createKey(db, {
        mode: 'safe_to_send',
        services: ['validation'],
        knownBouncers: true,
        bounceMaxAgeDays: 0,
      }),
    ).toThrow(/CHECK constraint/);
    db.close();
  });

  it('refuses allow and suppression lists on a legacy key (no 55 or 255 in that mode), and stores nothing', () => {
    const { db } = open();
    for (const lists of [{ allow: ['vip@example.com'] }, { suppress: ['blocked.com'] }]) {
      expect(() => createKey(db, { mode: 'email_validation', services: ['validation'], ...lists })).toThrow(
        /email_validation \(legacy\) mode cannot have/,
      );
    }
    // Blank lines and comments are no entries.
    createKey(db, { mode: 'email_validation', services: ['validation'], allow: ['', '# none'] });
    expect(db.prepare('SELECT COUNT(*) AS n FROM keys').get()).toEqual({ n: 1 });
    db.close();
  });

  it('revokes by key or by id, and a revoked key is not found', () => {
    const { db } = open();
    const a = createKey(db, { mode: 'safe_to_send', services: ['validation'] });
    const b = createKey(db, { mode: 'safe_to_send', services: ['validation'] });
    expect(revokeKey(db, a.key)).toBe(true);
    expect(revokeKey(db, a.key)).toBe(false);
    expect(revokeKey(db, String(b.record.id))).toBe(true);
    expect(findActiveKey(db, a.key)).toBeUndefined();
    expect(findActiveKey(db, b.key)).toBeUndefined();
    expect(listKeys(db).every((k) => k.revokedAt !== null)).toBe(true);
    db.close();
  });

  it('registry notices a key revoked through another connection', () => {
    const { db, dir } = open();
    const { key } = createKey(db, { mode: 'safe_to_send', services: ['validation'] });
    const registry = new KeyRegistry(db, 0);
    expect(registry.lookup(key)).toBeDefined();
    const other = new Database(join(dir, SERVICE_DB_FILE));
    other.prepare(`UPDATE keys SET revoked_at = 'now'`).run();
    other.close();
    expect(registry.lookup(key)).toBeUndefined();
    expect(registry.lookup('msk_not-a-key')).toBeUndefined();
    db.close();
  });
});
