import type { Migration } from '../migrate.js';

/**
 * Uploads a key may send at once (`keys create --max-uploads`; keys made before get the default, 2; the single
 * node counts the uploads arriving in its memory), and a list's `text_bytes`: the bytes of its text (a zip's
 * file uncompressed), what `--max-bytes-day` counts. NULL for a list from before (its `size_bytes` counts).
 */
export const uploadLimits: Migration = {
  version: 120,
  name: 'upload-limits',
  up(db) {
    db.exec(`
      ALTER TABLE keys ADD COLUMN max_uploads INTEGER NOT NULL DEFAULT 2 CHECK (max_uploads >= 0);
      ALTER TABLE lists ADD COLUMN text_bytes INTEGER;
    `);
  },
};
