// Fair shares between keys on the single-node service (as on the team server, test/pg/fairShares.test.ts): it
// runs one list at a time, and the next is the first waiting list of the key whose turn came longest ago, so
// one client's many lists do not hold back another client's list submitted after them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getList } from '../../../service/lists/backend/store.js';
import { startListService, submit, waitForList, type ListService } from './helpers.js';

let svc: ListService;
let startPlanning: () => void;

beforeAll(async () => {
  const ready = new Promise<void>((resolve) => (startPlanning = resolve));
  svc = await startListService({ ready });
});
afterAll(async () => {
  startPlanning();
  await svc.close();
});

const rows = (n: number, tag: string) =>
  ['email', ...Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`)].join('\n') + '\n';

async function send(key: string, body: string): Promise<number> {
  const sent = await submit(svc.url, key, body, { query: { header: 'true' }, as: 'text' });
  expect(sent.status, sent.text).toBe(202);
  return sent.json<{ list_id: number }>().list_id;
}

describe('fair shares between keys on the single node', () => {
  it("runs B's list before A's later lists when B submits after A's three", async () => {
    const keyA = svc.key();
    const keyB = svc.key();
    const a = [];
    for (let i = 0; i < 3; i++) a.push(await send(keyA, rows(2_000, `a${i}-`)));
    const b = await send(keyB, rows(100, 'b'));
    startPlanning();
    for (const id of a) await waitForList(svc.url, keyA, id);
    await waitForList(svc.url, keyB, b);
    const finished = (id: number) => getList(svc.db, id)!.finishedAt!;
    // A's first list, then B's, then A's others.
    expect(finished(b) > finished(a[0])).toBe(true);
    expect(finished(b) < finished(a[1])).toBe(true);
    expect(finished(b) < finished(a[2])).toBe(true);
  });
});
