import type { PgMigration } from '../migrate.js';

/**
 * A part's online checks cut between jobs (issue 38): a team node with room for only the first of a heavy
 * domain's part asks those, and the rest goes at once to a job of its own, for a node with room. Each job asks
 * one range of the part's checks (in the part's domain order), so no check is asked twice. `cuts`: where the
 * part's checks were cut (a job's range runs from its start to the next cut); `open_ranges`: the starts of the
 * ranges whose job has not ended yet. The job that closes the last open range writes the part, exactly once;
 * both go back to empty then (a retry of temporary failures asks the whole part again).
 */
export const partRanges: PgMigration = {
  version: 60,
  name: 'part-ranges',
  async up(client) {
    await client.query(`
      ALTER TABLE list_parts ADD COLUMN cuts integer[] NOT NULL DEFAULT '{}';
      ALTER TABLE list_parts ADD COLUMN open_ranges integer[] NOT NULL DEFAULT '{}';
    `);
  },
};
