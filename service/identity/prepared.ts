// Answers prepared ahead (migration 0070): each person's intelligence answer rendered as JSON text and each
// address's activity packed in one blob, so that E6 answers a whole-field-set record from two text columns
// and a blob. An import writes people and events without them (it stays as fast as before); the service
// prepares them afterwards, in the background (preparer.ts, prepareWorker.ts). Until then a person is
// answered from their columns and rows: the same answer, more slowly.
import type { Database } from 'better-sqlite3';
import { packAddressActivity } from './import.activity.js';
import { renderPeople } from './import.people.js';

/** Prepares up to `max` people and up to `max` addresses; returns how many it prepared. */
export function prepareAnswers(db: Database, max = Number.POSITIVE_INFINITY): number {
  return renderPeople(db, max) + packAddressActivity(db, max);
}

/** People and addresses waiting to be prepared (the partial indexes of migration 0070 count them). */
export function answersWaiting(db: Database): { readonly people: number; readonly addresses: number } {
  const count = (sql: string) => db.prepare<[], number>(sql).pluck().get() ?? 0;
  return {
    people: count('SELECT count(*) FROM ref_people WHERE answer_json IS NULL'),
    addresses: count('SELECT count(*) FROM ref_emails WHERE activity_packed IS NULL'),
  };
}

/** Whether any person or address waits to be prepared: one probe of each partial index. */
export function hasAnswersWaiting(db: Database): boolean {
  const probe = (sql: string) => db.prepare(sql).get() !== undefined;
  return (
    probe('SELECT 1 FROM ref_people WHERE answer_json IS NULL LIMIT 1') ||
    probe('SELECT 1 FROM ref_emails WHERE activity_packed IS NULL LIMIT 1')
  );
}
