// Faults lose nothing on a team server. A verifier node killed (SIGKILL) while it holds a part: the part goes
// back to the queue when its lease expires, another node does it, and the list's results are identical to an
// undisturbed run's, its records counted once against the key's quota. PostgreSQL restarted mid-list: the nodes
// connect again and go on. An API node killed mid-upload: no half list becomes visible, and the client's retry
// on another node works. A part that fails on every attempt gives the list Error, with the reason in E8.
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema, type ListResource } from '../../shared/api/list.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import { runCli } from '../helpers/cli.js';
import { getResults, getStatus, submit } from '../service/lists/helpers.js';

let team: TeamCluster;
let api: TeamProcess;
let other: TeamProcess;
let farm: MailFarm;
let dns: TestDnsServer;
let db: pg.Pool;

const USERS = Array.from({ length: 1_200 }, (_, i) => `user${i}@users.example.net`);
/** Most addresses exist (a conversation ends after 10 refusals: the few unknown keep them long). */
const EXISTING = USERS.filter((_, i) => i % 20 !== 0);

const workerArgs = () => [
  // The mail world is on loopback: a team worker refuses private MX addresses unless allowed.
  '--allow-private-mx',
  ...mailFarmArgs(dns, farm),
  '--part-rows',
  '200',
  '--lease-seconds',
  '6',
  '--retry-delay',
  '1',
  '--max-wait',
  '2',
];

beforeAll(async () => {
  farm = await startMailFarm(
    { mailbox: { kind: 'smtp', domains: ['users.example.net'], users: EXISTING, tls: false } },
    22,
  );
  dns = await startDnsServer({
    'users.example.net': { mx: [[10, 'mx.users.example.net']] },
    'mx.users.example.net': { a: [farm.ip('mailbox')] },
  });
  team = await startTeam();
  [api, other] = await Promise.all([team.api(), team.api()]);
  db = new pg.Pool({ connectionString: team.database, max: 2 });
  db.on('error', () => undefined);
}, 60_000);

afterAll(async () => {
  await db?.end();
  await team?.close();
  await dns?.close();
  await farm?.close();
});

async function waitOn(base: string, key: string, id: number, timeoutMs = 180_000): Promise<ListResource> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await getStatus(base, key, id).catch(() => undefined);
    if (answer?.status === 200) {
      const list = listResourceSchema.parse(answer.json());
      if (['Results', 'Processed', 'Invalid', 'Error'].includes(list.status)) return list;
    }
    if (Date.now() > deadline) {
      const jobs = await db
        .query<{ name: string; state: string; n: string }>(
          `SELECT name, state, count(*) AS n FROM pgboss.job GROUP BY name, state ORDER BY name, state`,
        )
        .catch(() => ({ rows: [] }));
      throw new Error(
        `list ${id} not done after ${timeoutMs} ms: ${answer?.text ?? 'no answer'}; jobs ${JSON.stringify(jobs.rows)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const listBody = () => ['email,n', ...USERS.map((address, i) => `${address},${i}`)].join('\n') + '\n';

async function usedBy(key: string): Promise<number> {
  const usage = await runCli(['keys', 'usage', '--database', team.database, '--json']);
  const row = usage.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { key: string; used: number })
    .find((entry) => key.endsWith(entry.key.slice(1)));
  return row?.used ?? -1;
}

async function submitted(key: string, body: string, name: string): Promise<number> {
  const sent = await submit(api.url, key, body, { query: { header: 'true', name }, as: 'text' });
  expect(sent.status, sent.text).toBe(202);
  return sent.json<{ list_id: number }>().list_id;
}

const activeParts = async () =>
  Number(
    (
      await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM pgboss.job WHERE name = 'list-part' AND state = 'active'`,
      )
    ).rows[0]?.n ?? 0,
  );

