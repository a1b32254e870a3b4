// The hostile clients of `npm run bench -- hostile` (hostile.ts), in a process of their own so that their
// sockets, zips and bodies do not share an event loop with the good key's E1 timer and lists, and so that the
// bench can give their own CPU work a lower priority than the node's (hostile.ts says why). All at once, until
// told to stop or their own deadline passes (whichever comes first; every request is then aborted):
// - keyless stalled bodies: sockets each sending the headers of a 16 MB E6 request without a key and half its
//   body, then nothing (a socket the node closes is opened again a second later);
// - one-line zips: a trial key sending E7 zips holding one CSV line of 8 MiB (about 8 KB each), several at once;
// - a flood of E8 and E10 by a key for a list it owns, on a few connections, as fast as they go;
// - a key past its limits (`--max-lists 1`, a small `--max-bytes-day`) streaming large E7 bodies;
// - an exhausted trial key sending 5,000-record E6 bodies, several at once.
// They talk to 127.0.0.1 only. Their options come as the first message from the bench; the next message stops
// them, and they answer with what each saw (answers by status, times, sockets closed).
import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { zipSync } from 'fflate';
import { requestHead, stalledClient } from '../helpers/stalledClients.js';

export interface HostileOptions {
  /** The node's base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly keys: {
    /** A trial key (with queries left): the one-line zips. */
    readonly zip: string;
    /** The owner of `floodListId`: the E8/E10 flood. */
    readonly flood: string;
    /** A key with `--max-lists 1` and a small `--max-bytes-day`: the large uploads. */
    readonly limited: string;
    /** A trial key with intelligence, its 100 queries used up: the E6 bodies. */
    readonly exhausted: string;
  };
  readonly floodListId: number;
  /** Keyless sockets holding a half-sent E6 body, and the Content-Length each declares. */
  readonly stalled: number;
  readonly stalledBodyBytes: number;
  /** One-line zips sent at once, and the length of their line. */
  readonly zips: number;
  readonly zipLineBytes: number;
  /** Connections of the E8/E10 flood. */
  readonly floodConnections: number;
  /** Large uploads at once, and the bytes of each. */
  readonly uploads: number;
  readonly uploadBytes: number;
  /** E6 requests at once, and the records of each. */
  readonly e6Clients: number;
  readonly e6Records: number;
  /** The clients stop by themselves after this long, whatever they were told. */
  readonly maxSeconds: number;
}

/** What one kind of client saw: its requests, their answers by status (`error` for none), answer times. */
export interface ClientFigures {
  /** Requests sent, and those that had their answer (or failed) before the clients stopped. */
  readonly sent: number;
  readonly requests: number;
  readonly statuses: Record<string, number>;
  /** Milliseconds from sending to the end of each answer (requests answered only). */
  readonly ms: number[];
}

export interface HostileSummary {
  readonly stalled: {
    /** Sockets opened (reopened ones included). */
    readonly opened: number;
    /** Sockets whose half body was all handed to the system before the node closed them. */
    readonly halfSent: number;
    /** Bytes of body the sockets handed to their connections, in all (the node reads none of them). */
    readonly bytesSent: number;
    /** Sockets the node closed (or answered) before the clients stopped, and after how long each. */
    readonly closedByNode: number;
    readonly closedAfterMs: number[];
    /** Answers the node wrote on them, by status. */
    readonly statuses: Record<string, number>;
    /** How long until every socket had written its half body or been closed. */
    readonly rampMs: number;
  };
  readonly zips: ClientFigures & { readonly zipBytes: number };
  readonly flood: ClientFigures;
  readonly uploads: ClientFigures & {
    /** Body bytes written before each answer came (the node read before deciding). */
    readonly bytesBeforeAnswer: number[];
  };
  readonly e6: ClientFigures;
}

export type HostileMessage =
  | { readonly type: 'ramped'; readonly ms: number }
  | { readonly type: 'done'; readonly summary: HostileSummary };

type Figures = ReturnType<typeof figures>;

