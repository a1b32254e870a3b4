// A team server as a team runs one: PostgreSQL, two API nodes (`serve --database --workers 0`) and two verifier
// nodes (`worker`, leaving from 127.0.0.2 and 127.0.0.3), every one a process of the built CLI. A list is
// submitted on one API node, followed (E8) and fetched (E10) on the other, and its results are byte for byte
// what the single-node service writes for the same list and key — at the offline level, and at the SMTP
// level against a loopback world of DNS and mail servers. The team's lists are cut in parts of 300 rows, the
// single node's of 10,000: the results do not depend on the parts.
import { zipSync } from 'fflate';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema, type ListResource } from '../../shared/api/list.js';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import {
  getResults,
  getStatus,
  startListService,
  submit,
  type ListService,
  type SubmitOptions,
} from '../service/lists/helpers.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { parseDnsServers } from '../../service/engine/online/index.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';
import { sweepPgLists } from '../../service/pg/retention.js';

let team: TeamCluster;
let apis: TeamProcess[];
let single: ListService;
let farm: MailFarm;
let dns: TestDnsServer;

const ONLINE_ARGS = () => [
  // The mail world is on loopback: a team worker refuses private MX addresses unless allowed.
  '--allow-private-mx',
  ...mailFarmArgs(dns, farm),
  '--retry-delay',
  '1',
  '--max-wait',
  '3',
];

beforeAll(async () => {
  farm = await startMailFarm(
    {
      mailbox: SERVERS.mailbox,
      catchall: SERVERS.catchall,
      grey: SERVERS.grey,
      blocklist: SERVERS.blocklist,
    },
    21,
  );
  const all = zones(farm);
  const keep = [
    'users.example.net',
    'mx.users.example.net',
    'other.example.net',
    'fallback.example.net',
    'catchall.example.net',
    'mx.catchall.example.net',
    'grey.example.net',
    'mx.grey.example.net',
    'bigmail.example.net',
    'mx.bigmail.example.net',
    'nullmx.example.net',
    'nomail.example.net',
    'gmail.com',
    'gmail-smtp-in.l.google.com',
  ];
  dns = await startDnsServer(Object.fromEntries(keep.map((name) => [name, all[name]])));
  team = await startTeam();
  apis = await Promise.all([team.api(), team.api()]);
  await Promise.all([
    team.worker('127.0.0.2', ['--part-rows', '300', ...ONLINE_ARGS()]),
    team.worker('127.0.0.3', ['--part-rows', '300', ...ONLINE_ARGS()]),
  ]);
  const parsed = parseDnsServers(dns.address);
  if (!parsed.ok) throw new Error('bad DNS address');
  single = await startListService({ retryDelayMs: 1000, maxWaitMs: 3000 });
  // The single node with the same online settings as the workers (a service of its own on the same folder).
  await single.service.close();
  const { startService } = await import('../../service/server.js');
  single.service = await startService({
    dataDir: single.dataDir,
    db: single.db,
    port: 0,
    online: {
      dnsServers: parsed.servers,
      smtpPort: farm.port,
      heloName: 'verifier.mailsieve.test',
      mailFrom: 'probe@mailsieve.test',
    },
    lists: { retryDelayMs: 1000, maxWaitMs: 3000 },
  });
  single.url = single.service.url;
}, 120_000);

afterAll(async () => {
  await team?.close();
  await single?.close();
  await dns?.close();
  await farm?.close();
});

