// What the reference store holds (`mailsieve data status`), and clearing it (`mailsieve data clear`).
import type { Database } from 'better-sqlite3';
import { bounceStatus, clearBounces, type BounceStatus } from './bounces.js';
import { answersWaiting } from './prepared.js';

export interface DatasetRow {
  id: number;
  kind: 'people' | 'activity' | 'demo';
  name: string;
  started_at: string;
  finished_at: string | null;
  rows_read: number;
  rows_imported: number;
  rows_rejected: number;
}

export interface ReferenceDataStatus {
  readonly people: number;
  readonly emails: number;
  readonly events: number;
  readonly sources: number;
  readonly datasets: readonly DatasetRow[];
  /** People and addresses whose answers the service has yet to prepare (prepared.ts). */
  readonly waiting: { readonly people: number; readonly addresses: number };
  /** The imported bounces (bounces.ts). */
  readonly bounces: BounceStatus;
}

const countOf = (db: Database, table: string) =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

export function referenceDataStatus(db: Database): ReferenceDataStatus {
  return {
    people: countOf(db, 'ref_people'),
    emails: countOf(db, 'ref_emails'),
    events: countOf(db, 'ref_activity'),
    sources: countOf(db, 'ref_sources'),
    datasets: db.prepare('SELECT * FROM ref_datasets ORDER BY id').all() as DatasetRow[],
    waiting: answersWaiting(db),
    bounces: bounceStatus(db),
  };
}

/** Deletes every person, address, event, source, dataset and bounce. */
export function clearReferenceData(db: Database): void {
  db.transaction(() => {
    for (const table of ['ref_activity', 'ref_emails', 'ref_people', 'ref_sources', 'ref_datasets'])
      db.exec(`DELETE FROM ${table}`);
    clearBounces(db);
  })();
}
