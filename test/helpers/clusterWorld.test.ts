// The cluster benchmark's mail world (test/bench/clusterWorld.ts) keeps the rules of a real mail server, per
// source address, over real sockets: connection limit, greeting delay, error tarpit, catch-all domains, and
// the counts the benchmark reads. Its list (clusterData.ts) holds every row once, interleaved, with the code
// each should get. The world runs in its worker thread, from dist/ (`npm run build` first).
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  clusterWorldConfig,
  domainName,
  expectedCode,
  hostName,
  hostOf,
  isCatchAllDomain,
  isExistingRow,
  startClusterWorld,
  type ClusterWorld,
} from '../bench/clusterWorld.js';
import { writeClusterList } from '../bench/clusterData.js';
import { connectSmtp, type RawSmtp } from './smtpClient.js';
import { tempDir } from './service.js';

const A = '127.0.0.2';
const B = '127.0.0.3';
let world: ClusterWorld;

beforeAll(async () => {
  world = await startClusterWorld({
    domains: 50,
    rows: 500,
    hosts: 2,
    hostNetwork: '127.1.9',
    catchAllShare: 0.2,
    // Postfix's limits as the benchmark has them, its 1 s sleep shortened to keep the test short.
    errorLimits: { soft: 10, hard: 20, sleepMs: 200 },
  });
});
afterAll(async () => {
  await world?.close();
});
beforeEach(async () => {
  await world.reset();
});

/** A domain of host `host` that is (or is not) catch-all, and its rows that exist and that do not. */
function pickDomain(host: number, isCatchAll: boolean) {
  for (let domain = 0; domain < world.config.domains; domain++) {
    if (hostOf(world.config, domain) !== host || isCatchAllDomain(world.config, domain) !== isCatchAll)
      continue;
    const rows = Array.from({ length: 10 }, (_, index) => index);
    const existing = rows.filter((index) => isExistingRow(world.config, domain, index));
    const unknown = rows.filter((index) => !isExistingRow(world.config, domain, index));
    if (isCatchAll || (existing.length > 0 && unknown.length > 0))
      return {
        name: domainName(domain),
        existing: `p${existing[0]}@${domainName(domain)}`,
        unknown: `p${unknown[0]}@${domainName(domain)}`,
      };
  }
  throw new Error(`no such domain at host ${host}`);
}

const connect = (host: number, source: string) => connectSmtp(world.hosts[host], world.smtpPort, source);

async function greeted(host: number, source: string): Promise<RawSmtp> {
  const session = await connect(host, source);
  expect((await session.reply()).code).toBe(220);
  return session;
}

async function quit(session: RawSmtp): Promise<void> {
  expect((await session.command('QUIT')).code).toBe(221);
  await session.closed;
}

