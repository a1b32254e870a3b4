// The job runner through the desktop core, against a real service on loopback: a whole run with progress
// events, and resuming after a restart from each step (upload, following, download).
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, pollList } from '../../../shared/api/client.js';
import { defaultExportChoices } from '../../../shared/exportChoices.js';
import type { AppEvent, EventPayload, JobDetail, JobProgress } from '../../../shared/desktop/contract.js';
import type { ColumnRole } from '../../../shared/desktop/constants.js';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { jobCountsOf } from '../../../electron/core/history/counts.js';
import { desktopExportSpec } from '../../../electron/core/jobs/desktopExport.js';
import { countResults } from '../../../electron/core/results/resultsFile.js';
import {
  HISTORY_DB_FILE,
  getJob,
  insertJob,
  openHistoryDb,
  setJobListId,
  setJobStatus,
} from '../../../electron/core/history/db.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

const LIST =
  'email,name\njane@example.com,Jane\nbad-address,Bad\njohn@gmial.com,John\njane@example.com,Jane\n';

function coreOn(home: string, service: TestService, key: string, deferred = false): DesktopCore {
  return createDesktopCore({
    home,
    secrets: new FileSecretStore(home),
    mode: 'browser',
    hasNativeDialogs: false,
    version: 'test',
    startEmbedded: () =>
      Promise.resolve({ baseUrl: service.url, apiKey: key, close: () => Promise.resolve() }),
    localPollIntervalMs: 100,
    isResumeDeferred: deferred,
  });
}

/** Adds `path` and starts cleaning it with `roles` (comma-separated, with a header): the job's id. */
async function startList(
  core: DesktopCore,
  path: string,
  roles: ColumnRole[],
  split = false,
): Promise<number> {
  const staged = await core.handle('files:add-path', { path });
  if (!staged.ok) throw new Error(staged.error.message);
  const started = await core.handle('jobs:start', {
    fileId: (staged.value as { fileId: string }).fileId,
    mapping: { delimiter: ',', header: true, roles },
    options: { reportOnly: false, split },
  });
  if (!started.ok) throw new Error(started.error.message);
  return (started.value as { jobIds: number[] }).jobIds[0];
}

