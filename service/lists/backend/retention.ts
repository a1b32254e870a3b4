// How long a list's stored files are kept: its input and results are contact data, ≈190 MB per million rows.
// A list is deleted (row and files) `retainDays` after it completed (Results, Invalid or Error) or, report-only,
// after its reports were ready (Processed: a purchase not made by then is not waited for any longer); a folder of
// no list (one whose list was deleted while it ran, or by a key's revocation in another process) goes too.
// `mailsieve serve --retain-days N` sets the days (default 30), and so does the embedded service.
import { readdirSync, rmSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import type { ServiceDb } from '../../store/db.js';
import { listsRoot } from '../names.js';
import { deleteStoredList } from './store.js';

export const DEFAULT_RETAIN_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How often a running service looks for lists past their retention. */
export const RETENTION_SWEEP_MS = 60 * 60 * 1000;
/** A folder of no list is left alone this long: an upload creates the list's row and folder one after another. */
const ORPHAN_GRACE_MS = 60 * 60 * 1000;

/**
 * Deletes the lists completed (or Processed) more than `retainDays` before `now` and folders of no list;
 * returns the lists deleted.
 */
export function sweepListFiles(
  db: ServiceDb,
  dataDir: string,
  retainDays: number,
  now: number = Date.now(),
): number[] {
  const cutoff = new Date(now - retainDays * DAY_MS).toISOString();
  const old = db
    .prepare(
      `SELECT id FROM lists WHERE status IN ('Results', 'Processed', 'Invalid', 'Error') AND finished_at IS NOT NULL
         AND finished_at < ?`,
    )
    .pluck()
    .all(cutoff) as number[];
  for (const id of old) deleteStoredList(db, dataDir, id);
  const known = new Set((db.prepare('SELECT id FROM lists').pluck().all() as number[]).map(String));
  for (const entry of listFolders(dataDir)) {
    if (known.has(entry.name)) continue;
    const path = join(listsRoot(dataDir), entry.name);
    if (now - statSync(path).mtimeMs > ORPHAN_GRACE_MS) rmSync(path, { recursive: true, force: true });
  }
  return old;
}

function listFolders(dataDir: string): Dirent[] {
  try {
    return readdirSync(listsRoot(dataDir), { withFileTypes: true }).filter(
      (entry) => entry.isDirectory() && /^\d+$/.test(entry.name),
    );
  } catch {
    return [];
  }
}

function bytesUnder(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) total += bytesUnder(child);
    else if (entry.isFile()) total += statSync(child).size;
  }
  return total;
}

/** The disk the stored lists use: how many list folders, and their bytes. */
export function listFilesUsage(dataDir: string): { lists: number; bytes: number } {
  const folders = listFolders(dataDir);
  let bytes = 0;
  for (const entry of folders) bytes += bytesUnder(join(listsRoot(dataDir), entry.name));
  return { lists: folders.length, bytes };
}
