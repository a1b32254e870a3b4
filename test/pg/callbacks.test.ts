// A list's callback on a team server is checked by the node that delivers it (issue 27, point 5). The callback
// name resolves to a public address when the list is submitted (E7 accepts it) and to 127.0.0.1 when the list
// ends (DNS rebinding, a test DNS server): the worker that delivers resolves it again, refuses the private
// address and connects nowhere, so the POST never arrives; a worker started with --allow-private-callbacks
// delivers it.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { submit, waitForList } from '../service/lists/helpers.js';

const HOOK = 'hook.example.net';
let team: TeamCluster;
let api: TeamProcess;
let dns: TestDnsServer;
let receiver: Server;
let port: number;
const received: string[] = [];

beforeAll(async () => {
  dns = await startDnsServer({ [HOOK]: { a: ['203.0.113.7'], ttl: 1 } });
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push(`${request.method} ${request.url} ${body}`);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as { port: number }).port;
  team = await startTeam();
  // An API node that refuses private callback targets (the default), resolving names with the test's DNS.
  api = await team.api(['--dns-servers', dns.address]);
}, 60_000);

afterAll(async () => {
  await team?.close();
  await dns?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** Submits a list whose callback names HOOK while it resolves to a public address, then points HOOK at 127.0.0.1. */
async function submitThenRebind(key: string, path: string): Promise<number> {
  dns.setZone(HOOK, { a: ['203.0.113.7'], ttl: 1 });
  const sent = await submit(api.url, key, 'email\njane@example.com\n', {
    query: { header: 'true', callback_url: `http://${HOOK}:${port}${path}` },
  });
  expect(sent.status, sent.text).toBe(202);
  dns.setZone(HOOK, { a: ['127.0.0.1'], ttl: 1 });
  return sent.json<{ list_id: number }>().list_id;
}

describe('callbacks checked where they are delivered', () => {
  it('a worker does not POST to a name that resolves to this machine when the list ends', async () => {
    const key = await team.key();
    const id = await submitThenRebind(key, '/refused');
    const worker = await team.worker('127.0.0.2', ['--dns-servers', dns.address]);
    expect((await waitForList(api.url, key, id, 60_000)).status).toBe('Results');
    const deadline = Date.now() + 15_000;
    while (!/not delivered/.test(worker.output()) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(worker.output()).toMatch(
      new RegExp(
        `List ${id}: the callback to http://${HOOK}:${port}/refused was not delivered: .*private network`,
      ),
    );
    // Time for any attempt to have arrived.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(received.filter((line) => line.includes('/refused'))).toEqual([]);
    await worker.stop();
  });

  it('a worker started with --allow-private-callbacks delivers it', async () => {
    const key = await team.key();
    const id = await submitThenRebind(key, '/allowed');
    const worker = await team.worker('127.0.0.3', [
      '--dns-servers',
      dns.address,
      '--allow-private-callbacks',
    ]);
    expect((await waitForList(api.url, key, id, 60_000)).status).toBe('Results');
    const deadline = Date.now() + 15_000;
    while (!received.some((line) => line.includes('/allowed')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const posted = received.filter((line) => line.includes('/allowed'));
    expect(posted.length, worker.output()).toBe(1);
    expect(posted[0]).toContain(`"list_id":${id}`);
    await worker.stop();
  });
});
