import type { Migration } from '../migrate.js';

/**
 * What a key may hold (docs/team-server.md, "Limits of a key"): lists waiting or running at once and bytes of
 * lists submitted a UTC day (0: no limit; keys made before get the defaults), and the usage period each list
 * was charged in, so that its refund or settlement goes back to that period, whenever it ends.
 */
export const keyLimits: Migration = {
  version: 110,
  name: 'key-limits',
  up(db) {
    db.exec(`
      ALTER TABLE keys ADD COLUMN max_lists INTEGER NOT NULL DEFAULT 20 CHECK (max_lists >= 0);
      ALTER TABLE keys ADD COLUMN max_bytes_day INTEGER NOT NULL DEFAULT 5368709120 CHECK (max_bytes_day >= 0);
      -- NULL: a list from before (its refund goes to the period current when it ends, as it did).
      ALTER TABLE lists ADD COLUMN charged_period TEXT;
      CREATE INDEX lists_by_key_created ON lists (key_id, created_at);
    `);
  },
};
