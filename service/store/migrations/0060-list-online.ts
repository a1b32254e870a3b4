import type { Migration } from '../migrate.js';

/**
 * Lists with online checks (docs/online-checks.md): the level a list ran with, the progress of its online
 * phase and its wait for a retry of temporary failures, kept so that a restart carries on where it stopped.
 */
export const listOnline: Migration = {
  version: 60,
  name: 'list-online',
  up(db) {
    db.exec(`
      -- JSON: {level, rows_to_check, rows_checked, domains_total, domains_done, rate_per_s, retry_rows,
      -- retry_at, retry_attempt, waiting_since, finished_early} (ListOnlineState); NULL for an offline list.
      ALTER TABLE lists ADD COLUMN online TEXT;
      -- The checks level the list ran with: offline, dns or smtp (NULL until it runs).
      ALTER TABLE lists ADD COLUMN checks TEXT;
    `);
  },
};
