// Real SMTP servers on loopback for the online checks: smtp-server instances (STARTTLS with a self-signed
// certificate) that behave like the mail servers a verifier meets, plus raw TCP servers that stall or drop
// the connection. Each server has its own loopback address (127.0.0.N) and all share one port, as MX hosts
// share port 25, so a verifier with `smtpPort` set reaches each one through DNS like a real MX. Every server
// waits 100 ms before its greeting (smtp-server's check for clients that talk too soon) and keeps counts per
// client address; on request it judges clients by their address as real servers do: a limit of connections
// at once per client address, and Postfix's error tarpit (slower replies after many errors, then 421).
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
  /** Domains (lower-case) that accept any address, the others of `domains` keeping to `users`. */
  readonly acceptAllDomains?: readonly string[];
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
  /**
   * Connections at once from one client address (as Postfix's `smtpd_client_connection_count_limit`): one
   * more is answered `421 4.7.0 Too many connections from your IP, try again later` and closed. A connection
   * counts from its accept until the client has sent QUIT or either side has closed or reset it; a new one
   * is judged once the server has read what arrived with it. Default: no limit.
   */
  readonly maxConnectionsPerClient?: number;
  /**
   * Postfix's error tarpit (`smtpd_soft_error_limit`, `smtpd_error_sleep_time`, `smtpd_hard_error_limit`):
   * once a session has had `soft` error replies (4xx or 5xx) to RCPT, every further RCPT and MAIL FROM
   * reply waits `sleepMs`; once it has had `hard`, the next RCPT or MAIL FROM is answered
   * `421 4.7.0 Error: too many errors` and the connection closed. Default: none.
   */
  readonly errorLimits?: { readonly soft: number; readonly hard: number; readonly sleepMs: number };
}

export type ServerSpec =
  | MailboxBehaviour
  /** Accepts the connection and never says a word. */
  | { readonly kind: 'stall' }
  /** Greets, then closes the connection as soon as the client speaks. */
  | { readonly kind: 'drop' }
  /** Nothing listens at this address: connections are refused. */
  | { readonly kind: 'refuse' };

/** What one client address did at one server, or at every server of a farm. */
export interface ClientLog {
  /** TCP connections accepted from it (refused ones included). */
  connections: number;
  /** Connections open now (refused ones not counted). */
  open: number;
  /** Most connections open at once. */
  peak: number;
  /** Connections answered 421 for too many at once (`maxConnectionsPerClient`). */
  refused: number;
  /** RCPT TO commands answered (the 421 of a cut session not counted). */
  rcpts: number;
  /** RCPT replies 4xx or 5xx (the tarpit's errors). */
  errors: number;
  /** Replies delayed by the error tarpit. */
  tarpitted: number;
  /** Sessions closed with 421 for too many errors. */
  cut: number;
}

export interface ServerLog {
  /** Every RCPT TO address, in order, with the code answered and the client's address. */
  readonly rcpts: { address: string; code: number; client: string }[];
  /** Connections accepted. */
  connections: number;
  /** When each connection was accepted (ms since the epoch). */
  readonly connectedAt: number[];
  /** Most connections open at once. */
  peak: number;
  open: number;
  /** Sessions that completed STARTTLS. */
  secured: number;
  /** Per client address (IPv4 dotted, as the server sees it). */
  readonly clients: Map<string, ClientLog>;
}

export interface MailFarm {
  readonly port: number;
  /** The loopback address of a server. */
  ip(name: string): string;
  log(name: string): ServerLog;
  /** Per client address, over every server of the farm (its `peak`: most open at once at all servers). */
  readonly clients: Map<string, ClientLog>;
  /** Clears every count, keeping what is open now open (for the next round of a benchmark). */
  resetLogs(): void;
  close(): Promise<void>;
}

export interface MailFarmOptions {
  /** Servers at 127.0.<firstOctet>.10, .11, … (default 0), so that test files running at once do not collide. */
  readonly firstOctet?: number;
  /** Or each server's loopback address, in the order of the specs. */
  readonly addresses?: readonly string[];
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
  return { rcpts: [], connections: 0, connectedAt: [], peak: 0, open: 0, secured: 0, clients: new Map() };
}

function newClientLog(): ClientLog {
  return { connections: 0, open: 0, peak: 0, refused: 0, rcpts: 0, errors: 0, tarpitted: 0, cut: 0 };
}

