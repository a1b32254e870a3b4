// Every file the jobs write (a results file, each export, the CLI's state file) appears whole: it is written
// under a temporary name in the same folder and renamed to its final name once complete, so a crash or a kill
// leaves either the old file or the new one under the final name, never a torn one. A temporary name carries
// the writing process's id; a temporary left by a process that no longer runs is stale and removed at start.
import { readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fitBytes, MAX_FILE_NAME_BYTES } from '../../../shared/fileName.js';

/** The one suffix of temporary files: `<final name>.<pid>.mailsieve-part`. */
export const TEMPORARY_SUFFIX = '.mailsieve-part';
// A format writer's exporter keeps an idle `<temporary>.unused` beside its temporary: stale the same way.
const TEMPORARY = /\.(\d+)\.mailsieve-part(\.unused)?$/;

/**
 * Where `path` is written before it is complete. The final name is cut as needed so that the temporary name
 * still fits a file name (255 bytes), with room for `.unused`.
 */
export function temporaryPathOf(path: string): string {
  const suffix = `.${process.pid}${TEMPORARY_SUFFIX}`;
  const name = fitBytes(basename(path), MAX_FILE_NAME_BYTES - suffix.length - '.unused'.length);
  return join(dirname(path), `${name}${suffix}`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary files in `dir` left by processes that stopped before renaming them (this process's
 * own are in use). Answers the names removed.
 */
export function removeStaleTemporaries(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMPORARY.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || isRunning(pid)) continue;
    rmSync(join(dir, name), { force: true });
    removed.push(name);
  }
  return removed;
}

/** Writes a small file whole: the text under a temporary name, then renamed over `path`. */
export function writeFileWhole(path: string, text: string): void {
  const temporary = temporaryPathOf(path);
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}
