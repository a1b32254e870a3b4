// What a node learnt of a mail host's limits is kept in PostgreSQL for the others (issue #26, service/pg/
// knowledge.ts `host_limits`): node A, on 127.0.0.2, is refused by a server that takes 3 connections a "minute"
// per client address and learns its rate; node B, on 127.0.0.3, starts at the learnt pace and is never refused.
// Minutes are 1 s here (the pools' window); the server counts per client address, as Postfix's anvil does.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type PgPool } from '../../service/pg/db.js';
import { PgSharedKnowledge } from '../../service/pg/knowledge.js';
import { SmtpPool } from '../../service/engine/online/pool.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

const WINDOW_MS = 1000;
const PER_WINDOW = 3;

let cluster: PostgresCluster;
let db: PgPool;
let server: net.Server;
let port: number;
const refused = new Map<string, number>();
const accepted = new Map<string, number>();

beforeAll(async () => {
  cluster = await startPostgres();
  db = await openPostgres(await cluster.createDatabase('limits'));
  // Connections per client address in fixed windows, as Postfix's anvil counts them.
  const windows = new Map<string, { start: number; count: number }>();
  const sockets = new Set<net.Socket>();
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const client = socket.remoteAddress ?? '';
    const now = Date.now();
    let window = windows.get(client);
    if (!window || now - window.start >= WINDOW_MS) windows.set(client, (window = { start: now, count: 0 }));
    if (++window.count > PER_WINDOW) {
      refused.set(client, (refused.get(client) ?? 0) + 1);
      socket.end('421 4.7.0 mx.limits.test Error: connection rate limit exceeded\r\n');
      return;
    }
    accepted.set(client, (accepted.get(client) ?? 0) + 1);
    let buffer = '';
    socket.write('220 mx.limits.test ESMTP\r\n');
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let at: number;
      while ((at = buffer.indexOf('\r\n')) >= 0) {
        const verb = buffer.slice(0, 4).toUpperCase();
        buffer = buffer.slice(at + 2);
        if (verb === 'EHLO') socket.write('250-mx.limits.test\r\n250 PIPELINING\r\n');
        else if (verb === 'MAIL') socket.write('250 2.1.0 Ok\r\n');
        else if (verb === 'RCPT') socket.write('550 5.1.1 Recipient address rejected: User unknown\r\n');
        else if (verb === 'QUIT') socket.end('221 2.0.0 Bye\r\n');
        else socket.write('502 5.5.2 Error: command not recognized\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  server.on('close', () => {
    for (const socket of sockets) socket.destroy();
  });
}, 60_000);

afterAll(async () => {
  server?.close();
  await db?.end();
  await cluster?.close();
});

/** A verifier node's pool on `source`, sharing what it learns through `knowledge`. */
function nodePool(source: string, knowledge: PgSharedKnowledge): SmtpPool {
  return new SmtpPool({
    session: {
      port,
      heloName: 'verifier.test',
      mailFrom: 'probe@verifier.test',
      connectTimeoutMs: 2000,
      sourceAddress: source,
    },
    perHostConcurrency: 1,
    maxSessions: 10,
    pacingMs: 0,
    maxRcptPerSession: 100,
    // One refusal a conversation: each address needs a connection of its own.
    maxErrorsPerSession: 1,
    maxConnectsPerMinute: 10,
    connectWindowMs: WINDOW_MS,
    rateBackoffMs: WINDOW_MS,
    recoverMs: 60_000,
    idleMs: 100,
    downTtlMs: 1000,
    blockTtlMs: 1000,
    learnt: {
      load: (host) => knowledge.loadLimits(host, port),
      save: (host, limits) => knowledge.saveLimits(host, port, limits),
    },
  });
}

async function check(pool: SmtpPool, count: number, prefix: string): Promise<number[]> {
  const deadline = Date.now() + 30_000;
  const outcomes = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      pool.rcpt('mx.limits.test', ['127.0.0.1'], `${prefix}${i}@limits.test`, deadline, []),
    ),
  );
  return outcomes.map((outcome) => (outcome.kind === 'reply' ? outcome.reply.code : 0));
}

describe("a mail host's limits learnt by one node", () => {
  it('are kept in PostgreSQL, and a new node starts at the learnt pace instead of being refused', async () => {
    const nodeA = new PgSharedKnowledge(db);
    const nodeB = new PgSharedKnowledge(db);
    const poolA = nodePool('127.0.0.2', nodeA);
    try {
      expect(await check(poolA, 8, 'a')).toEqual(Array.from({ length: 8 }, () => 550));
    } finally {
      poolA.close();
    }
    expect(refused.get('127.0.0.2')).toBe(1);
    // Saved (without waiting for it): a row for the host, the rate just under the refused level.
    let stored: { limits: Record<string, { value: number; until: number }> } | undefined;
    for (let i = 0; i < 50 && !stored; i++) {
      const { rows } = await db.query<{ limits: Record<string, { value: number; until: number }> }>(
        'SELECT limits FROM host_limits WHERE host = $1 AND port = $2',
        ['mx.limits.test', port],
      );
      stored = rows[0];
      if (!stored) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(stored?.limits.rate?.value).toBe(PER_WINDOW);
    expect(stored!.limits.rate.until).toBeGreaterThan(Date.now());

    const poolB = nodePool('127.0.0.3', nodeB);
    try {
      expect(await check(poolB, 8, 'b')).toEqual(Array.from({ length: 8 }, () => 550));
    } finally {
      poolB.close();
    }
    expect(accepted.get('127.0.0.3')).toBe(8);
    expect(refused.get('127.0.0.3') ?? 0).toBe(0);
  });
});
