// Delete means deleted: a job of the embedded service, started from a browser-mode upload, leaves no file
// holding its list anywhere under the app home once deleted — not its results, not the staged upload, not
// the embedded service's stored input and results.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import type { JobDetail } from '../../../shared/desktop/contract.js';
import { tempDir } from '../../helpers/service.js';

const MARKER = 'delete.means.deleted';
const LIST = `email,name\n${Array.from({ length: 50 }, (_, i) => `${MARKER}.${i}@example.com,Person ${i}`).join('\n')}\n`;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Files under `dir` that hold the list's addresses. */
const holdingTheList = (dir: string) => filesUnder(dir).filter((file) => readFileSync(file).includes(MARKER));

async function finished(core: DesktopCore, jobId: number): Promise<JobDetail> {
  for (;;) {
    const reply = await core.handle('jobs:get', { jobId });
    if (!reply.ok) throw new Error(reply.error.message);
    const job = reply.value as JobDetail;
    if (!['queued', 'uploading', 'processing', 'downloading'].includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('deleting a job', () => {
  let home: ReturnType<typeof tempDir>;
  let core: DesktopCore;
  beforeEach(() => {
    home = tempDir();
    core = createDesktopCore({
      home: home.path,
      secrets: new FileSecretStore(home.path),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
      localPollIntervalMs: 50,
    });
  });
  afterEach(async () => {
    await core.close();
    home.remove();
  });

  it('leaves no file of its list anywhere under the app home', async () => {
    // As browser mode's upload does: the file staged in the app home, then registered.
    const target = core.stagingPathFor('people.csv');
    writeFileSync(target.path, LIST);
    core.registerStaged(target.fileId, target.path, 'people.csv');
    const started = await core.handle('jobs:start', {
      fileId: target.fileId,
      mapping: { delimiter: ',', header: true, roles: ['email', 'ignore'] },
      options: { reportOnly: false, split: false },
    });
    if (!started.ok) throw new Error(started.error.message);
    const jobId = (started.value as { jobIds: number[] }).jobIds[0];
    const job = await finished(core, jobId);
    expect(job.status).toBe('completed');
    const exported = await core.handle('jobs:export', { jobId, kind: 'safe' });
    expect(exported.ok).toBe(true);

    const listDir = join(home.path, 'service', 'lists', String(job.listId));
    expect(existsSync(listDir)).toBe(true);
    // Before: the staged upload, the job's copy and results, the export, the service's input and results.
    const before = holdingTheList(home.path);
    expect(before.some((file) => file.includes(join(home.path, 'staging')))).toBe(true);
    expect(before.some((file) => file.startsWith(listDir))).toBe(true);
    expect(before.some((file) => file.includes(join(home.path, 'results')))).toBe(true);

    expect(await core.handle('jobs:delete', { jobId })).toEqual({ ok: true, value: { deleted: true } });
    expect(holdingTheList(home.path)).toEqual([]);
    expect(existsSync(listDir)).toBe(false);
    expect(existsSync(join(home.path, 'results', String(jobId)))).toBe(false);
    expect(statSync(join(home.path, 'service', 'lists')).isDirectory()).toBe(true);
  });
});
