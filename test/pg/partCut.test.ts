// A part's checks cut between two jobs on a team server (issue 38; service/lists/node/onlinePhase.ts and
// service/pg/listBackend.ts, cutPart and closeRange), against a real PostgreSQL and a real verifier asking loopback
// mail servers: a node with room for only the first of a heavy domain's part asks those, and the rest goes at
// once to a job of its own (for a node with room now, not when the first job ends). Each job asks its own range
// of the part's checks, none twice; the job that closes the last open range, and no other, writes the part, with
// every address; a job of a range stopped mid-way is asked again for what is left of its range only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type PgPool } from '../../service/pg/db.js';
import { PgListBackend } from '../../service/pg/listBackend.js';
import { createPgKey } from '../../service/pg/keys.js';
import {
  createOnlineVerifier,
  parseDnsServers,
  type OnlineVerifier,
} from '../../service/engine/online/index.js';
import {
  DomainShare,
  Lanes,
  runPartOnline,
  type OnlinePhaseSettings,
  type PartOnlineOutcome,
} from '../../service/lists/node/onlinePhase.js';
import type { PartWork } from '../../service/lists/backend/port.js';
import type { ListPolicy, PartContext } from '../../service/lists/types.js';
import { toVerifyPolicy } from '../../service/lists/verdicts.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { tempDir } from '../helpers/service.js';

const DOMAIN = 'big.example.net';
const ROWS = 100;
/** 60% real mailboxes (user<i> with i % 5 < 3), the others unknown. */
const isReal = (i: number) => i % 5 < 3;
const addresses = Array.from({ length: ROWS }, (_, i) => `user${i}@${DOMAIN}`);
const rowCounts = addresses.map(() => 1);

let cluster: PostgresCluster;
let pool: PgPool;
let backend: PgListBackend;
let farm: MailFarm;
let dns: TestDnsServer;
let verifier: OnlineVerifier;
let keyId: number;
const work = tempDir('mailsieve-part-cut-');

beforeAll(async () => {
  cluster = await startPostgres();
  const url = await cluster.createDatabase('cut');
  pool = await openPostgres(url);
  backend = new PgListBackend(pool, url, { workRoot: work.path });
  await backend.start();
  farm = await startMailFarm(
    {
      big: {
        kind: 'smtp',
        domains: [DOMAIN],
        users: addresses.filter((_, i) => isReal(i)),
      },
    },
    42,
  );
  dns = await startDnsServer({
    [DOMAIN]: { mx: [[10, `mx.${DOMAIN}`]] },
    [`mx.${DOMAIN}`]: { a: [farm.ip('big')] },
    'mailsieve.test': { mx: [[10, 'mx.mailsieve.test']] },
    'mx.mailsieve.test': { a: ['127.0.0.9'] },
  });
  const servers = parseDnsServers(dns.address);
  if (!servers.ok) throw new Error('bad DNS address');
  verifier = createOnlineVerifier({
    dnsServers: servers.servers,
    smtpPort: farm.port,
    heloName: 'verifier.mailsieve.test',
    mailFrom: 'probe@mailsieve.test',
    smtpPacingMs: 5,
  });
  keyId = (await createPgKey(pool, { mode: 'safe_to_send', services: ['validation'], checks: 'smtp' })).record
    .id;
}, 120_000);

afterAll(async () => {
  await verifier?.close();
  await backend?.close();
  await pool?.end();
  await cluster?.close();
  await dns?.close();
  await farm?.close();
  work.remove();
});

const policy: ListPolicy = {
  corrections: false,
  allow: [],
  suppress: [],
  legacyAcceptAll: false,
  online: true,
};
const settings: OnlinePhaseSettings = {
  level: 'smtp',
  policy,
  verifyPolicy: toVerifyPolicy(policy),
  budgetMs: 10_000,
  retryDelayMs: 300_000,
  maxWaitMs: 0,
  sliceMs: 60_000,
};

