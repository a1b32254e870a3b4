// What a key of the single-node service may hold — the same contract as the team server's
// (test/pg/keyLimits.test.ts): lists waiting or running at once and bytes of lists a day, past which E7 answers
// 429 with Retry-After and words; a key without a quota is counted at submission; an invalid list's stored
// input is deleted when it is found invalid; its refund goes back to the period it was charged in; a revoked
// key's waiting lists stop with status Error and the reason.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getList } from '../../../service/lists/backend/store.js';
import { listDir } from '../../../service/lists/names.js';
import { REVOKED_LIST_REASON, revokeKey } from '../../../service/store/keys.js';
import { startListService, submit, waitForList, type ListService } from './helpers.js';

let svc: ListService;
/** The service plans no list until this is called: its lists stay waiting. */
let startPlanning: () => void;

beforeAll(async () => {
  const ready = new Promise<void>((resolve) => (startPlanning = resolve));
  svc = await startListService({ ready });
});
afterAll(async () => {
  startPlanning();
  await svc.close();
});

const rows = (n: number, tag = 'p') =>
  ['email', ...Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`)].join('\n') + '\n';

const send = (key: string, body: string) =>
  submit(svc.url, key, body, { query: { header: 'true' }, as: 'text' });

const keyIdOf = (key: string) =>
  svc.db.prepare('SELECT id FROM keys WHERE key_hint = ?').pluck().get(key.slice(-4)) as number;

const usage = (id: number) =>
  (
    svc.db.prepare('SELECT period, used FROM key_usage WHERE key_id = ? ORDER BY period').all(id) as {
      period: string;
      used: number;
    }[]
  ).map((row) => [row.period, row.used]);

describe('limits of a key on the single-node service', () => {
  it('takes at most maxLists lists in progress, then 429 with Retry-After and words; counts them at submission', async () => {
    const key = svc.key({ maxLists: 2 });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await send(key, rows(5, `l${i}-`)));
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 429, 429]);
    expect(answers[2].headers.get('retry-after')).toBe('60');
    expect(answers[2].json<{ error_msg: string }>().error_msg).toBe(
      'Too many lists in progress: this key may have 2 lists waiting or running at once, and has 2. ' +
        'Submit this list when one of them has ended.',
    );
    // A key without a quota is counted when its list is accepted, not when it completes.
    expect(usage(keyIdOf(key))).toEqual([['total', 10]]);
  });

  it('takes at most maxBytesDay bytes of lists a day, then 429 until midnight UTC', async () => {
    const key = svc.key({ maxBytesDay: 300 });
    expect((await send(key, rows(12))).status).toBe(202);
    const second = await send(key, rows(12, 'q'));
    expect(second.status).toBe(429);
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(
      Math.abs(Number(second.headers.get('retry-after')) - (midnight - now.getTime()) / 1000),
    ).toBeLessThan(60);
    expect(second.json<{ error_msg: string }>().error_msg).toMatch(/^Daily upload limit reached: /);
  });

  it("stops a revoked key's waiting lists with status Error and the reason, and gives their records back", async () => {
    const key = svc.key({ quota: { limit: 100, period: 'day', isTrial: false } });
    const sent = await send(key, rows(4, 'r'));
    expect(sent.status).toBe(202);
    const id = keyIdOf(key);
    expect(usage(id)).toEqual([[new Date().toISOString().slice(0, 10), 4]]);
    expect(revokeKey(svc.db, String(id))).toBe(true);
    const list = getList(svc.db, sent.json<{ list_id: number }>().list_id);
    expect({ status: list?.status, reason: list?.reason }).toEqual({
      status: 'Error',
      reason: REVOKED_LIST_REASON,
    });
    expect(usage(id)).toEqual([[new Date().toISOString().slice(0, 10), 0]]);
  });

  it('refunds an invalid list in the period it was charged in, and deletes its stored input', async () => {
    const key = svc.key({ quota: { limit: 100, period: 'month', isTrial: false } });
    const id = keyIdOf(key);
    const bad = await send(key, 'email\na@example.com\nb@example.com,extra\n');
    expect(bad.status).toBe(202);
    const listId = bad.json<{ list_id: number }>().list_id;
    const thisMonth = new Date().toISOString().slice(0, 7);
    expect(usage(id)).toEqual([[thisMonth, 2]]);
    // As if it had been charged last month and were found invalid after the month turned.
    svc.db.prepare(`UPDATE key_usage SET period = '2000-01' WHERE key_id = ?`).run(id);
    svc.db.prepare(`UPDATE lists SET charged_period = '2000-01' WHERE id = ?`).run(listId);
    svc.db.prepare('INSERT INTO key_usage (key_id, period, used) VALUES (?, ?, 5)').run(id, thisMonth);
    const input = join(listDir(svc.dataDir, listId), getList(svc.db, listId)!.inputFile);
    expect(existsSync(input)).toBe(true);
    startPlanning();
    expect((await waitForList(svc.url, key, listId)).status).toBe('Invalid');
    expect(usage(id)).toEqual([
      ['2000-01', 0],
      [thisMonth, 5],
    ]);
    expect(existsSync(input)).toBe(false);
  });

  it('settles the count of a key without a quota, made in passing at submission, with the records found', async () => {
    const key = svc.key();
    // Blank lines are counted at submission (lines), not by the pipeline (records).
    const sent = await send(key, 'email\na@example.com\n\n\nb@example.com\n');
    expect(sent.status).toBe(202);
    expect(usage(keyIdOf(key))).toEqual([['total', 4]]);
    expect((await waitForList(svc.url, key, sent.json<{ list_id: number }>().list_id)).status).toBe(
      'Results',
    );
    expect(usage(keyIdOf(key))).toEqual([['total', 2]]);
    // Counted as the bytes arrive: a last line without a line break is a line too.
    const unended = await send(key, 'email\nc@example.com\n\nd@example.com');
    expect(unended.status).toBe(202);
    expect(usage(keyIdOf(key))).toEqual([['total', 5]]);
  });

  it("goes on to the next list when a running list's key is revoked", { timeout: 90_000 }, async () => {
    const keyA = svc.key();
    const keyB = svc.key();
    const big = await send(keyA, rows(300_000, 'big'));
    const id = big.json<{ list_id: number }>().list_id;
    while (getList(svc.db, id)?.status !== 'Processing')
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(revokeKey(svc.db, keyA)).toBe(true);
    const small = await send(keyB, rows(10, 'after'));
    expect((await waitForList(svc.url, keyB, small.json<{ list_id: number }>().list_id)).status).toBe(
      'Results',
    );
    expect(getList(svc.db, id)?.status).toBe('Error');
  });
});
