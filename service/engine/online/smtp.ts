// One SMTP conversation with a mail server, as a verifier holds it: greeting, EHLO (HELO if EHLO is
// refused), STARTTLS when offered, MAIL FROM, then one RCPT TO per address asked, and QUIT. No DATA is
// ever sent. Every step is bounded by the caller's deadline; the conversation is written down for explain.
import net from 'node:net';
import tls from 'node:tls';
import { SocksClient } from 'socks';
import { StringDecoder } from 'node:string_decoder';

export interface SmtpReply {
  readonly code: number;
  /** The RFC 3463 enhanced status code at the head of the text (`5.1.1`), when the server gave one. */
  readonly enhanced?: string;
  /** The reply's lines as received. */
  readonly lines: readonly string[];
}

/** The text of a reply without its codes, lines joined by a space. */
export function replyText(reply: SmtpReply): string {
  return reply.lines
    .map((line) => line.slice(4).replace(/^[245]\.\d{1,3}\.\d{1,3}\s*/, ''))
    .join(' ')
    .trim();
}

export function formatReply(reply: SmtpReply): string {
  return reply.lines.join(' | ');
}

type ReadResult = { ok: true; reply: SmtpReply } | { ok: false; kind: 'timeout' | 'closed'; detail: string };

const MAX_LINE = 8192;
const MAX_LINES = 200;

/** Reads SMTP replies (RFC 5321 §4.2: `NNN-` continues, `NNN ` or `NNN` ends) from a socket. */
class ReplyReader {
  private decoder = new StringDecoder('utf8');
  private buffer = '';
  private lines: string[] = [];
  private readonly ready: (SmtpReply | ReadResult)[] = [];
  private waiter: ((result: ReadResult) => void) | undefined;
  private ended: ReadResult | undefined;
  private socket: net.Socket | undefined;
  private readonly onData = (chunk: Buffer) => this.feed(this.decoder.write(chunk));
  private readonly onClose = () =>
    this.end({ ok: false, kind: 'closed', detail: 'the server closed the connection' });
  private readonly onError = (error: NodeJS.ErrnoException) =>
    this.end({ ok: false, kind: 'closed', detail: `connection error (${error.code ?? error.message})` });

  attach(socket: net.Socket): void {
    this.detach();
    this.socket = socket;
    this.decoder = new StringDecoder('utf8');
    socket.on('data', this.onData);
    socket.on('close', this.onClose);
    socket.on('error', this.onError);
  }

  detach(): void {
    this.socket?.off('data', this.onData);
    this.socket?.off('close', this.onClose);
    // An error listener stays so that a late error on a replaced socket is not thrown.
    this.socket = undefined;
  }

  private feed(text: string): void {
    this.buffer += text;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      const match = /^(\d{3})([ -]|$)/.exec(line);
      if (!match)
        return this.end({ ok: false, kind: 'closed', detail: `not an SMTP reply: ${line.slice(0, 80)}` });
      this.lines.push(line);
      if (this.lines.length > MAX_LINES)
        return this.end({ ok: false, kind: 'closed', detail: 'reply too long' });
      if (match[2] !== '-') {
        const enhanced = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(this.lines[0])?.[1];
        const reply: SmtpReply = {
          code: Number(match[1]),
          lines: this.lines,
          ...(enhanced ? { enhanced } : {}),
        };
        this.lines = [];
        this.deliver(reply);
      }
    }
    if (this.buffer.length > MAX_LINE) this.end({ ok: false, kind: 'closed', detail: 'reply line too long' });
  }

  private deliver(item: SmtpReply | ReadResult): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = undefined;
      waiter('code' in item ? { ok: true, reply: item } : item);
    } else this.ready.push(item);
  }

  private end(result: ReadResult): void {
    if (this.ended) return;
    this.ended = result;
    this.deliver(result);
  }

  /** The next reply, or why none came before `deadline`. */
  read(deadline: number, what: string): Promise<ReadResult> {
    const next = this.ready.shift();
    if (next) return Promise.resolve('code' in next ? { ok: true, reply: next } : next);
    if (this.ended) return Promise.resolve(this.ended);
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.waiter = undefined;
          resolve({
            ok: false,
            kind: 'timeout',
            detail: `no ${what} from the server within the time allowed`,
          });
        },
        Math.max(0, deadline - Date.now()),
      );
      this.waiter = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
    });
  }
}

