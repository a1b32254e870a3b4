// A busy domain at one mail host, against a raw SMTP server on loopback that judges its client as Postfix
// does: every refused RCPT is an error of the session; past its soft error limit every reply waits a second (the
// tarpit), at its hard limit it says "421 too many errors" and hangs up; more connections per window than it
// allows get "421 too many connections"; past the recipients a conversation it takes, "452 too many recipients".
// The pool must keep the domain moving inside those limits: conversations that end before the tarpit, a lower
// allowance once a tarpit shows earlier, no more connections per window than its cap, a pause when the server
// says "too many connections", and no more recipients a conversation than the server takes once it said so.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SmtpPool, type LaneOutcome, type PoolOptions } from '../../../../service/engine/online/pool.js';

interface Limits {
  readonly softErrors: number;
  readonly hardErrors: number;
  /** Connections allowed per `windowMs`; past it, "421 too many connections". */
  readonly connections?: number;
  readonly windowMs?: number;
  /** Connections (by their order, from 0) answered with `refuseText` and closed. */
  readonly refuseAt?: readonly number[];
  readonly refuseText?: string;
  /**
   * Recipients a conversation takes, counted as Postfix's smtpd_recipient_limit counts them (those it took);
   * past it, "452 4.5.3 Too many recipients".
   */
  readonly recipients?: number;
  /** How long each reply waits (a server farther than loopback): conversations last long enough to overlap. */
  readonly replyDelayMs?: number;
}

interface ServerLog {
  /** Errors (refused RCPTs) of each accepted conversation. */
  readonly errors: number[];
  /** When each connection came (accepted or refused). */
  readonly connectedAt: number[];
  /** Replies that waited in the tarpit. */
  slowReplies: number;
  /** Conversations ended with "421 too many errors". */
  hangups: number;
  /** Connections refused with "421 too many connections". */
  refusedForRate: number;
  /** RCPTs of each accepted conversation, recipients it took, and when each "too many recipients" came. */
  readonly rcpts: number[];
  readonly taken: number[];
  readonly tooManyAt: number[];
  /** When each accepted conversation asked its first and its last RCPT. */
  readonly firstRcptAt: number[];
  readonly lastRcptAt: number[];
}

