// The desktop's export of a job's stored results (the Results screen, History's re-export): the exporter run
// over the results file, into `results/<job>/exports/`.
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listFileExtension } from '../../../shared/api/list.js';
import type { ExportChoice } from '../../../shared/exports.js';
import type { JobRecord } from '../history/db.js';
import { exportFileName, exportResultsFile } from './exports.js';
import { removeStaleTemporaries } from './outputs.js';

export interface WrittenExport {
  readonly path: string;
  readonly fileName: string;
  readonly rows: number;
  readonly bytes: number;
}

/** The text extension of a results file: its own, or for a zip the list's text (`.txt` or `.csv`). */
export function resultsTextExtension(resultsName: string, uploadName: string): string {
  const extension = listFileExtension(resultsName);
  if (extension === '.zip' || extension === undefined)
    return listFileExtension(uploadName) === '.txt' ? '.txt' : '.csv';
  return extension;
}

export async function exportJobResults(
  job: Pick<JobRecord, 'id' | 'uploadName' | 'mapping' | 'originalHeader'>,
  results: { readonly path: string; readonly name: string },
  kind: ExportChoice,
  statuses: readonly string[],
  resultsDir: string,
): Promise<WrittenExport> {
  const dir = join(resultsDir, String(job.id), 'exports');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  removeStaleTemporaries(dir);
  const stem = results.name.replace(/\.(csv|txt|zip)$/i, '');
  const fileName = exportFileName(
    stem,
    kind === 'custom' ? statuses.join('+') : kind,
    resultsTextExtension(results.name, job.uploadName),
  );
  const path = join(dir, `${Date.now()}-${fileName}`);
  const summary = await exportResultsFile(results.path, results.name, job.mapping.delimiter, [
    { name: 'export', path, spec: { kind, statuses, columnNames: job.originalHeader } },
  ]);
  return { path, fileName, rows: summary.exported.export ?? 0, bytes: statSync(path).size };
}
