// `mailsieve clean` keeps its run in the job history of the app home (MAILSIEVE_HOME), as the app keeps its
// own: a completed job pointing at the results the CLI wrote, with the checks level it ran at and, for a list
// the local service checked online, the evidence of every verdict (results/<job>/explain.csv.gz, kept compact as the app keeps it). So a campaign's
// bounces can be measured against it later (`mailsieve outcomes import FILE --job ID`), the app lists it in
// History, and a later run can be compared with it. `--no-history` leaves the history alone.
import { statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { ListResource } from '../../shared/api/list.js';
import type { JobChecks } from '../../shared/desktop/checks.js';
import { LIST_SERVICE_KEYS } from '../../shared/api/list.js';
import { appHome, serviceDataDir } from '../core/home.js';
import {
  HISTORY_DB_FILE,
  insertJob,
  openHistoryDb,
  setJobDocument,
  setJobListId,
  setJobResults,
  setJobStatus,
} from '../core/history/db.js';
import { setJobChecks } from '../core/history/jobVersions.js';
import { keptEvidencePathOf } from '../core/results/evidence.js';

export interface CleanRun {
  /** The list file as it was sent (an .xlsx list's CSV). */
  readonly file: string;
  readonly delimiter: string;
  readonly header: boolean;
  /** 1-based; 0 when the list has no email column. */
  readonly emailColumn: number;
  readonly columnCount: number;
  readonly list: ListResource;
  readonly resultsPath: string;
  readonly duplicates: number | null;
  /** The embedded service's data folder, or undefined for a provider's service at `baseUrl`. */
  readonly dataDir: string | undefined;
  readonly baseUrl: string;
  readonly checks: JobChecks;
  /** The file's SHA-256 (hex), begun with the run (sha256FileAside): it is known again by it. */
  readonly fileSha256: Promise<string>;
}

/**
 * Records a completed clean as a job of the app home's history; answers its id and where its evidence goes
 * (the caller downloads the list's explanations there when the list has them).
 */
export async function recordCleanJob(run: CleanRun): Promise<{ id: number; evidencePath: string }> {
  const home = appHome();
  const db = openHistoryDb(join(home, HISTORY_DB_FILE));
  try {
    const roles = Array.from({ length: Math.max(run.columnCount, run.emailColumn) }, (_, i) =>
      i === run.emailColumn - 1 ? ('email' as const) : ('ignore' as const),
    );
    // A list of another data folder than the app's own service has an id the app's service does not know.
    const isAppService = run.dataDir !== undefined && resolve(run.dataDir) === resolve(serviceDataDir(home));
    const name = basename(run.file);
    const id = insertJob(db, {
      fileName: name,
      filePath: resolve(run.file),
      uploadName: name,
      uploadHeader: run.header,
      fileSize: statSync(run.file).size,
      fileSha256: await run.fileSha256,
      fileFormat: /\.zip$/i.test(name) ? 'zip' : /\.txt$/i.test(name) ? 'txt' : 'csv',
      fileEncoding: null,
      mapping: { delimiter: run.delimiter, header: run.header, roles },
      connectionKind: run.dataDir !== undefined ? 'embedded' : 'provider',
      connectionUrl: run.dataDir !== undefined ? null : run.baseUrl,
      options: {
        reportOnly: false,
        split: false,
        services: LIST_SERVICE_KEYS.filter((key) => key in run.list.services),
      },
    });
    if (isAppService) setJobListId(db, id, run.list.list_id);
    setJobDocument(
      db,
      id,
      run.list,
      run.list.records ?? 0,
      run.list.services.email_validation?.reporting ?? null,
    );
    setJobResults(db, id, {
      path: resolve(run.resultsPath),
      name: basename(run.resultsPath),
      duplicates: run.duplicates,
    });
    setJobChecks(db, id, run.checks);
    setJobStatus(db, id, 'completed', 'Cleaned with the mailsieve command line');
    return { id, evidencePath: keptEvidencePathOf(join(home, 'results'), id) };
  } finally {
    db.close();
  }
}