/** A list being processed, with one part of ROWS rows: its id. */
async function newList(): Promise<number> {
  const at = new Date().toISOString();
  const { rows } = await pool.query<{ id: number }>(
    `INSERT INTO lists (key_id, name, input_file, options, size_bytes, created_at, updated_at, status, checks)
     VALUES ($1, 'cut.csv', 'cut.csv', '{}', 0, $2, $2, 'Processing', 'smtp') RETURNING id`,
    [keyId, at],
  );
  await pool.query(`INSERT INTO list_parts (list_id, run, part, rows, plan_rows) VALUES ($1, 1, 0, $2, '')`, [
    rows[0].id,
    ROWS,
  ]);
  return rows[0].id;
}

/** The part as its job reads it (runPartOnline reads its bounds and online state, not the list's context). */
async function partWork(listId: number): Promise<PartWork> {
  const { rows } = await pool.query<{ cuts: number[]; open_ranges: number[] }>(
    'SELECT cuts, open_ranges FROM list_parts WHERE list_id = $1 AND run = 1 AND part = 0',
    [listId],
  );
  return {
    context: { listId } as unknown as PartContext,
    bounds: { index: 0, firstRow: 0, rowCount: ROWS, byteStart: 0, byteEnd: 0 },
    online: null,
    isDone: false,
    waitingSince: null,
    isFinishedEarly: false,
    cuts: rows[0].cuts,
    openRanges: rows[0].open_ranges,
  };
}

/**
 * A node's job of the part: the checks it had answered, and its outcome. `hold` gates its checks; `stopAfter`:
 * its node stops as that check starts.
 */
async function job(
  listId: number,
  share: DomainShare,
  options: { from?: number; hold?: Promise<void>; stopAfter?: number } = {},
): Promise<{ asked: number[]; outcome: PartOnlineOutcome }> {
  const asked: number[] = [];
  const stopping = new AbortController();
  const node: OnlineVerifier = Object.create(verifier) as OnlineVerifier;
  let started = 0;
  node.verify = async (address, verifyPolicy, verifyOptions) => {
    if (++started === options.stopAfter) stopping.abort();
    await options.hold;
    const verdict = await verifier.verify(address, verifyPolicy, verifyOptions);
    // (A check stopped before its turn is no answer: the part's next job asks it.)
    if (!verdict.cancelled) asked.push(addresses.indexOf(address));
    return verdict;
  };
  const outcome = await runPartOnline(addresses, rowCounts, await partWork(listId), settings, {
    verifier: node,
    lanes: new Lanes(2),
    backend,
    listId,
    run: 1,
    part: 0,
    stopping: stopping.signal,
    share,
    from: options.from,
  });
  return { asked, outcome };
}

/** The jobs queued for the list's part, by their data. */
async function partJobs(listId: number): Promise<{ part: number; from?: number }[]> {
  const { rows } = await pool.query<{ data: { part: number; from?: number } }>(
    `SELECT data FROM pgboss.job WHERE name = 'list-part' AND (data->>'listId')::bigint = $1 ORDER BY created_on`,
    [listId],
  );
  return rows.map(({ data }) => ({
    part: data.part,
    ...(data.from !== undefined ? { from: data.from } : {}),
  }));
}

/** A node that already holds `held` checks of the domain (from its other parts). */
function nodeHolding(held: number): DomainShare {
  const share = new DomainShare();
  if (held > 0) share.take(Array.from({ length: held }, () => DOMAIN));
  return share;
}

const range = (start: number, end: number) => Array.from({ length: end - start }, (_, i) => start + i);