async function finished(core: DesktopCore, jobId: number): Promise<JobDetail> {
  for (;;) {
    const reply = await core.handle('jobs:get', { jobId });
    if (!reply.ok) throw new Error(reply.error.message);
    const job = reply.value as JobDetail;
    if (!['queued', 'uploading', 'processing', 'downloading'].includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('jobs', () => {
  let service: TestService;
  let key: string;
  let home: ReturnType<typeof tempDir>;
  let listFile: string;
  beforeAll(async () => {
    service = await startTestService();
    key = service.key({ services: ['validation', 'corrections'] });
  });
  afterAll(() => service.close());
  beforeEach(() => {
    home = tempDir();
    listFile = join(home.path, 'list.csv');
    writeFileSync(listFile, LIST);
  });
  afterEach(() => home.remove());

  it('runs a list to completion with progress events, results on disk and the reporting recorded', async () => {
    const rows = 200_000;
    const big = join(home.path, 'big.csv');
    writeFileSync(
      big,
      'email\n' + Array.from({ length: rows }, (_, i) => `user${i}@example.com`).join('\n') + '\n',
    );
    const core = coreOn(home.path, service, key);
    const events: { event: AppEvent; payload: unknown }[] = [];
    core.on((event, payload) => events.push({ event, payload }));
    try {
      const jobId = await startList(core, big, ['email']);
      const job = await finished(core, jobId);
      expect(job.status).toBe('completed');
      expect(job.hasResults).toBe(true);
      expect(job.rows).toBe(rows);
      expect((job.reporting as { statuses: Record<string, number> }).statuses.Unknown).toBe(rows);
      // The Results numbers were counted by the download pass: kept with the job as it completed, and the
      // same as a count of the stored file.
      const db = openHistoryDb(join(home.path, HISTORY_DB_FILE));
      try {
        const record = getJob(db, jobId)!;
        const stored = jobCountsOf(db, jobId, record.resultsPath!);
        expect(stored).toMatchObject({ rows, statuses: { unknown: rows }, duplicates: 0 });
        expect(stored).toEqual(
          await countResults(
            record.resultsPath!,
            record.resultsName!,
            ',',
            desktopExportSpec(record, stored!.exportKind as 'clean' | 'safe', []),
            stored!.unknown === 0,
          ),
        );
      } finally {
        db.close();
      }
      expect(job.timeline.map((t) => t.status)).toEqual([
        'queued',
        'uploading',
        'processing',
        'downloading',
        'completed',
      ]);
      const progress = events.filter((e) => e.event === 'job:progress').map((e) => e.payload as JobProgress);
      const uploads = progress.filter((p) => p.status === 'uploading');
      expect(uploads.some((p) => p.totalBytes > 0 && p.sentBytes > 0)).toBe(true);
      const processing = progress.filter((p) => p.status === 'processing' && p.total > 0);
      expect(processing.at(-1)).toMatchObject({
        completed: rows,
        total: rows,
        listStatus: expect.any(String) as string,
      });
      expect(progress.some((p) => p.rate !== null && p.rate > 0 && p.etaSeconds !== null)).toBe(true);
      expect(
        events.some(
          (e) =>
            e.event === 'jobs:changed' && (e.payload as EventPayload<'jobs:changed'>).jobIds.includes(jobId),
        ),
      ).toBe(true);
    } finally {
      await core.close();
    }
  });

  it('has the default export ready when a job completes: the first export of it is that file, the same bytes as one written afresh', async () => {
    const core = coreOn(home.path, service, key);
    try {
      const jobId = await startList(core, listFile, ['email', 'ignore']);
      expect((await finished(core, jobId)).status).toBe('completed');
      const jobDir = join(home.path, 'results', String(jobId));
      expect(readdirSync(jobDir)).toEqual(
        expect.arrayContaining(['prepared-export', 'prepared-export.json']),
      );
      const db = openHistoryDb(join(home.path, HISTORY_DB_FILE));
      const kind = jobCountsOf(db, jobId, getJob(db, jobId)!.resultsPath!)!.exportKind as 'clean' | 'safe';
      db.close();
      const exportOf = async (choices?: object) => {
        const reply = await core.handle('jobs:export', { jobId, kind, ...(choices ? { choices } : {}) });
        if (!reply.ok) throw new Error(reply.error.message);
        const { fileName, rows } = reply.value as { fileName: string; rows: number };
        const exports = join(jobDir, 'exports');
        const folder = readdirSync(exports)
          .filter((name) => existsSync(join(exports, name, fileName)))
          .sort()
          .at(-1)!;
        return { rows, bytes: readFileSync(join(exports, folder, fileName)) };
      };
      // The first: the prepared file, moved into place.
      const first = await exportOf();
      expect(readdirSync(jobDir)).not.toContain('prepared-export');
      expect(readdirSync(jobDir)).not.toContain('prepared-export.json');
      // The second is written from the results: the same rows and bytes.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const second = await exportOf();
      expect(second.rows).toBe(first.rows);
      expect(second.bytes.equals(first.bytes)).toBe(true);
      expect(first.bytes.toString('utf8')).toContain('jane@example.com');
      // Other choices are another export, written afresh.
      const tsv = await exportOf({ ...defaultExportChoices(kind), format: 'tsv' });
      expect(tsv.bytes.toString('utf8')).toContain('\t');
    } finally {
      await core.close();
    }
  });

  it('drops a prepared export that can no longer be taken, and those an earlier run of the app left', async () => {
    let core = coreOn(home.path, service, key);
    const jobIds: number[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const jobId = await startList(core, listFile, ['email', 'ignore']);
        expect((await finished(core, jobId)).status).toBe('completed');
        jobIds.push(jobId);
      }
      const preparedIn = (jobId: number) =>
        readdirSync(join(home.path, 'results', String(jobId))).filter((name) => name.startsWith('prepared'));
      expect(preparedIn(jobIds[0])).toEqual(['prepared-export', 'prepared-export.json']);

      // The first job's results change (as a re-check's new version does): its prepared export is of no use.
      const db = openHistoryDb(join(home.path, HISTORY_DB_FILE));
      const job = getJob(db, jobIds[0])!;
      const kind = jobCountsOf(db, jobIds[0], job.resultsPath!)!.exportKind as 'clean' | 'safe';
      db.close();
      const later = new Date(Date.now() + 60_000);
      utimesSync(job.resultsPath!, later, later);
      const reply = await core.handle('jobs:export', { jobId: jobIds[0], kind });
      if (!reply.ok) throw new Error(reply.error.message);
      expect((reply.value as { rows: number }).rows).toBeGreaterThan(0);
      expect(preparedIn(jobIds[0])).toEqual([]);

      // The app starts again: the second job's, never asked for, is gone too; its export is written afresh.
      expect(preparedIn(jobIds[1])).toHaveLength(2);
      await core.close();
      core = coreOn(home.path, service, key);
      expect(preparedIn(jobIds[1])).toEqual([]);
      const again = await core.handle('jobs:export', { jobId: jobIds[1], kind });
      if (!again.ok) throw new Error(again.error.message);
      expect((again.value as { rows: number }).rows).toBeGreaterThan(0);
    } finally {
      await core.close();
    }
  });

  it('resumes after a restart: an interrupted upload starts again, a submitted list is followed, a finished one downloads', async () => {
    const db = openHistoryDb(join(home.path, HISTORY_DB_FILE));
    const base = {
      fileName: 'list.csv',
      filePath: listFile,
      uploadName: 'list.csv',
      uploadHeader: true,
      fileSize: LIST.length,
      fileSha256: null,
      fileFormat: 'csv' as const,
      fileEncoding: 'utf-8',
      mapping: { delimiter: ',', header: true, roles: ['email' as const, 'ignore' as const] },
      options: { reportOnly: false, split: false },
      connectionKind: 'embedded' as const,
      connectionUrl: null,
    };
    // 1. The app stopped during the upload.
    const uploading = insertJob(db, base);
    setJobStatus(db, uploading, 'uploading');
    // 2. The list was submitted; the app stopped while following it.
    const client = createClient({ baseUrl: service.url, apiKey: key });
    const submitted = await client.submitList(
      { name: 'list.csv', body: LIST },
      { name: 'list.csv', header: true, delimiter: ',', email_column: 1 },
    );
    if (!submitted.ok) throw new Error(submitted.error.message);
    const following = insertJob(db, base);
    setJobListId(db, following, submitted.value.list_id);
    setJobStatus(db, following, 'processing');
    // 3. The list was complete; the app stopped before the download finished.
    const again = await client.submitList(
      { name: 'list.csv', body: LIST },
      { name: 'list.csv', header: true, delimiter: ',', email_column: 1 },
    );
    if (!again.ok) throw new Error(again.error.message);
    const reference = await pollList(client, again.value.list_id, { intervalMs: 100 });
    if (!reference.ok) throw new Error(reference.error.message);
    const downloading = insertJob(db, base);
    setJobListId(db, downloading, again.value.list_id);
    setJobStatus(db, downloading, 'downloading');
    db.close();

    const core = coreOn(home.path, service, key);
    try {
      const jobs = await Promise.all([uploading, following, downloading].map((id) => finished(core, id)));
      for (const job of jobs) {
        expect(job.status).toBe('completed');
        expect(job.reporting).toEqual(reference.value.services.email_validation?.reporting);
        expect(job.duplicates).toBe(2);
      }
      expect(jobs[0].timeline.map((t) => t.message)).toContain('The upload starts again.');
      expect(jobs[1].listId).toBe(submitted.value.list_id);
      const results = await client.results(again.value.list_id);
      if (!results.ok) throw new Error(results.error.message);
      const expected = await new Response(results.value.body).text();
      const exported = await core.handle('jobs:export', { jobId: downloading, kind: 'all' });
      if (!exported.ok) throw new Error(exported.error.message);
      expect(readFileSync(core.exportFile((exported.value as { id: number }).id)!.path, 'utf8')).toBe(
        expected,
      );
    } finally {
      await core.close();
    }
  });

  it('picks a job up where it was when the app closed mid-run', async () => {
    const first = coreOn(home.path, service, key);
    const jobId = await startList(first, listFile, ['email', 'first_name']);
    await first.close();
    const second = coreOn(home.path, service, key);
    try {
      const job = await finished(second, jobId);
      expect(job.status).toBe('completed');
      expect(job.mapping.roles).toEqual(['email', 'first_name']);
    } finally {
      await second.close();
    }
  });

  it('sends a list within the limit whole, under its own name, when Split is on (split only when over it)', async () => {
    const core = coreOn(home.path, service, key, true);
    try {
      // The mapper asks to split by default: whether the list is over the limit, the exact count says.
      const jobId = await startList(core, listFile, ['email', 'ignore'], true);
      const job = await finished(core, jobId);
      expect(job.status).toBe('completed');
      expect(job.part).toBeNull();
      expect(job.options.split).toBe(false);
      const db = openHistoryDb(join(home.path, HISTORY_DB_FILE));
      try {
        expect(getJob(db, jobId)?.uploadName).toBe('list.csv');
      } finally {
        db.close();
      }
    } finally {
      await core.close();
    }
  });

  it('cancels a job and deletes a job with its files', async () => {
    const core = coreOn(home.path, service, key, true);
    try {
      const jobId = await startList(core, listFile, ['email', 'ignore']);
      const job = await finished(core, jobId);
      expect(job.status).toBe('completed');
      const deleted = await core.handle('jobs:delete', { jobId });
      expect(deleted).toEqual({ ok: true, value: { deleted: true } });
      expect(await core.handle('jobs:get', { jobId })).toMatchObject({
        ok: false,
        error: { code: 'not-found' },
      });
      expect(await core.handle('jobs:list', {})).toMatchObject({ ok: true, value: { total: 0 } });
    } finally {
      await core.close();
    }
  });
});