async function startPostfixLike(
  limits: Limits,
): Promise<{ port: number; log: ServerLog; close(): Promise<void> }> {
  const log: ServerLog = {
    errors: [],
    connectedAt: [],
    slowReplies: 0,
    hangups: 0,
    refusedForRate: 0,
    rcpts: [],
    taken: [],
    tooManyAt: [],
    firstRcptAt: [],
    lastRcptAt: [],
  };
  const sockets = new Set<net.Socket>();
  let windowStart = 0;
  let inWindow = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const now = Date.now();
    log.connectedAt.push(now);
    if (limits.refuseAt?.includes(log.connectedAt.length - 1)) {
      log.refusedForRate++;
      socket.end(`${limits.refuseText ?? '421 4.7.0 mx.busy.test Error: too many connections'}\r\n`);
      return;
    }
    if (limits.connections !== undefined) {
      if (now - windowStart > (limits.windowMs ?? 60_000)) {
        windowStart = now;
        inWindow = 0;
      }
      if (++inWindow > limits.connections) {
        log.refusedForRate++;
        socket.end('421 4.7.0 mx.busy.test Error: too many connections from 127.0.0.1\r\n');
        return;
      }
    }
    const session = log.errors.push(0) - 1;
    log.rcpts.push(0);
    log.taken.push(0);
    let buffer = '';
    let work = Promise.resolve();
    const reply = async (text: string) => {
      // Postfix sleeps before every reply once the session has had its soft limit of errors.
      if (log.errors[session] >= limits.softErrors) {
        log.slowReplies++;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      if (limits.replyDelayMs) await new Promise((resolve) => setTimeout(resolve, limits.replyDelayMs));
      if (!socket.destroyed) socket.write(`${text}\r\n`);
    };
    const handle = async (line: string) => {
      if (socket.destroyed) return;
      if (log.errors[session] >= limits.hardErrors) {
        log.hangups++;
        socket.end('421 4.7.0 mx.busy.test Error: too many errors\r\n');
        return;
      }
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') await reply('250-mx.busy.test\r\n250 PIPELINING');
      else if (verb === 'MAIL') await reply('250 2.1.0 Ok');
      else if (verb === 'RSET') await reply('250 2.0.0 Ok');
      else if (verb === 'QUIT') socket.end('221 2.0.0 Bye\r\n');
      else if (verb === 'RCPT') {
        const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
        log.rcpts[session]++;
        log.firstRcptAt[session] ??= Date.now();
        log.lastRcptAt[session] = Date.now();
        if (limits.recipients !== undefined && log.taken[session] >= limits.recipients) {
          log.tooManyAt.push(Date.now());
          await reply('452 4.5.3 Too many recipients');
        } else if (address.startsWith('user')) {
          log.taken[session]++;
          await reply('250 2.1.5 Ok');
        } else {
          await reply(`550 5.1.1 <${address}>: Recipient address rejected: User unknown`);
          log.errors[session]++;
        }
      } else await reply('502 5.5.2 Error: command not recognized');
    };
    socket.write('220 mx.busy.test ESMTP\r\n');
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let at: number;
      while ((at = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        work = work.then(() => handle(line));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    log,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function poolFor(port: number, options: Partial<PoolOptions> = {}): SmtpPool {
  return new SmtpPool({
    session: { port, heloName: 'verifier.test', mailFrom: 'probe@verifier.test', connectTimeoutMs: 2000 },
    perHostConcurrency: 2,
    maxSessions: 10,
    pacingMs: 0,
    maxRcptPerSession: 100,
    maxErrorsPerSession: 10,
    maxConnectsPerMinute: 1000,
    rateBackoffMs: 60_000,
    idleMs: 200,
    downTtlMs: 1000,
    blockTtlMs: 1000,
    ...options,
  });
}

const codeOf = (outcome: LaneOutcome) => (outcome.kind === 'reply' ? outcome.reply.code : outcome.kind);

/** One existing user, then two unknown ones, and so on. */
const addressesOf = (count: number) =>
  Array.from({ length: count }, (_, i) => (i % 3 === 0 ? `user${i}@busy.test` : `nobody${i}@busy.test`));

const expectedCodes = (addresses: readonly string[]) =>
  addresses.map((a) => (a.startsWith('user') ? 250 : 550));

describe('a busy host', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function ask(port: number, addresses: readonly string[], options: Partial<PoolOptions> = {}) {
    const pool = poolFor(port, options);
    cleanups.push(() => pool.close());
    const deadline = Date.now() + 20_000;
    return Promise.all(
      addresses.map((address) => pool.rcpt('mx.busy.test', ['127.0.0.1'], address, deadline, [])),
    );
  }

  /**
   * `count` addresses (two of three unknown) asked of a Postfix-like server made with `options`: every code
   * right, and the server never slowed its replies nor hung up. Answers the server, for its log.
   */
  async function askedRight(count: number, options: Parameters<typeof startPostfixLike>[0]) {
    const server = await startPostfixLike(options);
    cleanups.push(() => server.close());
    const addresses = addressesOf(count);
    const outcomes = await ask(server.port, addresses);
    expect(outcomes.map(codeOf)).toEqual(expectedCodes(addresses));
    expect(server.log.slowReplies).toBe(0);
    expect(server.log.hangups).toBe(0);
    return server;
  }

  it('ends each conversation at its allowance of refusals, before the server’s tarpit, and asks the rest on fresh ones', async () => {
    const server = await askedRight(90, { softErrors: 10, hardErrors: 20 });
    expect(Math.max(...server.log.errors)).toBeLessThanOrEqual(10);
    // 60 refusals, 10 at most per conversation.
    expect(server.log.errors.length).toBeGreaterThanOrEqual(6);
  });

  it('takes a reply that slows after refusals as the tarpit: leaves it at once, and stops short of it after', async () => {
    // A stricter server: slow after 4 errors, which the pool's allowance of 10 does not know.
    const server = await startPostfixLike({ softErrors: 4, hardErrors: 20 });
    cleanups.push(() => server.close());
    const addresses = addressesOf(60);
    const outcomes = await ask(server.port, addresses, { perHostConcurrency: 1 });
    expect(outcomes.map(codeOf)).toEqual(expectedCodes(addresses));
    // Only the first conversation met the tarpit (one slow reply, then it was left); the others stopped at 4.
    expect(server.log.slowReplies).toBe(1);
    expect(server.log.errors.slice(1).every((errors) => errors <= 4)).toBe(true);
  });

  it('opens no more connections per window than its cap', async () => {
    const server = await startPostfixLike({ softErrors: 10, hardErrors: 20 });
    cleanups.push(() => server.close());
    // Two refusals per conversation: 12 refusals need 6 conversations; at most 2 per 800 ms.
    const addresses = Array.from({ length: 12 }, (_, i) => `nobody${i}@busy.test`);
    const outcomes = await ask(server.port, addresses, {
      maxErrorsPerSession: 2,
      maxConnectsPerMinute: 2,
      connectWindowMs: 800,
    });
    expect(outcomes.map(codeOf)).toEqual(addresses.map(() => 550));
    const times = server.log.connectedAt;
    expect(times.length).toBe(6);
    for (let i = 2; i < times.length; i++) expect(times[i] - times[i - 2]).toBeGreaterThanOrEqual(790);
  });

  it('pauses when the server says "too many connections", connects less often after, and asks again', async () => {
    // The server takes 3 connections per 1.5 s; the pool's cap (1000) does not know it.
    const server = await startPostfixLike({ softErrors: 10, hardErrors: 20, connections: 3, windowMs: 1500 });
    cleanups.push(() => server.close());
    const addresses = Array.from({ length: 10 }, (_, i) => `nobody${i}@busy.test`);
    const outcomes = await ask(server.port, addresses, {
      maxErrorsPerSession: 2,
      rateBackoffMs: 1600,
      connectWindowMs: 1500,
      // One at a time: "too many connections" with nothing else open can only be the rate (with another
      // conversation open it would first be read as a limit of conversations at once, as Postfix words both).
      perHostConcurrency: 1,
    });
    expect(outcomes.map(codeOf)).toEqual(addresses.map(() => 550));
    // Refused once, then paced under the server's limit (half the connections it had taken): never again.
    expect(server.log.refusedForRate).toBe(1);
  });

  it('is back at full pace after one refusal at the start: its connections a minute climb back (issue #26)', async () => {
    // Refuses the third connection for its rate, once; else takes every connection.
    const server = await startPostfixLike({
      softErrors: 10,
      hardErrors: 20,
      refuseAt: [2],
      refuseText: '421 4.7.0 mx.busy.test Error: connection rate limit exceeded',
    });
    cleanups.push(() => server.close());
    // Every address unknown, one refusal a conversation: one connection each.
    const addresses = Array.from({ length: 40 }, (_, i) => `nobody${i}@busy.test`);
    // The minutes in seconds: at most 10 connections a "minute" of 1 s, a pause of a minute after the
    // refusal, the lowered rate back at full after 1.5 minutes (the default is 90 s: within the 2).
    const outcomes = await ask(server.port, addresses, {
      maxErrorsPerSession: 1,
      maxConnectsPerMinute: 10,
      connectWindowMs: 1000,
      rateBackoffMs: 1000,
      recoverMs: 1500,
    });
    expect(outcomes.map(codeOf)).toEqual(addresses.map(() => 550));
    expect(server.log.refusedForRate).toBe(1);
    const refusedAt = server.log.connectedAt[2];
    const inMinute = (from: number) =>
      server.log.connectedAt.filter((at) => at >= from && at < from + 1000).length;
    // Nothing in the pause; then the rate climbs back: the "minute" from 2 s after the refusal is at full
    // pace (10 a window of 1 s and its margin), where the old pool stayed at half the refused count (1).
    expect(inMinute(refusedAt + 1)).toBeLessThanOrEqual(1);
    expect(inMinute(refusedAt + 2000)).toBeGreaterThanOrEqual(8);
  });

  it('learns a server\'s recipients a conversation from "452 too many recipients": never more after, none refused twice, nothing waits', async () => {
    // Takes 3 recipients a conversation. recoverMs is short: a limit that climbed back as load limits do would
    // be asked past again within the test.
    const server = await startPostfixLike({ softErrors: 10, hardErrors: 20, recipients: 3 });
    cleanups.push(() => server.close());
    // Existing users only: each RCPT is one the server takes.
    const addresses = Array.from({ length: 30 }, (_, i) => `user${i}@busy.test`);
    const started = Date.now();
    const outcomes = await ask(server.port, addresses, { recoverMs: 300 });
    // Every address its own answer: a 452 is never one.
    expect(outcomes.map(codeOf)).toEqual(addresses.map(() => 250));
    // The first conversation pipelined 10 and heard "too many" from the 4th; every one after asked 3, what the
    // server takes (not half of it, and not more once the limit would have climbed back): 27 in 9 conversations.
    expect(server.log.rcpts[0]).toBe(10);
    expect(server.log.rcpts.slice(1)).toEqual(Array.from({ length: 9 }, () => 3));
    expect(server.log.tooManyAt.length).toBe(7);
    // No pause: the next conversations opened at once.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('keeps an idle conversation for the next addresses once a tenth of its connections a minute are spent (issue 38)', async () => {
    // Two batches 600 ms apart, the idle wait 200 ms: with connections a-plenty the first conversation is
    // closed before the second batch; at 2 a window, it waits for it (a window of 8 s: a quarter is 2 s). A
    // server each (a host's allowance is the process's, with the options of the first pool that asks).
    const twoBatches = async (options: Partial<PoolOptions>) => {
      const server = await startPostfixLike({ softErrors: 10, hardErrors: 20 });
      cleanups.push(() => server.close());
      const pool = poolFor(server.port, { idleMs: 200, ...options });
      cleanups.push(() => pool.close());
      const ask = (from: number) =>
        Promise.all(
          addressesOf(6)
            .slice(from, from + 3)
            .map((address) => pool.rcpt('mx.busy.test', ['127.0.0.1'], address, Date.now() + 10_000, [])),
        );
      const first = await ask(0);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const codes = [...first, ...(await ask(3))].map(codeOf);
      return { codes, connections: server.log.connectedAt.length };
    };
    expect(await twoBatches({ maxConnectsPerMinute: 1000 })).toEqual({
      codes: expectedCodes(addressesOf(6)),
      connections: 2,
    });
    expect(await twoBatches({ maxConnectsPerMinute: 2, connectWindowMs: 8000 })).toEqual({
      codes: expectedCodes(addressesOf(6)),
      connections: 1,
    });
  });

  it('opens the next conversation while one still asks, when its refusals left are fewer than the addresses waiting (issue 38)', async () => {
    // 90 addresses, two of three unknown: 10 refusals end a conversation after about 15 recipients, long before
    // its 100. Sized by its refusals left, the first conversation's room is soon smaller than the queue: a
    // second one asks at the same time (2 at once allowed), instead of after the first ended.
    const server = await askedRight(90, { softErrors: 10, hardErrors: 20, replyDelayMs: 20 });
    const { firstRcptAt, lastRcptAt } = server.log;
    const overlapping = firstRcptAt.filter((at, i) => i > 0 && at < lastRcptAt[i - 1]).length;
    expect(overlapping).toBeGreaterThan(0);
    // No conversation wasted: 60 refusals, 10 a conversation.
    expect(server.log.errors.length).toBeLessThanOrEqual(7);
  });

  it('lets a check that would rather leave go when the host allows no new conversation soon (issue 38)', async () => {
    const server = await startPostfixLike({ softErrors: 10, hardErrors: 20 });
    cleanups.push(() => server.close());
    // One connection a window of 5 s, two refusals a conversation: the first conversation asks two, then the
    // next turn is 5 s off. The checks that would wait at most 1 s leave at once, unasked, with that turn.
    const pool = poolFor(server.port, {
      maxConnectsPerMinute: 1,
      connectWindowMs: 5000,
      maxErrorsPerSession: 2,
    });
    cleanups.push(() => pool.close());
    const addresses = Array.from({ length: 6 }, (_, i) => `nobody${i}@busy.test`);
    const started = Date.now();
    const outcomes = await Promise.all(
      addresses.map((address, i) =>
        pool.rcpt(
          'mx.busy.test',
          ['127.0.0.1'],
          address,
          Date.now() + 20_000,
          [],
          undefined,
          false,
          undefined,
          i === 5 ? undefined : 1000,
        ),
      ),
    );
    // The last one would not leave: it waits for the next window, and is asked then.
    expect(outcomes.map(codeOf)).toEqual([550, 550, 'cancelled', 'cancelled', 'cancelled', 550]);
    for (const outcome of outcomes.slice(2, 5)) {
      expect(outcome.kind === 'cancelled' && outcome.turnAt).toBeGreaterThanOrEqual(started + 5000);
    }
    expect(server.log.connectedAt.length).toBe(2);
    expect(server.log.connectedAt[1] - server.log.connectedAt[0]).toBeGreaterThanOrEqual(4900);
  });

  it('opens more conversations a minute at a server that takes one recipient each, up to 4 times its cap', async () => {
    // One RCPT a conversation, as Microsoft's servers answer a second; a cap of 5 connections a "minute" of 3 s.
    const server = await startPostfixLike({ softErrors: 10, hardErrors: 20, recipients: 1 });
    cleanups.push(() => server.close());
    const addresses = addressesOf(30);
    const outcomes = await ask(server.port, addresses, { maxConnectsPerMinute: 5, connectWindowMs: 3000 });
    expect(outcomes.map(codeOf)).toEqual(expectedCodes(addresses));
    const times = server.log.connectedAt;
    // The first conversation learnt it (its second RCPT refused); then one conversation for each of the 29 others.
    expect(times.length).toBe(30);
    expect(server.log.rcpts.slice(1).every((rcpts) => rcpts === 1)).toBe(true);
    const inWindow = (from: number) => times.filter((at) => at >= from && at < from + 3000).length;
    // More than the configured 5 a window (the old pool: 5, then the rest a window later, and so on) …
    expect(inWindow(times[0])).toBeGreaterThan(10);
    // … and never more than 4 × 5.
    expect(Math.max(...times.map(inWindow))).toBeLessThanOrEqual(20);
  });
});
