// The folders the jobs write in (a clean's output folder, a desktop job's `results/<id>/`): the sweep of the
// temporaries (outputs.ts) whose writer has stopped, and the lock by which a writer shows that it has not.
//
// A temporary's process id alone cannot tell that its writer stopped (issue 23: a kill followed at once by a
// rerun left the killed run's temporaries). So while a process writes in a folder it holds
// `.mailsieve-<pid>.lock` there, a lock the operating system drops with the process (service/store/processLock.ts).
// A temporary is stale when its writer's lock file is there and nobody holds it. Without a lock file (a short
// write outside a held folder: the CLI's state file, a report; or a writer of an earlier version) the
// process id decides, as before. A lock still held (the killed writer is still exiting) keeps its temporaries
// for now: the folder is swept again when this process's work in it ends, and by then the writer is gone.
import type Database from 'better-sqlite3';
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writerOfTemporary } from './outputs.js';
import { holdProcessLock, isProcessLockHeld, isProcessRunning } from '../../../service/store/processLock.js';

const LOCK = /^\.mailsieve-(\d+)\.lock$/;
const lockPathOf = (dir: string, pid: number) => join(dir, `.mailsieve-${pid}.lock`);

let nativeBinding: string | undefined;

/** better-sqlite3's addon built for this runtime (Electron's ABI differs from Node's): set by the desktop core. */
export function setOutputLockBinding(path: string | undefined): void {
  nativeBinding = path;
}

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
  return holdProcessLock(lockPathOf(dir, process.pid), { nativeBinding });
}

/** Whether the process `pid` that wrote temporaries in `dir` has stopped. */
function hasStopped(dir: string, pid: number, hasLockFile: boolean): boolean {
  if (!hasLockFile) return !isProcessRunning(pid);
  // Not readable as a lock (gone meanwhile, not a database, no SQLite for this runtime): the id decides.
  const held = isProcessLockHeld(lockPathOf(dir, pid), { nativeBinding });
  return held === undefined ? !isProcessRunning(pid) : !held;
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
