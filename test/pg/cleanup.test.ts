// What a team server deletes that it once kept for good (issue 36, point 9): a report-only list waiting for its
// purchase (Processed) expires with the retention, counted from when it became Processed, and goes with its
// key's revocation; an upload left by an API node killed mid-way is removed by the next node to start on that
// data folder, never one a live node is receiving; a key revoked while its list was uploading gets no list
// (401, as for an unknown key).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { openPostgres, type PgPool } from '../../service/pg/db.js';
import { createPgKey, revokePgKey } from '../../service/pg/keys.js';
import { sweepPgLists } from '../../service/pg/retention.js';
import { REVOKED_LIST_REASON } from '../../service/store/keys.js';
import { tempDir } from '../helpers/service.js';
import { listBody, partFiles, startStalledUpload, type StalledUpload } from '../helpers/stalledUpload.js';
import { startTeam, type TeamCluster } from '../helpers/team.js';

const DAY = 24 * 60 * 60 * 1000;

let team: TeamCluster;
let pool: PgPool;
const shared = tempDir('mailsieve-cleanup-');

beforeAll(async () => {
  team = await startTeam();
  pool = await openPostgres(team.database, { max: 4 });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await team?.close();
  shared.remove();
});

const newKey = () => createPgKey(pool, { mode: 'safe_to_send', services: ['validation'], rateLimit: 0 });

