// Clients that send part of a request and then nothing, over raw sockets on loopback, and what a node process
// holds meanwhile (its resident memory and its sockets, read from /proc): for the tests of stalled bodies
// (test/service/http/stalledBodies.test.ts, test/pg/stalledBodies.test.ts).
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** A node process's resident memory in bytes (VmRSS). */
export function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

/** How many sockets a process has open (its listening socket and connections among them). */
export function socketsOf(pid: number): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count++;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

export interface StalledClient {
  readonly socket: Socket;
  readonly startedAt: number;
  /** The answer's status, once its first line has come. */
  status(): number | undefined;
  /** Everything the node sent. */
  text(): string;
  /** When the connection ended (the node closed it, or it failed), or undefined while it is open. */
  closedAt(): number | undefined;
  readonly closed: Promise<void>;
  /** How many bytes of the body were handed to the connection. */
  sent(): number;
  /** Sends more of the body. */
  write(more: Buffer): void;
  /** Resolves once the body's first bytes (`body`) are all handed to the system. */
  readonly allSent: Promise<void>;
}

const CHUNK = Buffer.alloc(256 * 1024, 0x20);

/**
 * Connects to `port` on 127.0.0.1, sends `head` (a request line and headers, with the blank line) and then the
 * body's first bytes: `body` itself, or that many spaces, as fast as the connection takes them; then nothing,
 * until `write` sends more: the connection stays open until the node closes it or the test destroys it.
 * `halfOpen`: the client keeps its side open when the node ends its own.
 */
export function stalledClient(
  port: number,
  head: string,
  body: number | Buffer,
  options: { halfOpen?: boolean } = {},
): StalledClient {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: options.halfOpen === true });
  const startedAt = Date.now();
  let text = '';
  let closedAt: number | undefined;
  let sent = 0;
  // Read what comes (a socket not read never sees the node close it).
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closedAt = Date.now();
      resolve();
    }),
  );
  socket.write(head);
  const bodyBytes = typeof body === 'number' ? body : body.length;
  let onAllSent: () => void = () => undefined;
  const allSent = new Promise<void>((resolve) => (onAllSent = resolve));
  const push = () => {
    while (sent < bodyBytes && !socket.destroyed && socket.writable) {
      const piece =
        typeof body === 'number'
          ? CHUNK.subarray(0, Math.min(CHUNK.length, bodyBytes - sent))
          : body.subarray(sent, sent + CHUNK.length);
      sent += piece.length;
      if (!socket.write(piece)) {
        socket.once('drain', push);
        return;
      }
    }
    // (Called back once every write before it is done.)
    if (sent >= bodyBytes && !socket.destroyed) socket.write(Buffer.alloc(0), () => onAllSent());
  };
  push();
  return {
    socket,
    startedAt,
    status: () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      return match ? Number(match[1]) : undefined;
    },
    text: () => text,
    closedAt: () => closedAt,
    closed,
    sent: () => sent,
    write: (more) => {
      sent += more.length;
      socket.write(more);
    },
    allSent,
  };
}

/** A whole answer as `StalledClient.text()` holds it: its status, headers (lower-case names) and body. */
export function answerOf(text: string): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = (end === -1 ? text : text.slice(0, end)).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end === -1 ? '' : text.slice(end + 4);
  // A chunked answer: its chunks joined.
  if (headers['transfer-encoding'] === 'chunked') {
    let joined = '';
    for (let at = 0; ;) {
      const lineEnd = body.indexOf('\r\n', at);
      const size = lineEnd === -1 ? 0 : parseInt(body.slice(at, lineEnd), 16);
      if (!size) break;
      joined += body.slice(lineEnd + 2, lineEnd + 2 + size);
      at = lineEnd + 2 + size + 2;
    }
    body = joined;
  }
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
    headers,
    // (The text is read a byte a character: the body's UTF-8 decoded now.)
    body: Buffer.from(body, 'latin1').toString('utf8'),
  };
}

/** A request's head: `method target`, the headers given, and `Content-Length`. */
export function requestHead(
  method: string,
  target: string,
  length: number,
  headers: Record<string, string> = {},
): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${length}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Samples a process's resident memory every `everyMs` until stopped: its peak. */
export function sampleRss(pid: number, everyMs = 50) {
  let peak = rssOf(pid);
  const listeners: ((rss: number) => void)[] = [];
  const timer = setInterval(() => {
    try {
      const rss = rssOf(pid);
      peak = Math.max(peak, rss);
      for (const listener of listeners) listener(rss);
    } catch {
      // the process ended
    }
  }, everyMs);
  return {
    peak: () => peak,
    /** Calls `listener` with each sample. */
    onSample: (listener: (rss: number) => void) => void listeners.push(listener),
    stop: () => clearInterval(timer),
  };
}

/** The `p`-th percentile (0–100) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A request refused before its body: the head to send and how much body it declares. */
export interface KeylessRequest {
  readonly head: string;
  readonly length: number;
}

