// The world the online-check tests run in: a loopback DNS server with test zones, a farm of loopback mail
// servers behind them, and a real service on port 0 whose online checks point at both.
import { startDnsServer, type TestDnsServer, type TestZone } from '../../../helpers/dnsServer.js';
import { startMailFarm, type MailFarm, type ServerSpec } from '../../../helpers/smtpServer.js';
import { get, tempDir } from '../../../helpers/service.js';
import { startService, type RunningService } from '../../../../service/server.js';
import { openServiceDb, type ServiceDb } from '../../../../service/store/db.js';
import { createKey, type KeyConfig } from '../../../../service/store/keys.js';
import type { OnlineServiceOptions } from '../../../../service/http/app.js';
import type { ListServiceOptions } from '../../../../service/lists/node/processor.js';
import { parseDnsServers } from '../../../../service/engine/online/index.js';

export const SERVERS = {
  // Users: alice, bob (exist), carol (full, 552), dave (over quota, 452 4.2.2). Serves users.example.net and
  // fallback.example.net; other domains get "relay access denied".
  mailbox: {
    kind: 'smtp',
    domains: ['users.example.net', 'fallback.example.net', 'busy.example.net'],
    users: [
      'alice@users.example.net',
      'bob@users.example.net',
      'alice@fallback.example.net',
      'eve@busy.example.net',
    ],
    full: ['carol@users.example.net'],
    overQuota: ['dave@users.example.net'],
  },
  catchall: { kind: 'smtp', domains: ['catchall.example.net', 'parked.example.net'], acceptAll: true },
  grey: { kind: 'smtp', domains: ['grey.example.net'], users: ['gina@grey.example.net'], greylistMs: 150 },
  stall: { kind: 'stall' },
  drop: { kind: 'drop' },
  refuse: { kind: 'refuse' },
  // A provider that distrusts this prober: it refuses every RCPT with a blocklist reply (Outlook-like).
  blocklist: {
    kind: 'smtp',
    domains: ['bigmail.example.net'],
    acceptAll: true,
    rcptReply:
      "550 5.7.1 Unfortunately, messages from [127.0.0.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3140).",
  },
  // …and one that refuses the envelope sender outright.
  senderBlock: {
    kind: 'smtp',
    domains: ['strict.example.net'],
    acceptAll: true,
    mailFromReply: '554 5.7.1 Sender address rejected: access denied',
  },
} satisfies Record<string, ServerSpec>;

export function zones(farm: MailFarm): Record<string, TestZone> {
  const host = (name: keyof typeof SERVERS): TestZone => ({ a: [farm.ip(name)] });
  return {
    'users.example.net': { mx: [[10, 'mx.users.example.net']] },
    'mx.users.example.net': host('mailbox'),
    // Served by the same server, which does not take its mail: relaying denied.
    'other.example.net': { mx: [[10, 'mx.users.example.net']] },
    // No MX: mail goes to the domain's own address (RFC 5321 §5.1).
    'fallback.example.net': { a: [farm.ip('mailbox')] },
    'catchall.example.net': { mx: [[10, 'mx.catchall.example.net']] },
    'mx.catchall.example.net': host('catchall'),
    'grey.example.net': { mx: [[10, 'mx.grey.example.net']] },
    'mx.grey.example.net': host('grey'),
    'stall.example.net': { mx: [[10, 'mx.stall.example.net']] },
    'mx.stall.example.net': host('stall'),
    'drop.example.net': { mx: [[10, 'mx.drop.example.net']] },
    'mx.drop.example.net': host('drop'),
    'refused.example.net': { mx: [[10, 'mx.refused.example.net']] },
    'mx.refused.example.net': host('refuse'),
    // Primary refuses connections; the backup MX answers.
    'busy.example.net': {
      mx: [
        [10, 'mx.refused.example.net'],
        [20, 'mx.users.example.net'],
      ],
    },
    'bigmail.example.net': { mx: [[5, 'mx.bigmail.example.net']] },
    'mx.bigmail.example.net': host('blocklist'),
    'strict.example.net': { mx: [[5, 'mx.strict.example.net']] },
    'mx.strict.example.net': host('senderBlock'),
    'nullmx.example.net': { mx: [[0, '.']], a: ['127.0.0.1'] },
    // Exists, but has neither MX nor address.
    'nomail.example.net': {},
    'servfail.example.net': { servfail: true },
    'silent.example.net': { silent: true },
    // MX at a parking service (the name is in service/engine/online/data/parking.txt).
    'parked.example.net': { mx: [[10, 'mx.sedoparking.com']] },
    'mx.sedoparking.com': host('catchall'),
    // A free-mail provider keeps its offline domain type.
    'gmail.com': { mx: [[5, 'gmail-smtp-in.l.google.com']] },
    'gmail-smtp-in.l.google.com': host('mailbox'),
    // The verifier's own sender domain (the identity preflight checks that it has an MX).
    'mailsieve.test': { mx: [[10, 'mx.mailsieve.test']] },
    'mx.mailsieve.test': { a: ['127.0.0.9'] },
  };
}

export interface World {
  readonly dns: TestDnsServer;
  readonly farm: MailFarm;
  readonly service: RunningService;
  readonly db: ServiceDb;
  key(config?: Partial<KeyConfig>): string;
  /** E1 through HTTP: the result object and, when asked, explain. */
  ev(
    key: string,
    email: string,
    query?: Record<string, string>,
  ): Promise<{
    status: number;
    result: Record<string, unknown>;
    explain?: string[];
    body: string;
    ms: number;
  }>;
  close(): Promise<void>;
}

export async function startWorld(
  online: Partial<OnlineServiceOptions> = {},
  octet = 1,
  lists?: ListServiceOptions,
): Promise<World> {
  const farm = await startMailFarm(SERVERS, octet);
  const dns = await startDnsServer(zones(farm));
  const dir = tempDir();
  const db = openServiceDb(dir.path);
  const parsed = parseDnsServers(dns.address);
  if (!parsed.ok) throw new Error('bad DNS address');
  const service = await startService({
    dataDir: dir.path,
    db,
    port: 0,
    online: {
      dnsServers: parsed.servers,
      smtpPort: farm.port,
      heloName: 'verifier.mailsieve.test',
      mailFrom: 'probe@mailsieve.test',
      greylistDelayMs: 150,
      smtpPacingMs: 20,
      smtpIdleMs: 200,
      ...online,
    },
    ...(lists ? { lists } : {}),
  });
  return {
    dns,
    farm,
    service,
    db,
    key: (config = {}) =>
      createKey(db, { mode: 'safe_to_send', services: ['validation'], checks: 'smtp', ...config }).key,
    async ev(key, email, query = {}) {
      const params = new URLSearchParams({ email, api_key: key, ...query });
      const started = Date.now();
      const response = await get(`${service.url}/v5/ev?${params.toString()}`);
      const ms = Date.now() - started;
      const body = JSON.parse(response.text) as Record<string, unknown> & { explain?: string[] };
      const result = (body.safe_to_send ?? body.email_validation ?? body) as Record<string, unknown>;
      return {
        status: response.status,
        result,
        ms,
        body: response.text,
        ...(body.explain ? { explain: body.explain } : {}),
      };
    },
    async close() {
      await service.close();
      db.close();
      await dns.close();
      await farm.close();
      dir.remove();
    },
  };
}
