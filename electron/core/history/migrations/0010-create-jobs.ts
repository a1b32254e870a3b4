import type { Migration } from '../../../../service/store/migrate.js';

/** Jobs, the status timeline of each, and the files exported from them. */
export const createJobs: Migration = {
  version: 10,
  name: 'create-jobs',
  up(db) {
    db.exec(`
      CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        status TEXT NOT NULL,
        message TEXT,
        file_name TEXT NOT NULL,
        file_path TEXT NOT NULL,
        upload_name TEXT NOT NULL,
        upload_header INTEGER NOT NULL,
        file_size INTEGER NOT NULL,
        file_sha256 TEXT,
        file_format TEXT NOT NULL,
        file_encoding TEXT,
        mapping TEXT NOT NULL,
        options TEXT NOT NULL,
        connection_kind TEXT NOT NULL,
        connection_url TEXT,
        part_index INTEGER,
        part_count INTEGER,
        list_id INTEGER,
        rows INTEGER,
        last_document TEXT,
        reporting TEXT,
        safe_count INTEGER,
        invalid_count INTEGER,
        duplicate_count INTEGER,
        results_path TEXT,
        results_name TEXT
      ) STRICT;
      CREATE INDEX jobs_created ON jobs (created_at);
      CREATE INDEX jobs_status ON jobs (status, created_at);
      CREATE TABLE job_events (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        status TEXT NOT NULL,
        message TEXT
      ) STRICT;
      CREATE INDEX job_events_job ON job_events (job_id, id);
      CREATE TABLE exports (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        kind TEXT NOT NULL,
        statuses TEXT NOT NULL,
        path TEXT NOT NULL,
        file_name TEXT NOT NULL,
        rows INTEGER NOT NULL,
        bytes INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX exports_job ON exports (job_id);
    `);
  },
};
