import { packAddressActivity } from '../../identity/import.activity.js';
import { renderPeople } from '../../identity/import.people.js';
import type { Migration } from '../migrate.js';

/**
 * Each person's intelligence answer rendered as JSON text (answers.ts `renderPerson`), so that E6 puts a
 * whole-field-set answer together from two text columns instead of reading and serialising thirty; and each
 * address's activity packed in one blob (store.ts `packActivity`) instead of a row per event. NULL: not
 * rendered or packed yet (a person or address added or changed since); such a person is answered from their
 * columns and rows. Stores from before this step are rendered here, once (about 5 s per 200,000 people).
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
      -- The address's events (store.ts packActivity); NULL: not packed.
      ALTER TABLE ref_emails ADD COLUMN activity_packed BLOB;
      -- An event written or removed unpacks its address; the next import packs it again.
      CREATE TRIGGER ref_activity_added AFTER INSERT ON ref_activity BEGIN
        UPDATE ref_emails SET activity_packed = NULL
         WHERE id = NEW.email_id AND activity_packed IS NOT NULL;
      END;
      CREATE TRIGGER ref_activity_removed AFTER DELETE ON ref_activity BEGIN
        UPDATE ref_emails SET activity_packed = NULL
         WHERE id = OLD.email_id AND activity_packed IS NOT NULL;
      END;
    `);
    renderPeople(db);
    packAddressActivity(db);
  },
};
