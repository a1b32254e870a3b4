// Mailbox checks do not reach private addresses from a service that faces clients (issue 27, point 6; issue 36,
// point 8). A client's domain names a mail host on this machine (127.0.47.10, the loopback mail world): a team
// worker, a `serve` listening off loopback, and a `serve` on loopback that is a team node (`--database`) or sits
// behind a proxy (`--trust-proxy`: nginx in front, as docs/team-server.md sets it up) connect to it only when
// started with --allow-private-mx; without it the row is unknown (5) with its cause in words (E8's
// online.unknown_causes, the explanation), the mail server sees no connection, and no answer names the
// private address the host resolved to (E1's explain holds no conversation). A plain loopback `serve` keeps
// allowing it (the desktop's case).
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
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

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
    expect(refused.explain).toContain('mx.users.example.net is at a private address');
    expect(refused.explain).not.toContain(farm.ip('mailbox'));
    expect(refused.results.split('\n')[1]).toMatch(/,5,|,unknown,/);

    const allowing = await team.worker('127.0.0.3', [...online(), '--max-wait', '0', '--allow-private-mx']);
    const allowed = await runOnTeam(allowing);
    await allowing.stop();
    expect(farm.log('mailbox').connections).toBeGreaterThan(before);
    expect(allowed.list.online?.unknown_causes ?? []).toEqual([]);
    expect(listResourceSchema.parse(allowed.list).status).toBe('Results');
  });

  it('serve off loopback refuses them unless --allow-private-mx; on loopback it allows them', async () => {
    const offLoopback = ['--host', '0.0.0.0', '--tls-self-signed'];
    expectRefused(await e1OfServe(offLoopback));
    expectAllowed(await e1OfServe([...offLoopback, '--allow-private-mx']));
    expectAllowed(await e1OfServe([]));
  });

  it('serve --database on loopback refuses them unless --allow-private-mx, and E1 names no private address', async () => {
    const key = await team.key(['--checks', 'smtp']);
    const refusing = await team.api([...online()]);
    const before = farm.log('mailbox').connections;
    const refused = await e1(refusing.url, key);
    await refusing.stop();
    expectRefused(refused);
    expect(farm.log('mailbox').connections).toBe(before);

    const allowing = await team.api([...online(), '--allow-private-mx']);
    const allowed = await e1(allowing.url, key);
    await allowing.stop();
    expectAllowed(allowed);
    expect(farm.log('mailbox').connections).toBeGreaterThan(before);
  });

  it('serve --trust-proxy on loopback (no database) refuses them unless --allow-private-mx', async () => {
    const withProxy = ['--trust-proxy', '127.0.0.1'];
    expectRefused(await e1OfServe(withProxy));
    expectAllowed(await e1OfServe([...withProxy, '--allow-private-mx']));
  });
});

interface E1Answer {
  readonly code: number;
  readonly explain: string;
}

/** E1 of alice@users.example.net with `explain`, at an SMTP-level key. */
async function e1(base: string, key: string): Promise<E1Answer> {
  const response = await undiciFetch(
    `${base}/v5/ev?email=alice%40users.example.net&explain=true&api_key=${encodeURIComponent(key)}`,
    // A `serve --tls-self-signed` certificate is its own: this test talks to it on loopback without checking it.
    { dispatcher: insecure },
  );
  const text = await response.text();
  expect(response.status, text).toBe(200);
  const body = JSON.parse(text) as { safe_to_send: { status_code: number }; explain?: string[] };
  return { code: body.safe_to_send.status_code, explain: (body.explain ?? []).join('\n') };
}

/** E1 at a single `mailsieve serve` started with `args`, asked on 127.0.0.1. */
async function e1OfServe(args: string[]): Promise<E1Answer> {
  const dir = tempDir();
  try {
    const key = (
      await runCli(['keys', 'create', '--data-dir', dir.path, '--rate-limit', '0', '--checks', 'smtp'])
    ).stdout.trim();
    const server = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path, ...online(), ...args],
      /listening on (https?):\/\/[^:]+:(\d+)/,
    );
    try {
      return await e1(`${server.match[1]}://127.0.0.1:${server.match[2]}`, key);
    } finally {
      await server.stop();
    }
  } finally {
    dir.remove();
  }
}

/** Unknown (5), its reason in words, no conversation with the mail host and no address of it. */
function expectRefused(answer: E1Answer) {
  expect(answer.code, answer.explain).toBe(5);
  expect(answer.explain).toContain('mx.users.example.net is at a private address');
  expect(answer.explain).not.toContain(farm.ip('mailbox'));
  expect(answer.explain).not.toMatch(/^(C|S): /m);
}

/** The mailbox asked (50: it exists), the conversation in the explanation. */
function expectAllowed(answer: E1Answer) {
  expect(answer.code, answer.explain).toBe(50);
  expect(answer.explain).toMatch(/^C: RCPT TO:<alice@users\.example\.net>$/m);
}