/** NOTE: mutates `log`: zero counts, keeping `open` (connections still open stay counted). */
function resetLog(log: ServerLog): void {
  log.rcpts.length = 0;
  log.connectedAt.length = 0;
  log.connections = 0;
  log.peak = log.open;
  log.secured = 0;
  resetClients(log.clients);
}

function resetClients(clients: Map<string, ClientLog>): void {
  for (const [address, client] of clients)
    if (client.open === 0) clients.delete(address);
    else clients.set(address, { ...newClientLog(), open: client.open, peak: client.open });
}

/** The client logs of one address: at this server, and at the farm. */
type ClientLogs = readonly [ClientLog, ClientLog];

function clientLogs(
  address: string,
  server: Map<string, ClientLog>,
  farm: Map<string, ClientLog>,
): ClientLogs {
  const of = (map: Map<string, ClientLog>) => {
    let log = map.get(address);
    if (!log) map.set(address, (log = newClientLog()));
    return log;
  };
  return [of(server), of(farm)];
}

/** `::ffff:127.0.0.2` (an IPv4 client of a dual-stack socket) as `127.0.0.2`. */
const plainAddress = (address: string | undefined): string =>
  (address ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');

/** A chunk from a client whose last command is QUIT. */
const ENDS_WITH_QUIT = /(?:^|\n)QUIT\r?\n$/i;
const TOO_MANY_CONNECTIONS = '421 4.7.0 Too many connections from your IP, try again later';
const TOO_MANY_ERRORS = '421 4.7.0 Error: too many errors';

async function startMailbox(
  ip: string,
  port: number,
  spec: MailboxBehaviour,
  log: ServerLog,
  farmClients: Map<string, ClientLog>,
): Promise<() => Promise<void>> {
  const { key, cert } = await testCertificate();
  const greylist = new Map<string, number>();
  const domains = new Set(spec.domains.map((d) => d.toLowerCase()));
  const acceptAllDomains = new Set(spec.acceptAllDomains?.map((d) => d.toLowerCase()));
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
    if (spec.acceptAll || acceptAllDomains.has(domain) || users.has(to)) return '250 Accepted';
    return '550 5.1.1 User unknown';
  };
  const limits = spec.errorLimits;
  /** RCPT errors so far per session (by session id), for the tarpit. */
  const errors = new Map<string, number>();
  /** Connections over the per-client limit, by `address:port`, answered 421 when smtp-server asks onConnect. */
  const refusing = new Set<string>();
  /**
   * Answers a RCPT or MAIL FROM as the tarpit has it: at once, after `sleepMs`, or with 421 past the hard
   * limit (the session is then closed by smtp-server).
   */
  const tarpit = (
    session: SMTPServerSession,
    reply: () => void,
    callback: (error?: Error | null) => void,
  ): void => {
    const count = errors.get(session.id) ?? 0;
    const client = plainAddress(session.remoteAddress);
    if (limits && count >= limits.hard) {
      for (const c of clientLogs(client, log.clients, farmClients)) c.cut++;
      return callback(replyError(TOO_MANY_ERRORS));
    }
    if (limits && count >= limits.soft) {
      for (const c of clientLogs(client, log.clients, farmClients)) c.tarpitted++;
      setTimeout(reply, limits.sleepMs);
    } else reply();
  };
  const server = new SMTPServer({
    logger: false,
    // No reverse DNS of the client: it would ask the system's resolver, which tests must not depend on.
    disableReverseLookup: true,
    // A test world shuts down at once: smtp-server would otherwise wait 30 s for a conversation nobody ends
    // (one a proxy left open), the whole of a test hook's time.
    closeTimeout: 500,
    key,
    cert,
    hideSTARTTLS: spec.tls === false,
    hideENHANCEDSTATUSCODES: true,
    authOptional: true,
    disabledCommands: ['AUTH'],
    onConnect(session, callback) {
      log.connections++;
      log.connectedAt.push(Date.now());
      log.open++;
      log.peak = Math.max(log.peak, log.open);
      if (refusing.delete(`${plainAddress(session.remoteAddress)}:${session.remotePort}`))
        return callback(replyError(TOO_MANY_CONNECTIONS));
      callback();
    },
    onClose(session) {
      log.open--;
      errors.delete(session.id);
    },
    onSecure(socket, session, callback) {
      log.secured++;
      // smtp-server pipes the TLS socket into its parser in this callback; then it is watched in turn (the
      // plain one lost its listeners to the upgrade).
      callback();
      watching.get(`${plainAddress(session.remoteAddress)}:${session.remotePort}`)?.(socket);
    },
    onMailFrom(_address, session, callback) {
      tarpit(session, () => callback(spec.mailFromReply ? replyError(spec.mailFromReply) : null), callback);
    },
    onRcptTo(address, session, callback) {
      tarpit(
        session,
        () => {
          const to = address.address.toLowerCase();
          const line = answer(session, to);
          const code = Number(line.slice(0, 3));
          const client = plainAddress(session.remoteAddress);
          log.rcpts.push({ address: to, code, client });
          for (const c of clientLogs(client, log.clients, farmClients)) {
            c.rcpts++;
            if (code >= 400) c.errors++;
          }
          if (code >= 400) errors.set(session.id, (errors.get(session.id) ?? 0) + 1);
          callback(line.startsWith('250') ? null : replyError(line));
        },
        callback,
      );
    },
  });
  /** The watch of each counted connection (by `address:port`), to follow it onto its TLS socket. */
  const watching = new Map<string, (socket: net.Socket) => void>();
  // Per client address, from the TCP accept (before smtp-server's 100 ms wait) until the client has said QUIT
  // or either side has closed or reset it: the count a server's connection limit is about. A client that
  // sends QUIT and at once opens its next connection (as Postfix's smtp client does, not waiting for the 221)
  // is within its limit, so the QUIT counts when it arrives, not when smtp-server gets round to answering it.
  // For the same reason a new connection is judged once this turn of the event loop has read what arrived
  // with it: a busy server finds the QUIT and the new connection in one poll, the connection maybe first.
  server.server.on('connection', (socket: net.Socket) => {
    const address = plainAddress(socket.remoteAddress);
    const key = `${address}:${socket.remotePort}`;
    let state: 'judging' | 'open' | 'gone' = 'judging';
    const done = () => {
      if (state === 'open')
        // The logs of now: a reset in between replaced them (carrying the open count over).
        for (const c of clientLogs(address, log.clients, farmClients)) c.open--;
      state = 'gone';
      watching.delete(key);
    };
    const watch = (stream: net.Socket) => {
      // A reset (the client gave up on the conversation) shows as 'error' first; its 'close' comes a turn
      // of the event loop later, after connections accepted meanwhile.
      for (const event of ['end', 'finish', 'error', 'close']) stream.once(event, done);
      stream.on('data', (chunk: Buffer) => {
        if (state !== 'gone' && ENDS_WITH_QUIT.test(chunk.toString('latin1'))) done();
      });
    };
    watching.set(key, watch);
    watch(socket);
    setImmediate(() => {
      const logs = clientLogs(address, log.clients, farmClients);
      for (const c of logs) c.connections++;
      if (state === 'gone') return;
      const limit = spec.maxConnectionsPerClient;
      if (limit !== undefined && logs[0].open >= limit) {
        for (const c of logs) c.refused++;
        state = 'gone';
        watching.delete(key);
        refusing.add(key);
        // Gone before smtp-server asked onConnect: forget it, or a later connection from the same port would
        // be refused.
        socket.once('close', () => refusing.delete(key));
        return;
      }
      state = 'open';
      for (const c of logs) {
        c.open++;
        c.peak = Math.max(c.peak, c.open);
      }
    });
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
 * `firstOctet` picks the range (127.0.<firstOctet>.N) so that test files running at once do not collide;
 * `{addresses}` gives each server's address instead.
 */
export async function startMailFarm(
  specs: Record<string, ServerSpec>,
  options: number | MailFarmOptions = 0,
): Promise<MailFarm> {
  const { firstOctet = 0, addresses } = typeof options === 'number' ? { firstOctet: options } : options;
  const names = Object.keys(specs);
  if (addresses && addresses.length !== names.length)
    throw new Error(`${names.length} servers but ${addresses.length} addresses`);
  const ips = new Map(names.map((name, i) => [name, addresses?.[i] ?? `127.0.${firstOctet}.${10 + i}`]));
  const logs = new Map(names.map((name) => [name, newLog()]));
  const clients = new Map<string, ClientLog>();
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
            ? await startMailbox(ip, port, spec, log, clients)
            : await startRaw(ip, port, spec.kind, log),
        );
      }
      return {
        port,
        ip: (name) => ips.get(name)!,
        log: (name) => logs.get(name)!,
        clients,
        resetLogs() {
          for (const log of logs.values()) resetLog(log);
          resetClients(clients);
        },
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
