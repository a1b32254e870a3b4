// A real mail server on loopback for the online checks: Debian's Postfix (with postgrey for greylisting),
// configured by the test as hardened servers are — fully-qualified HELO name and sender required, the
// sender's domain must resolve, Postfix's default error limits (after 10 errors in a session each reply waits
// 1 s, after 20 it disconnects), optionally per-client limits of connections at once, connections a minute and
// recipients a minute (anvil), whose refusals `refusals()` counts in Postfix's log, and recipients a
// conversation (smtpd_recipient_limit), whose "452 too many recipients" `overRecipientLimit()` counts. Each
// world is its own Postfix instance (config, queue and data folders in a temporary folder, its master on
// 127.25.X.Y:PORT) with its own DNS server (dns2) at 127.53.X.Y:53: Postfix's smtpd runs chrooted in its queue
// folder, whose etc/resolv.conf names that server, so Postfix resolves the sender's domain through the test's
// DNS too, and the verifier is pointed at the same server with --dns-servers. Needs root (Postfix's master,
// port 53), as tests and CI run here. Without Postfix or postgrey the suite fails with one line saying what to
// install.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startDnsServer, type TestDnsServer, type TestZone } from './dnsServer.js';
import { freePort } from './ports.js';

const run = promisify(execFile);

export interface PostfixDomain {
  readonly name: string;
  /** Local parts that have a mailbox (postmaster always has one, as RFC 5321 requires). */
  readonly users?: readonly string[];
  /** Local parts whose mailbox is full: `552 5.2.2 Mailbox full`. */
  readonly full?: readonly string[];
  /** Local parts whose mailbox is disabled: `550 5.2.1 Mailbox disabled`. */
  readonly disabled?: readonly string[];
  /** Every address of the domain is taken. */
  readonly catchAll?: boolean;
  /** Recipients of the domain go through postgrey (greylisting). */
  readonly greylist?: boolean;
}

export interface PostfixOptions {
  readonly domains: readonly PostfixDomain[];
  /** smtpd_client_connection_rate_limit: connections per client per minute (default 0: no limit). */
  readonly connectionRateLimit?: number;
  /** smtpd_client_connection_count_limit: connections at once per client (default 50, Postfix's). */
  readonly connectionCountLimit?: number;
  /** smtpd_client_recipient_rate_limit: recipients per client per minute (default 0: no limit). */
  readonly recipientRateLimit?: number;
  /**
   * smtpd_recipient_limit: recipients a conversation (default 1000, Postfix's); past it Postfix answers
   * "452 4.5.3 Error: too many recipients", as Microsoft's servers answer a second RCPT.
   */
  readonly recipientLimit?: number;
  /** postgrey's --delay in seconds (default 3). */
  readonly greylistDelayS?: number;
  /** More DNS zones (the verifier's sender domain, domains with no MX, …). */
  readonly zones?: Record<string, TestZone>;
}

export interface PostfixWorld {
  /** The address Postfix listens on, and its port. */
  readonly ip: string;
  readonly port: number;
  /** Postfix's host name, the MX of every domain. */
  readonly hostname: string;
  /** The DNS server both Postfix and the verifier ask. */
  readonly dns: TestDnsServer;
  /** `--dns-servers IP:53 --smtp-port PORT`, for the CLI. */
  readonly network: readonly string[];
  /** Postfix's log so far (maillog_file). */
  log(): string;
  /**
   * Refusals of clients for their limits in the log so far ("Connection concurrency limit exceeded",
   * "Connection rate limit exceeded", "Recipient address rate limit exceeded"), of `client` (an address,
   * e.g. 127.0.0.3) or of every client.
   */
  refusals(client?: string): Refusals;
  /** The "452 4.5.3 Error: too many recipients" Postfix answered `client` (or every client) so far. */
  overRecipientLimit(client?: string): OverRecipientLimit;
  close(): Promise<void>;
}

export interface OverRecipientLimit {
  /** Conversations that asked past the limit. */
  readonly conversations: number;
  /** RCPTs answered "too many recipients". */
  readonly replies: number;
}

export interface Refusals {
  readonly concurrency: number;
  readonly rate: number;
  readonly recipientRate: number;
}

/** Counts Postfix's warnings of refused clients in `log`: "… limit exceeded: 3 from localhost[127.0.0.1] …". */
export function countRefusals(log: string, client?: string): Refusals {
  const count = (what: string) =>
    log
      .split('\n')
      .filter((line) => line.includes(`${what} limit exceeded:`) && (!client || line.includes(`[${client}]`)))
      .length;
  return {
    concurrency: count('Connection concurrency'),
    rate: count('Connection rate'),
    recipientRate: count('Recipient address rate'),
  };
}

/**
 * Counts Postfix's "452 too many recipients" in `log`, which it does not log as such: a conversation's
 * `disconnect … rcpt=A/B` counts them with the RCPTs it took (A), and there are some only once it has taken
 * `limit`, so they are A − limit.
 */
