// RCPT TO pipelining (RFC 2920) in the connection pool, against raw SMTP servers on loopback: the waiting
// addresses of a host go in one batch when the server offers PIPELINING (a server that answers only once it
// has them all proves it), one at a time when it does not, and the addresses a dropped conversation left
// unanswered are asked again on a new connection.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SmtpPool, type LaneOutcome } from '../../../../service/engine/online/pool.js';

interface RawConnection {
  readonly rcpts: string[];
  /** Most RCPTs received before the first of them was answered. */
  mostUnanswered: number;
}

/**
 * A raw SMTP server. `onRcpts(connection index, rcpts so far, answer)` decides when and how to answer: it is
 * called on every RCPT received, with those not yet answered.
 */
async function startRaw(
  pipelining: boolean,
  onRcpts: (index: number, pending: string[], socket: net.Socket) => void,
): Promise<{ port: number; connections: RawConnection[]; close(): Promise<void> }> {
  const connections: RawConnection[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const index = connections.length;
    const connection: RawConnection = { rcpts: [], mostUnanswered: 0 };
    connections.push(connection);
    const pending: string[] = [];
    let buffer = '';
    socket.write('220 raw.test ESMTP\r\n');
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let at: number;
      while ((at = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO')
          socket.write(pipelining ? '250-raw.test\r\n250 PIPELINING\r\n' : '250 raw.test\r\n');
        else if (verb === 'MAIL') socket.write('250 2.1.0 OK\r\n');
        else if (verb === 'QUIT') socket.end('221 Bye\r\n');
        else if (verb === 'RCPT') {
          const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
          connection.rcpts.push(address);
          pending.push(address);
          connection.mostUnanswered = Math.max(connection.mostUnanswered, pending.length);
          onRcpts(index, pending, socket);
        } else socket.write('502 5.5.1 Not here\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const answer = (pending: string[], socket: net.Socket) => {
  for (const address of pending.splice(0))
    socket.write(address.startsWith('nobody') ? '550 5.1.1 User unknown\r\n' : '250 2.1.5 OK\r\n');
};

function poolFor(port: number): SmtpPool {
  return new SmtpPool({
    session: { port, heloName: 'verifier.test', mailFrom: 'probe@verifier.test', connectTimeoutMs: 2000 },
    perHostConcurrency: 1,
    maxSessions: 5,
    pacingMs: 0,
    maxRcptPerSession: 20,
    maxErrorsPerSession: 20,
    maxConnectsPerMinute: 1000,
    rateBackoffMs: 1000,
    idleMs: 200,
    downTtlMs: 1000,
    blockTtlMs: 1000,
  });
}

const codeOf = (outcome: LaneOutcome) => (outcome.kind === 'reply' ? outcome.reply.code : outcome.kind);

describe('RCPT pipelining', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('sends the waiting addresses at once when PIPELINING is offered, and asks the unanswered ones again after a drop', async () => {
    const addresses = ['alice@raw.test', 'bob@raw.test', 'nobody@raw.test'];
    // The first conversation answers nothing until it has all three (a one-at-a-time client would wait
    // forever), then answers the first and hangs up; the second answers at once.
    const raw = await startRaw(true, (index, pending, socket) => {
      if (index > 0) return answer(pending, socket);
      if (pending.length < addresses.length) return;
      socket.write('250 2.1.5 OK\r\n');
      socket.destroy();
    });
    cleanups.push(() => raw.close());
    const pool = poolFor(raw.port);
    cleanups.push(() => pool.close());
    const deadline = Date.now() + 5000;
    const outcomes = await Promise.all(
      addresses.map((address) => pool.rcpt('mx.raw.test', ['127.0.0.1'], address, deadline, [])),
    );
    expect(outcomes.map(codeOf)).toEqual([250, 250, 550]);
    expect(raw.connections.map((c) => c.rcpts)).toEqual([addresses, addresses.slice(1)]);
    expect(raw.connections[0].mostUnanswered).toBe(3);
  });

  it('asks one address at a time when the server does not offer PIPELINING', async () => {
    const raw = await startRaw(false, (_index, pending, socket) => answer(pending, socket));
    cleanups.push(() => raw.close());
    const pool = poolFor(raw.port);
    cleanups.push(() => pool.close());
    const deadline = Date.now() + 5000;
    const addresses = ['alice@raw.test', 'bob@raw.test', 'nobody@raw.test', 'carol@raw.test'];
    const outcomes = await Promise.all(
      addresses.map((address) => pool.rcpt('mx.raw.test', ['127.0.0.1'], address, deadline, [])),
    );
    expect(outcomes.map(codeOf)).toEqual([250, 250, 550, 250]);
    expect(raw.connections).toHaveLength(1);
    expect(raw.connections[0].rcpts).toEqual(addresses);
    expect(raw.connections[0].mostUnanswered).toBe(1);
  });
});
