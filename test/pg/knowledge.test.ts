// What verifier nodes share (service/pg/knowledge.ts): two workers, on two source addresses, check a list
// whose domains' rows are spread over every part, and the whole cluster asks each domain's MX once and probes
// each domain for catch-all once — counted by the DNS and mail servers themselves. Nodes starting at once
// migrate the schema once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema } from '../../shared/api/list.js';
import { startDnsServer, type TestDnsServer, type TestZone } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import { getResults, getStatus, submit } from '../service/lists/helpers.js';
import { PG_MIGRATIONS } from '../../service/pg/migrations/index.js';

const DOMAINS = 60;
const PER_DOMAIN = 10;
const domain = (i: number) => `d${i}.shared.example.net`;

let team: TeamCluster;
let api: TeamProcess;
let farm: MailFarm;
let dns: TestDnsServer;

beforeAll(async () => {
  const users: string[] = [];
  for (let d = 0; d < DOMAINS; d++)
    for (let n = 0; n < PER_DOMAIN; n++) if (n % 4 !== 3) users.push(`p${n}@${domain(d)}`);
  farm = await startMailFarm(
    {
      users: {
        kind: 'smtp',
        domains: Array.from({ length: DOMAINS }, (_, d) => domain(d)).filter((_, d) => d % 3 !== 0),
        users,
        tls: false,
      },
      catchall: {
        kind: 'smtp',
        domains: Array.from({ length: DOMAINS }, (_, d) => domain(d)).filter((_, d) => d % 3 === 0),
        acceptAll: true,
        tls: false,
      },
    },
    23,
  );
  const zones: Record<string, TestZone> = {
    'mx-users.shared.example.net': { a: [farm.ip('users')] },
    'mx-catchall.shared.example.net': { a: [farm.ip('catchall')] },
  };
  for (let d = 0; d < DOMAINS; d++)
    zones[domain(d)] = {
      mx: [[10, d % 3 === 0 ? 'mx-catchall.shared.example.net' : 'mx-users.shared.example.net']],
    };
  dns = await startDnsServer(zones, { glue: false });
  team = await startTeam();
  const args = [
    // The mail world is on loopback: a team worker refuses private MX addresses unless allowed.
    '--allow-private-mx',
    ...mailFarmArgs(dns, farm),
    '--part-rows',
    '100',
    // One part at a time each: the list's parts are shared between the two nodes.
    '--parts',
    '1',
  ];
  // Three nodes started at once on a fresh database: the schema is migrated once.
  [api] = await Promise.all([team.api(), team.worker('127.0.0.2', args), team.worker('127.0.0.3', args)]);
}, 60_000);

afterAll(async () => {
  await team?.close();
  await dns?.close();
  await farm?.close();
});

describe('what verifier nodes share', () => {
  it('migrated the schema once though three nodes started at once', async () => {
    const db = new pg.Client(team.database);
    await db.connect();
    try {
      const { rows } = await db.query<{ version: number }>('SELECT version FROM mailsieve_schema');
      expect(rows).toEqual([{ version: PG_MIGRATIONS.at(-1)!.version }]);
      const queues = await db.query<{ name: string }>('SELECT name FROM pgboss.queue ORDER BY name');
      expect(queues.rows.map((row) => row.name)).toEqual([
        'list-callback',
        'list-failed',
        'list-finish',
        'list-part',
        'list-plan',
      ]);
    } finally {
      await db.end();
    }
  });

  it('asks each domain MX once and probes it for catch-all once, for the whole cluster', async () => {
    const key = await team.key(['--checks', 'smtp']);
    // Rows interleaved by domain: each domain has rows in most of the list's parts (100 rows each).
    const rows = ['email'];
    for (let n = 0; n < PER_DOMAIN; n++) for (let d = 0; d < DOMAINS; d++) rows.push(`p${n}@${domain(d)}`);
    const sent = await submit(api.url, key, rows.join('\n') + '\n', {
      query: { header: 'true' },
      as: 'text',
    });
    expect(sent.status).toBe(202);
    const id = sent.json<{ list_id: number }>().list_id;
    for (const deadline = Date.now() + 120_000; ;) {
      const list = listResourceSchema.parse((await getStatus(api.url, key, id)).json());
      if (list.status === 'Results') break;
      expect(['Pending', 'Processing']).toContain(list.status);
      if (Date.now() > deadline) throw new Error('the list did not finish');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const text = (await getResults(api.url, key, id)).text;
    expect(text).toContain(`p0@${domain(1)},valid,50,`);
    expect(text).toContain(`p3@${domain(1)},invalid,400,`);
    expect(text).toContain(`p3@${domain(0)},valid,45,`);
    for (let d = 0; d < DOMAINS; d++) expect(dns.count(domain(d), 'MX')).toBeLessThanOrEqual(1);
    const probes = new Map<string, number>();
    for (const name of ['users', 'catchall'])
      for (const { address } of farm.log(name).rcpts) {
        const local = address.slice(0, address.indexOf('@'));
        if (/^p\d+$/.test(local)) continue;
        const at = address.slice(address.indexOf('@') + 1);
        probes.set(at, (probes.get(at) ?? 0) + 1);
      }
    expect(probes.size).toBe(DOMAINS);
    expect(Math.max(...probes.values())).toBe(1);
  });
});
