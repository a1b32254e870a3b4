// A list of one endless line on a single node (issue 36, point 1): a zip of one CSV line of 8 MiB, about 8 KB
// on the wire, took 4.6 s of the node's CPU to answer, because E7's count of records walked the line again
// at every chunk. Now E7's count stops as soon as a row passes the plan's limit (1 MiB), and E7 refuses the
// file at once (422) in the plan's words, for a small part of a second of the node's CPU, whether the key has
// a quota (its records counted exactly) or not (a zip is counted the same way); a text file sent by a key
// without a quota is not counted row by row, and the plan refuses it in the same words; and eight such zips
// at once leave another key's E1 quick. The service runs in this process: its CPU is this process's.
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getList } from '../../../service/lists/backend/store.js';
import { isFinalListStatus } from '../../../shared/api/list.js';
import { bestE1P99During, cpuMs, median, oneLineZip } from './oneLine.js';
import { runList, startListService, submit, waitForList, type ListService } from './helpers.js';

let svc: ListService;
const zip = oneLineZip();
const MIB = 1024 * 1024;
const FIRST_LINE = 'Line 1 is longer than 1 MB: is this a list file?';
const trialKey = () => svc.key({ quota: { limit: 100, period: 'total', isTrial: true } });
const listCount = () => svc.db.prepare('SELECT count(*) FROM lists').pluck().get() as number;

beforeAll(async () => {
  svc = await startListService();
  // A first list warms the node (its workers, the first runs of the code of a zip): what is measured then is
  // a list's own cost.
  const warm = await runList(
    svc.url,
    svc.key(),
    zipSync({ 'list.csv': strToU8('email\njane@example.com\n') }),
    {
      fileName: 'list.zip',
      query: { header: 'true' },
    },
  );
  expect(warm.list.status).toBe('Results');
});
afterAll(() => svc.close());

/** Until the list has ended (read from the node's database: polls of E8 would add their own cost). */
async function untilEnded(id: number): Promise<void> {
  while (!isFinalListStatus(getList(svc.db, id)?.status ?? 'Pending'))
    await new Promise((resolve) => setTimeout(resolve, 25));
}

/**
 * What becomes of a list: E7's refusal (status and words), or the words of its end (status 202); and the CPU
 * it cost this process until then.
 */
async function fateOf(key: string, body: Uint8Array, options: Parameters<typeof submit>[3]) {
  const before = cpuMs();
  const sent = await submit(svc.url, key, body, options);
  if (sent.status !== 202)
    return {
      status: sent.status,
      words: sent.json<{ error_msg: string }>().error_msg,
      cpuMs: cpuMs() - before,
    };
  const id = sent.json<{ list_id: number }>().list_id;
  await untilEnded(id);
  const spent = cpuMs() - before;
  const list = await waitForList(svc.url, key, id);
  return { status: 202, listStatus: list.status, words: list.reason, cpuMs: spent };
}

describe('a list of one endless line on a single node', { timeout: 300_000 }, () => {
  it('refuses an 8 KB zip of one 8 MiB line at once, in the plan’s words, for under 0.2 s of CPU', async () => {
    expect(zip.length).toBeLessThan(9_000);
    const lists = listCount();
    // A trial key has a quota: its records are counted exactly at E7 (countRecords). A key without one is
    // counted in passing, which for a zip is the same count.
    for (const [kind, key] of [
      ['trial key', trialKey()],
      ['key without a quota', svc.key()],
    ]) {
      const costs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const fate = await fateOf(key, zip, { fileName: 'list.zip' });
        expect({ kind, status: fate.status, words: fate.words }).toEqual({
          kind,
          status: 422,
          words: FIRST_LINE,
        });
        costs.push(fate.cpuMs);
      }
      // (The median of five: one list's cost, without the odd one another program's work on the machine slowed.)
      expect(median(costs), `${kind}: ${costs.map(Math.round).join(', ')} ms`).toBeLessThan(200);
    }
    expect(listCount()).toBe(lists);
  });

  it('refuses a text file whose third line runs for 8 MiB at that line, in the same words with or without a quota', async () => {
    // 8 MiB on the wire, no amplification; but a key with a quota had its records counted by the same walk
    // (over 4 s of CPU). Now the upload itself (sent and received by this process) costs most of it.
    const text = Buffer.concat([
      Buffer.from('email,note\njane@example.com,hello\nbob@example.com,'),
      Buffer.alloc(8 * MIB, 'a'),
      Buffer.from('\n'),
    ]);
    const words = 'Line 3 is longer than 1 MB, the most a row may hold.';
    const options = { fileName: 'list.csv', query: { header: 'true' } };
    for (const [key, fate] of [
      [trialKey(), { status: 422, words }],
      [svc.key(), { status: 202, listStatus: 'Invalid', words }],
    ] as const) {
      const costs: number[] = [];
      for (let i = 0; i < 3; i++) {
        const { cpuMs: cost, ...seen } = await fateOf(key, text, options);
        expect(seen).toEqual(fate);
        costs.push(cost);
      }
      expect(median(costs), `${costs.map(Math.round).join(', ')} ms`).toBeLessThan(500);
    }
  });

  it('gives the plan’s words at E7 wherever the long line is', async () => {
    const long = (bytes = 2 * MIB) => 'a'.repeat(bytes);
    const texts = [
      `email,note\r\njane@example.com,"one\r\ntwo"\r\nbob@example.com,${long()}\r\n`,
      // (A quote never closed: longer than the plan's window, which otherwise reaches the file's end first.)
      `email,note\njane@example.com,"${long(6 * MIB)}\n`,
      `email,note\njane@example.com,x\nbob@example.com,${long(MIB + 10)}"x"\n`,
      `${long()}\n`,
      `\n \n${long()}\n`,
      `email\r${'someone@example.com\r'.repeat(1000)}${long()}\r`,
      `email\n${'someone@example.com\n'.repeat(300_000)}${long()}`,
    ];
    for (const text of texts) {
      const body = Buffer.from(text);
      // A key with a quota: E7 counts the rows and refuses; one without: the plan reads them.
      const options = { fileName: 'list.csv', query: { header: 'true' } };
      const atE7 = await fateOf(trialKey(), body, options);
      const byPlan = await fateOf(svc.key(), body, options);
      expect(atE7.status, text.slice(0, 40)).toBe(422);
      expect(byPlan.listStatus, text.slice(0, 40)).toBe('Invalid');
      expect(atE7.words, text.slice(0, 40)).toBe(byPlan.words);
    }
  });

  it('takes eight at once and leaves another key’s E1 p99 under 50 ms', async () => {
    const e1 = await bestE1P99During(svc.url, svc.key(), async () => {
      const refused = await Promise.all(
        Array.from({ length: 8 }, () => submit(svc.url, trialKey(), zip, { fileName: 'list.zip' })),
      );
      for (const answer of refused) expect(answer.json<{ error_msg: string }>().error_msg).toBe(FIRST_LINE);
    });
    expect(e1.best, `E1's p99 in each round: ${e1.rounds}`).toBeLessThan(50);
  });
});
