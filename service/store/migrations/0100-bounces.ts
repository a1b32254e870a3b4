import type { Migration } from '../migrate.js';

/**
 * The user's own bounces (docs/identity.md, "Bounces"): the addresses an email platform's bounce or
 * suppression export names as hard bounces, each with its latest hard bounce, and each import's counts; and
 * the key settings that make them answer code 520 ("Matched to known bouncers"): `known_bouncers`, and how old
 * a bounce may be to count, read against the day of each verification (`bounce_max_age_days`).
 */
export const bounces: Migration = {
  version: 100,
  name: 'bounces',
  up(db) {
    db.exec(`
      -- Each bounces import: its file and what its rows were. Soft bounces and rows that are not bounces
      -- (complaints, unsubscribes) are counted here and stored nowhere else.
      CREATE TABLE ref_bounce_imports (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        rows_read INTEGER NOT NULL DEFAULT 0,
        hard INTEGER NOT NULL DEFAULT 0,
        soft INTEGER NOT NULL DEFAULT 0,
        other INTEGER NOT NULL DEFAULT 0,
        rows_rejected INTEGER NOT NULL DEFAULT 0
      ) STRICT;

      -- One row per hard-bounced address: its canonical form (service/identity/normalise.ts, as ref_emails,
      -- whose activity tells whether it opened or clicked since) and its latest hard bounce (Unix seconds; a
      -- row that gave no date counts from its import).
      CREATE TABLE ref_bounces (
        email TEXT PRIMARY KEY,
        bounced_at INTEGER NOT NULL,
        import_id INTEGER NOT NULL REFERENCES ref_bounce_imports (id)
      ) STRICT, WITHOUT ROWID;

      ALTER TABLE keys ADD COLUMN known_bouncers INTEGER NOT NULL DEFAULT 0 CHECK (known_bouncers IN (0, 1));
      ALTER TABLE keys ADD COLUMN bounce_max_age_days INTEGER NOT NULL DEFAULT 365
        CHECK (bounce_max_age_days BETWEEN 1 AND 36500);
    `);
  },
};
