import type { Migration } from '../migrate.js';

/**
 * The block lists this machine's mailbox checks met (issue 39): a mail server refused a check and named a block
 * list ("blocked using zen.spamhaus.org"), or its own. Kept per list and source address, with the first and
 * last time and the last reply, so that `mailsieve doctor` run later on the same machine says so with the date.
 */
export const blockLists: Migration = {
  version: 130,
  name: 'block-lists',
  up(db) {
    db.exec(`
      CREATE TABLE met_block_lists (
        list TEXT NOT NULL,
        source TEXT NOT NULL,
        host TEXT NOT NULL,
        reply TEXT NOT NULL,
        first_at TEXT NOT NULL,
        last_at TEXT NOT NULL,
        times INTEGER NOT NULL,
        PRIMARY KEY (list, source)
      ) STRICT;
    `);
  },
};
