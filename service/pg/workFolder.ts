// The work folders of the nodes of a team server that share one data folder (several nodes on one machine, one
// per source address, as docs/team-server.md scales them). Each node works in a folder of its own,
// `lists/work/<pid>-<random>/`, and holds `lists/work/<pid>-<random>.lock` (service/store/processLock.ts) while
// it lives. A node starting removes only the folders whose owner has gone: the lock is there and nobody holds
// it, or (no lock: an owner that could not lock) no process of that id runs. Never the folder of a live node.
// An API node receives its uploads in `uploads/` of its folder (service/http/routes/list.ts), so the file of an
// upload cut short by the node's death (up to 1 GiB) goes with the folder, at the next start of a node.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { holdProcessLock, isProcessLockHeld, isProcessRunning } from '../store/processLock.js';

const FOLDER = /^(\d+)-[0-9a-f]+$/;

export interface WorkFolder {
  /** This node's own folder. */
  readonly path: string;
  /** Removes the folder and lets go of its lock. */
  release(): void;
}

/** Makes this node's work folder under `root` (lists/work of the data folder), after removing those of gone nodes. */
export function holdWorkFolder(root: string): WorkFolder {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const name = `${process.pid}-${randomBytes(6).toString('hex')}`;
  // The lock first, then the folder: a folder of a live node always has its lock beside it.
  const lock = holdProcessLock(join(root, `${name}.lock`));
  const path = join(root, name);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  removeGoneWork(root, name);
  return {
    path,
    release() {
      rmSync(path, { recursive: true, force: true });
      lock?.close();
      rmSync(join(root, `${name}.lock`), { force: true });
    },
  };
}

/** Removes the work folders under `root` whose nodes have gone (never `own`). Answers the names removed. */
export function removeGoneWork(root: string, own?: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const present = new Set(names);
  const removed: string[] = [];
  for (const name of names) {
    const owner = name.endsWith('.lock') ? name.slice(0, -5) : name;
    const match = FOLDER.exec(owner);
    if (!match || owner === own || removed.includes(owner)) continue;
    const lockPath = join(root, `${owner}.lock`);
    const held = present.has(`${owner}.lock`) ? isProcessLockHeld(lockPath) : undefined;
    const isGone = held === undefined ? !isProcessRunning(Number(match[1])) : !held;
    if (!isGone) continue;
    rmSync(join(root, owner), { recursive: true, force: true });
    // The lock last, so that a folder that could not be removed is judged by it again.
    rmSync(lockPath, { force: true });
    removed.push(owner);
  }
  return removed;
}
