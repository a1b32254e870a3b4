import type { Migration } from '../migrate.js';

/** Lists submitted to E7 (see docs/lists.md for the statuses and their transitions). */
export const createLists: Migration = {
  version: 20,
  name: 'create-lists',
  up(db) {
    db.exec(`
      CREATE TABLE lists (
        id INTEGER PRIMARY KEY,
        -- A list belongs to the key that submitted it; other keys do not see it.
        key_id INTEGER NOT NULL REFERENCES keys (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        -- The stored upload, inside <dataDir>/lists/<id>/.
        input_file TEXT NOT NULL,
        -- E7's parameters as given (JSON): email_column, header, delimiter, report, fields, callback_url.
        options TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'Pending'
          CHECK (status IN ('Pending', 'Processed', 'Processing', 'Results', 'Cancelled', 'Invalid', 'Error')),
        service_status TEXT NOT NULL DEFAULT 'Pending'
          CHECK (service_status IN ('Pending', 'Processing', 'Completed', 'Cancelled', 'Error')),
        -- Why a list is Invalid or Error, in words for a person.
        reason TEXT,
        size_bytes INTEGER NOT NULL,
        records INTEGER NOT NULL DEFAULT 0,
        input_count INTEGER NOT NULL DEFAULT 0,
        completed_count INTEGER NOT NULL DEFAULT 0,
        -- The email_validation reporting (JSON), once complete.
        reporting TEXT,
        -- The results file inside the list's folder, once complete.
        results_file TEXT,
        -- Processing runs started; a list interrupted again and again is given up with Error.
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        finished_at TEXT
      ) STRICT;
      CREATE INDEX lists_by_key ON lists (key_id, id);
      CREATE INDEX lists_unfinished ON lists (id) WHERE status IN ('Pending', 'Processing');
    `);
  },
};
