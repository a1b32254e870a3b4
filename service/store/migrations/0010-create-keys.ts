import type { Migration } from '../migrate.js';

export const createKeys: Migration = {
  version: 10,
  name: 'create-keys',
  up(db) {
    db.exec(`
      CREATE TABLE keys (
        id INTEGER PRIMARY KEY,
        -- Only a SHA-256 of the key is stored; the key itself is shown once, when created.
        key_hash TEXT NOT NULL UNIQUE,
        key_hint TEXT NOT NULL,
        label TEXT NOT NULL DEFAULT '',
        mode TEXT NOT NULL CHECK (mode IN ('safe_to_send', 'email_validation')),
        services TEXT NOT NULL, -- JSON array of service names (DESIGN.md "Conventions")
        legacy_accept_all INTEGER NOT NULL DEFAULT 0,
        rate_limit INTEGER NOT NULL DEFAULT 500,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;
      CREATE TABLE key_list_entries (
        key_id INTEGER NOT NULL REFERENCES keys (id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('allow', 'suppress')),
        entry TEXT NOT NULL,
        PRIMARY KEY (key_id, kind, entry)
      ) STRICT, WITHOUT ROWID;
    `);
  },
};