export interface SessionConfig {
  readonly port: number;
  readonly heloName: string;
  readonly mailFrom: string;
  /** How long connecting may take before the next address or MX is tried. */
  readonly connectTimeoutMs: number;
  /** Use STARTTLS when offered (turned off for a host whose TLS failed). */
  readonly startTls: boolean;
  /** Reach the mail servers through this SOCKS5 proxy (port 25 is blocked on most home networks). */
  readonly proxy?: SocksProxySettings | undefined;
  /** The local address connections leave from (a verifier node's source address); default: the system's. */
  readonly sourceAddress?: string | undefined;
}

/** A SOCKS5 proxy for the SMTP conversations. The password never appears in a transcript or an error. */
export interface SocksProxySettings {
  readonly host: string;
  readonly port: number;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
}

/** `host:port` of a proxy, as said in transcripts and errors (never the user or password). */
export function describeProxy(proxy: SocksProxySettings): string {
  return `socks5://${proxy.host.includes(':') ? `[${proxy.host}]` : proxy.host}:${proxy.port}`;
}

/**
 * `socks5://[user[:password]@]HOST:PORT` as proxy settings, or why not (the message never repeats the
 * password).
 */
export function parseSocksProxy(
  raw: string,
): { ok: true; proxy: SocksProxySettings } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { ok: false, reason: 'not a URL of the form socks5://HOST:PORT' };
  }
  if (url.protocol !== 'socks5:' && url.protocol !== 'socks5h:')
    return { ok: false, reason: `the scheme must be socks5://, not ${url.protocol}//` };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port);
  if (!host) return { ok: false, reason: 'the proxy host is missing' };
  if (!url.port || !Number.isInteger(port) || port < 1 || port > 65535)
    return { ok: false, reason: 'the proxy port is missing (socks5://HOST:PORT)' };
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash)
    return { ok: false, reason: 'nothing may follow HOST:PORT' };
  const user = url.username ? decodeURIComponent(url.username) : undefined;
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  return { ok: true, proxy: { host, port, ...(user ? { user } : {}), ...(password ? { password } : {}) } };
}

/** Why a conversation did not get as far as RCPT. */
export type SessionFailure =
  /** Refused, unreachable, or no connection within the connect timeout: another MX may do. */
  | { readonly kind: 'unreachable'; readonly detail: string }
  /** The time allowed ran out while waiting for the server. */
  | { readonly kind: 'timeout'; readonly detail: string }
  /** The server closed the connection mid-conversation. */
  | { readonly kind: 'dropped'; readonly detail: string }
  /** STARTTLS was offered but the TLS handshake failed. */
  | { readonly kind: 'tls-failed'; readonly detail: string }
  /** The host asked this machine to connect less often, and the time allowed ran out meanwhile. */
  | { readonly kind: 'rate-limited'; readonly detail: string }
  /** The greeting, EHLO/HELO or MAIL FROM was refused: 5xx (`rejected`) or 4xx (`deferred`). */
  | { readonly kind: 'rejected' | 'deferred'; readonly stage: string; readonly reply: SmtpReply };

export type RcptResult =
  { readonly ok: true; readonly reply: SmtpReply } | { readonly ok: false; readonly failure: SessionFailure };

function failureOf(result: Extract<ReadResult, { ok: false }>): SessionFailure {
  return result.kind === 'timeout'
    ? { kind: 'timeout', detail: result.detail }
    : { kind: 'dropped', detail: result.detail };
}

