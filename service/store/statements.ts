// Statements prepared once per database: preparing parses and plans the SQL again at every call (about a tenth
// of a millisecond), which requests that come often (a key's lookup, a list's status, an upload's limits) should
// not pay each time.
import type Database from 'better-sqlite3';

const prepared = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * The statement of `sql` on `db`, prepared at its first use. Shared by every caller of the same SQL: a caller
 * must not change its mode (`pluck`, `raw`, `expand`); write that SQL's own statement instead.
 */
export function statement<P extends unknown[] = unknown[]>(
  db: Database.Database,
  sql: string,
): Database.Statement<P> {
  let byText = prepared.get(db);
  if (!byText) prepared.set(db, (byText = new Map<string, Database.Statement>()));
  let made = byText.get(sql);
  if (!made) byText.set(sql, (made = db.prepare(sql)));
  return made as Database.Statement<P>;
}
