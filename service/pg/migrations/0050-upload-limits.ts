import type { PgMigration } from '../migrate.js';

/**
 * Uploads a key may send at once (`keys create --max-uploads`; keys made before get the default, 2), and the
 * uploads arriving now, one row each, across API nodes: E7 adds its row before it reads a body and deletes it
 * once the upload has ended; the node renews its rows' lease while they arrive, so that the rows of a node
 * that died stop counting when their lease runs out (docs/team-server.md, "Limits of a key"). Unlogged: a row
 * lives as long as a request, and a crash of the database ends those requests too.
 *
 * A list's `text_bytes`: the bytes of its text (a zip's file uncompressed), what `--max-bytes-day` counts.
 * NULL for a list from before (its `size_bytes` counts, as it did).
 */
export const uploadLimits: PgMigration = {
  version: 50,
  name: 'upload-limits',
  async up(client) {
    await client.query(`
      ALTER TABLE keys ADD COLUMN max_uploads integer NOT NULL DEFAULT 2 CHECK (max_uploads >= 0);
      ALTER TABLE lists ADD COLUMN text_bytes bigint;
      CREATE UNLOGGED TABLE list_uploads (
        id bigserial PRIMARY KEY,
        key_id bigint NOT NULL REFERENCES keys (id) ON DELETE CASCADE,
        -- The API node receiving it (its list backend's own id).
        node text NOT NULL,
        -- The least bytes its list will count against --max-bytes-day (from the upload's Content-Length).
        bytes bigint NOT NULL,
        lease_until timestamptz NOT NULL
      );
      CREATE INDEX list_uploads_by_key ON list_uploads (key_id);
    `);
  },
};
