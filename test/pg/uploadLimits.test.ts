// Uploads on a team server (docs/team-server.md, "Limits of a key"): what can be decided before an E7 body is
// decided before it — the key's lists in progress, its bytes today against the declared Content-Length, its
// quota, and its uploads arriving at once (`keys create --max-uploads`, counted across API nodes) — each
// answered at once to a client that sent only the first bytes of a large body; one key's uploads never hold
// another key's E7 behind them; `--max-bytes-day` counts a zip's text, uncompressed; and a list's input is
// not kept once it has its results.
import { unzipSync, zipSync } from 'fflate';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_LISTS_LOCK } from '../../service/pg/listBackend.js';
import { runCli } from '../helpers/cli.js';
import { stalledUpload, type EarlyAnswer, type UnansweredUpload } from '../helpers/stalledUpload.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { getResults, lines, submit, waitForList } from '../service/lists/helpers.js';

let team: TeamCluster;
let apis: TeamProcess[];
let db: pg.Pool;
const open: UnansweredUpload[] = [];

beforeAll(async () => {
  team = await startTeam();
  // No verifier node: the lists stay waiting (one is started where a list must run).
  apis = await Promise.all([team.api(), team.api()]);
  db = new pg.Pool({ connectionString: team.database, max: 3 });
  db.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  for (const upload of open) upload.close();
  await db?.end();
  await team?.close();
});

