import { renderPeople } from '../../identity/import.people.js';
import type { Migration } from '../migrate.js';

/**
 * Each person's intelligence answer rendered as JSON text (answers.ts `renderPerson`), so that E6 puts a
 * whole-field-set answer together from two text columns instead of reading and serialising thirty. NULL: not
 * rendered yet (a person added or changed since); such a person is answered from their columns. Stores from
 * before this step are rendered here, once (about 2 s per 200,000 people).
 *
 * A change to what an answer holds or its order (a new field, another rendering) needs a step that sets
 * `answer_json` back to NULL, so that the next import or this function renders every person again.
 */
export const personAnswers: Migration = {
  version: 70,
  name: 'person-answers',
  up(db) {
    db.exec(`
      -- The person's intelligence members, JSON without braces ('' for none); NULL: not rendered.
      ALTER TABLE ref_people ADD COLUMN answer_json TEXT;
      -- The person's postal_address as JSON ('' when incomplete); NULL: not rendered.
      ALTER TABLE ref_people ADD COLUMN postal_json TEXT;
    `);
    renderPeople(db);
  },
};
