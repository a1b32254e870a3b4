// The checks level of the local service (electron/core/checks.ts): Automatic decided by the preflight against
// real loopback resolvers — one that answers with the online tests' zones, one whose port is closed, one that
// never answers — the chosen levels taken as they are, and the environment overrides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTO_DECISION_MS,
  decideChecks,
  describePreflight,
  networkFromEnv,
  preflightNetwork,
} from '../../../electron/core/checks/level.js';
import { parseDnsServers, type DnsServer } from '../../../service/engine/online/index.js';
import { checksInPlainWords } from '../../../shared/desktop/checks.js';
import {
  closedUdpPort,
  startDnsServer,
  startSilentDnsServer,
  type TestDnsServer,
} from '../../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../../helpers/smtpServer.js';
import { SERVERS, zones } from '../../service/engine/online/fixture.js';

let dns: TestDnsServer;
let farm: MailFarm;
const servers = (address: string): DnsServer[] => {
  const parsed = parseDnsServers(address);
  if (!parsed.ok) throw new Error(address);
  return parsed.servers;
};

beforeAll(async () => {
  farm = await startMailFarm(SERVERS, 8);
  dns = await startDnsServer(zones(farm));
});
afterAll(async () => {
  await dns.close();
  await farm.close();
});

describe('Automatic', () => {
  it('checks domains when DNS answers from a resolver that sees the internet, and never mailboxes', async () => {
    const decision = await decideChecks('auto', { dnsServers: servers(dns.address), smtpPort: farm.port });
    expect(decision).toMatchObject({
      choice: 'auto',
      level: 'dns',
      reason: 'auto: DNS answers, checking domains',
    });
    expect(dns.count('gmail.com', 'MX')).toBeGreaterThan(0);
  });

  it('falls back to offline at once when the resolver’s port is closed, and says why', async () => {
    const closed = await closedUdpPort();
    const decision = await decideChecks('auto', { dnsServers: servers(closed) });
    expect(decision.level).toBe('offline');
    expect(decision.reason).toMatch(
      /^auto: DNS does not answer \(asked 127\.0\.0\.1:\d+\): .*refused.*; checking offline/,
    );
    expect(decision.decidedInMs).toBeLessThan(2000);
  });

  it('falls back to offline within 5 s when the resolver never answers', async () => {
    const silent = await startSilentDnsServer();
    try {
      const started = Date.now();
      const decision = await decideChecks('auto', { dnsServers: servers(silent.address) });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(Date.now() - started).toBeLessThanOrEqual(AUTO_DECISION_MS + 500);
      expect(decision.level).toBe('offline');
      expect(decision.reason).toMatch(/^auto: DNS (does not answer|did not answer).*checking offline/);
      expect(silent.received()).toBeGreaterThan(0);
    } finally {
      await silent.close();
    }
  });
});

describe('the level in plain words (Results), the decision’s reason kept for the details', () => {
  it('says an isolated resolver’s fallback as a person would: no address, no `auto:`, one sentence', async () => {
    // A resolver that answers but sees no internet (NXDOMAIN even for .com), as on the machine.
    const isolated = await startDnsServer({}, { mode: 'isolated' });
    try {
      const decision = await decideChecks('auto', { dnsServers: servers(isolated.address) });
      expect(decision.level).toBe('offline');
      expect(decision.reason).toContain(`auto: ${isolated.address} answers, but says even the top-level`);
      expect(checksInPlainWords(decision)).toBe(
        'No internet connection was found, so only syntax and lists were checked.',
      );
    } finally {
      await isolated.close();
    }
    const closed = await decideChecks('auto', { dnsServers: servers(await closedUdpPort()) });
    expect(checksInPlainWords(closed)).toBe(
      'No internet connection was found, so only syntax and lists were checked.',
    );
    const online = await decideChecks('auto', { dnsServers: servers(dns.address) });
    expect(checksInPlainWords(online)).toBe(
      'An internet connection was found, so each domain’s mail servers were looked up.',
    );
  });

  it('names the chosen level by the title of its choice', async () => {
    const words = async (choice: 'offline' | 'dns' | 'smtp') =>
      checksInPlainWords(await decideChecks(choice, { dnsServers: servers(dns.address) }));
    expect(await words('offline')).toBe(
      'Checks were set to Offline only, so only syntax and lists were checked.',
    );
    expect(await words('dns')).toBe(
      'Checks were set to Domains (DNS), so each domain’s mail servers were looked up.',
    );
    expect(await words('smtp')).toBe(
      'Checks were set to Mailboxes (SMTP), so each mailbox was asked of its mail server.',
    );
    // A job from before reasons were recorded, and the CLI's default: what was checked, without a why.
    expect(checksInPlainWords({ level: 'offline', reason: '' })).toBe('Only syntax and lists were checked.');
    expect(checksInPlainWords({ level: 'offline', reason: 'offline: the default of this command' })).toBe(
      'Only syntax and lists were checked.',
    );
  });
});

