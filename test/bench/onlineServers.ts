// The loopback world of the online bench, in a worker thread so that the servers have a core of their own:
// a DNS server with one zone per domain, and four mail servers (two offering STARTTLS). It counts what it
// is asked and, on request, posts a summary: DNS questions per domain, catch-all probes per domain.
import { parentPort, workerData } from 'node:worker_threads';
import { startDnsServer, type TestZone } from '../helpers/dnsServer.js';
import { startMailFarm, type MailboxBehaviour } from '../helpers/smtpServer.js';

export interface BenchWorld {
  readonly domains: number;
  readonly perDomain: number;
}

export interface BenchCounts {
  dnsQueries: number;
  maxQueriesPerDomain: number;
  domainsAsked: number;
  rcpts: number;
  probes: number;
  maxProbesPerDomain: number;
  connections: number;
  peakConnections: number;
}

const { domains, perDomain } = workerData as BenchWorld;
export const domainName = (i: number): string => `d${i}.bench.example.net`;
// Row local parts are p<N>; anything else a server is asked for is a catch-all probe.
const isRow = (local: string) => /^p\d+$/.test(local);

const names = ['accept', 'users-a', 'users-b', 'users-tls'] as const;
const byServer: Record<(typeof names)[number], string[]> = {
  accept: [],
  'users-a': [],
  'users-b': [],
  'users-tls': [],
};
const users: Record<string, string[]> = { 'users-a': [], 'users-b': [], 'users-tls': [] };
for (let i = 0; i < domains; i++) {
  const server = names[i % 5 === 0 ? 0 : 1 + (i % 3)];
  byServer[server].push(domainName(i));
  // Two thirds of a users domain's addresses exist.
  if (server !== 'accept')
    for (let j = 0; j < perDomain; j++) if (j % 3 !== 0) users[server].push(`p${j}@${domainName(i)}`);
}
const spec = (name: (typeof names)[number]): MailboxBehaviour => ({
  kind: 'smtp',
  domains: byServer[name],
  ...(name === 'accept' ? { acceptAll: true } : { users: users[name] }),
  tls: name === 'users-tls' || name === 'accept',
});
const farm = await startMailFarm(Object.fromEntries(names.map((n) => [n, spec(n)])), 9);
const zones: Record<string, TestZone> = {};
for (const name of names)
  for (const domain of byServer[name]) {
    zones[domain] = { mx: [[10, `mx.${domain}`]] };
    zones[`mx.${domain}`] = { a: [farm.ip(name)] };
  }
const dns = await startDnsServer(zones);

parentPort!.on('message', (message: string) => {
  if (message === 'counts') {
    const perDomain = new Map<string, number>();
    for (const query of dns.queries) {
      const name = query.split(' ')[0];
      const domain = name.startsWith('mx.') ? name.slice(3) : name;
      perDomain.set(domain, (perDomain.get(domain) ?? 0) + 1);
    }
    const probes = new Map<string, number>();
    let rcpts = 0;
    let connections = 0;
    let peak = 0;
    for (const name of names) {
      const log = farm.log(name);
      rcpts += log.rcpts.length;
      connections += log.connections;
      peak += log.peak;
      for (const { address } of log.rcpts) {
        const at = address.lastIndexOf('@');
        if (!isRow(address.slice(0, at)))
          probes.set(address.slice(at + 1), (probes.get(address.slice(at + 1)) ?? 0) + 1);
      }
    }
    const counts: BenchCounts = {
      dnsQueries: dns.queries.length,
      maxQueriesPerDomain: Math.max(0, ...perDomain.values()),
      domainsAsked: perDomain.size,
      rcpts,
      probes: [...probes.values()].reduce((a, b) => a + b, 0),
      maxProbesPerDomain: Math.max(0, ...probes.values()),
      connections,
      peakConnections: peak,
    };
    parentPort!.postMessage({ counts });
  } else if (message === 'close') {
    void Promise.all([dns.close(), farm.close()]).then(() => parentPort!.postMessage({ closed: true }));
  }
});
parentPort!.postMessage({ ready: { dns: dns.address, port: farm.port, plainIp: farm.ip('users-a') } });