export function countOverRecipientLimit(log: string, limit: number, client?: string): OverRecipientLimit {
  let conversations = 0;
  let replies = 0;
  for (const line of log.split('\n')) {
    if (!line.includes('disconnect from') || (client && !line.includes(`[${client}]`))) continue;
    const taken = Number(/ rcpt=(\d+)/.exec(line)?.[1] ?? 0);
    if (taken <= limit) continue;
    conversations++;
    replies += taken - limit;
  }
  return { conversations, replies };
}

const POSTFIX = '/usr/sbin/postfix';
const POSTGREY = '/usr/sbin/postgrey';

/** Why this machine cannot run the suite, or undefined when it can. */
export function postfixMissing(): string | undefined {
  const missing = [POSTFIX, POSTGREY].filter((path) => !existsSync(path));
  if (missing.length > 0)
    return `${missing.join(' and ')} not found: the real-MTA tests need Debian's postfix and postgrey (apt-get install postfix postgrey; .ci/run installs them)`;
  if (process.getuid?.() !== 0)
    return 'the real-MTA tests run Postfix and a DNS server on port 53, which needs root (as tests and CI run here)';
  return undefined;
}

const random = (from: number, to: number) => from + Math.floor(Math.random() * (to - from + 1));

async function waitForPort(ip: string, port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: ip, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (isOpen) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** A DNS server of its own at 127.53.X.Y:53 (another test run may hold an address: try another). */
async function startDnsOn53(zones: Record<string, TestZone>): Promise<TestDnsServer> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await startDnsServer(zones, {
        listen: { address: `127.53.${random(0, 255)}.${random(1, 254)}`, port: 53 },
      });
    } catch (error) {
      if (attempt >= 10) throw error;
    }
  }
}

function mainCf(
  root: string,
  ip: string,
  hostname: string,
  policyPort: number,
  options: PostfixOptions,
): string {
  return `compatibility_level = 3.6
queue_directory = ${root}/queue
data_directory = ${root}/data
daemon_directory = /usr/lib/postfix/sbin
meta_directory = /etc/postfix
shlib_directory = /usr/lib/postfix
mail_owner = postfix
setgid_group = postdrop
myhostname = ${hostname}
mydomain = ${hostname.slice(hostname.indexOf('.') + 1)}
mydestination =
# Loopback is not a trusted network here: the verifier on 127.0.0.1 is judged as a stranger would be.
mynetworks = 192.0.2.1/32
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
maillog_file = ${root}/maillog
maillog_file_prefixes = ${root}
smtpd_banner = $myhostname ESMTP
smtpd_peername_lookup = no
biff = no
alias_maps =
alias_database =
virtual_mailbox_domains = ${options.domains.map((d) => d.name).join(', ')}
virtual_mailbox_maps = texthash:${root}/conf/mailboxes
virtual_mailbox_base = ${root}/mail
virtual_uid_maps = static:65534
virtual_gid_maps = static:65534
smtpd_helo_required = yes
smtpd_helo_restrictions = reject_non_fqdn_helo_hostname
smtpd_sender_restrictions = reject_non_fqdn_sender, reject_unknown_sender_domain
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
smtpd_restriction_classes = greylist
greylist = check_policy_service inet:127.0.0.1:${policyPort}
smtpd_recipient_restrictions = reject_unlisted_recipient, check_recipient_access texthash:${root}/conf/recipient_access
# Postfix's defaults, said out loud: the error tarpit the verifier must not sit in.
smtpd_soft_error_limit = 10
smtpd_hard_error_limit = 20
smtpd_error_sleep_time = 1s
smtpd_client_connection_rate_limit = ${options.connectionRateLimit ?? 0}
smtpd_client_connection_count_limit = ${options.connectionCountLimit ?? 50}
smtpd_client_recipient_rate_limit = ${options.recipientRateLimit ?? 0}
smtpd_recipient_limit = ${options.recipientLimit ?? 1000}
anvil_rate_time_unit = 60s
smtpd_client_event_limit_exceptions =
`;
}

function masterCf(ip: string, port: number): string {
  return `${ip}:${port} inet n - y - - smtpd
cleanup   unix  n       -       y       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       y       -       -       trivial-rewrite
bounce    unix  -       -       y       -       0       bounce
defer     unix  -       -       y       -       0       bounce
trace     unix  -       -       y       -       0       bounce
verify    unix  -       -       y       -       1       verify
proxymap  unix  -       -       n       -       -       proxymap
showq     unix  n       -       y       -       -       showq
error     unix  -       -       y       -       -       error
retry     unix  -       -       y       -       -       error
discard   unix  -       -       y       -       -       discard
virtual   unix  -       n       n       -       -       virtual
anvil     unix  -       -       y       -       1       anvil
scache    unix  -       -       y       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
`;
}

