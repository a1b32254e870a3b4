// What the engine tells the operator about mail servers (service/ops/events.ts, counted by the metrics and
// logged by a worker): each conversation and its outcome, each refusal of this machine by kind — too many at
// once (concurrency), too often (rate), its identity or a rule (policy), a block list (block) — from the
// source address it left from, and a refusing host talking to it again. Real smtp-server instances on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import {
  createOnlineVerifier,
  parseDnsServers,
  type OnlineVerifier,
} from '../../service/engine/online/index.js';
import { subscribe, type OpsEvents } from '../../service/ops/events.js';

const REPLIES = {
  crowd: '421 4.7.0 Too many connections from your IP',
  often: '450 4.7.1 Rate limit exceeded: connecting too often, try later',
  helo: '450 4.7.1 <localhost>: Helo command rejected: Host not found',
  listed: '550 5.7.1 Service unavailable; client [127.0.0.4] blocked using zen.spamhaus.org',
} as const;

/** A server that says "too often" until told otherwise (the farm reads its spec at each RCPT). */
const moody: { kind: 'smtp'; domains: string[]; users: string[]; rcptReply?: string } = {
  kind: 'smtp',
  domains: ['moody.example.net'],
  users: ['ann@moody.example.net'],
  rcptReply: '450 4.7.1 Rate limit exceeded: connecting too often, try later',
};

let dns: TestDnsServer;
let farm: MailFarm;
let verifier: OnlineVerifier;
const refusals: OpsEvents['smtp.refusal'][] = [];
const conversations: OpsEvents['smtp.conversation'][] = [];
const recovered: OpsEvents['smtp.recovered'][] = [];
const stops: (() => void)[] = [];

beforeAll(async () => {
  const names = Object.keys(REPLIES) as (keyof typeof REPLIES)[];
  farm = await startMailFarm(
    {
      ...Object.fromEntries(
        names.map((name) => [
          name,
          { kind: 'smtp', domains: [`${name}.example.net`], rcptReply: REPLIES[name] },
        ]),
      ),
      mailbox: { kind: 'smtp', domains: ['fine.example.net'], users: ['ann@fine.example.net'] },
      moody,
    },
    31,
  );
  const zones: Record<string, { mx?: [number, string][]; a?: string[] }> = {};
  for (const name of [...names, 'fine', 'moody']) {
    const server = name === 'fine' ? 'mailbox' : name;
    zones[`${name}.example.net`] = { mx: [[10, `mx.${name}.example.net`]] };
    zones[`mx.${name}.example.net`] = { a: [farm.ip(server)] };
  }
  dns = await startDnsServer(zones);
  const servers = parseDnsServers(dns.address);
  if (!servers.ok) throw new Error('bad DNS address');
  stops.push(
    subscribe('smtp.refusal', (event) => refusals.push(event)),
    subscribe('smtp.conversation', (event) => conversations.push(event)),
    subscribe('smtp.recovered', (event) => recovered.push(event)),
  );
  verifier = createOnlineVerifier({
    dnsServers: servers.servers,
    smtpPort: farm.port,
    smtpRateBackoffMs: 100,
    sourceAddress: '127.0.0.4',
  });
});

afterAll(async () => {
  for (const stop of stops) stop();
  await verifier?.close();
  await dns?.close();
  await farm?.close();
});

const check = (address: string) =>
  verifier.verify(
    address,
    { corrections: false, allow: new Set(), suppress: new Set() },
    {
      level: 'smtp',
      budgetMs: 3000,
      retryWithinBudget: false,
    },
  );

describe('the engine’s events for the operator', () => {
  it('counts a conversation held, from its source address', async () => {
    const verdict = await check('ann@fine.example.net');
    expect(verdict.code).toBe(50);
    expect(conversations).toContainEqual({
      sourceAddress: '127.0.0.4',
      host: 'mx.fine.example.net',
      outcome: 'ok',
    });
    expect(refusals.filter((event) => event.host === 'mx.fine.example.net')).toEqual([]);
  });

  it.each([
    ['crowd', 'concurrency'],
    ['often', 'rate'],
    ['helo', 'policy'],
    ['listed', 'block'],
  ] as const)('tells a refusal of this machine by %s as %s', async (name, kind) => {
    await check(`someone@${name}.example.net`);
    const mine = refusals.filter((event) => event.host === `mx.${name}.example.net`);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine[0]).toMatchObject({ sourceAddress: '127.0.0.4', kind, isNew: true });
    expect(mine[0].detail).toContain(REPLIES[name].slice(4, 30));
    // Said once as new, until the host talks to this machine again.
    expect(mine.slice(1).every((event) => !event.isNew)).toBe(true);
  });

  it('says when a host that refused this machine answers it again', async () => {
    // Hosts that keep refusing never recover.
    expect(recovered).toEqual([]);
    // This one stops refusing once it has (the check asks again after its back-off).
    const stop = subscribe('smtp.refusal', (event) => {
      if (event.host === 'mx.moody.example.net') delete moody.rcptReply;
    });
    try {
      const verdict = await check('ann@moody.example.net');
      expect(verdict.code).toBe(50);
    } finally {
      stop();
    }
    expect(refusals.filter((event) => event.host === 'mx.moody.example.net')).toMatchObject([
      { kind: 'rate' },
    ]);
    expect(recovered).toEqual([{ sourceAddress: '127.0.0.4', host: 'mx.moody.example.net' }]);
  });
});
