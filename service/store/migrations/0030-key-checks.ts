import type { Migration } from '../migrate.js';

/** Each key's online checks level (docs/online-checks.md): offline, dns or smtp. Existing keys stay offline. */
export const keyChecks: Migration = {
  version: 30,
  name: 'key-checks',
  up(db) {
    db.exec(`
      ALTER TABLE keys ADD COLUMN checks TEXT NOT NULL DEFAULT 'offline'
        CHECK (checks IN ('offline', 'dns', 'smtp'));
    `);
  },
};