describe('chosen levels and the preflight in words', () => {
  it('takes offline and dns as chosen, without asking the network', async () => {
    const before = dns.queries.length;
    for (const level of ['offline', 'dns'] as const)
      expect(await decideChecks(level, { dnsServers: servers(dns.address) })).toMatchObject({
        level,
        choice: level,
      });
    expect(dns.queries.length).toBe(before);
  });

  it('takes smtp as chosen after a conversation with a mail server of the probe domain that tries the identity', async () => {
    const decision = await decideChecks('smtp', {
      dnsServers: servers(dns.address),
      smtpPort: farm.port,
      heloName: 'localhost',
      mailFrom: 'check@mailsieve.test',
    });
    expect(decision).toMatchObject({ level: 'smtp', choice: 'smtp' });
    expect(decision.preflight?.identity).toMatchObject({
      ok: false,
      heloName: 'localhost',
      problems: [{ option: 'helo_name' }],
    });
    // The conversation was held: EHLO, MAIL FROM, RCPT TO the probe domain's postmaster, RSET, QUIT.
    expect(decision.preflight?.identity.transcript.join('\n')).toMatch(
      /C: EHLO localhost[\s\S]*C: MAIL FROM:<check@mailsieve\.test>[\s\S]*C: RCPT TO:<postmaster@gmail\.com>[\s\S]*C: RSET[\s\S]*C: QUIT/,
    );
  });

  it('says when port 25 can and cannot be reached', async () => {
    const open = await preflightNetwork({
      dnsServers: servers(dns.address),
      smtpPort: farm.port,
      heloName: 'probe.mailsieve.test',
      mailFrom: 'check@mailsieve.test',
    });
    expect(describePreflight(open)).toBe(
      `DNS answers; port ${farm.port} can be reached: mailbox checks can run.`,
    );
    // Port 25 answers, but the identity is one mail servers refuse: not "can run" (issue 22).
    const refused = await preflightNetwork({
      dnsServers: servers(dns.address),
      smtpPort: farm.port,
      heloName: 'localhost',
      mailFrom: 'postmaster@localhost',
    });
    expect(describePreflight(refused)).toBe(
      `DNS answers; port ${farm.port} can be reached, but mailbox checks would come back unknown: The HELO name 'localhost' will be refused by many mail servers: it is not a fully-qualified domain name. Set a fully-qualified name whose DNS points at this machine's address (set the HELO name under Connection → Checks). The sender postmaster@localhost will be refused by many mail servers: its domain is not fully-qualified. Set a sender address of a domain you own (set the sender address under Connection → Checks).`,
    );
    const blocked = await preflightNetwork({ dnsServers: servers(dns.address), smtpPort: 1 });
    expect(describePreflight(blocked)).toBe(
      'DNS answers; port 1 is blocked by this network: mailbox checks would come back unknown.',
    );
  });

  it('reads MAILSIEVE_DNS_SERVERS and MAILSIEVE_SMTP_PORT, and refuses bad values in words', () => {
    expect(
      networkFromEnv({ MAILSIEVE_DNS_SERVERS: '127.0.0.1:5353,[::1]:53', MAILSIEVE_SMTP_PORT: '2525' }),
    ).toEqual({
      dnsServers: [
        { host: '127.0.0.1', port: 5353 },
        { host: '::1', port: 53 },
      ],
      smtpPort: 2525,
    });
    expect(networkFromEnv({})).toEqual({});
    expect(() => networkFromEnv({ MAILSIEVE_DNS_SERVERS: 'dns.example.com' })).toThrow(
      /MAILSIEVE_DNS_SERVERS takes IP\[:PORT\] entries/,
    );
    expect(() => networkFromEnv({ MAILSIEVE_SMTP_PORT: '99999' })).toThrow(
      /MAILSIEVE_SMTP_PORT takes a port/,
    );
  });
});
