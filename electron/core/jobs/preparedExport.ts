// The desktop's default export, written while the results download (the same pass that counts the Results
// screen's numbers by the same rule), so that the export a user most likely asks for is ready when the job
// completes: `jobs:export` with the default kind and choices then moves the prepared file into place instead
// of reading the whole results again (about a second for 1,000,000 rows). It is kept beside the results in the
// job's folder, with a note of what it was made from (the results file's path, size and time); any other
// export, or results that changed since (a re-check's new version), runs the exporter as before. A prepared
// export that can no longer be taken is dropped, and so is every one left by an earlier run of the app.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { LeftOut } from '../../../shared/exportChoices.js';
import type { ExportRequest, ExportSpec } from './exports.js';
import { writeFileWhole } from './outputs.js';

/** The export's name in the engine's summary. */
export const PREPARED_EXPORT = 'prepared-default';

interface PreparedNote {
  readonly resultsPath: string;
  readonly resultsName: string;
  readonly resultsBytes: number;
  readonly resultsModified: number;
  /** The spec, as JSON: the export asked for must be this one. */
  readonly spec: string;
  readonly rows: number;
  readonly leftOut?: LeftOut;
}

const pathsOf = (jobDir: string) => ({
  data: join(jobDir, 'prepared-export'),
  note: join(jobDir, 'prepared-export.json'),
});

/** The export the download writes: the default export's spec, into the job's folder. */
export function preparedExportRequest(jobDir: string, spec: ExportSpec): ExportRequest {
  return { name: PREPARED_EXPORT, path: pathsOf(jobDir).data, spec };
}

/** Notes what the prepared export was made from, once the results are complete. */
export function notePreparedExport(
  jobDir: string,
  spec: ExportSpec,
  results: { readonly path: string; readonly name: string },
  written: { readonly rows: number; readonly leftOut?: LeftOut },
): void {
  const { data, note } = pathsOf(jobDir);
  if (!existsSync(data)) return;
  const stat = statSync(results.path);
  const content: PreparedNote = {
    resultsPath: results.path,
    resultsName: results.name,
    resultsBytes: stat.size,
    resultsModified: stat.mtimeMs,
    spec: JSON.stringify(spec),
    rows: written.rows,
    ...(written.leftOut ? { leftOut: written.leftOut } : {}),
  };
  writeFileWhole(note, JSON.stringify(content));
}

/**
 * Moves the prepared export to `destination` when it is the export asked for (the same spec) of these very
 * results; answers what it holds, or undefined (nothing moved) otherwise.
 */
export function takePreparedExport(
  jobDir: string,
  spec: ExportSpec,
  results: { readonly path: string; readonly name: string },
  destination: string,
): { readonly rows: number; readonly leftOut?: LeftOut } | undefined {
  const { data, note } = pathsOf(jobDir);
  if (!existsSync(note) || !existsSync(data)) return undefined;
  let prepared: PreparedNote;
  try {
    prepared = JSON.parse(readFileSync(note, 'utf8')) as PreparedNote;
  } catch {
    return undefined;
  }
  const stat = existsSync(results.path) ? statSync(results.path) : undefined;
  const isSame =
    prepared.spec === JSON.stringify(spec) &&
    prepared.resultsPath === results.path &&
    prepared.resultsName === results.name &&
    stat?.size === prepared.resultsBytes &&
    stat.mtimeMs === prepared.resultsModified;
  if (!isSame) {
    // Made from results that changed since (a re-check's new version): it can never be taken.
    if (prepared.spec === JSON.stringify(spec)) dropFiles(jobDir);
    return undefined;
  }
  renameSync(data, destination);
  rmSync(note, { force: true });
  return { rows: prepared.rows, ...(prepared.leftOut ? { leftOut: prepared.leftOut } : {}) };
}

function dropFiles(jobDir: string): void {
  const { data, note } = pathsOf(jobDir);
  rmSync(note, { force: true });
  rmSync(data, { force: true });
}

/**
 * Drops the prepared exports an earlier run of the app left (at start, before any job runs): one is for the
 * export asked for right after a job completes, and would otherwise hold ~90% of its results' size on disk
 * until the job is deleted. A later export is written afresh, as any other.
 */
export function dropPreparedExports(resultsDir: string): void {
  if (!existsSync(resultsDir)) return;
  for (const entry of readdirSync(resultsDir, { withFileTypes: true }))
    if (entry.isDirectory()) dropFiles(join(resultsDir, entry.name));
}
