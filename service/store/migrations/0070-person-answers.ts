import type { Migration } from '../migrate.js';

/**
 * Answers prepared ahead (service/identity/prepared.ts): each person's intelligence answer rendered as JSON
 * text (answers.ts `renderPerson`), so that E6 puts a whole-field-set answer together from two text columns
 * instead of reading and serialising thirty; and each address's activity packed in one blob (store.ts
 * `packActivity`) instead of a row per event. NULL: not prepared yet (a person or address added or changed
 * since); such a person is answered from their columns and rows, as before. The service prepares them in the
 * background (preparer.ts); the partial indexes find the ones waiting without reading the tables.
 *
 * A change to what an answer holds or its order (a new field, another rendering) needs a step that sets
 * `answer_json` back to NULL, so that every person is rendered again.
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
      -- The address's events (store.ts packActivity); NULL: not packed. A writer of ref_activity sets it
      -- to NULL in the same transaction (import.activity.ts ActivityWriter).
      ALTER TABLE ref_emails ADD COLUMN activity_packed BLOB;
    `);
    createAnswerIndexes(db);
  },
};

/** The partial indexes of the people and addresses whose answers are not prepared, created when missing. */
export function createAnswerIndexes(db: { exec(sql: string): unknown }): void {
  db.exec(`
    CREATE INDEX IF NOT EXISTS ref_people_unrendered ON ref_people (id) WHERE answer_json IS NULL;
    CREATE INDEX IF NOT EXISTS ref_emails_unpacked ON ref_emails (id) WHERE activity_packed IS NULL;
  `);
}

/** The indexes createAnswerIndexes makes (a bulk load drops them and builds them once at the end). */
export const ANSWER_INDEXES = ['ref_people_unrendered', 'ref_emails_unpacked'] as const;
