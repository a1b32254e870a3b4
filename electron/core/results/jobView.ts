// What the Results screen reads of a finished job, offline: its numbers (counted once by resultsFile.ts and kept
// in the history DB), its rows a page at a time for any drill-down, and the why of each row (the list's
// explain CSV, kept with the job when it finishes as its evidence: `results/<job>/explain.csv.gz`, evidence.ts,
// deleted with the job's folder; older jobs kept it plain as `explain.csv`).
import { isEveryRow, type RowFilter } from '../../../shared/rowFilter.js';
import type { Preview, ResultsCounts } from '../../../shared/desktop/contract.js';
import { jobChecksOf, jobVersions } from '../history/jobVersions.js';
import { jobCountsOf, setJobCounts } from '../history/counts.js';
import type { HistoryDb, JobRecord } from '../history/db.js';
import { desktopExportSpec } from '../jobs/desktopExport.js';
import type { CountsRequest } from '../jobs/counts.js';
import { downloadExplanations } from '../jobs/listOnline.js';
import {
  PromiseCache,
  countResults,
  fileKey,
  indexExplain,
  indexRows,
  readIndexedRows,
  readWhys,
  readWhysByAddress,
  type ExplainIndex,
  type RowIndex,
} from './resultsFile.js';
import {
  EVIDENCE_FILE,
  evidencePathOf,
  foundEvidenceFile,
  keepEvidence,
  keptEvidencePathOf,
  recheckExplainPath,
} from './evidence.js';

export const EXPLAIN_FILE = EVIDENCE_FILE;

/** The why of the addresses a re-check sent (version `version` of the results), beside that version's file. */
export { recheckExplainPath };

export interface ResultsFile {
  readonly path: string;
  readonly name: string;
}

/** The level a job ran with: recorded since issue #11; older local jobs ran offline. */
function levelOf(db: HistoryDb, job: JobRecord): string {
  return jobChecksOf(db, job.id)?.level ?? (job.connectionKind === 'embedded' ? 'offline' : 'provider');
}

/** The desktop's default export for a job: `clean` after offline checks, else `safe` (the Export dialog's). */
export function defaultExportKind(db: HistoryDb, job: JobRecord): 'clean' | 'safe' {
  return levelOf(db, job) === 'offline' ? 'clean' : 'safe';
}

export interface JobResultsReader {
  counts(job: JobRecord, results: ResultsFile): Promise<ResultsCounts>;
  /** What the download pass counts for a job (its numbers ready when it completes); none without validation. */
  countsRequest(job: JobRecord): CountsRequest | undefined;
  page(
    job: JobRecord,
    results: ResultsFile,
    filter: RowFilter,
    offset: number,
    limit: number,
  ): Promise<Preview>;
  /** Saves the list's why per row beside the results (a job of the local service with online checks). */
  saveExplanations(job: JobRecord, service: { baseUrl: string; apiKey: string }): Promise<void>;
  /** Settles once the why per row of a job being saved is saved (at once when none is being saved). */
  whenExplained(jobId: number): Promise<void>;
  /** Forgets a deleted job's cached indexes. */
  forget(job: JobRecord): void;
}

