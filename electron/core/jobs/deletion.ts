// Deleting a job deletes every copy of its list (issue 14): its results and exports (`results/<id>/`, which
// holds the job's own input copy too), the staged upload it was started from, and — for a job of the
// embedded service — the service's stored input and results of its list. The history row is the caller's.
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, rmSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

export interface DeletedJob {
  readonly id: number;
  readonly filePath: string;
  readonly fileSha256: string | null;
  readonly listId: number | null;
  readonly connectionKind: 'embedded' | 'provider';
  /** The results files of every version of the job (re-checks write new ones: results/recheckJob.ts). */
  readonly versionPaths?: readonly string[];
}

export interface DeletionPlaces {
  readonly resultsDir: string;
  readonly stagingDir: string;
  /** The embedded service, started if need be, for a job that ran on it. */
  readonly embedded: () => Promise<{ deleteList?(listId: number): void }>;
}

const statOf = (path: string): Stats | undefined => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Staged uploads (`staging/<file id>/<name>`) that are the job's input: the same file, or the same bytes. */
async function stagedCopiesOf(job: DeletedJob, stagingDir: string): Promise<string[]> {
  const input = statOf(job.filePath);
  const found: string[] = [];
  let folders: string[];
  try {
    folders = readdirSync(stagingDir);
  } catch {
    return found;
  }
  for (const folder of folders) {
    const dir = join(stagingDir, folder);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const stats = statOf(join(dir, name));
      if (!stats?.isFile()) continue;
      const isSameFile = input !== undefined && stats.ino === input.ino && stats.dev === input.dev;
      const isSameBytes =
        !isSameFile &&
        job.fileSha256 !== null &&
        (input === undefined || stats.size === input.size) &&
        (await sha256Of(join(dir, name))) === job.fileSha256;
      if (isSameFile || isSameBytes) found.push(dir);
    }
  }
  return found;
}

/** Removes every file of `job` (see above). */
export async function deleteJobFiles(job: DeletedJob, places: DeletionPlaces): Promise<void> {
  const staged = await stagedCopiesOf(job, places.stagingDir);
  for (const dir of staged) rmSync(dir, { recursive: true, force: true });
  rmSync(join(places.resultsDir, String(job.id)), { recursive: true, force: true });
  for (const path of job.versionPaths ?? []) rmSync(path, { force: true });
  if (job.connectionKind === 'embedded' && job.listId !== null)
    (await places.embedded()).deleteList?.(job.listId);
}
