// A bare SMTP client for tests that speak to a test mail server line by line (from a chosen loopback source
// address), to see exactly what it answers and when.
import net from 'node:net';

export interface SmtpReply {
  readonly code: number;
  /** The reply's text, its lines joined by a space (without the codes). */
  readonly text: string;
  /** When the reply's last line arrived (performance.now()). */
  readonly at: number;
}

export interface RawSmtp {
  /** When the TCP connection was established (performance.now()). */
  readonly connectedAt: number;
  /** The next reply (the greeting first). Rejects when the connection ends before one. */
  reply(): Promise<SmtpReply>;
  /** Sends a command and waits for its reply. */
  command(line: string): Promise<SmtpReply>;
  /** Sends a line without waiting (pipelining). */
  send(line: string): void;
  /** Resolves when the server has closed the connection. */
  readonly closed: Promise<void>;
  destroy(): void;
  /** Drops the connection with a TCP reset, as a client that gives up does. */
  reset(): void;
}

export async function connectSmtp(host: string, port: number, localAddress?: string): Promise<RawSmtp> {
  const socket = net.connect({ host, port, ...(localAddress ? { localAddress } : {}) });
  socket.setNoDelay(true);
  const connectedAt = await new Promise<number>((resolve, reject) => {
    socket.once('connect', () => resolve(performance.now()));
    socket.once('error', reject);
  });
  const replies: SmtpReply[] = [];
  const waiters: { resolve(reply: SmtpReply): void; reject(error: Error): void }[] = [];
  let buffer = '';
  let lines: string[] = [];
  let isEnded = false;
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    let at: number;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, at).replace(/\r$/, '');
      buffer = buffer.slice(at + 1);
      lines.push(line.slice(4));
      if (line[3] === '-') continue;
      const reply = { code: Number(line.slice(0, 3)), text: lines.join(' '), at: performance.now() };
      lines = [];
      const waiter = waiters.shift();
      if (waiter) waiter.resolve(reply);
      else replies.push(reply);
    }
  });
  const closed = new Promise<void>((resolve) => {
    const end = () => {
      isEnded = true;
      for (const waiter of waiters.splice(0))
        waiter.reject(new Error('the server closed the connection before replying'));
      resolve();
    };
    socket.once('end', end);
    socket.once('close', end);
  });
  socket.on('error', () => undefined);
  const reply = () =>
    new Promise<SmtpReply>((resolve, reject) => {
      const ready = replies.shift();
      if (ready) resolve(ready);
      else if (isEnded) reject(new Error('the server closed the connection before replying'));
      else waiters.push({ resolve, reject });
    });
  const send = (line: string) => void socket.write(`${line}\r\n`);
  return {
    connectedAt,
    reply,
    send,
    command(line) {
      send(line);
      return reply();
    },
    closed,
    destroy: () => socket.destroy(),
    reset: () => void socket.resetAndDestroy(),
  };
}
