// The job runner through the desktop core, against a real service on loopback: a whole run with progress
// events, resuming after a restart from each step (upload, following, download), and the parts of a split
// file against a busy service: turns, refusals waited out as Retry-After asks, a refusal until tomorrow.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, pollList } from '../../../shared/api/client.js';
import { defaultExportChoices } from '../../../shared/exportChoices.js';
import type { AppEvent, EventPayload, JobDetail, JobProgress } from '../../../shared/desktop/contract.js';
import type { ColumnRole } from '../../../shared/desktop/constants.js';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { jobCountsOf } from '../../../electron/core/history/counts.js';
import { desktopExportSpec } from '../../../electron/core/jobs/desktopExport.js';
import { ServiceSlots, refusalWait } from '../../../electron/core/jobs/engine.js';
import { runListJob, type JobEvent } from '../../../electron/core/jobs/runner.js';
import { prepareUpload } from '../../../electron/core/files/prepare.js';
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
        // The file's SHA-256, hashed on a thread of its own while the upload was prepared, is the file's.
        expect(record.fileSha256).toBe(createHash('sha256').update(readFileSync(big)).digest('hex'));
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

// ---------------------------------------------------------------------------------------------------------
// A busy service: a key with a team server's limits before the body (`--max-uploads`, `--max-bytes-day`;
// docs/team-server.md "Limits"), and the parts of a split file started together, as `jobs:start` starts them.

const ROWS_PER_PART = 30_000;

/**
 * A list of `parts` × ROWS_PER_PART rows split into its parts (files/prepare.ts, a small part limit), one
 * queued job per part, as `jobs:start` makes them: their ids. A core opened on this home starts them together.
 */
async function splitList(home: string, parts: number): Promise<number[]> {
  const path = join(home, 'big.csv');
  const rows = parts * ROWS_PER_PART;
  writeFileSync(
    path,
    `email,name\n${Array.from({ length: rows }, (_, i) => `p${i}@example.com,Person ${i}`).join('\n')}\n`,
  );
  const mapping = { delimiter: ',', header: true, roles: ['email' as const, 'first_name' as const] };
  const prepared = await prepareUpload({ path, name: 'big.csv', size: statSync(path).size }, mapping, {
    split: true,
    dir: join(home, 'parts'),
    headerNames: ['email', 'name'],
    partLimit: ROWS_PER_PART,
  });
  expect(prepared).toHaveLength(parts);
  const db = openHistoryDb(join(home, HISTORY_DB_FILE));
  try {
    return prepared.map((part, index) =>
      insertJob(db, {
        fileName: 'big.csv',
        filePath: part.path,
        uploadName: part.name,
        uploadHeader: part.header,
        fileSize: part.size,
        fileSha256: null,
        fileFormat: 'csv',
        fileEncoding: 'utf-8',
        mapping,
        options: { reportOnly: false, split: true },
        connectionKind: 'embedded',
        connectionUrl: null,
        partIndex: index + 1,
        partCount: parts,
        ...(part.rows !== null ? { rows: part.rows } : {}),
      }),
    );
  } finally {
    db.close();
  }
}

/** The parts' jobs once ended: each completed, every row of its part checked (its upload arrived whole). */
async function partsFinished(core: DesktopCore, ids: readonly number[]): Promise<JobDetail[]> {
  const jobs = await Promise.all(ids.map((id) => finished(core, id)));
  for (const job of jobs) {
    expect(job.status, job.message ?? '').toBe('completed');
    expect((job.reporting as { statuses: Record<string, number> }).statuses.Unknown).toBe(ROWS_PER_PART);
  }
  return jobs;
}

const messagesOf = (jobs: readonly JobDetail[]) =>
  jobs.flatMap((job) => job.timeline.flatMap((entry) => (entry.message ? [entry.message] : [])));

