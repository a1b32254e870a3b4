import type { Migration } from '../migrate.js';

/**
 * Lists are processed in runs and cut into parts (service/lists/backend/port.ts, parts.ts): the run a list is
 * on, its plan, the records reserved against its key's quota, each part's state and counts (its results bytes
 * are files in the list's folder: parts/<run>-<part>.out), and the journal of online verdicts.
 */
export const listParts: Migration = {
  version: 80,
  name: 'list-parts',
  up(db) {
    db.exec(`
      -- The current run (a restart of the service, or a purchase, starts a new one; older runs' work is dropped).
      ALTER TABLE lists ADD COLUMN run INTEGER NOT NULL DEFAULT 0;
      -- JSON of the current run's plan: {records, head (base64), context, parts, completedOffline}.
      ALTER TABLE lists ADD COLUMN plan TEXT;
      -- Records reserved against the key's quota when the list was accepted.
      ALTER TABLE lists ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0;
      -- Parts of the current run whose results are saved.
      ALTER TABLE lists ADD COLUMN parts_done INTEGER NOT NULL DEFAULT 0;

      CREATE TABLE list_parts (
        list_id INTEGER NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
        run INTEGER NOT NULL,
        part INTEGER NOT NULL,
        rows INTEGER NOT NULL,
        -- Rows complete (decided offline, or with their online verdict).
        completed INTEGER NOT NULL DEFAULT 0,
        -- JSON: the online phase of the part (PartOnlineState), NULL before it starts.
        online TEXT,
        is_done INTEGER NOT NULL DEFAULT 0,
        -- Once done: the bytes of its results and explain rows (files), its counts (JSON).
        size INTEGER,
        explain_size INTEGER,
        report TEXT,
        identity TEXT,
        PRIMARY KEY (list_id, run, part)
      ) STRICT;

      -- Online verdicts of a list's addresses as they come (JournalEntry JSON), kept until the list is complete.
      CREATE TABLE list_verdicts (
        list_id INTEGER NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
        level TEXT NOT NULL,
        address TEXT NOT NULL,
        entry TEXT NOT NULL,
        PRIMARY KEY (list_id, level, address)
      ) STRICT, WITHOUT ROWID;
    `);
  },
};
