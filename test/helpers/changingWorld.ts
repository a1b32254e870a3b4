// A mail world that changes between two runs of one list (issue 37, "What changed since the last run"): the
// same list cleaned once in the world as it was, and once in the world a week later, in which a mailbox was
// removed (bob@shop.example.net) and a domain turned accept-all (acme.example.net). Each world is a loopback
// DNS server and a farm of SMTP servers (test/helpers/dnsServer.ts, smtpServer.ts), started at once: a run
// takes a world by its MAILSIEVE_DNS_SERVERS and MAILSIEVE_SMTP_PORT (or the CLI's --dns-servers and
// --smtp-port). The truth of the list in both worlds is known (LIST), so the changed rows are.
import { startDnsServer, type TestDnsServer, type TestZone } from './dnsServer.js';
import { startMailFarm, type MailboxBehaviour, type MailFarm } from './smtpServer.js';

/**
 * The list (a header `email,name`), and each address's code before and after. ann is a duplicate row (one
 * address, compared once); the bad address has no canonical form and is never compared.
 */
export const LIST: readonly (readonly [address: string, before: number, after: number])[] = [
  ['ann@shop.example.net', 50, 50],
  ['bob@shop.example.net', 50, 400],
  ['cat@shop.example.net', 50, 50],
  ['dan@acme.example.net', 50, 45],
  ['zed@acme.example.net', 400, 45],
  ['not-an-address', 150, 150],
  ['ann@shop.example.net', 50, 50],
];

/** The list file's text. */
export const LIST_TEXT =
  ['email,name', ...LIST.map(([address], i) => `${address},Person ${i + 1}`)].join('\n') + '\n';

const BEFORE: MailboxBehaviour = {
  kind: 'smtp',
  domains: ['shop.example.net', 'acme.example.net'],
  users: ['ann@shop.example.net', 'bob@shop.example.net', 'cat@shop.example.net', 'dan@acme.example.net'],
};
const AFTER: MailboxBehaviour = {
  ...BEFORE,
  users: ['ann@shop.example.net', 'cat@shop.example.net', 'dan@acme.example.net'],
  acceptAllDomains: ['acme.example.net'],
};

function zonesOf(farm: MailFarm): Record<string, TestZone> {
  const host: TestZone = { a: [farm.ip('mx')] };
  return {
    'shop.example.net': { mx: [[10, 'mx1.shop.example.net']] },
    'mx1.shop.example.net': host,
    'acme.example.net': { mx: [[10, 'mx1.acme.example.net']] },
    'mx1.acme.example.net': host,
    // The verifier's preflight: a probe domain's mail server, and its own sender domain.
    'gmail.com': { mx: [[5, 'gmail-smtp-in.l.google.com']] },
    'gmail-smtp-in.l.google.com': host,
    'mailsieve.test': { mx: [[10, 'mx.mailsieve.test']] },
    'mx.mailsieve.test': { a: ['127.0.0.9'] },
  };
}

export interface World {
  readonly farm: MailFarm;
  readonly dns: TestDnsServer;
  /** The environment a run in this world gets (the app, the desktop core, the CLI all read it). */
  readonly env: { readonly MAILSIEVE_DNS_SERVERS: string; readonly MAILSIEVE_SMTP_PORT: string };
  /** The CLI's options for this world. */
  readonly args: readonly string[];
}

export interface ChangingWorld {
  readonly before: World;
  readonly after: World;
  close(): Promise<void>;
}

async function startWorld(spec: MailboxBehaviour, octet: number): Promise<World> {
  const farm = await startMailFarm({ mx: spec }, octet);
  const dns = await startDnsServer(zonesOf(farm));
  return {
    farm,
    dns,
    env: { MAILSIEVE_DNS_SERVERS: dns.address, MAILSIEVE_SMTP_PORT: String(farm.port) },
    args: ['--dns-servers', dns.address, '--smtp-port', String(farm.port)],
  };
}

/** Both worlds, their servers at 127.0.<octet>.10 and 127.0.<octet + 1>.10 (octets of their own per test file). */
export async function startChangingWorld(octet: number): Promise<ChangingWorld> {
  const before = await startWorld(BEFORE, octet);
  const after = await startWorld(AFTER, octet + 1);
  return {
    before,
    after,
    async close() {
      for (const world of [before, after]) {
        await world.dns.close();
        await world.farm.close();
      }
    },
  };
}