describe('the parts of a split file against a busy service', () => {
  let service: TestService;
  let home: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.close());
  beforeEach(() => {
    home = tempDir();
  });
  afterEach(() => home.remove());

  it("sends the parts two at a time, within a key's two uploads at once: every part completes, none refused", async () => {
    const key = service.key({ maxUploads: 2 });
    const ids = await splitList(home.path, 4);
    const core = coreOn(home.path, service, key);
    try {
      const messages = messagesOf(await partsFinished(core, ids));
      expect(messages.filter((message) => message.includes('HTTP 429'))).toEqual([]);
      // The parts past the first two waited for a turn, and said so.
      expect(messages).toContain(
        'Waiting for its turn to upload: this app sends 2 files at once to a service; the others are under way.',
      );
    } finally {
      await core.close();
    }
  }, 60_000);

  it('waits out a refusal of uploads at once as long as Retry-After asks, then sends the part again, whole', async () => {
    const key = service.key({ maxUploads: 1 });
    const ids = await splitList(home.path, 3);
    const core = coreOn(home.path, service, key);
    try {
      const jobs = await partsFinished(core, ids);
      const waited = jobs.filter((job) => job.timeline.some((entry) => entry.message?.includes('HTTP 429')));
      expect(waited.length).toBeGreaterThanOrEqual(1);
      for (const job of waited) {
        const at = job.timeline.findIndex((entry) => entry.message?.includes('HTTP 429'));
        const refused = job.timeline[at];
        // The service's words, and when the job tries again; the job stays in its upload meanwhile.
        expect(refused.status).toBe('uploading');
        expect(refused.message).toMatch(
          /^Waiting for the service: Too many uploads at once: this key may send 1 list at a time, and 1 is still arriving\. Send this list when one of them has been received\. \(HTTP 429\) Uploading again in 3[0-4] s\.$/,
        );
        // Never sooner than the 30 s the service's Retry-After asked for.
        const submitted = job.timeline.slice(at).find((entry) => entry.status === 'processing')!;
        expect(Date.parse(submitted.at) - Date.parse(refused.at)).toBeGreaterThanOrEqual(30_000);
      }
    } finally {
      await core.close();
    }
  }, 150_000);

  /** Minutes left in the UTC day: within its last minutes, a refusal until midnight is waited for. */
  const minutesToMidnightUtc = () => {
    const now = new Date();
    return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 60_000;
  };

  it.skipIf(minutesToMidnightUtc() < 6)(
    "fails a job refused until tomorrow at once, in the service's words, rather than waiting until midnight UTC",
    async () => {
      const key = service.key({ maxBytesDay: 100 });
      const file = join(home.path, 'list.csv');
      writeFileSync(file, `email\n${Array.from({ length: 50 }, (_, i) => `d${i}@example.com`).join('\n')}\n`);
      const events: JobEvent[] = [];
      const started = Date.now();
      const result = await runListJob({
        client: createClient({ baseUrl: service.url, apiKey: key }),
        file,
        params: { header: true, email_column: 1 },
        delimiter: ',',
        outDir: join(home.path, 'out'),
        exports: [],
        service: service.url,
        onEvent: (event) => events.push(event),
      });
      expect(result).toMatchObject({ ok: false, error: { code: 'upload-failed' } });
      expect(!result.ok && result.error.message).toMatch(
        /^The upload failed: Daily upload limit: this key may submit 100 bytes of lists a day \(UTC\), and this list is (?:at least )?\d+ bytes, more than a whole day allows\. Split it into smaller lists\. \(HTTP 429\)$/,
      );
      expect(events.filter((event) => event.phase === 'waiting')).toEqual([]);
      expect(Date.now() - started).toBeLessThan(5_000);
    },
  );
});

describe('the waits of a busy service', () => {
  const refused = (status: number, retryAfterMs?: number) => ({
    kind: 'http' as const,
    status,
    message: `POST /v5/list: HTTP ${status} Busy.`,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });

  it('waits what Retry-After asks, never less, and a little more so that refused jobs come back apart', () => {
    expect(refusalWait(refused(429, 30_000), 0, 5000, () => 0)).toBe(30_000);
    expect(refusalWait(refused(429, 30_000), 0, 5000, () => 0.999)).toBe(33_996);
    expect(refusalWait(refused(503, 1000), 3, 5000, () => 0.5)).toBe(1550);
    // Without Retry-After: the job's retry delay, doubled after each refusal, up to a minute.
    expect(refusalWait(refused(429), 0, 5000, () => 0)).toBe(5000);
    expect(refusalWait(refused(429), 2, 5000, () => 0)).toBe(20_000);
    expect(refusalWait(refused(429), 9, 5000, () => 0)).toBe(60_000);
    // Not waited for: a wait of hours (the day's bytes), and what is not a refusal before any work.
    expect(refusalWait(refused(429, 6 * 3600_000), 0, 5000)).toBeUndefined();
    expect(refusalWait(refused(502, 1000), 0, 5000)).toBeUndefined();
    expect(refusalWait({ kind: 'network', message: 'reset' }, 0, 5000)).toBeUndefined();
  });

  it('gives turns at a service in order, at most the limit at once, and lets a cancelled waiter go', async () => {
    const slots = new ServiceSlots(2);
    const waited: string[] = [];
    const first = await slots.take('http://a', undefined, () => waited.push('first'));
    const second = await slots.take('http://a', undefined, () => waited.push('second'));
    // Another service has turns of its own.
    const other = await slots.take('http://b', undefined, () => waited.push('other'));
    const cancel = new AbortController();
    const third = slots.take('http://a', cancel.signal, () => waited.push('third'));
    const got: string[] = [];
    const fourth = slots
      .take('http://a', undefined, () => waited.push('fourth'))
      .then((end) => {
        got.push('fourth');
        return end;
      });
    expect(waited).toEqual(['third', 'fourth']);
    cancel.abort();
    await expect(third).rejects.toMatchObject({ code: 'cancelled' });
    first();
    first(); // a second call gives nothing back
    const end = await fourth;
    expect(got).toEqual(['fourth']);
    const fifth = slots.take('http://a', undefined, () => waited.push('fifth'));
    expect(waited).toContain('fifth');
    second();
    (await fifth)();
    end();
    other();
  });
});