/** Starts Postfix (and postgrey, and the DNS server) as `options` says; `close` stops them all. */
export async function startPostfix(options: PostfixOptions): Promise<PostfixWorld> {
  const missing = postfixMissing();
  if (missing) throw new Error(missing);
  const root = mkdtempSync(join(tmpdir(), 'mailsieve-postfix-'));
  // Postfix's daemons (user postfix) and postgrey (user postgrey) go through this folder.
  chmodSync(root, 0o755);
  const conf = join(root, 'conf');
  for (const dir of ['conf', 'queue', 'queue/etc', 'data', 'mail', 'postgrey']) mkdirSync(join(root, dir));
  const ids = async (user: string) => {
    const { stdout: uid } = await run('id', ['-u', user]);
    const { stdout: gid } = await run('id', ['-g', user]);
    return [Number(uid), Number(gid)] as const;
  };
  chownSync(join(root, 'data'), ...(await ids('postfix')));
  chownSync(join(root, 'postgrey'), ...(await ids('postgrey')));
  chownSync(join(root, 'mail'), 65534, 65534);

  const ip = `127.25.${random(0, 255)}.${random(1, 254)}`;
  const port = await freePort(ip);
  const hostname = `mx.${options.domains[0]?.name ?? 'postfix.test'}`;
  const zones: Record<string, TestZone> = { [hostname]: { a: [ip] }, ...options.zones };
  for (const domain of options.domains) zones[domain.name] ??= { mx: [[10, hostname]] };
  const dns = await startDnsOn53(zones);
  let postgrey: ChildProcess | undefined;
  let isStarted = false;
  const stop = async () => {
    if (isStarted) await run(POSTFIX, ['-c', conf, 'stop']).catch(() => undefined);
    const pid = Number(readIfExists(join(root, 'queue/pid/master.pid')).trim());
    // `postfix stop` signals the master; wait until it is gone before its folders are removed.
    for (let i = 0; pid > 0 && i < 50 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    postgrey?.kill('SIGTERM');
    await dns.close();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    writeFileSync(join(root, 'queue/etc/resolv.conf'), `nameserver ${dns.address.split(':')[0]}\n`);
    const mailboxes: string[] = [];
    const access: string[] = [];
    for (const domain of options.domains) {
      const local = (part: string) => `${part}@${domain.name}`;
      if (domain.catchAll) mailboxes.push(`@${domain.name} ok`);
      for (const user of [
        'postmaster',
        ...(domain.users ?? []),
        ...(domain.full ?? []),
        ...(domain.disabled ?? []),
      ])
        mailboxes.push(`${local(user)} ok`);
      for (const user of domain.full ?? []) access.push(`${local(user)} 552 5.2.2 Mailbox full`);
      for (const user of domain.disabled ?? []) access.push(`${local(user)} 550 5.2.1 Mailbox disabled`);
      if (domain.greylist) access.push(`${domain.name} greylist`);
    }
    writeFileSync(join(conf, 'mailboxes'), `${mailboxes.join('\n')}\n`);
    writeFileSync(join(conf, 'recipient_access'), `${access.join('\n')}\n`);
    const policyPort = await freePort('127.0.0.1');
    writeFileSync(join(conf, 'main.cf'), mainCf(root, ip, hostname, policyPort, options));
    writeFileSync(join(conf, 'master.cf'), masterCf(ip, port));
    writeFileSync(join(root, 'postgrey/none'), '');

    if (options.domains.some((domain) => domain.greylist)) {
      postgrey = spawn(
        POSTGREY,
        [
          `--inet=127.0.0.1:${policyPort}`,
          `--dbdir=${root}/postgrey`,
          `--delay=${options.greylistDelayS ?? 3}`,
          `--whitelist-clients=${root}/postgrey/none`,
          `--whitelist-recipients=${root}/postgrey/none`,
          '--auto-whitelist-clients=0',
          '--lookup-by-host',
          `--hostname=${hostname}`,
        ],
        { stdio: 'ignore' },
      );
      if (!(await waitForPort('127.0.0.1', policyPort, 15_000)))
        throw new Error(`postgrey did not listen on 127.0.0.1:${policyPort} within 15 s`);
    }
    const started = await run(POSTFIX, ['-c', conf, 'start']).then(
      () => true,
      () => false,
    );
    isStarted = true;
    if (!started || !(await waitForPort(ip, port, 10_000)))
      throw new Error(
        `Postfix did not start: ${readIfExists(join(root, 'maillog')).split('\n').slice(-8).join('\n')}`,
      );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ip,
    port,
    hostname,
    dns,
    network: ['--dns-servers', dns.address, '--smtp-port', String(port)],
    log: () => readIfExists(join(root, 'maillog')),
    refusals: (client) => countRefusals(readIfExists(join(root, 'maillog')), client),
    overRecipientLimit: (client) =>
      countOverRecipientLimit(readIfExists(join(root, 'maillog')), options.recipientLimit ?? 1000, client),
    close: stop,
  };
}

function readIfExists(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
