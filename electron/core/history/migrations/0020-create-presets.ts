import type { Migration } from '../../../../service/store/migrate.js';

/** Mapping presets, remembered by header signature, and the recently opened files (File → Open recent). */
export const createPresets: Migration = {
  version: 20,
  name: 'create-presets',
  up(db) {
    db.exec(`
      CREATE TABLE mapping_presets (
        signature TEXT PRIMARY KEY,
        roles TEXT NOT NULL,
        delimiter TEXT NOT NULL,
        header INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE recent_files (
        path TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        size INTEGER NOT NULL,
        opened_at TEXT NOT NULL
      ) STRICT;
    `);
  },
};
