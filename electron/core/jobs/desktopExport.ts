// The desktop's export of a job's stored results (the Results screen, History's re-export): the exporter run
// over the results file, into `results/<job>/exports/`.
import { mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { outputNameFor } from '../../../shared/fileName.js';
import { listFileExtension } from '../../../shared/api/list.js';
import {
  EXPORT_FORMAT_EXTENSIONS,
  defaultExportChoices,
  type ExportChoices,
  type LeftOut,
} from '../../../shared/exportChoices.js';
import type { ExportChoice } from '../../../shared/exports.js';
import { isEveryRow, type RowFilter } from '../../../shared/rowFilter.js';
import type { JobRecord } from '../history/db.js';
import type { BudgetOutcome } from '../../../shared/outcomes.js';
import { exportWithBudget, type MeasuredRisks } from './budget.js';
import { exportFileName, exportResultsFile, type ExportSpec } from './exports.js';
import { removeStaleTemporaries } from './outputFolder.js';
import { takePreparedExport } from './preparedExport.js';

export interface WrittenExport {
  readonly path: string;
  readonly fileName: string;
  readonly rows: number;
  readonly bytes: number;
  /** What the choices left out (exports for import). */
  readonly leftOut?: LeftOut;
  /** An export planned against a bounce budget: its expected rate and the rows it left out (budget.ts). */
  readonly budget?: BudgetOutcome;
}

/** "Keep the expected bounce rate under X%": the budget in percent, and this user's measured risks. */
export interface ExportBudget {
  readonly maxRatePercent: number;
  readonly measured: MeasuredRisks;
}

/** The text extension of a results file: its own, or for a zip the list's text (`.txt` or `.csv`). */
export function resultsTextExtension(resultsName: string, uploadName: string): string {
  const extension = listFileExtension(resultsName);
  if (extension === '.zip' || extension === undefined)
    return listFileExtension(uploadName) === '.txt' ? '.txt' : '.csv';
  return extension;
}

/**
 * What a desktop export of `kind` holds (the Results headline counts the default one with the same spec,
 * electron/core/results.ts): `all` is the results as they are unless choices are given; the other kinds are
 * shaped for import with their default choices. Needs the mapping's email column to shape.
 */
export function desktopExportSpec(
  job: Pick<JobRecord, 'mapping' | 'originalHeader'>,
  kind: ExportChoice,
  statuses: readonly string[],
  choices?: ExportChoices,
  filter?: RowFilter,
): ExportSpec {
  const emailIndex = job.mapping.roles.indexOf('email');
  const shaped =
    emailIndex < 0 ? undefined : (choices ?? (kind === 'all' ? undefined : defaultExportChoices(kind)));
  return {
    kind,
    statuses,
    columnNames: job.originalHeader,
    ...(shaped && emailIndex >= 0 ? { choices: shaped } : {}),
    ...(emailIndex >= 0 ? { emailIndex } : {}),
    ...(filter && !isEveryRow(filter) ? { filter } : {}),
  };
}

export async function exportJobResults(
  job: Pick<JobRecord, 'id' | 'uploadName' | 'mapping' | 'originalHeader'>,
  results: { readonly path: string; readonly name: string },
  kind: ExportChoice,
  statuses: readonly string[],
  resultsDir: string,
  /** Exports for import: the choices (absent: the kind's defaults). Needs the mapping's email column. */
  choices?: ExportChoices,
  /** A drill-down's rows only ("Export these rows"), named `<stem>-rows`. */
  filter?: RowFilter,
  /** Planned against a bounce budget (the safe and clean kinds, budget.ts). */
  budget?: ExportBudget,
): Promise<WrittenExport> {
  const spec = desktopExportSpec(job, kind, statuses, choices, filter);
  const shaped = spec.choices;
  const dir = join(resultsDir, String(job.id), 'exports');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const folder of readdirSync(dir, { withFileTypes: true }))
    if (folder.isDirectory()) removeStaleTemporaries(join(dir, folder.name));
  // Each export in a folder of its own (History keeps every export, several of one kind), under its name.
  const folder = mkdtempSync(join(dir, `${Date.now()}-`));
  if (kind === 'zip') return exportStatusZip(job, results, folder, choices);
  const fileName = exportFileName(
    job.uploadName,
    filter ? 'rows' : kind === 'custom' ? statuses.join('+') : kind,
    shaped && shaped.format !== 'csv'
      ? EXPORT_FORMAT_EXTENSIONS[shaped.format]
      : resultsTextExtension(results.name, job.uploadName),
  );
  const path = join(folder, fileName);
  if (budget) {
    const written = await exportWithBudget(
      { path: results.path, name: results.name, delimiter: job.mapping.delimiter },
      { name: 'export', path, spec },
      budget.maxRatePercent,
      budget.measured,
    );
    const leftOut = written.summary.leftOut?.export;
    return {
      path,
      fileName,
      rows: written.summary.exported.export ?? 0,
      bytes: statSync(path).size,
      ...(leftOut ? { leftOut } : {}),
      budget: written.budget,
    };
  }
  // The default export, written while the results downloaded, is moved into place when it is this one.
  const prepared = takePreparedExport(join(resultsDir, String(job.id)), spec, results, path);
  if (prepared)
    return {
      path,
      fileName,
      rows: prepared.rows,
      bytes: statSync(path).size,
      ...(prepared.leftOut ? { leftOut: prepared.leftOut } : {}),
    };
  const summary = await exportResultsFile(results.path, results.name, job.mapping.delimiter, [
    { name: 'export', path, spec },
  ]);
  const leftOut = summary.leftOut?.export;
  return {
    path,
    fileName,
    rows: summary.exported.export ?? 0,
    bytes: statSync(path).size,
    ...(leftOut ? { leftOut } : {}),
  };
}

/** What several exports left out, added up (the zip of every status). */
function sumLeftOut(parts: readonly LeftOut[]): LeftOut {
  return parts.reduce(
    (sum, part) => ({
      duplicates: sum.duplicates + part.duplicates,
      role: sum.role + part.role,
      disposable: sum.disposable + part.disposable,
    }),
    { duplicates: 0, role: 0, disposable: 0 },
  );
}

/** The zip of every status (exports/statusZip.ts): one file per status the results hold, shaped alike. */
async function exportStatusZip(
  job: Pick<JobRecord, 'uploadName' | 'mapping' | 'originalHeader'>,
  results: { readonly path: string; readonly name: string },
  folder: string,
  choices: ExportChoices | undefined,
): Promise<WrittenExport> {
  const emailIndex = job.mapping.roles.indexOf('email');
  if (emailIndex < 0) throw new Error('A zip of every status needs the list’s email column.');
  const fileName = exportFileName(job.uploadName, 'statuses', '.zip');
  const path = join(folder, fileName);
  // The files inside are named after the list, as `clean --export zip` names them (the same bytes).
  const upload = outputNameFor(job.uploadName);
  // The zip writer (fflate) is loaded by the first zip export, not with the app.
  const { writeStatusZip } = await import('../exports/statusZip.js');
  const zip = await writeStatusZip(
    { path: results.path, name: results.name, delimiter: job.mapping.delimiter },
    {
      destination: path,
      choices: choices ?? defaultExportChoices('zip'),
      emailIndex,
      stem: basename(upload, extname(upload)),
      columnNames: job.originalHeader,
    },
  );
  return {
    path,
    fileName,
    rows: zip.files.reduce((total, file) => total + file.rows, 0),
    bytes: zip.bytes,
    leftOut: sumLeftOut(zip.files.map((file) => file.leftOut)),
  };
}
