// Noticing that the service database changed, for the request path's caches of what it holds (the keys, the
// engagement score's activity data): a commit by another connection (another process: `mailsieve keys
// revoke`, `mailsieve data import`, the desktop's import worker) moves PRAGMA data_version, and this
// connection's own writes move total_changes().
import type { Database, Statement } from 'better-sqlite3';

/** How long a cache may go without asking whether the database changed. */
export const RECHECK_MS = 250;

/**
 * A count that moves when the database changed, asked of the database at most every `recheckMs`: reading
 * data_version takes the database's read lock (4–6 µs of system calls here, as much as the lookup a cache
 * saves), too much for every request. A change made by another process is therefore seen within `recheckMs`.
 */
export class ChangeWatch {
  private lastCheck = Number.NEGATIVE_INFINITY;
  private lastDataVersion = -1;
  private lastChanges = -1;
  private count = 0;
  private readonly dataVersion: Statement<[], number>;
  private readonly totalChanges: Statement<[], number>;

  constructor(
    db: Database,
    private readonly recheckMs = RECHECK_MS,
  ) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
  }

  /** The count of changes seen so far: a cache filled under another count is out of date. */
  generation(): number {
    const now = Date.now();
    if (now - this.lastCheck < this.recheckMs) return this.count;
    this.lastCheck = now;
    const dataVersion = this.dataVersion.get()!;
    const changes = this.totalChanges.get()!;
    if (dataVersion !== this.lastDataVersion || changes !== this.lastChanges) {
      this.lastDataVersion = dataVersion;
      this.lastChanges = changes;
      this.count++;
    }
    return this.count;
  }
}