function figures() {
  const statuses: Record<string, number> = {};
  const ms: number[] = [];
  let sent = 0;
  let requests = 0;
  return {
    /** A request sent now: its start, for `count`. */
    send() {
      sent++;
      return performance.now();
    },
    count(status: number | 'error', started: number) {
      requests++;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status !== 'error') ms.push(performance.now() - started);
    },
    out(): ClientFigures {
      return { sent, requests, statuses, ms };
    },
  };
}

/** The clients, run until `halt` aborts (or their deadline); resolves with what they saw. */
async function run(options: HostileOptions, halt: AbortController, tell: (message: HostileMessage) => void) {
  const target = new URL(options.url);
  if (target.hostname !== '127.0.0.1')
    throw new Error(`hostile clients target 127.0.0.1 only, not ${target.host}`);
  const isHalted = () => halt.signal.aborted;
  /** A loop's pause after a failure, so that a refused connection does not spin (ends at halt). */
  const pause = (ms: number) => sleep(ms, undefined, { signal: halt.signal }).catch(() => undefined);

  /** A client sending `request(i)` for i = first, first + 1, … until halted, each answer counted `into`. */
  const repeat = async (into: Figures, request: (i: number) => Promise<Response>, first = 0) => {
    for (let i = first; !isHalted(); i++) {
      const started = into.send();
      try {
        const response = await request(i);
        await response.arrayBuffer();
        into.count(response.status, started);
      } catch {
        if (isHalted()) return;
        into.count('error', started);
        await pause(100);
      }
    }
  };

  // Keyless stalled bodies: the headers of a 16 MB E6 request and half of it, then nothing.
  const stalledHead = requestHead('POST', '/v5/ei/bulk', options.stalledBodyBytes, {
    'Content-Type': 'application/json',
  });
  const stalledHalf = Math.floor(options.stalledBodyBytes / 2);
  const sockets = new Set<Socket>();
  const stalled = {
    opened: 0,
    halfSent: 0,
    bytesSent: 0,
    closedByNode: 0,
    closedAfterMs: [] as number[],
    statuses: {} as Record<string, number>,
    rampMs: Number.NaN,
  };
  const rampStarted = performance.now();
  let settledFirst = 0;
  const settleFirst = () => {
    if (++settledFirst === options.stalled) {
      stalled.rampMs = performance.now() - rampStarted;
      tell({ type: 'ramped', ms: stalled.rampMs });
    }
  };
  if (options.stalled === 0) tell({ type: 'ramped', ms: 0 });
  const holdSocket = (first: boolean): Promise<void> =>
    new Promise((resolve) => {
      const opened = performance.now();
      let settled = !first;
      const settle = () => {
        if (!settled) {
          settled = true;
          settleFirst();
        }
      };
      // (Half open: the client goes on sending after the node has answered and ended its side.)
      const client = stalledClient(Number(target.port), stalledHead, stalledHalf, { halfOpen: true });
      const socket = client.socket;
      sockets.add(socket);
      stalled.opened++;
      void client.allSent.then(() => {
        stalled.halfSent++;
        settle();
      });
      void client.closed.then(() => {
        stalled.bytesSent += client.sent();
        sockets.delete(socket);
        settle();
        if (!isHalted()) {
          stalled.closedByNode++;
          stalled.closedAfterMs.push(performance.now() - opened);
          const status = String(client.status() ?? 'none');
          stalled.statuses[status] = (stalled.statuses[status] ?? 0) + 1;
        }
        resolve();
      });
    });
  const stalledLoop = async () => {
    for (let first = true; !isHalted(); first = false) {
      await holdSocket(first);
      await pause(1000);
    }
  };

  // One-line zips: one CSV line of `zipLineBytes`, deflated to about a thousandth of it.
  const zip = zipSync({ 'line.csv': new Uint8Array(options.zipLineBytes).fill(0x61) }, { level: 9 });
  const zips = figures();
  const zipLoop = () =>
    repeat(zips, () => {
      const form = new FormData();
      form.append('file', new Blob([zip]), 'line.zip');
      return fetch(`${options.url}/v5/list`, {
        method: 'POST',
        headers: { api_key: options.keys.zip },
        body: form,
        signal: halt.signal,
      });
    });

  // E8 and E10 of one list, in turn, as fast as the connections go.
  const flood = figures();
  const floodLoop = (lane: number) =>
    repeat(
      flood,
      (i) =>
        fetch(`${options.url}/v5/list/${options.floodListId}${i % 2 ? '/results' : ''}`, {
          headers: { api_key: options.keys.flood },
          signal: halt.signal,
        }),
      lane,
    );

  // Large uploads of a key past its limits: rows of 32 bytes, streamed 1 MiB at a time with Content-Length.
  const chunk = Buffer.alloc(1 << 20);
  for (let at = 0, row = 0; at < chunk.length; at += 32, row++)
    chunk.write(`p${String(row).padStart(18, '0')}@example.com\n`, at, 'latin1');
  const uploads = figures();
  const bytesBeforeAnswer: number[] = [];
  const upload = () =>
    new Promise<number | 'error'>((resolve) => {
      const started = uploads.send();
      let written = 0;
      let done = false;
      const finish = (status: number | 'error') => {
        if (done) return;
        done = true;
        halt.signal.removeEventListener('abort', onHalt);
        if (!isHalted()) uploads.count(status, started);
        resolve(status);
      };
      const request = httpRequest({
        host: '127.0.0.1',
        port: Number(target.port),
        method: 'POST',
        path: '/v5/list?header=false&name=big.csv',
        headers: {
          api_key: options.keys.limited,
          'content-type': 'text/csv',
          'content-length': options.uploadBytes,
        },
        agent: false,
      });
      const onHalt = () => request.destroy();
      halt.signal.addEventListener('abort', onHalt);
      let answered = false;
      request.on('response', (response) => {
        answered = true;
        bytesBeforeAnswer.push(written);
        response.resume();
        response.on('end', () => {
          finish(response.statusCode ?? 0);
          request.destroy();
        });
        response.on('error', () => finish(response.statusCode ?? 'error'));
      });
      request.on('error', () => finish('error'));
      request.on('close', () => finish('error'));
      const write = () => {
        while (!answered && !request.destroyed && written < options.uploadBytes) {
          const piece = chunk.subarray(0, Math.min(chunk.length, options.uploadBytes - written));
          written += piece.length;
          if (!request.write(piece)) return void request.once('drain', write);
        }
        if (written >= options.uploadBytes && !request.writableEnded) request.end();
      };
      write();
    });
  const uploadLoop = async () => {
    while (!isHalted()) if ((await upload()) === 'error') await pause(100);
  };

  // E6 of an exhausted key: 5,000 records a body.
  const e6Body = JSON.stringify(
    Array.from({ length: options.e6Records }, (_, i) => ({ email: `person${i}@example.com` })),
  );
  const e6 = figures();
  const e6Loop = () =>
    repeat(e6, () =>
      fetch(`${options.url}/v5/ei/bulk?api_key=${options.keys.exhausted}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: e6Body,
        signal: halt.signal,
      }),
    );

  const lanes = <T>(n: number, loop: (i: number) => Promise<T>) =>
    Array.from({ length: n }, (_, i) => loop(i));
  const all = Promise.all([
    ...lanes(options.stalled, stalledLoop),
    ...lanes(options.zips, zipLoop),
    ...lanes(options.floodConnections, floodLoop),
    ...lanes(options.uploads, uploadLoop),
    ...lanes(options.e6Clients, e6Loop),
  ]);
  halt.signal.addEventListener('abort', () => {
    for (const socket of sockets) socket.destroy();
  });
  await all;
  return {
    stalled,
    zips: { ...zips.out(), zipBytes: zip.length },
    flood: flood.out(),
    uploads: { ...uploads.out(), bytesBeforeAnswer },
    e6: e6.out(),
  } satisfies HostileSummary;
}

const parent = process.send?.bind(process);
if (parent) {
  const tell = (message: HostileMessage) => void parent(message);
  process.once('message', (options: HostileOptions) => {
    const halt = new AbortController();
    const deadline = setTimeout(() => halt.abort(), options.maxSeconds * 1000);
    process.once('message', () => halt.abort());
    // A bench that is gone stops its clients too.
    process.once('disconnect', () => halt.abort());
    void run(options, halt, tell).then((summary) => {
      clearTimeout(deadline);
      if (!process.connected) process.exit(0);
      parent({ type: 'done', summary } satisfies HostileMessage, () => process.exit(0));
    });
  });
}
