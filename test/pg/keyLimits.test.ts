// What a key of a team server may hold (docs/team-server.md, "Limits of a key"): lists waiting or running at
// once (`keys create --max-lists N`) and bytes of lists a day (`--max-bytes-day N`), counted across API nodes;
// past either E7 answers 429 with Retry-After and words. A key without a quota is counted at submission; an
// invalid list's stored input is deleted when it is found invalid; a list's refund goes back to the period it
// was charged in, whenever it ends; a revoked key's waiting lists stop with Error and the reason.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVOKED_LIST_REASON } from '../../service/store/keys.js';
import { runCli } from '../helpers/cli.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { submit } from '../service/lists/helpers.js';

let team: TeamCluster;
let apis: TeamProcess[];
let db: pg.Pool;

beforeAll(async () => {
  team = await startTeam();
  // No verifier node at first: the lists stay waiting.
  apis = await Promise.all([team.api(), team.api()]);
  db = new pg.Pool({ connectionString: team.database, max: 2 });
  db.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  await db?.end();
  await team?.close();
});

const rows = (n: number, tag = 'p') =>
  ['email', ...Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`)].join('\n') + '\n';

const send = (api: TeamProcess, key: string, body: string) =>
  submit(api.url, key, body, { query: { header: 'true' }, as: 'text' });

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function keyId(key: string): Promise<number> {
  const listed = await runCli(['keys', 'list', '--database', team.database, '--json']);
  const found = listed.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { id: number; key: string })
    .find((entry) => key.endsWith(entry.key.slice(1)));
  return found!.id;
}

const usage = async (id: number) =>
  (
    await db.query<{ period: string; used: string }>(
      'SELECT period, used FROM key_usage WHERE key_id = $1 ORDER BY period',
      [id],
    )
  ).rows.map((row) => [row.period, Number(row.used)]);

describe('limits of a key on a team server', { timeout: 180_000 }, () => {
  it('takes at most --max-lists lists in progress across API nodes, then 429 with Retry-After and words', async () => {
    const key = await team.key(['--max-lists', '3', '--max-uploads', '8']);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send(apis[i % 2], key, rows(5, `l${i}-`))),
    );
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(3);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(5);
    expect(refused[0].headers.get('retry-after')).toBe('60');
    // (Lists still being uploaded count as in progress: refused before their body, they say so.)
    expect(refused[0].json<{ error_msg: string }>().error_msg).toMatch(
      /^Too many lists in progress: this key may have 3 lists waiting or running at once, and has 3( \([123] of them still being uploaded\))?\. Submit this list when one of them has ended\.$/,
    );
    // The refused lists were not counted.
    const id = await keyId(key);
    await until('the counts to be written', async () => (await usage(id)).length > 0);
    expect(await usage(id)).toEqual([['total', 15]]);
  });

  it('takes at most --max-bytes-day bytes of lists a day, then 429 until midnight UTC', async () => {
    const key = await team.key(['--max-bytes-day', '300']);
    const first = await send(apis[0], key, rows(12));
    expect(first.status, first.text).toBe(202);
    const second = await send(apis[1], key, rows(12, 'q'));
    expect(second.status).toBe(429);
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    const retryAfter = Number(second.headers.get('retry-after'));
    expect(Math.abs(retryAfter - (midnight - now.getTime()) / 1000)).toBeLessThan(60);
    expect(second.json<{ error_msg: string }>().error_msg).toMatch(
      /^Daily upload limit reached: this key may submit 300 bytes of lists a day \(UTC\), has submitted \d+ bytes today, and this list is \d+ bytes\. Submit it after midnight UTC\.$/,
    );
  });

  it('refunds an invalid list in the period it was charged in, and deletes its stored input', async () => {
    const key = await team.key(['--quota', '100', '--quota-period', 'month']);
    const id = await keyId(key);
    const bad = await send(apis[0], key, 'email\na@example.com\nb@example.com,extra\n');
    expect(bad.status, bad.text).toBe(202);
    const listId = bad.json<{ list_id: number }>().list_id;
    const thisMonth = new Date().toISOString().slice(0, 7);
    expect(await usage(id)).toEqual([[thisMonth, 2]]);
    // As if it had been charged last month and were found invalid after the month turned: the records go back
    // to last month, and this month's use is left as it is.
    await db.query(`UPDATE key_usage SET period = '2000-01' WHERE key_id = $1`, [id]);
    await db.query(`UPDATE lists SET charged_period = '2000-01' WHERE id = $1`, [listId]);
    await db.query(`INSERT INTO key_usage (key_id, period, used) VALUES ($1, $2, 5)`, [id, thisMonth]);
    const worker = await team.worker('127.0.0.2');
    await until('the list to be found invalid', async () => {
      const { rows: found } = await db.query(`SELECT 1 FROM lists WHERE id = $1 AND status = 'Invalid'`, [
        listId,
      ]);
      return found.length > 0;
    });
    expect(await usage(id)).toEqual([
      ['2000-01', 0],
      [thisMonth, 5],
    ]);
    const { rows: stored } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM list_blobs WHERE list_id = $1',
      [listId],
    );
    expect(stored[0].n).toBe(0);
    await worker.stop();
  });

  it("stops a revoked key's waiting lists with status Error and the reason (keys revoke '#id')", async () => {
    const key = await team.key();
    const sent = await send(apis[0], key, rows(4, 'r'));
    expect(sent.status).toBe(202);
    const listId = sent.json<{ list_id: number }>().list_id;
    const id = await keyId(key);
    const revoked = await runCli(['keys', 'revoke', '--database', team.database, `#${id}`]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const { rows: found } = await db.query<{ status: string; reason: string }>(
      'SELECT status, reason FROM lists WHERE id = $1',
      [listId],
    );
    expect(found[0]).toEqual({ status: 'Error', reason: REVOKED_LIST_REASON });
    // Every API node refuses the key within 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    for (const api of apis) {
      const answer = await fetch(`${api.url}/v5/ev?email=a%40example.com&api_key=${encodeURIComponent(key)}`);
      expect(answer.status).toBe(401);
    }
  });
});
