// `mailsieve status` on a team server as a team runs one: PostgreSQL, an API node and two verifier nodes (on
// 127.0.0.2 and 127.0.0.3, heartbeat 1 s, so a node's lease is 3 s), each a process of the built CLI, against a
// loopback world of DNS and mail servers. A list at SMTP level waits for a greylisting retry while status shows
// the nodes alive, the queue, the list in flight and each source address's last hour (a block-list refusal among
// them); each worker's check of its own address (one of them listed) shows in its log and in status; a worker
// killed outright disappears once its lease runs out, one stopped disappears at once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import { runCli } from '../helpers/cli.js';
import { submit } from '../service/lists/helpers.js';
import { startDnsServer, startSilentDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';
import { readTeamStatus, type TeamStatus } from '../../service/pg/status.js';

let team: TeamCluster;
let api: TeamProcess;
let workers: TeamProcess[];
let farm: MailFarm;
let dns: TestDnsServer;
let pool: pg.Pool;

const online = (n: number) => [
  ...mailFarmArgs(dns, farm, `verifier${n}.mailsieve.test`),
  '--dnsbl',
  'bl.mailsieve.test',
  '--heartbeat-seconds',
  '1',
  // The mail farm is on loopback, which a worker does not ask unless told to.
  '--allow-private-mx',
  // The greylisted address waits for its retry long after the test is over: its list stays in flight.
  '--retry-delay',
  '600',
  '--max-wait',
  '3600',
];

beforeAll(async () => {
  farm = await startMailFarm(
    { mailbox: SERVERS.mailbox, grey: SERVERS.grey, blocklist: SERVERS.blocklist },
    22,
  );
  const all = zones(farm);
  const keep = [
    'users.example.net',
    'mx.users.example.net',
    'grey.example.net',
    'mx.grey.example.net',
    'bigmail.example.net',
    'mx.bigmail.example.net',
  ];
  dns = await startDnsServer({
    ...Object.fromEntries(keep.map((name) => [name, all[name]])),
    // 127.0.0.2: reverse DNS confirmed, the HELO name its name. 127.0.0.3: on the block list.
    '2.0.0.127.in-addr.arpa': { ptr: ['verifier2.mailsieve.test'] },
    'verifier2.mailsieve.test': { a: ['127.0.0.2'] },
    '3.0.0.127.in-addr.arpa': { ptr: ['verifier3.mailsieve.test'] },
    'verifier3.mailsieve.test': { a: ['127.0.0.3'] },
    '3.0.0.127.bl.mailsieve.test': { a: ['127.0.0.2'], txt: ['Listed: seen sending spam'] },
  });
  team = await startTeam();
  pool = new pg.Pool({ connectionString: team.database, max: 2 });
  api = await team.api(['--heartbeat-seconds', '1']);
  workers = await Promise.all([team.worker('127.0.0.2', online(2)), team.worker('127.0.0.3', online(3))]);
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await team?.close();
  await dns?.close();
  await farm?.close();
});

/** Waits up to 5 s for a node to print what matches `pattern`. */
async function printedBy(node: { output(): string }, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!pattern.test(node.output()) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

async function until(
  what: string,
  isDone: (status: TeamStatus) => boolean,
  timeoutMs = 60_000,
): Promise<TeamStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await readTeamStatus(pool);
    if (isDone(status)) return status;
    if (Date.now() > deadline) {
      const { rows } = await pool.query('SELECT id, status, reason, checks, records FROM lists');
      throw new Error(
        `${JSON.stringify(rows)} ` +
          `${what}: still ${JSON.stringify(status)}\n${workers.map((w) => w.output()).join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const workerAt = (status: TeamStatus, address: string) =>
  status.nodes.find((node) => node.role === 'worker' && node.source_address === address);

describe('mailsieve status', () => {
  it('shows the nodes alive, the queue, the lists in flight and each address’s last hour', async () => {
    const key = await team.key(['--checks', 'smtp', '--label', 'Client A']);
    const sent = await submit(
      api.url,
      key,
      'email\ngina@grey.example.net\nbob@bigmail.example.net\nalice@users.example.net\n',
      { query: { header: 'true', name: 'online.csv' } },
    );
    expect(sent.status, sent.text).toBe(202);
    const status = await until(
      'the list waiting for its retry, its refusal counted, both self-checks done',
      (s) =>
        s.queue.part.waiting >= 1 &&
        s.last_hour.some((hour) => (hour.refusals.block ?? 0) >= 1) &&
        s.nodes.filter((node) => node.self_check !== null).length === 2,
    );
    expect(status.nodes.map((node) => [node.role, node.source_address]).sort()).toEqual([
      ['api', null],
      ['worker', '127.0.0.2'],
      ['worker', '127.0.0.3'],
    ]);
    for (const node of status.nodes) expect(node.version).toBe('0.1.0');
    expect(status.lists_in_flight).toEqual([
      { key_id: expect.any(Number) as unknown, label: 'Client A', lists: 1, records: 3, completed: 2 },
    ]);
    expect(status.queue.plan).toEqual({ waiting: 0, active: 0, retry: 0 });
    const hours = status.last_hour.filter((hour) => hour.source_address.startsWith('127.0.0.'));
    expect(hours.map((hour) => hour.source_address)).toEqual(['127.0.0.2', '127.0.0.3']);
    const sum = (pick: (hour: (typeof hours)[number]) => number) => hours.reduce((n, h) => n + pick(h), 0);
    expect(sum((hour) => hour.conversations)).toBeGreaterThanOrEqual(2);
    expect(sum((hour) => hour.refusals.block ?? 0)).toBe(1);
    expect(sum((hour) => hour.unknown.blocked ?? 0)).toBe(1);
    expect(sum((hour) => hour.unknown.deferred ?? 0)).toBe(1);

    // Each worker's check of its own address: 127.0.0.2 fit, 127.0.0.3 listed — in status and in its log.
    expect(workerAt(status, '127.0.0.2')?.self_check).toMatchObject({
      ok: true,
      is_listed: false,
      confirmed_name: 'verifier2.mailsieve.test',
      helo: { name: 'verifier2.mailsieve.test', matches: true },
    });
    expect(workerAt(status, '127.0.0.3')?.self_check).toMatchObject({
      is_listed: true,
      block_lists: [
        {
          zone: 'bl.mailsieve.test',
          status: 'listed',
          codes: ['127.0.0.2'],
          reason: 'Listed: seen sending spam',
        },
      ],
    });
    // The node's log is written a moment later than its row (pino's lines go out in batches).
    await printedBy(workers[1], /LISTED: 127\.0\.0\.3 is listed on bl\.mailsieve\.test/);
    await printedBy(workers[0], /Self-check: source address 127\.0\.0\.2 is fit/);
    expect(workers[1].output()).toMatch(
      /Self-check: source address 127\.0\.0\.3 is LISTED on a DNS block list/,
    );
    expect(workers[1].output()).toMatch(/LISTED: 127\.0\.0\.3 is listed on bl\.mailsieve\.test/);
    expect(workers[0].output()).toMatch(/Self-check: source address 127\.0\.0\.2 is fit/);

    // The command itself: text for a person, JSON for scripts.
    const text = await runCli(['status', '--database', team.database]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Nodes alive: 3$/m);
    expect(text.stdout).toMatch(
      /^ {2}worker +127\.0\.0\.3 +0\.1\.0 +\d+ s ago +\d+ +\S+\/\d+ +LISTED on bl\.mailsieve\.test$/m,
    );
    expect(text.stdout).toMatch(/^ {2}worker +127\.0\.0\.2 +0\.1\.0 +\d+ s ago +\d+ +\S+\/\d+ +ok$/m);
    expect(text.stdout).toMatch(/^ {2}part +[1-9]\d* +\d+ +\d+$/m);
    expect(text.stdout).toMatch(/^ {2}#\d+ +Client A +1 +3 +2$/m);
    expect(text.stdout).toMatch(
      /^ {2}127\.0\.0\.\d: \d+ SMTP conversations; refusals: block 1; unknown answers: /m,
    );
    const json = await runCli(['status', '--database', team.database, '--json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as TeamStatus;
    expect(parsed.nodes).toHaveLength(3);
    expect(parsed.lists_in_flight[0]).toMatchObject({ label: 'Client A', lists: 1 });
  }, 120_000);

  it('starts a worker at once when its DNS does not answer: the block lists could not be checked, not listed', async () => {
    const silent = await startSilentDnsServer();
    try {
      const started = Date.now();
      // The default block lists (zen.spamhaus.org, …), asked of a resolver that never answers.
      const args = online(4).filter((arg) => !['--dnsbl', 'bl.mailsieve.test'].includes(arg));
      args[args.indexOf(dns.address)] = silent.address;
      const worker = await team.worker('127.0.0.4', args);
      expect(Date.now() - started).toBeLessThan(15_000);
      const status = await until(
        'its self-check done',
        (s) => workerAt(s, '127.0.0.4')?.self_check != null,
        30_000,
      );
      expect(workerAt(status, '127.0.0.4')?.self_check).toMatchObject({
        is_listed: false,
        ptr: { status: 'unchecked' },
        block_lists: [
          { zone: 'zen.spamhaus.org', status: 'unchecked' },
          { zone: 'bl.spamcop.net', status: 'unchecked' },
          { zone: 'b.barracudacentral.org', status: 'unchecked' },
        ],
      });
      await printedBy(worker, /Block list zen\.spamhaus\.org: could not check/);
      expect(worker.output()).toMatch(
        /Self-check: source address 127\.0\.0\.4 has 4 problem\(s\), and is not listed\./,
      );
      expect(worker.output()).toMatch(
        /Block list zen\.spamhaus\.org: could not check \(.*did not answer in time\)/,
      );
      await worker.stop();
    } finally {
      await silent.close();
    }
  }, 60_000);

  it('drops a worker killed outright once its lease runs out, and one stopped at once', async () => {
    const [, listed] = workers;
    const before = await readTeamStatus(pool);
    const gone = workerAt(before, '127.0.0.3')!;
    expect(gone).toBeDefined();
    await listed.kill();
    const killedAt = Date.now();
    // Its row stays while its lease (3 heartbeats of 1 s) holds: nobody knows yet that it died.
    expect(workerAt(await readTeamStatus(pool), '127.0.0.3')?.id).toBe(gone.id);
    await until('the killed worker gone', (s) => !workerAt(s, '127.0.0.3'), 30_000);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(1000);
    const after = await readTeamStatus(pool);
    // The live nodes are still there: their heartbeats renew their leases.
    expect(after.nodes.map((node) => node.role).sort()).toEqual(['api', 'worker']);
    expect(workerAt(after, '127.0.0.2')!.last_seen > gone.last_seen).toBe(true);

    await workers[0].stop();
    const stopped = await readTeamStatus(pool);
    expect(stopped.nodes.map((node) => node.role)).toEqual(['api']);
  }, 60_000);
});
