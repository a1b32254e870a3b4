import type { Migration } from '../migrate.js';

/**
 * Quotas of billable queries per key (spec "Limits"; `keys create --quota N --quota-period …`, `--trial`), and
 * the queries each key used per period.
 */
export const keyQuotas: Migration = {
  version: 90,
  name: 'key-quotas',
  up(db) {
    db.exec(`
      -- Billable queries allowed per period (NULL: no quota), and the period: day, month or total.
      ALTER TABLE keys ADD COLUMN quota INTEGER CHECK (quota >= 0);
      ALTER TABLE keys ADD COLUMN quota_period TEXT NOT NULL DEFAULT 'total'
        CHECK (quota_period IN ('day', 'month', 'total'));
      ALTER TABLE keys ADD COLUMN is_trial INTEGER NOT NULL DEFAULT 0;
      -- Billable queries of a key per period ('2026-11-26' for a day, '2026-11' for a month, 'total').
      CREATE TABLE key_usage (
        key_id INTEGER NOT NULL REFERENCES keys (id) ON DELETE CASCADE,
        period TEXT NOT NULL,
        used INTEGER NOT NULL DEFAULT 0 CHECK (used >= 0),
        PRIMARY KEY (key_id, period)
      ) STRICT, WITHOUT ROWID;
    `);
  },
};