/** A key no node knows. */
export const WRONG_KEY = 'wrong-key-0123456789abcdef';

/**
 * Requests of every route with a body, each without a key or with a wrong one, declaring large bodies: E6 and
 * E4 16 MB (their limit is 16 MiB), E7 16 MB, purchase and finish 1 MB (the node's limit for other bodies is
 * 1 MiB), and a path no route takes, 1 MB.
 */
export const KEYLESS_REQUESTS: readonly KeylessRequest[] = [
  { head: requestHead('POST', '/v5/ei/bulk', 16e6, { 'Content-Type': 'application/json' }), length: 16e6 },
  {
    head: requestHead('POST', `/v5/ei/bulk?api_key=${WRONG_KEY}`, 16e6, {
      'Content-Type': 'application/json',
    }),
    length: 16e6,
  },
  {
    head: requestHead('POST', `/v5/eppend/bulk?api_key=${WRONG_KEY}`, 16e6, {
      'Content-Type': 'application/json',
    }),
    length: 16e6,
  },
  {
    head: requestHead('POST', '/v5/list?name=big.csv', 16e6, {
      api_key: WRONG_KEY,
      'Content-Type': 'text/csv',
    }),
    length: 16e6,
  },
  {
    head: requestHead('POST', '/v5/list/1/purchase', 1e6, {
      api_key: WRONG_KEY,
      'Content-Type': 'application/json',
    }),
    length: 1e6,
  },
  {
    head: requestHead('POST', '/v5/list/1/finish', 1e6, { 'Content-Type': 'application/json' }),
    length: 1e6,
  },
  { head: requestHead('POST', '/v5/nowhere', 1e6, { 'Content-Type': 'application/json' }), length: 1e6 },
];

export interface HeldBodies {
  readonly clients: readonly StalledClient[];
  /** The node's resident memory before, and its peak while the clients were held. */
  readonly rssBefore: number;
  readonly rssPeak: number;
  /** The node's sockets before, and once every client was closed (or the wait ran out). */
  readonly socketsBefore: number;
  readonly socketsAfter: number;
}

/**
 * `count` clients at once, each sending one of KEYLESS_REQUESTS in turn and half of the body it declares, then
 * nothing; waits until the node has closed every one of them, or `waitMs` has passed. A node that keeps what it
 * reads would take gigabytes: past `rssCeiling` above where it started, every client is stopped (the test then
 * fails on the memory it saw).
 */
export async function holdKeylessBodies(
  port: number,
  pid: number,
  options: { count: number; waitMs: number; rssCeiling?: number },
): Promise<HeldBodies> {
  const rssBefore = rssOf(pid);
  const socketsBefore = socketsOf(pid);
  const sampler = sampleRss(pid);
  const clients: StalledClient[] = [];
  sampler.onSample((rss) => {
    if (rss - rssBefore > (options.rssCeiling ?? 300 * 1024 * 1024))
      for (const client of clients) client.socket.destroy();
  });
  // They come 20 at a time, a batch every 20 ms (300 in 0.3 s): all at once, this process would be busy
  // writing their first megabytes for seconds before it saw any answer.
  for (let i = 0; i < options.count; i++) {
    if (i > 0 && i % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const request = KEYLESS_REQUESTS[i % KEYLESS_REQUESTS.length];
    clients.push(stalledClient(port, request.head, request.length / 2));
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(clients.map((client) => client.closed)),
    new Promise((resolve) => (timer = setTimeout(resolve, options.waitMs))),
  ]);
  clearTimeout(timer);
  // What the node holds once its answers are out (a last sample after they closed).
  await new Promise((resolve) => setTimeout(resolve, 200));
  sampler.stop();
  const held = {
    clients,
    rssBefore,
    rssPeak: Math.max(sampler.peak(), rssOf(pid)),
    socketsBefore,
    socketsAfter: socketsOf(pid),
  };
  for (const client of clients) client.socket.destroy();
  return held;
}

/** The E1 prober's process: asks its URL one request after another until its stdin ends, then prints them. */
const PROBE_SCRIPT = `
const url = process.argv[1];
const latencies = [];
const statuses = [];
let running = true;
process.stdin.on('data', () => {}).on('end', () => (running = false));
(async () => {
  while (running) {
    const started = performance.now();
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      statuses.push(response.status);
    } catch {
      statuses.push(0);
    }
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stdout.write(JSON.stringify({ latencies, statuses }));
})();
`;

/**
 * Asks `url` (an E1 request with a good key) one request after another, on a kept-alive connection, from a
 * process of its own (so that what this one does meanwhile does not count in the times), until stopped: each
 * answer's status (0: no answer) and time in ms.
 */
export function probeE1(url: string) {
  const child = spawn(process.execPath, ['-e', PROBE_SCRIPT, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    async stop(): Promise<{ latencies: number[]; statuses: number[] }> {
      child.stdin.end();
      await exited;
      return JSON.parse(out) as { latencies: number[]; statuses: number[] };
    },
  };
}
