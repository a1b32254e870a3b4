import type { Migration } from '../../../../service/store/migrate.js';

/** Settings as name → JSON value (the connection in use, among others), and the file name searched by History. */
export const createSettings: Migration = {
  version: 30,
  name: 'create-settings',
  up(db) {
    db.exec(`
      CREATE TABLE settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;
      CREATE INDEX jobs_file_name ON jobs (file_name COLLATE NOCASE);
    `);
  },
};
