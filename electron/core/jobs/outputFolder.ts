// The folders the jobs write in (a clean's output folder, a desktop job's `results/<id>/`): the sweep of the
// temporaries (outputs.ts) whose writer has stopped, and the lock by which a writer shows that it has not.
//
// A temporary's process id alone cannot tell that its writer stopped: a process killed a moment ago still
// answers kill(pid, 0) while it exits and until its parent reaps it, and a reused id answers for another
// program (issue 23: a kill followed at once by a rerun left the killed run's temporaries). So while a process
// writes in a folder it holds `.mailsieve-<pid>.lock` there, a small SQLite database under an exclusive lock
// (locking_mode = EXCLUSIVE, taken by a write transaction) that the operating system drops with the process:
// - Linux and macOS: SQLite's POSIX advisory locks (fcntl), released as the dying process's files close,
//   before it shows as a zombie. On a network folder they are the file server's locks (NFS lockd, SMB).
// - Windows: LockFileEx byte-range locks, released once the process has terminated (the system may take a
//   moment to do so under load).
// A temporary is stale when its writer's lock file is there and nobody holds it. Without a lock file (a short
// write outside a held folder: the CLI's state file, a report; or a writer of an earlier version) the
// process id decides, as before. A lock still held (the killed writer is still exiting) keeps its temporaries
// for now: the folder is swept again when this process's work in it ends, and by then the writer is gone.
import Database from 'better-sqlite3';
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writerOfTemporary } from './outputs.js';

const LOCK = /^\.mailsieve-(\d+)\.lock$/;
const lockPathOf = (dir: string, pid: number) => join(dir, `.mailsieve-${pid}.lock`);

let nativeBinding: string | undefined;

/** better-sqlite3's addon built for this runtime (Electron's ABI differs from Node's): set by the desktop core. */
export function setOutputLockBinding(path: string | undefined): void {
  nativeBinding = path;
}

const bindingOption = () => (nativeBinding ? { nativeBinding } : {});

interface Hold {
  /** Undefined when the folder could not be locked: this process's temporaries are then judged by its id. */
  readonly lock: Database.Database | undefined;
  holders: number;
}

/** The folders this process holds, by resolved path. */
const holds = new Map<string, Hold>();

/**
 * Holds `dir` (which must exist) as a folder this process writes in, and sweeps its stale temporaries. The
 * answer lets go: it sweeps again (a writer killed just before this one began has gone by then), then drops
 * the lock once every holder in this process has let go.
 */
export function holdOutputFolder(dir: string): () => void {
  const key = resolve(dir);
  let hold = holds.get(key);
  if (!hold) {
    hold = { lock: lockFolder(key), holders: 0 };
    holds.set(key, hold);
  }
  const held = hold;
  held.holders++;
  removeStaleTemporaries(key);
  let isHeld = true;
  return () => {
    if (!isHeld) return;
    isHeld = false;
    removeStaleTemporaries(key);
    if (--held.holders > 0) return;
    holds.delete(key);
    if (!held.lock) return;
    held.lock.close();
    removeQuietly(lockPathOf(key, process.pid));
  };
}

function lockFolder(dir: string): Database.Database | undefined {
  const path = lockPathOf(dir, process.pid);
  let db: Database.Database | undefined;
  try {
    // Waits out another process's sweep reading the file at this moment.
    db = new Database(path, { timeout: 2000, ...bindingOption() });
    db.pragma('locking_mode = EXCLUSIVE');
    // No journal file beside it (better-sqlite3's defensive mode refuses journal_mode = OFF).
    db.pragma('journal_mode = MEMORY');
    // The write transaction takes the exclusive lock; EXCLUSIVE mode keeps it until the connection closes.
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    return db;
  } catch (error) {
    db?.close();
    // A lock file nobody holds reads as a stopped writer's: removed, unless another process holds it (this
    // id's process on another machine that shares the folder).
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') removeQuietly(path);
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process `pid` that wrote temporaries in `dir` has stopped. */
function hasStopped(dir: string, pid: number, hasLockFile: boolean): boolean {
  if (!hasLockFile) return !isRunning(pid);
  try {
    const db = new Database(lockPathOf(dir, pid), {
      readonly: true,
      fileMustExist: true,
      timeout: 0,
      ...bindingOption(),
    });
    try {
      // Readable only when no process holds the lock.
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      return true;
    } finally {
      db.close();
    }
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return false;
    // Not readable as a lock (gone meanwhile, not a database, no SQLite for this runtime): the id decides.
    return !isRunning(pid);
  }
}

function removeQuietly(path: string): boolean {
  try {
    rmSync(path, { force: true });
    return true;
  } catch {
    // Windows: still open in another process (a sweep reading it); the next sweep removes it.
    return false;
  }
}

/**
 * Removes the temporary files in `dir` whose writers have stopped, with their lock files (this process's own
 * are in use). Answers the names removed.
 */
export function removeStaleTemporaries(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const writers = new Map<number, { temporaries: string[]; lock?: string }>();
  const writer = (pid: number) => {
    let found = writers.get(pid);
    if (!found) writers.set(pid, (found = { temporaries: [] }));
    return found;
  };
  for (const name of names) {
    const pid = writerOfTemporary(name);
    if (pid !== undefined) writer(pid).temporaries.push(name);
    const lock = LOCK.exec(name);
    if (lock) writer(Number(lock[1])).lock = name;
  }
  const removed: string[] = [];
  for (const [pid, { temporaries, lock }] of writers) {
    // Never this process's own lock: closing any handle on it here would drop the lock (POSIX locks are the
    // process's, not the handle's).
    if (pid === process.pid || !hasStopped(dir, pid, lock !== undefined)) continue;
    let isEveryRemoved = true;
    for (const name of temporaries)
      if (removeQuietly(join(dir, name))) removed.push(name);
      else isEveryRemoved = false;
    // The lock file last, so that whatever could not be removed is judged by it again.
    if (lock && isEveryRemoved && removeQuietly(join(dir, lock))) removed.push(lock);
  }
  return removed;
}
