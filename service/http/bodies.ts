// Routes with a request body (E4, E6, E7, purchase, finish, and whatever no route takes): what is decided
// before the body is read, and how long a body may take to arrive.
//
// Before the body: each such route checks the request's key (and whatever else its headers decide) in an
// `onRequest` hook of its own, so Fastify has not read a byte of the body yet. A request refused there is
// answered with `Connection: close` and its connection closed a second later, the body unread (`closeUnread`),
// instead of read to the end to keep the connection (up to 16 MiB for E6, 1 GiB for E7). Hooks of these routes
// only: a hook of the whole instance would be a step more for every E1 request, which has no body.
//
// While the body arrives, nothing else bounds it (Node's `requestTimeout` is one total for a whole server, too
// short for E7 or too long for the rest, and Fastify's `connectionTimeout` re-arms a socket timer at every
// request, E1's too), so each route's hook watches its own:
// - E4, E6, purchase and finish: the whole body within `requestMs` of its headers (`serve --request-timeout`,
//   30 s by default: 16 MiB then needs about 4.5 Mbit/s, a bulk request of 5,000 records a tenth of that);
// - E7: an upload of up to 1 GiB takes as long as it takes, but no `uploadIdleMs` without a byte of it
//   (`serve --upload-idle-timeout`, 60 s).
// A body that misses its time is answered 408 and its connection closed (the server's `clientErrorHandler`
// answers so for headers that miss theirs: service/http/app.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import type { KeyRecord } from '../store/keys.js';
import { authorise, thenMaybe, type AuthContext, type KeyPlacement, type Maybe } from './auth.js';
import { HttpError, sendError } from './errors.js';

/** How long a client may take to send a request (service/http/app.ts; `serve --request-timeout` and co). */
export interface RequestTimeouts {
  /** A request's headers must arrive within this (ms), and then a body other than E7's within this again. */
  readonly requestMs: number;
  /** E7's upload is dropped after this long (ms) without a byte of it. */
  readonly uploadIdleMs: number;
}

export const DEFAULT_REQUEST_TIMEOUTS: RequestTimeouts = { requestMs: 30_000, uploadIdleMs: 60_000 };

/** Each node server's timeouts, set by buildService before its routes are registered. */
const serverTimeouts = new WeakMap<FastifyInstance['server'], RequestTimeouts>();

export function setRequestTimeouts(app: FastifyInstance, timeouts: RequestTimeouts): void {
  serverTimeouts.set(app.server, timeouts);
}

/** Whether a request has a body to come, as Fastify decides it reads one: chunked, or a length above 0. */
export function hasBody(request: FastifyRequest): boolean {
  const headers = request.headers;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && Number(length) > 0;
}

/** How a route's body is timed: all of it within `requestMs`, or no pause longer than `uploadIdleMs` (E7). */
export type BodyWait = 'whole' | 'progress';

/** How long a refused request's connection stays open after its answer, unread (see closeUnread). */
const LINGER_MS = 1000;

/**
 * Makes the request's answer close its connection, the body unread; gives what undoes it, for a request
 * admitted after all. Node closes such a connection (`destroySoon`) as soon as the answer is written, while the
 * client may still be sending the body: the client's system then gets a reset for the bytes left unread, and a
 * client still writing (fetch) reports the reset, not the answer. So the connection is ended (the answer, then
 * the end of the stream) and left a second, not read, before it is destroyed.
 */
export function closeUnread(request: FastifyRequest, reply: FastifyReply): () => void {
  reply.header('connection', 'close');
  const socket: Socket = request.raw.socket;
  socket.destroySoon = () => {
    socket.end();
    // Node resumes reading to drop the unread body (a tick after the answer): it is not read.
    setImmediate(() => socket.pause());
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  return () => {
    reply.removeHeader('connection');
    Reflect.deleteProperty(socket, 'destroySoon');
  };
}

/**
 * Answers a request whose body stopped arriving: 408, and the connection closed (its body will not be read to
 * the end). A request already answered (its body left unread) only loses its connection.
 */
function dropStalled(request: FastifyRequest, reply: FastifyReply, message: string): void {
  if (reply.sent || reply.raw.headersSent) {
    request.raw.socket.destroy();
    return;
  }
  closeUnread(request, reply);
  sendError(reply, 408, message);
}

/** Times the body of an admitted request (see the file's header); the timer ends with the body. */
function watchBody(request: FastifyRequest, reply: FastifyReply, wait: BodyWait, timeouts: RequestTimeouts) {
  const raw = request.raw;
  const socket = raw.socket;
  const ms = wait === 'whole' ? timeouts.requestMs : timeouts.uploadIdleMs;
  let bytesRead = socket.bytesRead;
  const timer = setTimeout(() => {
    if (raw.complete || socket.destroyed) return;
    // An upload that moved since the last look, or whose bytes wait for the node (its disk), is not idle.
    if (wait === 'progress' && (socket.bytesRead !== bytesRead || raw.readableLength > 0)) {
      bytesRead = socket.bytesRead;
      timer.refresh();
      return;
    }
    dropStalled(
      request,
      reply,
      wait === 'whole'
        ? `Request timed out: its body did not arrive within ${seconds(ms)}.`
        : `Request timed out: no byte of the upload arrived for ${seconds(ms)}; send the file again.`,
    );
  }, ms);
  timer.unref();
  raw.once('end', () => clearTimeout(timer));
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * The `onRequest` hook of a route with a body: `check` decides on the request's headers (its key, …) and
 * answers a request it refuses itself (or throws an HttpError); such an answer closes the connection, the body
 * unread. An admitted request's body is then timed as `wait` says.
 */
export function beforeBody(
  app: FastifyInstance,
  check: (request: FastifyRequest, reply: FastifyReply) => unknown,
  wait: BodyWait = 'whole',
) {
  const timeouts = serverTimeouts.get(app.server) ?? DEFAULT_REQUEST_TIMEOUTS;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    // Set before the check, which may answer at once: a refusal's connection cannot carry another request.
    const admit = hasBody(request) ? closeUnread(request, reply) : undefined;
    await check(request, reply);
    if (reply.sent) return reply;
    if (admit) {
      admit();
      watchBody(request, reply, wait, timeouts);
    }
    return undefined;
  };
}

/** The keys found by the routes' hooks, for their handlers (a key is looked up once a request). */
const requestKeys = new WeakMap<FastifyRequest, KeyRecord>();

/**
 * A check for `beforeBody`: the request's key (`authorise`, which answers 401, 403 or 429 itself), kept for the
 * route's handler (`keyOf`).
 */
export function keyCheck(
  auth: AuthContext,
  placement: KeyPlacement,
  options: { rateLimited: boolean },
  /** A further limit of the key (a route's throttle): false when it has answered the request itself. */
  admit?: (key: KeyRecord, reply: FastifyReply) => boolean,
): (request: FastifyRequest, reply: FastifyReply) => Maybe<void> {
  return (request, reply) =>
    thenMaybe(authorise(auth, request, reply, placement, null, options), (key) => {
      if (key && (!admit || admit(key, reply))) requestKeys.set(request, key);
    });
}

/** The key `keyCheck` found for this request. */
export function keyOf(request: FastifyRequest): KeyRecord {
  const key = requestKeys.get(request);
  if (!key) throw new HttpError(500, 'The request’s key was not checked.');
  return key;
}
