// The DNS client and mail routing against a real DNS server on loopback (dns2, UDP and TCP).
import { afterEach, describe, expect, it } from 'vitest';
import { closedUdpPort, startDnsServer, startSilentDnsServer } from '../../../helpers/dnsServer.js';
import {
  DnsClient,
  MailResolver,
  parseDnsServers,
  type DnsServer,
} from '../../../../service/engine/online/dns.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function servers(text: string): DnsServer[] {
  const parsed = parseDnsServers(text);
  if (!parsed.ok) throw new Error(`bad servers ${text}`);
  return parsed.servers;
}

function resolverFor(
  address: string,
  options: ConstructorParameters<typeof MailResolver>[1] = {},
  timeouts = {},
) {
  const client = new DnsClient({ servers: servers(address), ...timeouts });
  cleanups.push(() => client.close());
  return new MailResolver(client, options);
}

describe('parseDnsServers', () => {
  it('reads IPv4 and IPv6 servers with and without ports, and refuses host names', () => {
    expect(parseDnsServers('127.0.0.1:5353, 10.0.0.1,[::1]:53,::1')).toEqual({
      ok: true,
      servers: [
        { host: '127.0.0.1', port: 5353 },
        { host: '10.0.0.1', port: 53 },
        { host: '::1', port: 53 },
        { host: '::1', port: 53 },
      ],
    });
    expect(parseDnsServers('dns.example.com:53')).toEqual({ ok: false, bad: 'dns.example.com:53' });
    expect(parseDnsServers('127.0.0.1:99999')).toEqual({ ok: false, bad: '127.0.0.1:99999' });
  });
});

describe('mail routing', () => {
  it('reads MX hosts in preference order with their addresses from the additional section', async () => {
    const dns = await startDnsServer({
      'a.example.net': {
        mx: [
          [20, 'mx2.a.example.net'],
          [10, 'mx1.a.example.net'],
        ],
      },
      'mx1.a.example.net': { a: ['127.0.0.5'] },
      'mx2.a.example.net': { a: ['127.0.0.6'] },
    });
    cleanups.push(() => dns.close());
    const { routing } = await resolverFor(dns.address).mailRouting('a.example.net', Date.now() + 2000);
    expect(routing).toEqual({
      kind: 'mx',
      hosts: [
        { name: 'mx1.a.example.net', preference: 10, addresses: ['127.0.0.5'] },
        { name: 'mx2.a.example.net', preference: 20, addresses: ['127.0.0.6'] },
      ],
    });
    expect(dns.queries).toEqual(['a.example.net MX']);
  });

  it('keeps an answer for its TTL (raised to the minimum TTL), then asks again', async () => {
    const dns = await startDnsServer({ 'ttl.example.net': { mx: [[10, 'mx.ttl.example.net']], ttl: 1 } });
    cleanups.push(() => dns.close());
    const resolver = resolverFor(dns.address, { minTtlS: 0 });
    await resolver.mailRouting('ttl.example.net', Date.now() + 2000);
    await resolver.mailRouting('ttl.example.net', Date.now() + 2000);
    expect(dns.count('ttl.example.net', 'MX')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await resolver.mailRouting('ttl.example.net', Date.now() + 2000);
    expect(dns.count('ttl.example.net', 'MX')).toBe(2);
    // With the default minimum TTL (300 s) the same 1 s record is kept: a list asks once.
    const patient = resolverFor(dns.address);
    await patient.mailRouting('ttl.example.net', Date.now() + 2000);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await patient.mailRouting('ttl.example.net', Date.now() + 2000);
    expect(dns.count('ttl.example.net', 'MX')).toBe(3);
  });

  it('asks again over TCP when the UDP answer is truncated', async () => {
    const mx = Array.from(
      { length: 60 },
      (_, i) => [i, `a-rather-long-mail-exchanger-name-${i}.big.example.net`] as const,
    );
    const dns = await startDnsServer({ 'big.example.net': { mx } });
    cleanups.push(() => dns.close());
    const { routing } = await resolverFor(dns.address).mailRouting('big.example.net', Date.now() + 2000);
    expect(routing.kind).toBe('mx');
    expect(routing.kind === 'mx' && routing.hosts).toHaveLength(60);
    expect(dns.count('big.example.net', 'MX')).toBe(2); // UDP (truncated), then TCP
  });

  it('falls back to A, and tells NXDOMAIN, null MX and no records apart', async () => {
    const dns = await startDnsServer({
      'a-only.example.net': { a: ['127.0.0.9'] },
      'null.example.net': { mx: [[0, '.']] },
      'empty.example.net': {},
    });
    cleanups.push(() => dns.close());
    const resolver = resolverFor(dns.address);
    const at = () => Date.now() + 2000;
    expect((await resolver.mailRouting('a-only.example.net', at())).routing).toEqual({
      kind: 'implicit',
      hosts: [{ name: 'a-only.example.net', preference: 0, addresses: ['127.0.0.9'] }],
    });
    expect((await resolver.mailRouting('null.example.net', at())).routing).toEqual({ kind: 'null-mx' });
    expect((await resolver.mailRouting('empty.example.net', at())).routing).toEqual({ kind: 'no-mail' });
    expect((await resolver.mailRouting('gone.example.net', at())).routing).toEqual({ kind: 'nxdomain' });
  });

  it('does not believe NXDOMAIN from a resolver that denies the top-level domain too (no upstream)', async () => {
    const dns = await startDnsServer({}, { mode: 'isolated' });
    cleanups.push(() => dns.close());
    const { routing, notes } = await resolverFor(dns.address).mailRouting('example.com', Date.now() + 2000);
    expect(routing.kind).toBe('unknown');
    expect(routing.kind === 'unknown' && routing.reason).toMatch(
      /even the top-level domain \.com does not exist/,
    );
    expect(notes.join('\n')).toMatch(/not trusted/);
  });

  it('reports SERVFAIL, a closed port and silence as failures with their reasons, and uses the next server', async () => {
    const failing = await startDnsServer({}, { mode: 'servfail' });
    const silent = await startSilentDnsServer();
    const good = await startDnsServer({ 'ok.example.net': { mx: [[1, 'mx.ok.example.net']] } });
    cleanups.push(
      () => failing.close(),
      () => silent.close(),
      () => good.close(),
    );
    const closed = await closedUdpPort();
    const at = () => Date.now() + 3000;
    const timeouts = { attemptTimeoutMs: 200, queryTimeoutMs: 1000 };
    const servfail = await resolverFor(failing.address, {}, timeouts).mailRouting('ok.example.net', at());
    expect(servfail.routing.kind === 'unknown' && servfail.routing.reason).toMatch(/answered SERVFAIL/);
    const started = Date.now();
    const refused = await resolverFor(closed, {}, timeouts).mailRouting('ok.example.net', at());
    expect(refused.routing.kind === 'unknown' && refused.routing.reason).toMatch(/refused the query/);
    expect(Date.now() - started).toBeLessThan(500);
    const quiet = await resolverFor(silent.address, {}, timeouts).mailRouting('ok.example.net', at());
    expect(quiet.routing.kind === 'unknown' && quiet.routing.reason).toMatch(/did not answer in time/);
    expect(silent.received()).toBeGreaterThanOrEqual(2);
    const fallback = await resolverFor(
      `${closed},${silent.address},${good.address}`,
      {},
      timeouts,
    ).mailRouting('ok.example.net', at());
    expect(fallback.routing.kind).toBe('mx');
  });
});
