// `serve --database` without `--workers 0` runs a verifier node in its own process: that node takes the options a
// `worker` takes (one definition, electron/cli/teamOptions.ts), so a one-process team server retries a greylisted
// row as its operator says instead of waiting the default 30 minutes. A built CLI process each, on a PostgreSQL
// cluster of the test's own, against a loopback greylisting mail server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema, type ListResource } from '../../shared/api/list.js';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import { getResults, getStatus, submit } from '../service/lists/helpers.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';

let team: TeamCluster;
let farm: MailFarm;
let dns: TestDnsServer;

beforeAll(async () => {
  farm = await startMailFarm({ grey: SERVERS.grey }, 24);
  const all = zones(farm);
  dns = await startDnsServer({
    'grey.example.net': all['grey.example.net'],
    'mx.grey.example.net': all['mx.grey.example.net'],
  });
  team = await startTeam();
}, 60_000);

afterAll(async () => {
  await team?.close();
  await dns?.close();
  await farm?.close();
});

/** A one-process team server (API and verifier node), its online checks pointed at the loopback world. */
const oneProcess = (sourceAddress: string, more: string[]) =>
  team.api([
    '--workers',
    '1',
    '--source-address',
    sourceAddress,
    ...mailFarmArgs(dns, farm),
    // The mail world is on loopback, which a team node does not ask unless told to.
    '--allow-private-mx',
    '--dnsbl',
    'none',
    ...more,
  ]);

async function run(
  node: TeamProcess,
  key: string,
): Promise<{ list: ListResource; results: string; ms: number }> {
  const started = Date.now();
  const sent = await submit(node.url, key, 'email\ngina@grey.example.net\n', {
    query: { header: 'true', name: 'grey.csv' },
  });
  expect(sent.status, sent.text).toBe(202);
  const id = sent.json<{ list_id: number }>().list_id;
  for (;;) {
    const list = listResourceSchema.parse((await getStatus(node.url, key, id)).json());
    if (['Results', 'Invalid', 'Error'].includes(list.status))
      return { list, results: (await getResults(node.url, key, id)).text, ms: Date.now() - started };
    if (Date.now() - started > 60_000) throw new Error(`list still ${list.status}\n${node.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('serve --database runs its verifier node with the worker’s options', () => {
  it('--max-wait 0: a greylisted row is not asked again and the list ends at once, unknown', async () => {
    const node = await oneProcess('127.0.0.2', ['--max-wait', '0', '--parts', '2']);
    const key = await team.key(['--checks', 'smtp']);
    const { list, results, ms } = await run(node, key);
    expect(list.status).toBe('Results');
    expect(results).toMatch(/^gina@grey\.example\.net,unknown,5,/m);
    expect(ms).toBeLessThan(30_000);
    await node.stop();
  }, 90_000);

  it('--retry-delay 1: the greylisted row is asked again a second later and found', async () => {
    const node = await oneProcess('127.0.0.3', ['--retry-delay', '1', '--max-wait', '60']);
    const key = await team.key(['--checks', 'smtp']);
    const { list, results } = await run(node, key);
    expect(list.status).toBe('Results');
    expect(results).toMatch(/^gina@grey\.example\.net,valid,50,/m);
    await node.stop();
  }, 90_000);
});
