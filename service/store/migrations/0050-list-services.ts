import type { Migration } from '../migrate.js';

/**
 * Lists run up to four services (docs/list-services.md): which ones, the state of those other than
 * validation (whose state keeps its own columns), and what a report-only list's purchase bought.
 */
export const listServices: Migration = {
  version: 50,
  name: 'list-services',
  up(db) {
    db.exec(`
      -- The list services (JSON array of service keys): at E7 those asked for (or the key's), once the
      -- file's columns are known those that run.
      ALTER TABLE lists ADD COLUMN services TEXT NOT NULL DEFAULT '["email_validation"]';
      -- 1 when E7 named the services: a service whose columns the file lacks makes the list Invalid rather
      -- than being left out.
      ALTER TABLE lists ADD COLUMN services_explicit INTEGER NOT NULL DEFAULT 1;
      -- JSON: per service other than email_validation, {status, input_count, completed_count, reporting?}.
      ALTER TABLE lists ADD COLUMN service_state TEXT NOT NULL DEFAULT '{}';
      -- JSON: E9's body once a report-only list is bought; the list then runs again with it.
      ALTER TABLE lists ADD COLUMN purchase TEXT;
    `);
  },
};