async function waitOn(base: string, key: string, id: number, timeoutMs = 120_000): Promise<ListResource> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await getStatus(base, key, id);
    expect(answer.status).toBe(200);
    const list = listResourceSchema.parse(answer.json());
    if (['Results', 'Processed', 'Invalid', 'Error'].includes(list.status)) return list;
    if (Date.now() > deadline) throw new Error(`list ${id} still ${list.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The same list through the team (submitted on one API node, read on the other) and the single node. */
async function both(teamKey: string, singleKey: string, body: Uint8Array | string, options: SubmitOptions) {
  const sent = await submit(apis[0].url, teamKey, body, options);
  expect(sent.status, sent.text).toBe(202);
  const id = sent.json<{ list_id: number }>().list_id;
  const sentSingle = await submit(single.url, singleKey, body, options);
  expect(sentSingle.status, sentSingle.text).toBe(202);
  const idSingle = sentSingle.json<{ list_id: number }>().list_id;
  const [teamList, singleList] = await Promise.all([
    waitOn(apis[1].url, teamKey, id),
    waitOn(single.url, singleKey, idSingle),
  ]);
  const teamResults = await getResults(apis[1].url, teamKey, id);
  const singleResults = await getResults(single.url, singleKey, idSingle);
  return { teamList, singleList, teamResults, singleResults };
}

/** A list of `rows` rows over a few domains, with duplicates far apart (in different parts), blank lines and a quoted field. */
function bigList(rows: number, lineBreak = '\n'): string {
  const out = ['email,name,note'];
  for (let i = 0; i < rows; i++) {
    if (i % 977 === 5) out.push('');
    const address = i % 500 === 7 ? 'dup.person@example.org' : `person${i}@example${i % 7}.com`;
    out.push(`${address},Person ${i},${i % 333 === 0 ? '"a note, with a comma\nand a line"' : 'plain'}`);
  }
  out.push('', '');
  return out.join(lineBreak);
}

describe('a team server: two API nodes, two verifier nodes', () => {
  it('gives results byte-identical to the single node at the offline level: CSV, TXT, ZIP, BOM and CR lines', async () => {
    const teamKey = await team.key(['--corrections']);
    const singleKey = single.key({ services: ['validation', 'corrections'] });
    const shapes: { body: Uint8Array | string; options: SubmitOptions }[] = [
      { body: bigList(2_500), options: { query: { header: 'true', name: 'people.csv' } } },
      {
        body: `\ufeff${bigList(1_000, '\r')}`,
        options: { query: { header: 'true', name: 'old-mac.csv' }, as: 'text' },
      },
      {
        body: ['jane@gmial.com', 'x@@y', '', 'bob@example.com', 'bob@example.com'].join('\n'),
        options: { query: { name: 'plain.txt' }, as: 'text' },
      },
      {
        body: zipSync({ 'inner list.csv': Buffer.from(bigList(1_200)) }),
        options: { query: { header: 'true', name: 'zipped.zip' }, fileName: 'zipped.zip' },
      },
    ];
    for (const shape of shapes) {
      const { teamList, singleList, teamResults, singleResults } = await both(
        teamKey,
        singleKey,
        shape.body,
        shape.options,
      );
      expect(teamList.status).toBe('Results');
      expect(teamResults.status).toBe(200);
      expect(teamResults.bytes.equals(singleResults.bytes)).toBe(true);
      expect(teamResults.headers.get('content-type')).toBe(singleResults.headers.get('content-type'));
      expect(teamResults.headers.get('content-length')).toBe(String(singleResults.bytes.length));
      // The reports too: the parts' counts summed are the whole list's.
      expect(teamList.records).toBe(singleList.records);
      expect(teamList.services.email_validation?.reporting).toEqual(
        singleList.services.email_validation?.reporting,
      );
    }
  });

  it('gives results byte-identical to the single node at the SMTP level against the loopback mail world', async () => {
    const teamKey = await team.key(['--checks', 'smtp']);
    const singleKey = single.key({ services: ['validation'], checks: 'smtp' });
    const addresses = [
      'alice@users.example.net',
      'bob@users.example.net',
      'carol@users.example.net',
      'nobody@users.example.net',
      'someone@other.example.net',
      'alice@fallback.example.net',
      'ann@catchall.example.net',
      'gina@grey.example.net',
      'someone@bigmail.example.net',
      'someone@nullmx.example.net',
      'someone@nomail.example.net',
      'someone@missing.example.net',
    ];
    const rows = ['email,n'];
    for (let i = 0; i < 900; i++) rows.push(`${addresses[i % addresses.length]},${i}`);
    const { teamList, teamResults, singleResults } = await both(teamKey, singleKey, rows.join('\n') + '\n', {
      query: { header: 'true', name: 'online.csv' },
    });
    expect(teamList.status).toBe('Results');
    expect(teamList.checks).toBe('smtp');
    const text = teamResults.text;
    expect(text).toContain('alice@users.example.net,0,valid,50,');
    expect(text).toContain('nobody@users.example.net,3,invalid,400,');
    expect(text).toContain('ann@catchall.example.net,6,valid,45,');
    expect(teamResults.bytes.equals(singleResults.bytes)).toBe(true);
  });

  it('deletes a completed list with its input, parts and results once its retention has passed', async () => {
    const key = await team.key();
    const sent = await submit(apis[0].url, key, 'email\nkept@example.com\ngone@example.com\n', {
      query: { header: 'true', name: 'old.csv' },
    });
    expect(sent.status, sent.text).toBe(202);
    const id = sent.json<{ list_id: number }>().list_id;
    expect((await waitOn(apis[1].url, key, id)).status).toBe('Results');
    const db = new pg.Pool({ connectionString: team.database, max: 1 });
    try {
      const held = async () => {
        const { rows } = await db.query<{ blobs: string; parts: string }>(
          `SELECT (SELECT count(*) FROM list_blobs WHERE list_id = $1) AS blobs,
                  (SELECT count(*) FROM list_parts WHERE list_id = $1) AS parts`,
          [id],
        );
        return { blobs: Number(rows[0].blobs), parts: Number(rows[0].parts) };
      };
      // Its input went when it got its results (uploadLimits.test.ts); its parts' results stay until retention.
      expect((await held()).parts).toBeGreaterThan(0);
      // 29 days after it completed it is kept; 31 days after, the sweep of any node deletes it, once.
      const day = 24 * 60 * 60 * 1000;
      expect(await sweepPgLists(db, 30, Date.now() + 29 * day)).not.toContain(id);
      expect((await getStatus(apis[0].url, key, id)).status).toBe(200);
      expect(await sweepPgLists(db, 30, Date.now() + 31 * day)).toContain(id);
      expect(await sweepPgLists(db, 30, Date.now() + 31 * day)).not.toContain(id);
      expect(await held()).toEqual({ blobs: 0, parts: 0 });
      const gone = await getStatus(apis[1].url, key, id);
      expect(gone.status).toBe(404);
    } finally {
      await db.end();
    }
  });
});
