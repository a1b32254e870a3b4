// Uploads on the single-node service — the same contract as the team server's (test/pg/uploadLimits.test.ts):
// the key's lists in progress, its bytes today against the declared Content-Length, its quota and its uploads
// arriving at once (`--max-uploads`) are decided before an E7 body is read, each answered at once to a client
// that sent only the first bytes of a large body; `--max-bytes-day` counts a zip's text, uncompressed; and a
// list's stored input goes once it has its results (a list awaiting purchase keeps it, to run again).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getList } from '../../../service/lists/backend/store.js';
import { listDir } from '../../../service/lists/names.js';
import { tempDir } from '../../helpers/service.js';
import { stalledUpload, type EarlyAnswer, type UnansweredUpload } from '../../helpers/stalledUpload.js';
import { importFixture } from '../identity/fixture.js';
import { getResults, purchase, startListService, submit, waitForList, type ListService } from './helpers.js';

const MB = 1024 * 1024;
const rows = (n: number, tag = 'p') =>
  ['email', ...Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`)].join('\n') + '\n';
const errorOf = (answer: EarlyAnswer) => (JSON.parse(answer.text) as { error_msg: string }).error_msg;

describe('uploads on the single-node service, before their body', () => {
  let svc: ListService;
  /** The service plans no list until this is called: its lists stay waiting. */
  let startPlanning: () => void;
  const open: UnansweredUpload[] = [];
  const stalled = (...args: Parameters<typeof stalledUpload>) => {
    const upload = stalledUpload(...args);
    open.push(upload);
    return upload;
  };
  const send = (key: string, body: string) =>
    submit(svc.url, key, body, { query: { header: 'true' }, as: 'text' });

  beforeAll(async () => {
    const ready = new Promise<void>((resolve) => (startPlanning = resolve));
    svc = await startListService({ ready });
  });
  afterAll(async () => {
    for (const upload of open) upload.close();
    startPlanning();
    await svc.close();
  });

  it('refuses an upload past maxLists before reading its body: 429 at once, with Retry-After', async () => {
    const key = svc.key({ maxLists: 1 });
    expect((await send(key, rows(3))).status).toBe(202);
    const answer = await stalled(svc.url, key, 50 * MB).within(2000);
    expect(answer, 'no answer before the body').toBeDefined();
    expect(answer!.status).toBe(429);
    expect(answer!.headers['retry-after']).toBe('60');
    expect(errorOf(answer!)).toBe(
      'Too many lists in progress: this key may have 1 lists waiting or running at once, and has 1. ' +
        'Submit this list when one of them has ended.',
    );
  });

  it("refuses an upload whose Content-Length passes the key's bytes today before reading it", async () => {
    const key = svc.key({ maxBytesDay: 10 * MB });
    const answer = await stalled(svc.url, key, 50 * MB, { type: 'multipart/form-data' }).within(2000);
    expect(answer, 'no answer before the body').toBeDefined();
    expect(answer!.status).toBe(429);
    expect(errorOf(answer!)).toMatch(
      /^Daily upload limit: this key may submit 10 MB of lists a day \(UTC\), and this list is at least 50 MB, more than a whole day allows\. Split it into smaller lists\.$/,
    );
  });

  it('refuses an upload of a key whose quota is used up before reading it: 403', async () => {
    const key = svc.key({ quota: { limit: 3, period: 'total', isTrial: true } });
    expect((await send(key, rows(3))).status).toBe(202);
    const answer = await stalled(svc.url, key, 5 * MB).within(2000);
    expect(answer, 'no answer before the body').toBeDefined();
    expect(answer!.status).toBe(403);
    expect(errorOf(answer!)).toBe("Query limit exceeded: this trial key's 3 queries are used up.");
  });

  it('takes at most maxUploads uploads of a key at once, then 429 before the body', async () => {
    const key = svc.key({ maxUploads: 2 });
    const first = stalled(svc.url, key, 10 * MB);
    const second = stalled(svc.url, key, 10 * MB);
    // Both let in (no answer: their bodies are awaited).
    expect(await first.within(300)).toBeUndefined();
    expect(await second.within(10)).toBeUndefined();
    const third = await stalled(svc.url, key, 10 * MB).within(2000);
    expect(third, 'no answer before the body').toBeDefined();
    expect(third!.status).toBe(429);
    expect(third!.headers['retry-after']).toBe('30');
    expect(errorOf(third!)).toBe(
      'Too many uploads at once: this key may send 2 lists at a time, and 2 are still arriving. ' +
        'Send this list when one of them has been received.',
    );
    // A client gone: its upload ends, and the key may send another.
    first.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await send(key, rows(2))).status).toBe(202);
    second.close();
  });
});

describe("the single node's stored input", () => {
  let svc: ListService;
  const scratch = tempDir('mailsieve-upload-limits-');

  beforeAll(async () => {
    svc = await startListService();
    await importFixture(svc.db, scratch.path);
  });
  afterAll(async () => {
    await svc?.close();
    scratch.remove();
  });

  const inputOf = (id: number) => join(listDir(svc.dataDir, id), getList(svc.db, id)!.inputFile);

  it("counts a zip's text, uncompressed, against maxBytesDay", async () => {
    const key = svc.key({ maxBytesDay: 3 * MB });
    const text = Buffer.from(
      [
        'email',
        ...Array.from({ length: 90_000 }, (_, i) => `z${String(i).padStart(10, '0')}@example.com`),
      ].join('\n'),
    );
    const zip = zipSync({ 'list.csv': text }, { level: 9 });
    expect(zip.length).toBeLessThan(text.length / 5);
    const sendZip = () => submit(svc.url, key, zip, { fileName: 'list.zip', query: { header: 'true' } });
    const first = await sendZip();
    expect(first.status, first.text).toBe(202);
    expect(first.json<{ size_bytes: number }>().size_bytes).toBe(zip.length);
    const second = await sendZip();
    expect(second.status).toBe(429);
    expect(second.json<{ error_msg: string }>().error_msg).toBe(
      'Daily upload limit reached: this key may submit 3 MB of lists a day (UTC), has submitted 2.1 MB today, ' +
        'and this list is 2.1 MB. Submit it after midnight UTC.',
    );
    await waitForList(svc.url, key, first.json<{ list_id: number }>().list_id);
  });

  it('deletes the input once the list has its results; a list awaiting purchase keeps it until then', async () => {
    const key = svc.key({ services: ['validation', 'intelligence'] });
    const plain = await submit(svc.url, key, rows(20, 'plain'), { query: { header: 'true' }, as: 'text' });
    const zipped = await submit(svc.url, key, zipSync({ 'list.csv': Buffer.from(rows(20, 'zip')) }), {
      fileName: 'list.zip',
      query: { header: 'true' },
    });
    for (const sent of [plain, zipped]) {
      const id = sent.json<{ list_id: number }>().list_id;
      expect((await waitForList(svc.url, key, id)).status).toBe('Results');
      // Removed off the request thread once the results are marked (localBackend's completeRun): a moment later.
      await expect.poll(() => existsSync(inputOf(id))).toBe(false);
      expect(existsSync(listDir(svc.dataDir, id))).toBe(true);
      expect((await getResults(svc.url, key, id)).status).toBe(200);
    }

    // A report-only list awaits purchase with its input, runs again from it, and then lets it go.
    const reported = await submit(
      svc.url,
      key,
      ['Email,Name', 'jane.doe@example.com,Jane', 'nobody@example.com,Nobody', ''].join('\n'),
      { query: { header: 'true', report: 'true' } },
    );
    const id = reported.json<{ list_id: number }>().list_id;
    const deadline = Date.now() + 30_000;
    while (getList(svc.db, id)?.status !== 'Processed') {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(existsSync(inputOf(id))).toBe(true);
    expect((await purchase(svc.url, key, id, { fields: ['age'] })).status).toBe(200);
    expect((await waitForList(svc.url, key, id)).status).toBe('Results');
    await expect.poll(() => existsSync(inputOf(id))).toBe(false);
    const results = await getResults(svc.url, key, id);
    expect(results.text.split('\n')[0]).toMatch(/,age$/);
  });
});
