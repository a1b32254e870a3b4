// What a single node deletes that it once kept for good (issue 36, point 9): a report-only list waiting for
// its purchase (Processed) expires with the retention, counted from when it became Processed, and goes with
// its key's revocation; an upload left by a service that stopped mid-way is swept at the next start; a key
// revoked while its list was uploading gets no list (401, as for an unknown key).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import { sweepListFiles } from '../../../service/lists/backend/retention.js';
import { getList } from '../../../service/lists/backend/store.js';
import { listDir, listsRoot } from '../../../service/lists/names.js';
import { revokeKey } from '../../../service/store/keys.js';
import { listBody, partFiles, startStalledUpload } from '../../helpers/stalledUpload.js';
import { getStatus, startListService, submit, type ListService } from './helpers.js';

const DAY = 24 * 60 * 60 * 1000;

let svc: ListService;

beforeAll(async () => {
  svc = await startListService();
});
afterAll(async () => {
  await svc?.close();
});

const keyIdOf = (key: string) =>
  svc.db.prepare('SELECT id FROM keys WHERE key_hint = ?').pluck().get(key.slice(-4)) as number;

const listsOf = (keyId: number) =>
  svc.db.prepare('SELECT id FROM lists WHERE key_id = ?').pluck().all(keyId) as number[];

/** A report-only list run to Processed (its match reports ready, its results waiting for a purchase). */
async function processedList(): Promise<{ key: string; id: number }> {
  const key = svc.key({ services: ['validation', 'intelligence'] });
  const sent = await submit(svc.url, key, 'Email,Name\njane.doe@example.com,Jane\nnobody@example.com,No\n', {
    query: { header: 'true', report: 'true', services: 'email_validation,email_intelligence' },
  });
  expect(sent.status, sent.text).toBe(202);
  const id = sent.json<{ list_id: number }>().list_id;
  const deadline = Date.now() + 30_000;
  let list: ListResource;
  do {
    if (Date.now() > deadline) throw new Error(`list ${id} did not reach Processed`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    list = listResourceSchema.parse((await getStatus(svc.url, key, id)).json());
  } while (list.status === 'Pending' || list.status === 'Processing');
  expect(list.status).toBe('Processed');
  expect(existsSync(join(listDir(svc.dataDir, id), 'input.csv'))).toBe(true);
  return { key, id };
}

describe('what a single node deletes', { timeout: 60_000 }, () => {
  it('deletes a list waiting for purchase once it has waited longer than the retention', async () => {
    const { id } = await processedList();
    // Counted from when it became Processed: kept until then, deleted after (the sweep's clock moved on).
    expect(sweepListFiles(svc.db, svc.dataDir, 30, Date.now() + 29 * DAY)).not.toContain(id);
    expect(getList(svc.db, id)?.status).toBe('Processed');
    expect(sweepListFiles(svc.db, svc.dataDir, 30, Date.now() + 31 * DAY)).toContain(id);
    expect(getList(svc.db, id)).toBeUndefined();
    expect(existsSync(listDir(svc.dataDir, id))).toBe(false);
  });

  it("deletes a revoked key's lists waiting for purchase, with their files", async () => {
    const { key, id } = await processedList();
    expect(revokeKey(svc.db, String(keyIdOf(key)), svc.dataDir)).toBe(true);
    expect(getList(svc.db, id)).toBeUndefined();
    expect(existsSync(listDir(svc.dataDir, id))).toBe(false);
  });

  it('makes no list for a key revoked while its list was uploading: 401, as for an unknown key', async () => {
    const key = svc.key();
    const body = listBody(4000);
    const upload = await startStalledUpload(svc.url, key, body, body.length >> 1);
    // The service is receiving the body when the key is revoked.
    const deadline = Date.now() + 10_000;
    while (partFiles(listsRoot(svc.dataDir)).length === 0) {
      if (Date.now() > deadline) throw new Error('the upload did not start');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(revokeKey(svc.db, String(keyIdOf(key)))).toBe(true);
    const answer = await upload.finish();
    expect(answer).toEqual({ status: 401, body: 'Invalid API key.' });
    expect(listsOf(keyIdOf(key))).toEqual([]);
    expect(partFiles(listsRoot(svc.dataDir))).toEqual([]);
  });

  it('removes at start the uploads a stopped service left behind', async () => {
    // Where a service killed mid-upload leaves its file: in its uploads folder (and where older versions kept
    // them); the service is then started again on the same folder.
    const left = [
      join(svc.service.listBackend!.workRoot, 'uploads', 'a1b2c3.part'),
      join(listsRoot(svc.dataDir), 'uploads', 'd4e5f6.part'),
    ];
    for (const path of left) {
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, 'email\nhalf@exam');
    }
    await svc.restart();
    expect(partFiles(listsRoot(svc.dataDir))).toEqual([]);
  });
});
