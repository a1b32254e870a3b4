// How long a team server keeps a list: as on a single service (service/lists/backend/retention.ts), a list is
// deleted — its row, its input, its parts' results, its journal, its assembled files — `retainDays` after it
// completed (Results, Invalid or Error) or, report-only, after its reports were ready (Processed: a purchase not
// made by then is not waited for any longer). What nodes learnt of a domain goes once its TTL has passed. Every
// node sweeps every hour; a sweep done twice deletes nothing twice.
import type { Queryable } from './db.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes the lists completed (or Processed) more than `retainDays` before `now` and expired domain knowledge;
 * returns the lists deleted.
 */
export async function sweepPgLists(
  db: Queryable,
  retainDays: number,
  now: number = Date.now(),
): Promise<number[]> {
  const cutoff = new Date(now - retainDays * DAY_MS).toISOString();
  // The lists' blobs, parts and journal go with them (ON DELETE CASCADE).
  const { rows } = await db.query<{ id: string }>(
    `DELETE FROM lists WHERE status IN ('Results', 'Processed', 'Invalid', 'Error') AND finished_at IS NOT NULL
       AND finished_at < $1
     RETURNING id`,
    [cutoff],
  );
  await db.query(
    `DELETE FROM domain_knowledge WHERE expires_at < $1 AND (claimed_until IS NULL OR claimed_until < $1)`,
    [new Date(now).toISOString()],
  );
  await db.query(`DELETE FROM host_limits WHERE expires_at < $1`, [new Date(now).toISOString()]);
  return rows.map((row) => Number(row.id)).sort((a, b) => a - b);
}
