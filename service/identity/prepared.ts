// Answers prepared ahead (migration 0070): each person's intelligence answer rendered as JSON text and each
// address's activity packed in one blob, so that E6 answers a whole-field-set record from two text columns
// and a blob. An import writes people and events without them (it stays as fast as before); the service
// prepares them afterwards, in the background (preparer.ts, prepareWorker.ts). Until then a person is
// answered from their columns and rows: the same answer, more slowly.
import type { Database } from 'better-sqlite3';
import { renderPerson } from './answers.js';
import { packActivity, unpackedActivity, unrenderedPeople } from './store.js';

/** People, or addresses, prepared per transaction. */
const BATCH = 1_000;

/**
 * Prepares up to `max` of what `read` finds waiting, BATCH at a time, each batch in one transaction;
 * returns how many it prepared.
 */
function prepareInBatches<T>(
  db: Database,
  max: number,
  read: (limit: number) => readonly T[],
  prepare: (item: T) => void,
): number {
  let prepared = 0;
  while (prepared < max) {
    const items = read(Math.min(BATCH, max - prepared));
    if (items.length === 0) break;
    db.transaction(() => items.forEach(prepare))();
    prepared += items.length;
  }
  return prepared;
}

/**
 * Renders the intelligence answer (answers.ts `renderPerson`, into `answer_json` and `postal_json`) of up
 * to `max` people not rendered yet: people an import added or changed (written with no rendering), or every
 * person of a store from before those columns. Returns how many it rendered.
 */
export function renderPeople(db: Database, max = Number.POSITIVE_INFINITY): number {
  const update = db.prepare<[string, string, number]>(
    'UPDATE ref_people SET answer_json = ?, postal_json = ? WHERE id = ?',
  );
  return prepareInBatches(
    db,
    max,
    (limit) => unrenderedPeople(db, limit),
    (person) => {
      const { members, postal } = renderPerson(person);
      update.run(members, postal, person.id);
    },
  );
}

/**
 * Packs the activity (store.ts `packActivity`, into `ref_emails.activity_packed`) of up to `max` addresses
 * not packed yet: those whose events an import changed (ActivityWriter unpacks an address in the transaction
 * that writes its events; every writer of `ref_activity` must), or every address of a store from before that
 * column. Returns how many it packed.
 */
export function packAddressActivity(db: Database, max = Number.POSITIVE_INFINITY): number {
  // An address with no events is packed as an empty blob, which better-sqlite3 binds as NULL.
  const update = db.prepare<[Buffer, number]>(
    "UPDATE ref_emails SET activity_packed = coalesce(?, X'') WHERE id = ?",
  );
  return prepareInBatches(
    db,
    max,
    (limit) => unpackedActivity(db, limit),
    ({ emailId, rows }) => update.run(packActivity(rows), emailId),
  );
}

/** Prepares up to `max` people and up to `max` addresses; returns how many it prepared. */
export function prepareAnswers(db: Database, max = Number.POSITIVE_INFINITY): number {
  return renderPeople(db, max) + packAddressActivity(db, max);
}

/** The people and the addresses waiting to be prepared, as the partial indexes of migration 0070 name them. */
const WAITING = {
  people: 'ref_people WHERE answer_json IS NULL',
  addresses: 'ref_emails WHERE activity_packed IS NULL',
} as const;

/** People and addresses waiting to be prepared (the partial indexes count them). */
export function answersWaiting(db: Database): { readonly people: number; readonly addresses: number } {
  const count = (rows: string) => db.prepare<[], number>(`SELECT count(*) FROM ${rows}`).pluck().get() ?? 0;
  return { people: count(WAITING.people), addresses: count(WAITING.addresses) };
}

/** Whether any person or address waits to be prepared: one probe of each partial index. */
export function hasAnswersWaiting(db: Database): boolean {
  const probe = (rows: string) => db.prepare(`SELECT 1 FROM ${rows} LIMIT 1`).get() !== undefined;
  return probe(WAITING.people) || probe(WAITING.addresses);
}
