// Mailbox checks do not reach private addresses from a service that faces clients (issue 27, point 6). A
// client's domain names a mail host on this machine (127.0.47.10, the loopback mail world): a team worker, and
// a `serve` listening off loopback, connect to it only when started with --allow-private-mx; without it the
// row is unknown (5) with its cause in words (E8's online.unknown_causes, the explanation), and the mail
// server sees no connection. A loopback `serve` keeps allowing it (the desktop's case).
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema } from '../../shared/api/list.js';
import { runCli, startCli } from '../helpers/cli.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { tempDir } from '../helpers/service.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import { submit, waitForList } from '../service/lists/helpers.js';

let farm: MailFarm;
let dns: TestDnsServer;
let team: TeamCluster;
let api: TeamProcess;

const LIST = 'email\nalice@users.example.net\nnobody@users.example.net\n';

beforeAll(async () => {
  farm = await startMailFarm(
    { mailbox: { kind: 'smtp', domains: ['users.example.net'], users: ['alice@users.example.net'] } },
    47,
  );
  dns = await startDnsServer({
    'users.example.net': { mx: [[10, 'mx.users.example.net']] },
    'mx.users.example.net': { a: [farm.ip('mailbox')] },
    'gmail.com': { mx: [[10, 'mx.users.example.net']] },
  });
  team = await startTeam();
  api = await team.api();
}, 60_000);

afterAll(async () => {
  await team?.close();
  await dns?.close();
  await farm?.close();
});

const online = () => [...mailFarmArgs(dns, farm)];

async function runOnTeam(worker: TeamProcess) {
  const key = await team.key(['--checks', 'smtp']);
  const sent = await submit(api.url, key, LIST, { query: { header: 'true' } });
  expect(sent.status, sent.text).toBe(202);
  const id = sent.json<{ list_id: number }>().list_id;
  const list = await waitForList(api.url, key, id, 60_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${worker.output()}`);
  });
  const results = await (
    await fetch(`${api.url}/v5/list/${id}/results`, { headers: { api_key: key } })
  ).text();
  const explain = await (
    await fetch(`${api.url}/v5/list/${id}/explain`, { headers: { api_key: key } })
  ).text();
  return { list, results, explain };
}

describe('mail hosts at private addresses', () => {
  it('a team worker refuses them unless started with --allow-private-mx', async () => {
    const before = farm.log('mailbox').connections;
    const refusing = await team.worker('127.0.0.2', [...online(), '--max-wait', '0']);
    const refused = await runOnTeam(refusing);
    await refusing.stop();
    expect(refused.list.status).toBe('Results');
    expect(farm.log('mailbox').connections).toBe(before);
    const causes = refused.list.online?.unknown_causes ?? [];
    expect(causes).toEqual([
      {
        count: 2,
        cause: { kind: 'private-address', host: 'mx.users.example.net' },
        text: 'mx.users.example.net is at a private address (this machine or a private network), which this service does not connect to',
      },
    ]);
    expect(refused.explain).toContain(`mx.users.example.net is at a private address (${farm.ip('mailbox')})`);
    expect(refused.results.split('\n')[1]).toMatch(/,5,|,unknown,/);

    const allowing = await team.worker('127.0.0.3', [...online(), '--max-wait', '0', '--allow-private-mx']);
    const allowed = await runOnTeam(allowing);
    await allowing.stop();
    expect(farm.log('mailbox').connections).toBeGreaterThan(before);
    expect(allowed.list.online?.unknown_causes ?? []).toEqual([]);
    expect(listResourceSchema.parse(allowed.list).status).toBe('Results');
  });

  it('serve off loopback refuses them unless --allow-private-mx; on loopback it allows them', async () => {
    const insecure = new Agent({ connect: { rejectUnauthorized: false } });
    const codeOf = async (args: string[], base: (port: string) => string) => {
      const dir = tempDir();
      try {
        const key = (
          await runCli(['keys', 'create', '--data-dir', dir.path, '--rate-limit', '0', '--checks', 'smtp'])
        ).stdout.trim();
        const server = await startCli(
          ['serve', '--port', '0', '--data-dir', dir.path, ...online(), ...args],
          /listening on https?:\/\/[^:]+:(\d+)/,
        );
        try {
          const response = await undiciFetch(
            `${base(server.match[1])}/v5/ev?email=alice%40users.example.net&api_key=${key}`,
            { dispatcher: insecure },
          );
          const body = (await response.json()) as { safe_to_send: { status_code: number } };
          return body.safe_to_send.status_code;
        } finally {
          await server.stop();
        }
      } finally {
        dir.remove();
      }
    };
    const offLoopback = ['--host', '0.0.0.0', '--tls-self-signed'];
    const https = (port: string) => `https://127.0.0.1:${port}`;
    expect(await codeOf(offLoopback, https)).toBe(5);
    expect(await codeOf([...offLoopback, '--allow-private-mx'], https)).toBe(50);
    expect(await codeOf([], (port) => `http://127.0.0.1:${port}`)).toBe(50);
  });
});