describe('faults on a team server', { timeout: 240_000 }, () => {
  let reference: Buffer;
  let key: string;

  it('gives the undisturbed results first (one worker)', async () => {
    key = await team.key(['--checks', 'smtp', '--quota', '100000']);
    const worker = await team.worker('127.0.0.2', workerArgs());
    const id = await submitted(key, listBody(), 'undisturbed.csv');
    const list = await waitOn(other.url, key, id);
    expect(list.reason ?? list.status).toBe('Results');
    reference = (await getResults(other.url, key, id)).bytes;
    const text = reference.toString('utf8');
    expect(text).toContain('user1@users.example.net,1,valid,50,');
    expect(text).toContain('user0@users.example.net,0,invalid,400,');
    await worker.stop();
  });

  it('finishes a list whose worker is killed while it holds a part: same results, records counted once', async () => {
    const before = await usedBy(key);
    const first = await team.worker('127.0.0.2', workerArgs());
    const id = await submitted(key, listBody(), 'killed.csv');
    // The worker has taken a part and answered some of its addresses: then it dies, holding it.
    await until('a part in the hands of the worker', async () => (await activeParts()) > 0);
    await until('some online answers', async () => {
      const list = listResourceSchema.parse((await getStatus(other.url, key, id)).json());
      return (list.online?.rows_checked ?? 0) > 0;
    });
    await first.kill();
    expect(await activeParts()).toBeGreaterThan(0);
    const second = await team.worker('127.0.0.3', workerArgs());
    const list = await waitOn(other.url, key, id);
    expect(list.status).toBe('Results');
    expect(list.records).toBe(USERS.length);
    expect((await getResults(other.url, key, id)).bytes.equals(reference)).toBe(true);
    expect((await usedBy(key)) - before).toBe(USERS.length);
    await second.stop();
  });

  it('finishes a list while PostgreSQL is restarted in the middle of it: same results, records counted once', async () => {
    const before = await usedBy(key);
    const worker = await team.worker('127.0.0.2', workerArgs());
    const id = await submitted(key, listBody(), 'restarted.csv');
    await until('a part in the hands of the worker', async () => (await activeParts()) > 0);
    await team.pg.stop('fast');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await team.pg.start();
    const list = await waitOn(other.url, key, id).catch((error: Error) => {
      throw new Error(`${error.message}\nworker: ${worker.output()}`);
    });
    expect(list.status).toBe('Results');
    expect((await getResults(other.url, key, id)).bytes.equals(reference)).toBe(true);
    expect((await usedBy(key)) - before).toBe(USERS.length);
    await worker.stop();
  });

  it('shows no half list when an API node is killed mid-upload, and the retry on another node works', async () => {
    const offlineKey = await team.key();
    const lists = async () =>
      Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM lists')).rows[0]?.n);
    const count = await lists();
    const victim = await team.api();
    // A body that arrives slowly: the node is killed while it is half received.
    let sent = 0;
    const chunk = Buffer.from(`${'x'.repeat(40)}@example.com,slow\n`.repeat(2_000));
    const body = new Readable({
      read() {
        sent++;
        if (sent === 1) this.push(Buffer.from('email,n\n'));
        else if (sent < 400) setTimeout(() => this.push(chunk), 5);
      },
    });
    const upload = fetch(`${victim.url}/v5/list?header=true&name=slow.csv`, {
      method: 'POST',
      headers: { api_key: offlineKey, 'content-type': 'text/csv' },
      body: Readable.toWeb(body) as ReadableStream,
      duplex: 'half',
    }).catch((error: Error) => error);
    await until('the upload under way', () => Promise.resolve(sent > 20));
    await victim.kill();
    expect(await upload).toBeInstanceOf(Error);
    expect(await lists()).toBe(count);
    const retry = await submit(other.url, offlineKey, 'email\nretry@example.com\n', {
      query: { header: 'true', name: 'slow.csv' },
      as: 'text',
    });
    expect(retry.status).toBe(202);
    expect(await lists()).toBe(count + 1);
    const worker = await team.worker('127.0.0.2', workerArgs());
    const list = await waitOn(other.url, offlineKey, retry.json<{ list_id: number }>().list_id);
    expect(list.status).toBe('Results');
    await worker.stop();
  });

  it('gives a list Error, with the reason in E8, when a part fails on every attempt', async () => {
    const offlineKey = await team.key();
    // Every part of this list is stored unreadable (as if planned by a Mailsieve of another version).
    await db.query(`
      CREATE OR REPLACE FUNCTION spoil_parts() RETURNS trigger AS $$
      BEGIN
        IF NEW.list_id = (SELECT max(id) FROM lists) THEN NEW.plan_rows := '\\x09000000'::bytea; END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql;
      CREATE TRIGGER spoil BEFORE INSERT ON list_parts FOR EACH ROW EXECUTE FUNCTION spoil_parts();
    `);
    try {
      const worker = await team.worker('127.0.0.2', workerArgs());
      const id = await submitted(offlineKey, 'email\na@example.com\nb@example.com\n', 'spoilt.csv');
      const list = await waitOn(other.url, offlineKey, id, 120_000);
      expect(list.status).toBe('Error');
      expect(list.reason).toMatch(
        /^Processing failed: part 1 of the list failed 3 times \(.*another version of Mailsieve.*\); submit the list again\.$/,
      );
      expect(list.services.email_validation?.status).toBe('Error');
      await worker.stop();
    } finally {
      await db.query('DROP TRIGGER spoil ON list_parts; DROP FUNCTION spoil_parts();');
    }
  });
});