export function jobResultsReader(db: HistoryDb, resultsDir: string): JobResultsReader {
  const counting = new Map<string, Promise<ResultsCounts>>();
  const indexes = new PromiseCache<RowIndex>(6);
  const explains = new PromiseCache<ExplainIndex>(2);
  const rechecked = new PromiseCache<ReadonlyMap<string, string>>(2);
  const saving = new Map<number, Promise<void>>();
  // The Results numbers count what the desktop's default export writes, at the level the job ran with.
  const countsRequestOf = (job: JobRecord): CountsRequest => ({
    spec: desktopExportSpec(job, defaultExportKind(db, job), []),
    isOffline: levelOf(db, job) === 'offline',
  });

  async function whysOf(
    job: JobRecord,
    numbers: readonly number[],
    addresses: readonly string[],
  ): Promise<Pick<Preview, 'whys' | 'whyNote'>> {
    await saving.get(job.id)?.catch(() => undefined);
    // Re-checks, newest first, up to the version shown: a re-checked address reads its latest answer.
    const versions = jobVersions(db, job.id);
    const shown = versions.findIndex((version) => version.resultsPath === job.resultsPath);
    const rechecks: ReadonlyMap<string, string>[] = [];
    for (const version of versions.slice(1, shown < 0 ? versions.length : shown + 1).reverse()) {
      const path = foundEvidenceFile(recheckExplainPath(version.resultsPath, version.version));
      if (path) rechecks.push(await rechecked.get(fileKey(path), () => readWhysByAddress(path)));
    }
    const later = (at: number): string | undefined => {
      const address = (addresses[at] ?? '').trim();
      for (const whys of rechecks) {
        const why = whys.get(address);
        if (why !== undefined) return why;
      }
      return undefined;
    };
    const level = versions[0]?.checks.level ?? levelOf(db, job);
    const path = foundEvidenceFile(evidencePathOf(resultsDir, job.id));
    if (path) {
      const index = await explains.get(fileKey(path), () => indexExplain(path));
      const first = readWhys(path, index, numbers);
      return { whys: first.map((why, at) => later(at) ?? why), whyNote: null };
    }
    if (rechecks.length > 0)
      return {
        whys: numbers.map((_, at) => later(at) ?? ''),
        whyNote:
          level === 'offline'
            ? 'Rows not re-checked were checked offline: syntax only (the code says why).'
            : null,
      };
    const note =
      level === 'offline'
        ? 'Checked offline: syntax only (the code says why).'
        : level === 'provider'
          ? 'Checked by the provider: the code says why.'
          : 'The why of each row was not saved with this job: the code says why.';
    return { whys: null, whyNote: note };
  }

  return {
    countsRequest: (job) =>
      job.options.services.includes('email_validation') ? countsRequestOf(job) : undefined,

    counts(job, results) {
      const stored = jobCountsOf(db, job.id, results.path);
      if (stored) return Promise.resolve(stored);
      const key = `${job.id}|${results.path}`;
      const found = counting.get(key);
      if (found) return found;
      {
        const request = countsRequestOf(job);
        const running = countResults(
          results.path,
          results.name,
          job.mapping.delimiter,
          request.spec,
          request.isOffline,
        )
          .then((counts) => {
            setJobCounts(db, job.id, results.path, counts);
            return counts;
          })
          .finally(() => counting.delete(key));
        counting.set(key, running);
        return running;
      }
    },

    async page(job, results, filter, offset, limit) {
      // The rows "Export these rows" writes for this filter (the same spec: jobs:export with the filter).
      const spec = desktopExportSpec(job, 'all', [], undefined, filter);
      const index = await indexes.get(`${job.id}|${fileKey(results.path)}|${JSON.stringify(filter)}`, () =>
        indexRows(results.path, results.name, job.mapping.delimiter, spec),
      );
      const rows = await readIndexedRows(
        results.path,
        results.name,
        job.mapping.delimiter,
        index,
        offset,
        limit,
      );
      const header = index.header;
      const names = job.originalHeader;
      const columns = names ? header.map((column, i) => names[i] ?? column) : [...header];
      const at = (name: string) => header.lastIndexOf(name);
      const status = at('Validation Status');
      const emailIndex = job.mapping.roles.indexOf('email');
      const numbers = rows.map((row) => row.number);
      const why =
        status >= 0 && job.options.services.includes('email_validation')
          ? await whysOf(
              job,
              numbers,
              rows.map((row) => (emailIndex >= 0 ? (row.fields[emailIndex] ?? '') : '')),
            )
          : { whys: null, whyNote: null };
      return {
        columns,
        rows: rows.map((row) => row.fields),
        hasMore: offset + rows.length < index.length,
        total: index.length,
        offset,
        numbers,
        layout: {
          email: status >= 0 && emailIndex < status ? emailIndex : -1,
          status,
          code: at('Validation Code'),
          domainType: at('Domain Type'),
          validEmail: at('Valid Email'),
        },
        ...why,
        ...(isEveryRow(filter) && status < 0 ? { whys: null, whyNote: null } : {}),
      };
    },

    saveExplanations(job, service) {
      if (job.listId === null || levelOf(db, job) === 'offline' || levelOf(db, job) === 'provider')
        return Promise.resolve();
      const listId = job.listId;
      const saved = downloadExplanations(
        service.baseUrl,
        service.apiKey,
        listId,
        keptEvidencePathOf(resultsDir, job.id),
        keepEvidence,
      )
        .then(() => undefined)
        .finally(() => saving.delete(job.id));
      saving.set(job.id, saved);
      return saved;
    },

    whenExplained(jobId) {
      return (saving.get(jobId) ?? Promise.resolve()).catch(() => undefined);
    },

    forget(job) {
      indexes.forget(`${job.id}|`);
    },
  };
}
