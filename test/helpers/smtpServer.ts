// Real SMTP servers on loopback for the online checks: smtp-server instances (STARTTLS with a self-signed
// certificate) that behave like the mail servers a verifier meets, plus raw TCP servers that stall or drop
// the connection. Each server has its own loopback address (127.0.0.N) and all share one port, as MX hosts
// share port 25, so a verifier with `smtpPort` set reaches each one through DNS like a real MX.
import net from 'node:net';
import { generate } from 'selfsigned';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export interface MailboxBehaviour {
  readonly kind: 'smtp';
  /** Domains this server takes mail for; RCPT for any other gets `554 5.7.1 Relay access denied`. */
  readonly domains: readonly string[];
  /** Addresses that exist (lower-case). Ignored when `acceptAll`. Others get `550 5.1.1 User unknown`. */
  readonly users?: readonly string[];
  readonly acceptAll?: boolean;
  /** Addresses whose mailbox is full: `552 5.2.2`. */
  readonly full?: readonly string[];
  /** Addresses over quota, temporarily: `452 4.2.2`. */
  readonly overQuota?: readonly string[];
  /** Greylisting: the first RCPT of each (client, sender, recipient) gets 451 until this many ms passed. */
  readonly greylistMs?: number;
  /** A reply line for every RCPT instead (e.g. a blocklist refusal of the client). */
  readonly rcptReply?: string;
  /** A reply line for MAIL FROM instead of 250. */
  readonly mailFromReply?: string;
  /** Offer STARTTLS (default true). */
  readonly tls?: boolean;
}

export type ServerSpec =
  | MailboxBehaviour
  /** Accepts the connection and never says a word. */
  | { readonly kind: 'stall' }
  /** Greets, then closes the connection as soon as the client speaks. */
  | { readonly kind: 'drop' }
  /** Nothing listens at this address: connections are refused. */
  | { readonly kind: 'refuse' };

export interface ServerLog {
  /** Every RCPT TO address, in order, with the code answered. */
  readonly rcpts: { address: string; code: number }[];
  /** Connections accepted. */
  connections: number;
  /** When each connection was accepted (ms since the epoch). */
  readonly connectedAt: number[];
  /** Most connections open at once. */
  peak: number;
  open: number;
  /** Sessions that completed STARTTLS. */
  secured: number;
}

export interface MailFarm {
  readonly port: number;
  /** The loopback address of a server. */
  ip(name: string): string;
  log(name: string): ServerLog;
  close(): Promise<void>;
}

let certificate: Promise<{ key: string; cert: string }> | undefined;
function testCertificate() {
  certificate ??= generate([{ name: 'commonName', value: 'mx.test' }], {
    keySize: 2048,
    algorithm: 'sha256',
  }).then((pems) => ({ key: pems.private, cert: pems.cert }));
  return certificate;
}

const replyError = (line: string): Error => {
  const match = /^(\d{3}) (.*)$/.exec(line);
  if (!match) throw new Error(`not a reply line: ${line}`);
  return Object.assign(new Error(match[2]), { responseCode: Number(match[1]) });
};

function newLog(): ServerLog {
  return { rcpts: [], connections: 0, connectedAt: [], peak: 0, open: 0, secured: 0 };
}

