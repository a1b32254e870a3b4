// Replies that refuse the verifier rather than the mailbox, 4xx or 5xx, end their check as unknown at once —
// not retried as if temporary — with a machine-readable cause naming the host and the setting to change;
// greylisting keeps its retries. Real smtp-server instances on loopback answer as hardened servers do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../../../helpers/smtpServer.js';
import {
  createOnlineVerifier,
  parseDnsServers,
  type OnlineVerifier,
} from '../../../../service/engine/online/index.js';

let dns: TestDnsServer;
let farm: MailFarm;
let verifier: OnlineVerifier;

beforeAll(async () => {
  farm = await startMailFarm(
    {
      sender: {
        kind: 'smtp',
        domains: ['sender-check.example.net'],
        rcptReply: '450 4.1.8 <postmaster@localhost>: Sender address rejected: Domain not found',
      },
      helo: {
        kind: 'smtp',
        domains: ['helo-check.example.net'],
        rcptReply: '450 4.7.1 <localhost>: Helo command rejected: Host not found',
      },
      rate: {
        kind: 'smtp',
        domains: ['rate-check.example.net'],
        rcptReply: '452 4.7.1 Too many connections from your IP, slow down',
      },
      grey: {
        kind: 'smtp',
        domains: ['grey-check.example.net'],
        users: ['gina@grey-check.example.net'],
        greylistMs: 60_000,
      },
    },
    11,
  );
  const zone = (name: string) => ({ mx: [[10, `mx.${name}`]] as [number, string][] });
  dns = await startDnsServer({
    'sender-check.example.net': zone('sender-check.example.net'),
    'mx.sender-check.example.net': { a: [farm.ip('sender')] },
    'helo-check.example.net': zone('helo-check.example.net'),
    'mx.helo-check.example.net': { a: [farm.ip('helo')] },
    'rate-check.example.net': zone('rate-check.example.net'),
    'mx.rate-check.example.net': { a: [farm.ip('rate')] },
    'grey-check.example.net': zone('grey-check.example.net'),
    'mx.grey-check.example.net': { a: [farm.ip('grey')] },
  });
  const servers = parseDnsServers(dns.address);
  if (!servers.ok) throw new Error('bad DNS address');
  verifier = createOnlineVerifier({
    dnsServers: servers.servers,
    smtpPort: farm.port,
    smtpRateBackoffMs: 200,
  });
});
afterAll(async () => {
  await verifier.close();
  await dns.close();
  await farm.close();
});

const check = (address: string) =>
  verifier.verify(address, { corrections: false, allow: new Set(), suppress: new Set() }, {
    level: 'smtp',
    budgetMs: 3000,
    retryWithinBudget: false,
  });

describe('refusals of the verifier', () => {
  it('a 4xx refusal of the sender is unknown at once, not retryable, caused by the sender', async () => {
    const verdict = await check('anyone@sender-check.example.net');
    expect(verdict.code).toBe(5);
    expect(verdict.retryable).toBeUndefined();
    expect(verdict.cause).toEqual({
      kind: 'sender-refused',
      host: 'mx.sender-check.example.net',
      option: 'mail_from',
    });
  });

  it('a 4xx refusal of the HELO name is unknown at once, caused by the HELO name', async () => {
    const verdict = await check('anyone@helo-check.example.net');
    expect(verdict.retryable).toBeUndefined();
    expect(verdict.cause).toEqual({
      kind: 'helo-refused',
      host: 'mx.helo-check.example.net',
      option: 'helo_name',
    });
  });

  it('"too many connections" past its back-off is unknown, not retryable, caused by the rate', async () => {
    const verdict = await check('anyone@rate-check.example.net');
    expect(verdict.code).toBe(5);
    expect(verdict.retryable).toBeUndefined();
    expect(verdict.cause).toEqual({ kind: 'rate-limited', host: 'mx.rate-check.example.net' });
    // Asked once, backed off, asked again: then taken as the server's answer.
    expect(farm.log('rate').rcpts.length).toBe(2);
  });

  it('greylisting stays retryable, caused by a deferral', async () => {
    const verdict = await check('gina@grey-check.example.net');
    expect(verdict.code).toBe(5);
    expect(verdict.retryable).toBe(true);
    expect(verdict.cause).toEqual({ kind: 'deferred', host: 'mx.grey-check.example.net' });
  });
});