/** Every address of the part, answered as its mailbox is (50: it exists; 400: no such mailbox). */
function expectEveryAnswer(outcome: PartOnlineOutcome): void {
  if (outcome.kind !== 'done') throw new Error(`the part's outcome is ${outcome.kind}, not done`);
  const byIndex = new Map(outcome.verdicts.indexes.map((index, i) => [index, outcome.verdicts.codes[i]]));
  expect([...byIndex.keys()].sort((a, b) => a - b)).toEqual(range(0, ROWS));
  for (const [index, code] of byIndex) expect([index, code]).toEqual([index, isReal(index) ? 50 : 400]);
}

async function openRanges(listId: number): Promise<{ cuts: number[]; open: number[] }> {
  const { rows } = await pool.query<{ cuts: number[]; open_ranges: number[] }>(
    'SELECT cuts, open_ranges FROM list_parts WHERE list_id = $1',
    [listId],
  );
  return { cuts: rows[0].cuts, open: rows[0].open_ranges };
}

describe('a part cut between two jobs', () => {
  it('hands its rest on at once; each job asks its own checks; the last job to end writes the part, with every row', async () => {
    const listId = await newList();
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    // Node A holds 60 checks of the domain already: it has room for 40 of this part, and takes those only.
    const a = job(listId, nodeHolding(60), { hold });
    await expect.poll(() => partJobs(listId)).toEqual([{ part: 0, from: 40 }]);
    expect(await openRanges(listId)).toEqual({ cuts: [40], open: [0, 40] });
    // Node B takes the rest while A still asks its first 40 (before, the rest waited for A's job to end).
    const b = await job(listId, nodeHolding(0), { from: 40 });
    expect(b.asked.sort((x, y) => x - y)).toEqual(range(40, ROWS));
    expect(b.outcome.kind).toBe('elsewhere');
    release();
    const first = await a;
    expect(first.asked.sort((x, y) => x - y)).toEqual(range(0, 40));
    expectEveryAnswer(first.outcome);
    expect(await openRanges(listId)).toEqual({ cuts: [], open: [] });
  }, 60_000);

  it('is written by the job of its rest when the first job ends first', async () => {
    const listId = await newList();
    const a = await job(listId, nodeHolding(70));
    expect(a.asked.sort((x, y) => x - y)).toEqual(range(0, 30));
    expect(a.outcome.kind).toBe('elsewhere');
    expect(await partJobs(listId)).toEqual([{ part: 0, from: 30 }]);
    const b = await job(listId, nodeHolding(0), { from: 30 });
    expect(b.asked.sort((x, y) => x - y)).toEqual(range(30, ROWS));
    expectEveryAnswer(b.outcome);
  }, 60_000);

  it('asks a range stopped mid-way again for what is left of it only, and is still written once', async () => {
    const listId = await newList();
    const a = await job(listId, nodeHolding(50));
    expect(a.outcome.kind).toBe('elsewhere');
    // The node asking the rest stops after 10 checks (as a node killed: its job is taken again, same range).
    const stopped = await job(listId, nodeHolding(0), { from: 50, stopAfter: 10 });
    expect(stopped.outcome).toEqual({ kind: 'later', from: 50 });
    const again = await job(listId, nodeHolding(0), { from: 50 });
    const asked = [...a.asked, ...stopped.asked, ...again.asked];
    // Each check answered once, by one job or the other.
    expect(asked.sort((x, y) => x - y)).toEqual(range(0, ROWS));
    expectEveryAnswer(again.outcome);
  }, 60_000);

  it('has exactly one of two jobs closing their ranges at once go on to write it', async () => {
    const listId = await newList();
    for (let round = 0; round < 20; round++) {
      await pool.query(`UPDATE list_parts SET cuts = '{40}', open_ranges = '{0,40}' WHERE list_id = $1`, [
        listId,
      ]);
      const last = await Promise.all([
        backend.closeRange(listId, 1, 0, 0),
        backend.closeRange(listId, 1, 0, 40),
      ]);
      expect(last.filter(Boolean)).toHaveLength(1);
      expect(await openRanges(listId)).toEqual({ cuts: [], open: [] });
    }
  });
});
