import type { Migration } from '../../../../service/store/migrate.js';

/**
 * List services (docs/list-services.md): each job's match reports (the services beyond validation, kept while
 * a purchase runs the list again); what was bought of a report-only job (the E9 request, and when the service
 * took it); and the file's own header names when the file sent renamed them for the service (name and postal
 * columns are found by header synonyms), so previews and exports give the user's names back. The services and
 * fields a job runs live in its `options`; a job without them ran validation only.
 */
export const listServices: Migration = {
  version: 40,
  name: 'list-services',
  up(db) {
    db.exec(`
      ALTER TABLE jobs ADD COLUMN match_reports TEXT;
      ALTER TABLE jobs ADD COLUMN purchase TEXT;
      ALTER TABLE jobs ADD COLUMN purchase_sent_at TEXT;
      ALTER TABLE jobs ADD COLUMN original_header TEXT;
    `);
  },
};