describe('the cluster mail world', () => {
  it('serves two connections at once per source address and host, and answers a third 421', async () => {
    const first = await greeted(0, A);
    const second = await greeted(0, A);
    const third = await connect(0, A);
    expect(await third.reply()).toMatchObject({
      code: 421,
      text: '4.7.0 Too many connections from your IP, try again later',
    });
    await third.closed;
    // Another source address, and the same one at another host, are counted apart.
    const other = await greeted(0, B);
    const elsewhere = await greeted(1, A);
    // The two first are still served; once one has gone, the address gets in again.
    expect((await first.command('EHLO node-a.test')).code).toBe(250);
    expect((await second.command('EHLO node-a.test')).code).toBe(250);
    await quit(first);
    const again = await greeted(0, A);
    await Promise.all([second, other, elsewhere, again].map(quit));

    const { sources, smtp } = await world.summary();
    expect(sources[A]).toMatchObject({ connections: 5, refused: 1, peakPerHost: 2, peak: 3 });
    expect(sources[B]).toMatchObject({ connections: 1, refused: 0, peakPerHost: 1, peak: 1 });
    expect(smtp).toMatchObject({ connections: 6, refused: 1 });
    expect(smtp.hosts[world.hosts[0]].connections).toBe(5);
  });

  it('counts a connection as gone once its client has said QUIT, as a client that does not wait for 221 expects', async () => {
    const first = await greeted(0, A);
    const second = await greeted(0, A);
    // Pipelined behind commands of its own, the QUIT is a few turns of the server's event loop from being
    // answered; the client is done all the same.
    first.send(`${'NOOP\r\n'.repeat(300)}QUIT`);
    const next = await greeted(0, A);
    await first.closed;
    await Promise.all([second, next].map(quit));
    expect((await world.summary()).sources[A]).toMatchObject({ connections: 3, refused: 0, peak: 2 });
  });

  it('judges a new connection after reading what came with it: a busy server reads a QUIT and a connection in one go', async () => {
    const first = await greeted(0, A);
    const second = await greeted(0, A);
    // While the world's thread is busy, the kernel completes the new connection and queues the QUIT; the
    // server then finds both in one poll, the connection first.
    await world.stall(300);
    const next = await connect(0, A);
    first.send('QUIT');
    expect((await next.reply()).code).toBe(220);
    await first.closed;
    await Promise.all([second, next].map(quit));
    expect((await world.summary()).sources[A]).toMatchObject({ connections: 3, refused: 0, peak: 2 });
  });

  it('counts a connection its client has reset as gone at once', async () => {
    const first = await greeted(0, A);
    const second = await greeted(0, A);
    // Read by a busy server in one go: the reset, then the new connection. The reset's 'close' comes only
    // after the new connection is judged; its 'error' before.
    await world.stall(300);
    first.reset();
    const next = await connect(0, A);
    expect((await next.reply()).code).toBe(220);
    await Promise.all([second, next].map(quit));
    expect((await world.summary()).sources[A]).toMatchObject({ connections: 3, refused: 0, peak: 2 });
  });

  it('greets after 100 ms', async () => {
    const session = await connect(0, A);
    const greeting = await session.reply();
    expect(greeting.code).toBe(220);
    // The server's timer counts from its event loop's time of the accept, which may lag the accept by a
    // millisecond or two; the client's connect comes no later than the accept.
    expect(greeting.at - session.connectedAt).toBeGreaterThanOrEqual(97);
    await quit(session);
  });

  it('slows its replies after 10 errors in a session and cuts the session after 20', async () => {
    const domain = pickDomain(0, false);
    const session = await greeted(0, A);
    expect((await session.command('EHLO node-a.test')).code).toBe(250);
    expect((await session.command('MAIL FROM:<probe@node-a.test>')).code).toBe(250);
    for (let i = 0; i < 10; i++)
      expect(await session.command(`RCPT TO:<nobody${i}@${domain.name}>`)).toMatchObject({
        code: 550,
        text: '5.1.1 User unknown',
      });
    expect((await world.summary()).sources[A]).toMatchObject({ errors: 10, tarpitted: 0 });
    // Past 10 errors, every reply waits: an accepted address too.
    const asked = performance.now();
    const accepted = await session.command(`RCPT TO:<${domain.existing}>`);
    expect(accepted.code).toBe(250);
    expect(accepted.at - asked).toBeGreaterThanOrEqual(195);
    for (let i = 10; i < 20; i++)
      expect((await session.command(`RCPT TO:<${domain.unknown}>`)).code).toBe(550);
    expect(await session.command(`RCPT TO:<${domain.existing}>`)).toMatchObject({
      code: 421,
      text: '4.7.0 Error: too many errors',
    });
    await session.closed;
    expect((await world.summary()).sources[A]).toMatchObject({
      rcpts: 21,
      errors: 20,
      tarpitted: 11,
      cut: 1,
    });
    // The next session starts with no errors.
    const next = await greeted(0, A);
    expect((await next.command('EHLO node-a.test')).code).toBe(250);
    expect((await next.command('MAIL FROM:<probe@node-a.test>')).code).toBe(250);
    expect((await next.command(`RCPT TO:<${domain.unknown}>`)).code).toBe(550);
    await quit(next);
    expect((await world.summary()).sources[A]).toMatchObject({ tarpitted: 11, cut: 1 });
  });

  it('accepts any address at a catch-all domain, and knows its users elsewhere; counts rows and probes', async () => {
    const catchAll = pickDomain(1, true);
    const strict = pickDomain(1, false);
    const session = await greeted(1, B);
    expect((await session.command('EHLO node-b.test')).code).toBe(250);
    expect((await session.command('MAIL FROM:<probe@node-b.test>')).code).toBe(250);
    const rcpt = async (address: string) => (await session.command(`RCPT TO:<${address}>`)).code;
    expect(await rcpt(`qzxjvkwpmr4821@${catchAll.name}`)).toBe(250);
    expect(await rcpt(`another7731@${catchAll.name}`)).toBe(250);
    expect(await rcpt(catchAll.existing)).toBe(250);
    expect(await rcpt(strict.existing)).toBe(250);
    expect(await rcpt(strict.existing)).toBe(250);
    expect(await rcpt(strict.unknown)).toBe(550);
    expect(await rcpt(`qzxjvkwpmr4821@${strict.name}`)).toBe(550);
    // Another host's domain is not this one's to take.
    expect(await rcpt(pickDomain(0, false).existing)).toBe(554);
    await quit(session);
    expect(expectedCode(world.config, catchAll.existing)).toBe(45);
    expect(expectedCode(world.config, strict.existing)).toBe(50);
    expect(expectedCode(world.config, strict.unknown)).toBe(400);
    expect(expectedCode(world.config, `qzxjvkwpmr4821@${strict.name}`)).toBeUndefined();

    const { smtp, sources } = await world.summary();
    expect(smtp).toMatchObject({
      rcpts: 8,
      rowRcpts: 5,
      rowsAsked: 4,
      maxRcptsPerRow: 2,
      rowsAskedAgain: 1,
      probes: 3,
      domainsProbed: 2,
      maxProbesPerDomain: 2,
    });
    expect(sources[B]).toMatchObject({ rcpts: 8, errors: 3 });
  });

  it('answers MX questions with a shared mail host and counts them per domain, host and source', async () => {
    const domain = 7;
    const host = hostOf(world.config, domain);
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setLocalAddress(A);
    resolver.setServers([world.dns]);
    expect(await resolver.resolveMx(domainName(domain))).toEqual([
      { exchange: hostName(host), priority: 10 },
    ]);
    await resolver.resolveMx(domainName(domain));
    await resolver.resolveMx(domainName(domain + 1));
    expect(await resolver.resolve4(hostName(host))).toEqual([world.hosts[host]]);
    const { dns, sources } = await world.summary();
    expect(dns).toEqual({
      questions: 4,
      mxQuestions: 3,
      domainsAsked: 2,
      maxMxPerDomain: 2,
      addressQuestionsPerHost: { [hostName(host)]: 1 },
    });
    expect(sources[A].dnsQuestions).toBe(4);

    await world.reset();
    const cleared = await world.summary();
    expect(cleared.dns).toMatchObject({ questions: 0, maxMxPerDomain: 0 });
    expect(cleared.sources).toEqual({});
  });
});

