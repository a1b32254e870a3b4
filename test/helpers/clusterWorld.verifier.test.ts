// The single-node verifier, with its default politeness and leaving from one source address, gets from the
// cluster benchmark's mail world the codes the world expects, without ever tripping its per-source limits:
// what the benchmark's 1-node round rests on. The world runs in its worker thread, from dist/.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOnlineVerifier, parseDnsServers } from '../../service/engine/online/index.js';
import { NO_POLICY } from '../../service/engine/types.js';
import { expectedCode, rowAddress, startClusterWorld, type ClusterWorld } from '../bench/clusterWorld.js';
import { listOrder } from '../bench/clusterData.js';

const SOURCE = '127.0.0.2';
let world: ClusterWorld;

beforeAll(async () => {
  world = await startClusterWorld({ domains: 40, rows: 400, hosts: 3, hostNetwork: '127.1.8' });
});
afterAll(async () => {
  await world?.close();
});

it('gets the expected code of every row from one source address, within the world’s limits', async () => {
  const servers = parseDnsServers(world.dns);
  if (!servers.ok) throw new Error(`bad DNS address ${world.dns}`);
  const verifier = createOnlineVerifier({
    dnsServers: servers.servers,
    smtpPort: world.smtpPort,
    sourceAddress: SOURCE,
    heloName: 'node-a.mailsieve.test',
    mailFrom: 'probe@node-a.mailsieve.test',
  });
  const rows = [...listOrder(world.config)].map((row) => rowAddress(world.config, row));
  const codes = new Map<string, number>();
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        while (next < rows.length) {
          const address = rows[next++];
          const verdict = await verifier.verify(address, NO_POLICY, { level: 'smtp', budgetMs: 60_000 });
          codes.set(address, verdict.code);
        }
      }),
    );
  } finally {
    await verifier.close();
  }
  const wrong = rows.filter((address) => codes.get(address) !== expectedCode(world.config, address));
  expect(wrong.map((address) => `${address}: ${codes.get(address)}`)).toEqual([]);
  expect(new Set(codes.values())).toEqual(new Set([45, 50, 400]));

  const summary = await world.summary();
  // Only the verifier's source address spoke, to the DNS server and the mail hosts.
  expect(Object.keys(summary.sources)).toEqual([SOURCE]);
  const source = summary.sources[SOURCE];
  expect(source).toMatchObject({ refused: 0, cut: 0 });
  expect(source.peakPerHost).toBeLessThanOrEqual(2);
  expect(source.dnsQuestions).toBeGreaterThan(0);
  expect(summary.dns.maxMxPerDomain).toBe(1);
  expect(summary.smtp).toMatchObject({ rowsAsked: 400, maxProbesPerDomain: 1 });
  expect(summary.busy).toBeGreaterThan(0);
  expect(summary.busy).toBeLessThan(1);
}, 60_000);
