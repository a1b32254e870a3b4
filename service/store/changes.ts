// Noticing that the service database changed, for the request path's caches of what it holds (the keys, the
// engagement score's activity data): a commit by another connection (another process: `mailsieve keys
// revoke`, `mailsieve data import`, the desktop's import worker) moves PRAGMA data_version, and this
// connection's own writes move total_changes().
import type { Database, Statement } from 'better-sqlite3';
import { performance } from 'node:perf_hooks';

/** How long a cache may go without asking whether the database changed. */
export const RECHECK_MS = 250;

/**
 * The request path's clock for rechecks: a count of TICK_MS ticks, moved by one timer of the process. Reading
 * the system clock costs about 0.1 µs here (a virtual machine's clock), and E1 asked it on every request for
 * the key cache alone; reading this count costs nothing. A recheck is therefore due up to TICK_MS late.
 * The timer stops once nobody has read the count for IDLE_TICKS, and the next read starts it again, the ticks
 * missed meanwhile added from the clock: an idle node (a machine runs several) is not woken 40 times a second.
 */
const TICK_MS = 25;
const IDLE_TICKS = 40;
let ticks = 0;
/** Ticks since the count was last read. */
let unread = 0;
let ticker: NodeJS.Timeout | undefined;
/** When the ticker stopped (`performance.now()`). */
let stoppedAt = 0;

function tick(): void {
  ticks++;
  if (++unread < IDLE_TICKS) return;
  clearInterval(ticker);
  ticker = undefined;
  stoppedAt = performance.now();
}

/** The tick count, the ticker started if it had stopped. */
function readTicks(): number {
  unread = 0;
  if (ticker === undefined) {
    ticks += Math.ceil((performance.now() - stoppedAt) / TICK_MS);
    ticker = setInterval(tick, TICK_MS).unref();
  }
  return ticks;
}

/** Whether the clock's timer runs (for tests). */
export const tickerRunning = (): boolean => ticker !== undefined;

/**
 * A count that moves when the database changed, asked of the database at most every `recheckMs`: reading
 * data_version takes the database's read lock (4–6 µs of system calls here, as much as the lookup a cache
 * saves), too much for every request. A change made by another process is therefore seen within `recheckMs`
 * (and a tick). With `recheckMs` 0 the database is asked every time.
 */
export class ChangeWatch {
  private lastCheck = Number.NEGATIVE_INFINITY;
  private readonly recheckTicks: number;
  private lastDataVersion = -1;
  private lastChanges = -1;
  private count = 0;
  private readonly dataVersion: Statement<[], number>;
  private readonly totalChanges: Statement<[], number>;

  constructor(db: Database, recheckMs = RECHECK_MS) {
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
    this.recheckTicks = Math.ceil(recheckMs / TICK_MS);
  }

  /** The count of changes seen so far: a cache filled under another count is out of date. */
  generation(): number {
    const now = this.recheckTicks > 0 ? readTicks() : 0;
    if (now - this.lastCheck < this.recheckTicks) return this.count;
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