/** A list of the key as the pipeline leaves it, with its stored input and one part of results. */
async function storedList(keyId: number, status: 'Pending' | 'Processed' | 'Results'): Promise<number> {
  const at = new Date().toISOString();
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO lists (key_id, name, input_file, options, size_bytes, created_at, updated_at, services, run,
                        status, service_status, finished_at)
     VALUES ($1, 'people.csv', 'input.csv', '{"report":true}', 20, $2, $2, '["email_validation"]', 1, $3, $4, $5)
     RETURNING id`,
    [keyId, at, status, status === 'Pending' ? 'Pending' : 'Completed', status === 'Pending' ? null : at],
  );
  const id = Number(rows[0].id);
  await pool.query(`INSERT INTO list_blobs (list_id, kind, seq, bytes) VALUES ($1, 'input', 0, $2)`, [
    id,
    Buffer.from('email\njane@example.com\n'),
  ]);
  await pool.query(
    `INSERT INTO list_parts (list_id, run, part, rows, plan_rows, is_done, output) VALUES ($1, 1, 0, 1, $2, true, $2)`,
    [id, Buffer.from('jane@example.com')],
  );
  return id;
}

const statusOf = async (id: number) =>
  (await pool.query<{ status: string; reason: string | null }>('SELECT status, reason FROM lists WHERE id = $1', [id]))
    .rows[0];

/** The rows stored for a list (its blobs and parts). */
const storedRows = async (id: number) =>
  Number(
    (
      await pool.query<{ n: string }>(
        `SELECT (SELECT count(*) FROM list_blobs WHERE list_id = $1) + (SELECT count(*) FROM list_parts WHERE list_id = $1) AS n`,
        [id],
      )
    ).rows[0].n,
  );

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('what a team server deletes', { timeout: 120_000 }, () => {
  it('deletes a list waiting for purchase once it has waited longer than the retention', async () => {
    const { record } = await newKey();
    const id = await storedList(record.id, 'Processed');
    // Counted from when it became Processed: kept until then, deleted after (the sweep's clock moved on).
    expect(await sweepPgLists(pool, 30, Date.now() + 29 * DAY)).not.toContain(id);
    expect((await statusOf(id))?.status).toBe('Processed');
    expect(await sweepPgLists(pool, 30, Date.now() + 31 * DAY)).toContain(id);
    expect(await statusOf(id)).toBeUndefined();
    expect(await storedRows(id)).toBe(0);
  });

  it("deletes a revoked key's lists waiting for purchase, with their data", async () => {
    const { record } = await newKey();
    const processed = await storedList(record.id, 'Processed');
    const waiting = await storedList(record.id, 'Pending');
    const done = await storedList(record.id, 'Results');
    expect(await revokePgKey(pool, String(record.id))).toBe(true);
    expect(await statusOf(processed)).toBeUndefined();
    expect(await storedRows(processed)).toBe(0);
    // As before: a waiting list stops with the reason, a list with results stays until its retention.
    expect(await statusOf(waiting)).toEqual({ status: 'Error', reason: REVOKED_LIST_REASON });
    expect((await statusOf(done))?.status).toBe('Results');
  });

  it('makes no list for a key revoked while its list was uploading: 401, as for an unknown key', async () => {
    const api = await team.api();
    const { key, record } = await newKey();
    const body = listBody(20_000);
    const upload = await startStalledUpload(api.url, key, body, body.length >> 1);
    // The node is receiving the body when the key is revoked.
    await until('the upload to start', () => partFiles(api.dataDir).length > 0);
    expect(await revokePgKey(pool, String(record.id))).toBe(true);
    expect(await upload.finish()).toEqual({ status: 401, body: 'Invalid API key.' });
    const { rows } = await pool.query('SELECT id FROM lists WHERE key_id = $1', [record.id]);
    expect(rows).toEqual([]);
    await api.stop();
  });

  it('stops a list whose key is revoked while the list is being stored: the revocation waits for it', async () => {
    const api = await team.api();
    const { key, record } = await newKey();
    // The upload is held in its insert (its key checked, its row added, not committed) by a lock of the test's.
    const lock = await pool.connect();
    let revoked: Promise<boolean> | undefined;
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE list_blobs IN EXCLUSIVE MODE');
      const sent = fetch(`${api.url}/v5/list?header=true`, {
        method: 'POST',
        headers: { api_key: key, 'content-type': 'text/csv' },
        body: 'email\njane@example.com\n',
      });
      const inInsert = async () =>
        (
          await pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO list_blobs%'`,
          )
        ).rows.length > 0;
      const deadline = Date.now() + 20_000;
      while (!(await inInsert())) {
        if (Date.now() > deadline) throw new Error('the upload did not reach its insert');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      revoked = revokePgKey(pool, String(record.id));
      let isDone = false;
      void revoked.then(() => (isDone = true));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(isDone, 'the revocation waits for the list being added').toBe(false);
      await lock.query('COMMIT');
      expect((await sent).status).toBe(202);
    } finally {
      await lock.query('ROLLBACK').catch(() => undefined);
      lock.release();
    }
    expect(await revoked).toBe(true);
    const { rows } = await pool.query<{ status: string; reason: string }>(
      'SELECT status, reason FROM lists WHERE key_id = $1',
      [record.id],
    );
    expect(rows).toEqual([{ status: 'Error', reason: REVOKED_LIST_REASON }]);
    await api.stop();
  });

  it("removes at start the uploads of a node killed mid-way, never a live node's", async () => {
    const inShared = ['--data-dir', shared.path];
    // One after the other: the first to start makes the folder's database.
    const doomed = await team.api(inShared);
    const live = await team.api(inShared);
    const { key } = await newKey();
    const body = listBody(20_000);
    const uploads: StalledUpload[] = [];
    // One upload half sent to each node: the doomed node's first, so that its file is the one seen first.
    uploads.push(await startStalledUpload(doomed.url, key, body, body.length >> 1));
    await until("the doomed node's upload to start", () => partFiles(shared.path).length === 1);
    const [doomedPart] = partFiles(shared.path);
    uploads.push(await startStalledUpload(live.url, key, body, body.length >> 1));
    await until("the live node's upload to start", () => partFiles(shared.path).length === 2);
    const livePart = partFiles(shared.path).find((path) => path !== doomedPart)!;

    await doomed.kill();
    uploads[0].abandon();
    expect(existsSync(doomedPart)).toBe(true);
    // The next node to start on the folder removes what the killed node left, and only that.
    const next = await team.api(inShared);
    expect(partFiles(shared.path)).toEqual([livePart]);
    const answer = await uploads[1].finish();
    expect(answer.status, answer.body).toBe(202);
    expect(partFiles(shared.path)).toEqual([]);
    await Promise.all([live.stop(), next.stop()]);
  });
});