describe('the cluster list', () => {
  it('holds every row once, domains interleaved, with the code each should get, the same each time', async () => {
    const dir = tempDir('mailsieve-cluster-list-');
    try {
      const options = { domains: 50, rows: 500, catchAllShare: 0.2 };
      const list = await writeClusterList(join(dir.path, 'list.csv'), options);
      const text = readFileSync(list.path, 'utf8');
      const [header, ...lines] = text.trimEnd().split('\n');
      expect(header).toBe('email,first_name,customer_id');
      expect(lines).toHaveLength(500);
      const emails = lines.map((line) => line.split(',')[0]);
      expect(new Set(emails).size).toBe(500);
      const config = clusterWorldConfig(options);
      emails.forEach((email, i) => expect(list.expected[i]).toBe(expectedCode(config, email)));
      expect(Object.keys(list.expectedCounts).map(Number).sort()).toEqual([400, 45, 50]);
      expect(Object.values(list.expectedCounts).reduce((a, b) => a + b, 0)).toBe(500);
      // Cut into parts of 100 rows (as the server cuts lists into parts of 10,000), each domain's 10 rows fall
      // into several parts.
      const parts = new Map<string, Set<number>>();
      emails.forEach((email, i) => {
        const domain = email.slice(email.indexOf('@') + 1);
        parts.set(domain, (parts.get(domain) ?? new Set()).add(Math.floor(i / 100)));
      });
      expect(parts.size).toBe(50);
      for (const seen of parts.values()) expect(seen.size).toBeGreaterThan(1);
      // Not the world's own order.
      expect(emails.slice(0, 3)).not.toEqual([
        'p0@d0.cluster.example.net',
        'p0@d1.cluster.example.net',
        'p0@d2.cluster.example.net',
      ]);

      const again = await writeClusterList(join(dir.path, 'again.csv'), options);
      expect(readFileSync(again.path, 'utf8')).toBe(text);
    } finally {
      dir.remove();
    }
  });
});