async function startMailbox(
  ip: string,
  port: number,
  spec: MailboxBehaviour,
  log: ServerLog,
): Promise<() => Promise<void>> {
  const { key, cert } = await testCertificate();
  const greylist = new Map<string, number>();
  const domains = new Set(spec.domains.map((d) => d.toLowerCase()));
  const users = new Set(spec.users ?? []);
  const full = new Set(spec.full ?? []);
  const overQuota = new Set(spec.overQuota ?? []);
  const answer = (session: SMTPServerSession, to: string): string => {
    if (spec.rcptReply) return spec.rcptReply;
    const domain = to.slice(to.lastIndexOf('@') + 1);
    if (!domains.has(domain)) return '554 5.7.1 Relay access denied';
    if (spec.greylistMs !== undefined) {
      const triple = `${session.remoteAddress}|${session.envelope.mailFrom ? session.envelope.mailFrom.address : ''}|${to}`;
      const first = greylist.get(triple);
      if (first === undefined) greylist.set(triple, Date.now());
      if (first === undefined || Date.now() - first < spec.greylistMs)
        return '451 4.7.1 Greylisted, please try again later';
    }
    if (full.has(to)) return '552 5.2.2 Mailbox full';
    if (overQuota.has(to)) return '452 4.2.2 Mailbox over quota, try again later';
    if (spec.acceptAll || users.has(to)) return '250 Accepted';
    return '550 5.1.1 User unknown';
  };
  const server = new SMTPServer({
    logger: false,
    // No reverse DNS of the client: it would ask the system's resolver, which tests must not depend on.
    disableReverseLookup: true,
    key,
    cert,
    hideSTARTTLS: spec.tls === false,
    hideENHANCEDSTATUSCODES: true,
    authOptional: true,
    disabledCommands: ['AUTH'],
    onConnect(_session, callback) {
      log.connections++;
      log.connectedAt.push(Date.now());
      log.open++;
      log.peak = Math.max(log.peak, log.open);
      callback();
    },
    onClose() {
      log.open--;
    },
    onSecure(_socket, _session, callback) {
      log.secured++;
      callback();
    },
    onMailFrom(_address, _session, callback) {
      callback(spec.mailFromReply ? replyError(spec.mailFromReply) : null);
    },
    onRcptTo(address, session, callback) {
      const to = address.address.toLowerCase();
      const line = answer(session, to);
      log.rcpts.push({ address: to, code: Number(line.slice(0, 3)) });
      callback(line.startsWith('250') ? null : replyError(line));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, ip, () => resolve());
  });
  // A client that gives up mid-handshake (a reset during STARTTLS, under load) is that client's business: a
  // mail server carries on, and an unhandled 'error' would bring the whole test world down.
  server.on('error', () => undefined);
  return () => new Promise((resolve) => server.close(() => resolve()));
}

async function startRaw(
  ip: string,
  port: number,
  kind: 'stall' | 'drop',
  log: ServerLog,
): Promise<() => Promise<void>> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    log.connections++;
    log.connectedAt.push(Date.now());
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (kind === 'drop') {
      socket.write('220 drop.test ESMTP\r\n');
      socket.once('data', () => socket.destroy());
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve());
  });
  return () =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
}

/**
 * Starts one server per spec, each at its own 127.0.0.N, all on one port (found free on the first address).
 * `firstOctet` picks the range (127.0.<firstOctet>.N) so that test files running at once do not collide.
 */
export async function startMailFarm(specs: Record<string, ServerSpec>, firstOctet = 0): Promise<MailFarm> {
  const names = Object.keys(specs);
  const ips = new Map(names.map((name, i) => [name, `127.0.${firstOctet}.${10 + i}`]));
  const logs = new Map(names.map((name) => [name, newLog()]));
  for (let attempt = 0; ; attempt++) {
    const closers: (() => Promise<void>)[] = [];
    try {
      let port = 0;
      for (const name of names) {
        const spec = specs[name];
        const ip = ips.get(name)!;
        if (spec.kind === 'refuse') continue;
        if (port === 0) {
          // Find a port free on this address, then everyone binds to it.
          const probe = net.createServer();
          port = await new Promise<number>((resolve, reject) => {
            probe.once('error', reject);
            probe.listen(0, ip, () => resolve((probe.address() as net.AddressInfo).port));
          });
          await new Promise((resolve) => probe.close(resolve));
        }
        const log = logs.get(name)!;
        closers.push(
          spec.kind === 'smtp'
            ? await startMailbox(ip, port, spec, log)
            : await startRaw(ip, port, spec.kind, log),
        );
      }
      return {
        port,
        ip: (name) => ips.get(name)!,
        log: (name) => logs.get(name)!,
        close: async () => {
          await Promise.all(closers.map((close) => close()));
        },
      };
    } catch (error) {
      await Promise.all(closers.map((close) => close()));
      if (attempt >= 5) throw error;
    }
  }
}
