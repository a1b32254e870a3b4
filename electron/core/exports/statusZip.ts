// The zip of every status (issue #12): one export per status the results hold, written by the one exporter
// (jobs/exports.ts) in one pass, then put in one archive. Each file is shaped for import with the same
// choices (duplicates are removed within a status file).
import { createReadStream, createWriteStream, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { Zip, ZipDeflate } from 'fflate';
import { EXPORT_FORMAT_EXTENSIONS, type ExportChoices, type LeftOut } from '../../../shared/exportChoices.js';
import { exportResultsFile } from '../jobs/exports.js';
import { temporaryPathOf } from '../jobs/outputs.js';

/** Statuses of both vocabularies a results file may hold, in the order the Results screen shows them. */
const STATUSES = [
  'valid',
  'safetosend',
  'corrected',
  'unknown',
  'unverifiable',
  'catchall',
  'risky',
  'trap',
  'invalid',
] as const;

/** A fixed time for the archive's entries, so the same export gives the same zip. */
const ENTRY_TIME = new Date(Date.UTC(2000, 0, 1));

export interface StatusZip {
  readonly bytes: number;
  /** The files in the archive (statuses without rows have none). */
  readonly files: readonly { name: string; status: string; rows: number; leftOut: LeftOut }[];
}

/**
 * Writes `destination`, a zip with `<stem>-<status>.<ext>` for each status the results hold. `resultsName`:
 * the results file's name (a zip of results is read through). Appears whole (temporary name, then rename).
 */
export async function writeStatusZip(
  results: { readonly path: string; readonly name: string; readonly delimiter: string },
  options: {
    readonly destination: string;
    readonly choices: ExportChoices;
    readonly emailIndex: number;
    readonly stem: string;
    readonly columnNames?: readonly string[] | null;
  },
): Promise<StatusZip> {
  const { destination, choices, stem } = options;
  const work = mkdtempSync(join(dirname(destination), '.statuses-'));
  try {
    const extension = EXPORT_FORMAT_EXTENSIONS[choices.format];
    const requests = STATUSES.map((status) => ({
      name: status,
      path: join(work, `${stem}-${status}${extension}`),
      spec: {
        kind: 'custom' as const,
        statuses: [status],
        choices,
        emailIndex: options.emailIndex,
        columnNames: options.columnNames ?? null,
      },
    }));
    const summary = await exportResultsFile(results.path, results.name, results.delimiter, requests);
    const held = requests.filter((request) => (summary.exported[request.name] ?? 0) > 0);
    const temporary = temporaryPathOf(destination);
    const out = createWriteStream(temporary, { mode: 0o600 });
    const done = new Promise<void>((resolve, reject) => {
      out.once('error', reject);
      out.once('finish', resolve);
    });
    const failure: { error?: Error } = {};
    const zip = new Zip((error, data, final) => {
      if (error) failure.error = error;
      else out.write(data);
      if (final || error) out.end();
    });
    for (const request of held) {
      const entry = new ZipDeflate(request.path.slice(work.length + 1), { level: 6 });
      entry.mtime = ENTRY_TIME;
      zip.add(entry);
      for await (const chunk of createReadStream(request.path, { highWaterMark: 1 << 20 })) {
        entry.push(chunk as Uint8Array);
        if (out.writableNeedDrain) await once(out, 'drain');
      }
      entry.push(new Uint8Array(0), true);
    }
    zip.end();
    try {
      await done;
      if (failure.error) throw failure.error;
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
    renameSync(temporary, destination);
    return {
      bytes: statSync(destination).size,
      files: held.map((request) => ({
        name: request.path.slice(work.length + 1),
        status: request.name,
        rows: summary.exported[request.name] ?? 0,
        leftOut: summary.leftOut?.[request.name] ?? { duplicates: 0, role: 0, disposable: 0 },
      })),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
