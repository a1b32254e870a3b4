// Fair shares between the keys of a team server: a client's small list is not held back by another client's
// big one. Client B's 1,000-row list, submitted just after client A's 600,000-row list, reaches Results within
// twice its time alone plus 2 s: its plan is not queued behind A's plan, and its parts are not queued behind
// A's parts (the queue hands out the next part of the key with the least work in hand).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema } from '../../shared/api/list.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { getStatus, submit } from '../service/lists/helpers.js';

let team: TeamCluster;
let api: TeamProcess;

beforeAll(async () => {
  team = await startTeam();
  [api] = await Promise.all([team.api(), team.worker('127.0.0.2', ['--part-rows', '10000'])]);
}, 60_000);

afterAll(() => team?.close());

const body = (rows: number, tag: string) =>
  `email,n\n${Array.from({ length: rows }, (_, i) => `${tag}${i}@example${i % 89}.com,${i}`).join('\n')}\n`;

async function send(key: string, text: string): Promise<number> {
  const sent = await submit(api.url, key, text, { query: { header: 'true' }, as: 'text' });
  expect(sent.status, sent.text).toBe(202);
  return sent.json<{ list_id: number }>().list_id;
}

async function statusOf(key: string, id: number): Promise<string> {
  return listResourceSchema.parse((await getStatus(api.url, key, id)).json()).status;
}

/** Seconds from submission to Results. */
async function timed(key: string, text: string, timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  const id = await send(key, text);
  for (;;) {
    const status = await statusOf(key, id);
    if (status === 'Results') return (Date.now() - started) / 1000;
    if (status === 'Invalid' || status === 'Error') throw new Error(`list ${id} ended ${status}`);
    if (Date.now() - started > timeoutMs) throw new Error(`list ${id} still ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('fair shares between keys', { timeout: 240_000 }, () => {
  it("gives B's small list its results within 2x its time alone + 2 s while A's big list runs", async () => {
    const keyA = await team.key(['--checks', 'offline']);
    const keyB = await team.key(['--checks', 'offline']);
    const small = body(1_000, 'b');
    // Alone: the slower of two runs after one that warms the node (the pace of this machine now).
    await timed(keyB, small);
    const alone = Math.max(await timed(keyB, body(1_000, 'c')), await timed(keyB, body(1_000, 'd')));
    const big = body(600_000, 'a');
    const idA = await send(keyA, big);
    // A is being planned when B's list comes.
    while ((await statusOf(keyA, idA)) === 'Pending') await new Promise((resolve) => setTimeout(resolve, 20));
    const behind = await timed(keyB, small);
    const statusA = await statusOf(keyA, idA);
    expect(behind, `B took ${behind} s behind A (A ${statusA}), ${alone} s alone`).toBeLessThanOrEqual(
      2 * alone + 2,
    );
    expect(statusA).not.toBe('Results');
  });
});