const MB = 1024 * 1024;
const rows = (n: number, tag = 'p') =>
  ['email', ...Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`)].join('\n') + '\n';
const send = (api: TeamProcess, key: string, body: string) =>
  submit(api.url, key, body, { query: { header: 'true' }, as: 'text' });

const errorOf = (answer: EarlyAnswer) => (JSON.parse(answer.text) as { error_msg: string }).error_msg;

/** A stalled upload, closed after the test if it is still open. */
function stalled(...args: Parameters<typeof stalledUpload>): UnansweredUpload {
  const upload = stalledUpload(...args);
  open.push(upload);
  return upload;
}

async function keyId(key: string): Promise<number> {
  const listed = await runCli(['keys', 'list', '--database', team.database, '--json']);
  return listed.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { id: number; key: string })
    .find((entry) => key.endsWith(entry.key.slice(1)))!.id;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A list of `bytes` bytes of distinct addresses (text that compresses about 10 times). */
function csvOf(bytes: number, tag: string): Buffer {
  const lines = ['email'];
  let size = 6;
  for (let i = 0; size < bytes; i++) {
    const line = `${tag}${String(i).padStart(10, '0')}@example.com`;
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

describe('uploads on a team server', { timeout: 120_000 }, () => {
  it('refuses an upload past --max-lists before reading its body: 429 at once, with Retry-After', async () => {
    const key = await team.key(['--max-lists', '1']);
    expect((await send(apis[0], key, rows(3))).status).toBe(202);
    // 50 MB declared, a few bytes sent: the answer comes without the body.
    const answer = await stalled(apis[1].url, key, 50 * MB).within(2000);
    expect(answer, 'no answer before the body').toBeDefined();
    expect(answer!.status).toBe(429);
    expect(answer!.headers['retry-after']).toBe('60');
    expect(JSON.parse(answer!.text) as unknown).toEqual({
      error_code: 429,
      error_msg:
        'Too many lists in progress: this key may have 1 lists waiting or running at once, and has 1. ' +
        'Submit this list when one of them has ended.',
    });
  });

  it("refuses an upload whose Content-Length passes the key's bytes today before reading it", async () => {
    const key = await team.key(['--max-bytes-day', String(10 * MB)]);
    for (const type of ['text/csv', 'multipart/form-data']) {
      const answer = await stalled(apis[0].url, key, 50 * MB, { type }).within(2000);
      expect(answer, `no answer before the ${type} body`).toBeDefined();
      expect(answer!.status).toBe(429);
      expect(Number(answer!.headers['retry-after'])).toBeGreaterThan(0);
      expect(errorOf(answer!)).toMatch(
        /^Daily upload limit: this key may submit 10 MB of lists a day \(UTC\), and this list is (?:at least )?50 MB, more than a whole day allows\. Split it into smaller lists\.$/,
      );
    }
    // What fits is let in.
    expect((await send(apis[1], key, rows(3))).status).toBe(202);
  });

  it('refuses an upload of a key whose quota is used up before reading it: 403, query limit exceeded', async () => {
    const key = await team.key(['--quota', '3']);
    expect((await send(apis[0], key, rows(3))).status).toBe(202);
    const answer = await stalled(apis[1].url, key, 5 * MB).within(2000);
    expect(answer, 'no answer before the body').toBeDefined();
    expect(answer!.status).toBe(403);
    expect(errorOf(answer!)).toBe("Query limit exceeded: this key's quota of 3 queries is used up.");
  });

  it('takes at most --max-uploads uploads of a key at once across API nodes, then 429 before the body', async () => {
    const key = await team.key(['--max-uploads', '2']);
    const id = await keyId(key);
    const listed = await runCli(['keys', 'list', '--database', team.database, '--json']);
    expect(listed.stdout).toContain(`"max_uploads":2`);
    const arriving = async () =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM list_uploads WHERE key_id = $1', [id]))
        .rows[0].n;
    // One upload arriving at each node.
    const first = stalled(apis[0].url, key, 10 * MB);
    const second = stalled(apis[1].url, key, 10 * MB, { type: 'multipart/form-data' });
    await until('two uploads to arrive', async () => (await arriving()) === 2);
    for (const api of apis) {
      const third = await stalled(api.url, key, 10 * MB).within(2000);
      expect(third, 'no answer before the body').toBeDefined();
      expect(third!.status).toBe(429);
      expect(third!.headers['retry-after']).toBe('30');
      expect(errorOf(third!)).toBe(
        'Too many uploads at once: this key may send 2 lists at a time, and 2 are still arriving. ' +
          'Send this list when one of them has been received.',
      );
    }
    expect(await first.within(100)).toBeUndefined();
    // A client gone: its upload ends, and the key may send another.
    first.close();
    await until('the upload to end', async () => (await arriving()) === 1);
    expect((await send(apis[1], key, rows(2))).status).toBe(202);
    second.close();
    await until('the other upload to end', async () => (await arriving()) === 0);
    // Another key is not counted with it.
    expect((await send(apis[0], await team.key(['--max-uploads', '1']), rows(2))).status).toBe(202);
  });

  it("answers another key's E7 at once while one key's uploads wait to be stored and more of its bodies stall", async () => {
    const a = await team.key(['--max-uploads', '12', '--max-lists', '0']);
    const b = await team.key();
    const aId = await keyId(a);
    // Key A's lists wait to be stored, as while a node stores one of its large lists (its lock held).
    const holder = await db.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [KEY_LISTS_LOCK, aId]);
      for (let i = 0; i < 4; i++) stalled(apis[0].url, a, 20 * MB);
      const waiting = Array.from({ length: 6 }, (_, i) => send(apis[0], a, rows(3, `a${i}-`)));
      // (Should the test fail, they are cut short when the nodes stop: that is not another failure.)
      for (const sent of waiting) sent.catch(() => undefined);
      await until('key A to hold ten uploads', async () => {
        const { rows: found } = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM list_uploads WHERE key_id = $1',
          [aId],
        );
        return found[0].n === 10;
      });
      // Its six received uploads are waiting to be stored by now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = Date.now();
      const other = await Promise.race([
        send(apis[0], b, rows(3, 'b')),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000)),
      ]);
      expect(other, "key B's E7 answered within 2 s").toBeDefined();
      expect(other!.status).toBe(202);
      expect(Date.now() - started).toBeLessThan(2000);
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [KEY_LISTS_LOCK, aId]);
      expect((await Promise.all(waiting)).map((answer) => answer.status)).toEqual(Array(6).fill(202));
    } finally {
      holder.release();
    }
  });

  it("counts a zip's text, uncompressed, against --max-bytes-day", async () => {
    const key = await team.key(['--max-bytes-day', String(3 * MB)]);
    const text = csvOf(2 * MB, 'z');
    const zip = zipSync({ 'list.csv': text }, { level: 9 });
    expect(zip.length).toBeLessThan(text.length / 5);
    const sendZip = () => submit(apis[0].url, key, zip, { fileName: 'list.zip', query: { header: 'true' } });
    const first = await sendZip();
    expect(first.status, first.text).toBe(202);
    // E7 answers the bytes sent; the day counts the text stored.
    expect(first.json<{ size_bytes: number }>().size_bytes).toBe(zip.length);
    const second = await sendZip();
    expect(second.status).toBe(429);
    expect(second.json<{ error_msg: string }>().error_msg).toBe(
      'Daily upload limit reached: this key may submit 3 MB of lists a day (UTC), has submitted 2 MB today, ' +
        'and this list is 2 MB. Submit it after midnight UTC.',
    );
  });

  it('keeps no input of a list once it has its results: a text list, and a zip with its extracted text', async () => {
    const key = await team.key();
    const worker = await team.worker('127.0.0.2');
    try {
      const zip = zipSync({ 'list.csv': Buffer.from(rows(40, 'zz')) });
      const sent = [
        await send(apis[0], key, rows(40, 'tt')),
        await submit(apis[1].url, key, zip, { fileName: 'list.zip', query: { header: 'true' } }),
      ];
      const ids = sent.map((answer) => answer.json<{ list_id: number }>().list_id);
      for (const [i, id] of ids.entries()) {
        const list = await waitForList(apis[i].url, key, id);
        expect(list.status).toBe('Results');
      }
      const { rows: kept } = await db.query<{ kind: string }>(
        `SELECT DISTINCT kind FROM list_blobs WHERE list_id = ANY($1::bigint[]) ORDER BY kind`,
        [ids],
      );
      expect(kept.map((row) => row.kind)).toEqual(['results.zip']);
      const { rows: planned } = await db.query<{ bytes: number }>(
        'SELECT coalesce(sum(octet_length(plan_rows)), 0)::int AS bytes FROM list_parts WHERE list_id = ANY($1::bigint[])',
        [ids],
      );
      expect(planned[0].bytes).toBe(0);
      // The results are all there: a row for each of the 40 addresses, and the header.
      const [text, zipped] = await Promise.all(ids.map((id) => getResults(apis[0].url, key, id)));
      expect([text.status, zipped.status]).toEqual([200, 200]);
      const unzipped = Object.values(unzipSync(zipped.bytes));
      expect(unzipped).toHaveLength(1);
      for (const bytes of [text.bytes, unzipped[0]])
        expect(lines(Buffer.from(bytes).toString('utf8'))).toHaveLength(41);
    } finally {
      await worker.stop();
    }
  });
});
