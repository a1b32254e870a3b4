// A lock a process holds for as long as it lives, that other processes on the machine (or sharing the folder)
// can test: a small SQLite database under an exclusive lock (locking_mode = EXCLUSIVE, taken by a write
// transaction), which the operating system drops with the process, even one killed outright:
// - Linux and macOS: SQLite's POSIX advisory locks (fcntl), released as the dying process's files close,
//   before it shows as a zombie. On a network folder they are the file server's locks (NFS lockd, SMB).
// - Windows: LockFileEx byte-range locks, released once the process has terminated.
// A process id alone cannot tell that its owner stopped (a process killed a moment ago still answers
// kill(pid, 0) until it is reaped, and a reused id answers for another program): the lock can. Used by the
// sweep of a job's temporaries (electron/core/jobs/outputFolder.ts) and by the work folders of team nodes
// sharing a data folder (service/pg/workFolder.ts).
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';

export interface ProcessLockOptions {
  /** better-sqlite3's addon built for this runtime (Electron's ABI differs from Node's). */
  readonly nativeBinding?: string | undefined;
}

const bindingOption = (options: ProcessLockOptions) =>
  options.nativeBinding ? { nativeBinding: options.nativeBinding } : {};

/**
 * Takes the lock at `path` (creating the file) and holds it until the answer is closed or the process ends.
 * Undefined when it could not be taken (another process holds it, or the folder does not allow it).
 */
export function holdProcessLock(
  path: string,
  options: ProcessLockOptions = {},
): Database.Database | undefined {
  let db: Database.Database | undefined;
  try {
    // Waits out another process's test reading the file at this moment.
    db = new Database(path, { timeout: 2000, ...bindingOption(options) });
    db.pragma('locking_mode = EXCLUSIVE');
    // No journal file beside it (better-sqlite3's defensive mode refuses journal_mode = OFF).
    db.pragma('journal_mode = MEMORY');
    // The write transaction takes the exclusive lock; EXCLUSIVE mode keeps it until the connection closes.
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    return db;
  } catch (error) {
    db?.close();
    // A lock file nobody holds reads as a stopped owner's: removed, unless another process holds it (this
    // id's process on another machine that shares the folder).
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') {
      try {
        rmSync(path, { force: true });
      } catch {
        // Windows: still open in another process; its next sweep removes it.
      }
    }
    return undefined;
  }
}

/**
 * Whether a process holds the lock at `path`: true (held), false (nobody holds it: its owner stopped), or
 * undefined (not readable as a lock: gone meanwhile, not a database, no SQLite for this runtime). Never call
 * it on a lock of this process: closing any handle on it would drop the lock (POSIX locks are the process's,
 * not the handle's).
 */
export function isProcessLockHeld(path: string, options: ProcessLockOptions = {}): boolean | undefined {
  try {
    const db = new Database(path, {
      readonly: true,
      fileMustExist: true,
      timeout: 0,
      ...bindingOption(options),
    });
    try {
      // Readable only when no process holds the lock.
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      return false;
    } finally {
      db.close();
    }
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return true;
    return undefined;
  }
}

/** Whether a process of this id runs on this machine. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
