// Run again: a cancelled or failed job starts over as a new job with the same file, mapping, options and
// connection. The file sent is the one the old job kept (its own copy, or the file it read in place); the new
// job takes its own copy, so deleting either job leaves the other whole.
import { copyFileSync, existsSync, linkSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { insertJob, setJobFileFacts, type HistoryDb, type JobRecord } from '../history/db.js';

export class RerunRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A new job like `job` (which must have ended cancelled or failed); answers its id. It is not started. */
export function rerunJob(db: HistoryDb, resultsDir: string, job: JobRecord): number {
  if (job.status !== 'cancelled' && job.status !== 'failed')
    throw new RerunRefused('invalid-input', 'Only a cancelled or failed job can run again.');
  if (!existsSync(job.filePath))
    throw new RerunRefused(
      'file-unreadable',
      `The file this job sent (“${job.fileName}”) is no longer on disk: add it again on New job.`,
    );
  const id = insertJob(db, {
    fileName: job.fileName,
    filePath: job.filePath,
    uploadName: job.uploadName,
    uploadHeader: job.uploadHeader,
    fileSize: job.fileSize,
    fileSha256: job.fileSha256,
    fileFormat: job.fileFormat,
    fileEncoding: job.fileEncoding,
    mapping: job.mapping,
    options: job.options,
    connectionKind: job.connectionKind,
    connectionUrl: job.connectionUrl,
    ...(job.originalHeader ? { originalHeader: job.originalHeader } : {}),
    ...(job.partIndex !== null && job.partCount !== null
      ? { partIndex: job.partIndex, partCount: job.partCount }
      : {}),
    ...(job.rows !== null ? { rows: job.rows } : {}),
  });
  // The old job's own copy (under its results folder) is copied for the new one.
  if (job.filePath.startsWith(join(resultsDir, String(job.id)))) {
    const dir = join(resultsDir, String(id), 'input');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const target = join(dir, basename(job.filePath));
    try {
      linkSync(job.filePath, target);
    } catch {
      copyFileSync(job.filePath, target);
    }
    db.prepare('UPDATE jobs SET file_path = ? WHERE id = ?').run(target, id);
  }
  if (job.fileSha256) setJobFileFacts(db, id, { sha256: job.fileSha256, rows: job.rows });
  return id;
}