/** Connects within `timeoutMs` (through the proxy when one is set), or says why not. */
function connect(
  ip: string,
  port: number,
  timeoutMs: number,
  proxy?: SocksProxySettings,
  sourceAddress?: string,
): Promise<{ ok: true; socket: net.Socket } | { ok: false; detail: string }> {
  if (proxy) return connectThroughProxy(ip, port, timeoutMs, proxy);
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port, ...(sourceAddress ? { localAddress: sourceAddress } : {}) });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, detail: `no connection to ${ip}:${port} within ${Math.round(timeoutMs)} ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve({ ok: true, socket });
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({
        ok: false,
        detail:
          error.code === 'ECONNREFUSED'
            ? `${ip}:${port} refused the connection`
            : `cannot connect to ${ip}:${port} (${error.code ?? error.message})`,
      });
    });
  });
}

/** The same through a SOCKS5 proxy (the `socks` client): the proxy connects to `ip:port` for us. */
async function connectThroughProxy(
  ip: string,
  port: number,
  timeoutMs: number,
  proxy: SocksProxySettings,
): Promise<{ ok: true; socket: net.Socket } | { ok: false; detail: string }> {
  const via = describeProxy(proxy);
  try {
    const { socket } = await SocksClient.createConnection({
      proxy: {
        host: proxy.host,
        port: proxy.port,
        type: 5,
        ...(proxy.user !== undefined ? { userId: proxy.user } : {}),
        ...(proxy.password !== undefined ? { password: proxy.password } : {}),
      },
      command: 'connect',
      destination: { host: ip, port },
      timeout: Math.max(1, Math.round(timeoutMs)),
    });
    return { ok: true, socket };
  } catch (error) {
    const raw = error instanceof Error ? error.message : String(error);
    // The library's messages name the proxy's answer; the password is never in them, but say it in our words.
    const detail = /ECONNREFUSED/.test(raw)
      ? `the proxy ${via} refused the connection`
      : /timed out|timeout/i.test(raw)
        ? `no connection to ${ip}:${port} through ${via} within ${Math.round(timeoutMs)} ms`
        : /auth/i.test(raw)
          ? `the proxy ${via} refused its user name or password`
          : `cannot connect to ${ip}:${port} through ${via} (${raw.replaceAll(proxy.password ?? '\0', '***')})`;
    return { ok: false, detail };
  }
}

/** An open SMTP conversation, past MAIL FROM, ready for RCPT TO. */
export class SmtpSession {
  /** The conversation up to MAIL FROM, for explain. */
  readonly transcript: string[];
  rcptCount = 0;
  /** RCPT replies of 4xx or 5xx in this conversation: servers count them, and slow down or disconnect. */
  errors = 0;
  /** RCPT replies of 2xx: the recipients the server took (a limit of recipients counts these). */
  accepted = 0;
  /** How long the server took to answer MAIL FROM: a reply much slower than that is a tarpit. */
  mailFromMs = 0;
  private isAlive = true;
  /** The server closed its side (after its goodbye, or its 421): it no longer counts this connection. */
  private hasServerClosed = false;
  /** Undefined until the socket closes; then whether it closed cleanly (see `onClosed`). */
  private closedCleanly: boolean | undefined;
  private readonly closeWatchers: ((isClean: boolean) => void)[] = [];

  private constructor(
    private socket: net.Socket,
    private readonly reader: ReplyReader,
    readonly host: string,
    transcript: string[],
  ) {
    this.transcript = transcript;
    socket.on('end', () => (this.hasServerClosed = true));
    socket.on('close', () => {
      this.isAlive = false;
      this.closedCleanly = this.hasServerClosed;
      for (const watch of this.closeWatchers.splice(0)) watch(this.hasServerClosed);
    });
  }

  /**
   * Calls `watch` once the connection is closed: `isClean` when the server closed its side first (it has
   * stopped counting the connection: Postfix tells its anvil before it closes), false when this machine reset
   * it (the server notices only at its next read or write).
   */
  onClosed(watch: (isClean: boolean) => void): void {
    if (this.closedCleanly !== undefined) watch(this.closedCleanly);
    else this.closeWatchers.push(watch);
  }

  get alive(): boolean {
    return this.isAlive && !this.socket.destroyed;
  }

  /**
   * Connects to `ip` (an address of MX `host`) and talks up to MAIL FROM. Never throws; a failure says
   * how far it got. The conversation so far is in the returned transcript either way.
   */
  static async open(
    host: string,
    ip: string,
    config: SessionConfig,
    deadline: number,
  ): Promise<
    { ok: true; session: SmtpSession } | { ok: false; failure: SessionFailure; transcript: string[] }
  > {
    const transcript: string[] = [
      `SMTP: connecting to ${host} [${ip}] port ${config.port}${config.proxy ? ` through ${describeProxy(config.proxy)}` : ''}`,
    ];
    const remaining = deadline - Date.now();
    if (remaining <= 0)
      return { ok: false, failure: { kind: 'timeout', detail: 'no time left to connect' }, transcript };
    const connected = await connect(
      ip,
      config.port,
      Math.min(config.connectTimeoutMs, remaining),
      config.proxy,
      config.sourceAddress,
    );
    if (!connected.ok) {
      transcript.push(`SMTP: ${connected.detail}`);
      const timedOut = Date.now() >= deadline;
      return {
        ok: false,
        failure: { kind: timedOut ? 'timeout' : 'unreachable', detail: connected.detail },
        transcript,
      };
    }
    let socket: net.Socket = connected.socket;
    socket.setNoDelay(true);
    const reader = new ReplyReader();
    reader.attach(socket);
    const fail = (failure: SessionFailure) => {
      socket.destroy();
      return { ok: false as const, failure, transcript };
    };
    const send = (command: string) => {
      transcript.push(`C: ${command}`);
      socket.write(`${command}\r\n`);
    };
    const expect = async (what: string, stage: string): Promise<SmtpReply | SessionFailure> => {
      const result = await reader.read(deadline, what);
      if (!result.ok) {
        transcript.push(`SMTP: ${result.detail}`);
        return failureOf(result);
      }
      for (const line of result.reply.lines) transcript.push(`S: ${line}`);
      const code = result.reply.code;
      if (code >= 400) return { kind: code >= 500 ? 'rejected' : 'deferred', stage, reply: result.reply };
      return result.reply;
    };
    const isFailure = (x: SmtpReply | SessionFailure): x is SessionFailure => 'kind' in x;

    const greeting = await expect('greeting', 'greeting');
    if (isFailure(greeting)) return fail(greeting);
    send(`EHLO ${config.heloName}`);
    let ehlo = await expect('EHLO reply', 'EHLO');
    if (isFailure(ehlo) && ehlo.kind === 'rejected') {
      send(`HELO ${config.heloName}`);
      ehlo = await expect('HELO reply', 'HELO');
    }
    if (isFailure(ehlo)) return fail(ehlo);
    let extensions = ehlo.lines.map((line) => line.slice(4).trim().toUpperCase());
    if (config.startTls && extensions.some((e) => e === 'STARTTLS')) {
      send('STARTTLS');
      const ready = await expect('STARTTLS reply', 'STARTTLS');
      if (isFailure(ready)) return fail(ready);
      reader.detach();
      const secured = await upgrade(socket, host, deadline);
      if (!secured.ok) {
        transcript.push(`SMTP: TLS handshake failed: ${secured.detail}`);
        return fail({ kind: Date.now() >= deadline ? 'timeout' : 'tls-failed', detail: secured.detail });
      }
      socket = secured.socket;
      reader.attach(socket);
      // Verifiers cannot insist on a trusted certificate: most MX hosts present self-signed or mismatched
      // ones, and nothing secret is sent over this connection.
      transcript.push(
        `SMTP: TLS established (${secured.socket.getProtocol() ?? 'TLS'}; certificate not verified)`,
      );
      send(`EHLO ${config.heloName}`);
      const again = await expect('EHLO reply', 'EHLO');
      if (isFailure(again)) return fail(again);
      extensions = again.lines.map((line) => line.slice(4).trim().toUpperCase());
    }
    const utf8 = extensions.some((e) => e === 'SMTPUTF8');
    send(`MAIL FROM:<${config.mailFrom}>${utf8 ? ' SMTPUTF8' : ''}`);
    const mailSentAt = Date.now();
    const mail = await expect('MAIL FROM reply', 'MAIL FROM');
    if (isFailure(mail)) return fail(mail);
    const session = new SmtpSession(socket, reader, host, transcript);
    session.mailFromMs = Date.now() - mailSentAt;
    session.supportsUtf8 = utf8;
    session.supportsPipelining = extensions.some((e) => e === 'PIPELINING');
    return { ok: true, session };
  }

  supportsUtf8 = false;
  /** The server offers PIPELINING (RFC 2920): several RCPT TO may be sent before their replies. */
  supportsPipelining = false;

  /**
   * Asks about several recipients of one conversation: written at once when the server offers PIPELINING
   * (RFC 2920), else one after the other; the replies come in order. Each exchange is appended to its own
   * log. Once the conversation fails, the recipients after it are not answered: `answered` says how many were.
   *
   * `tarpit`: once this conversation has had `afterErrors` refusals, a reply slower than `slowMs` is the
   * server's error tarpit (Postfix sleeps a second before every reply past its soft error limit): the
   * conversation is dropped at once (`slowed`), leaving the rest unanswered, instead of waiting in it.
   */
  async rcptMany(
    asks: readonly { readonly address: string; readonly deadline: number; readonly log: string[] }[],
    tarpit?: { readonly afterErrors: number; readonly slowMs: number },
  ): Promise<{ results: RcptResult[]; answered: number; slowed: boolean }> {
    const results: RcptResult[] = [];
    if (!this.alive) {
      if (asks.length > 0)
        results.push({ ok: false, failure: { kind: 'dropped', detail: 'the connection had closed' } });
      return { results, answered: 0, slowed: false };
    }
    const isPipelined = this.supportsPipelining && asks.length > 1;
    if (isPipelined) {
      this.rcptCount += asks.length;
      for (const ask of asks) ask.log.push(`C: RCPT TO:<${ask.address}>`);
      this.socket.write(asks.map((ask) => `RCPT TO:<${ask.address}>\r\n`).join(''));
    }
    for (const ask of asks) {
      if (!isPipelined) {
        this.rcptCount++;
        ask.log.push(`C: RCPT TO:<${ask.address}>`);
        this.socket.write(`RCPT TO:<${ask.address}>\r\n`);
      }
      const isWatched = tarpit !== undefined && this.errors >= tarpit.afterErrors;
      const slowAt = isWatched ? Date.now() + tarpit.slowMs : Infinity;
      const result = await this.reader.read(Math.min(ask.deadline, slowAt), 'RCPT reply');
      if (!result.ok) {
        if (result.kind === 'timeout' && Date.now() >= slowAt && Date.now() < ask.deadline) {
          ask.log.push(
            `SMTP: ${this.host} slowed its replies after ${this.errors} refusals (an error tarpit): a new conversation asks the rest`,
          );
          this.destroy();
          return { results, answered: results.length, slowed: true };
        }
        ask.log.push(`SMTP: ${result.detail}`);
        this.destroy();
        results.push({ ok: false, failure: failureOf(result) });
        break;
      }
      for (const line of result.reply.lines) ask.log.push(`S: ${line}`);
      if (result.reply.code >= 400) this.errors++;
      else if (result.reply.code < 300) this.accepted++;
      results.push({ ok: true, reply: result.reply });
      // 421: the server is closing the conversation (RFC 5321 §3.8); what follows goes unanswered.
      if (result.reply.code === 421) {
        this.destroy();
        break;
      }
    }
    return { results, answered: results.length, slowed: false };
  }

  /** Asks about one recipient. The lines of this exchange are appended to `log`. */
  async rcpt(address: string, deadline: number, log: string[]): Promise<RcptResult> {
    const { results } = await this.rcptMany([{ address, deadline, log }]);
    return results[0] ?? { ok: false, failure: { kind: 'dropped', detail: 'the connection had closed' } };
  }

  /** RSET: forgets the envelope (the preflight's last word before QUIT). */
  async reset(deadline: number, log: string[]): Promise<SmtpReply | undefined> {
    if (!this.alive) return undefined;
    log.push('C: RSET');
    this.socket.write('RSET\r\n');
    const result = await this.reader.read(deadline, 'RSET reply');
    if (!result.ok) return undefined;
    for (const line of result.reply.lines) log.push(`S: ${line}`);
    return result.reply;
  }

  /** Ends the conversation politely (QUIT), without waiting long for the server's goodbye. */
  quit(): void {
    if (!this.alive) return;
    this.isAlive = false;
    this.socket.write('QUIT\r\n');
    this.socket.end();
    // A server that never closes its side must not keep the socket (or a test) alive.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  destroy(): void {
    this.isAlive = false;
    this.socket.destroy();
  }
}

/**
 * One TLS context for every STARTTLS: building one per connection (what `tls.connect` does without it) costs
 * more CPU than the rest of a conversation. Nothing in it is per host (no client certificate, no CA check).
 */
let sharedContext: tls.SecureContext | undefined;

function upgrade(
  socket: net.Socket,
  host: string,
  deadline: number,
): Promise<{ ok: true; socket: tls.TLSSocket } | { ok: false; detail: string }> {
  return new Promise((resolve) => {
    sharedContext ??= tls.createSecureContext();
    const secure = tls.connect({
      socket,
      secureContext: sharedContext,
      ...(net.isIP(host) ? {} : { servername: host }),
      // A verifier reads the server's answers; it does not trust the server with anything (see above).
      rejectUnauthorized: false,
    });
    const timer = setTimeout(
      () => {
        secure.destroy();
        resolve({ ok: false, detail: 'TLS handshake timed out' });
      },
      Math.max(0, deadline - Date.now()),
    );
    secure.once('secureConnect', () => {
      clearTimeout(timer);
      secure.removeAllListeners('error');
      secure.on('error', () => undefined); // errors after this point surface as a closed connection
      resolve({ ok: true, socket: secure });
    });
    secure.once('error', (error: Error) => {
      clearTimeout(timer);
      secure.destroy();
      resolve({ ok: false, detail: error.message });
    });
  });
}
