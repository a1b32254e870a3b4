// Every answered request of a node counted (metrics) and logged (one line, never its URL or key) when its answer
// ends: the node's HTTP server makes its responses as ObservedResponse, which observes itself in `end()`, and
// two things tell each response what observes it:
// - the instance's `onRequest` hook, first of all, notes when the request arrived and which request it
//   answers, and gives the response the observer of the route Fastify found (looked up at the end, for an
//   answer given before the route's handler ran: a malformed query's 400, a refused upload, an invalid body),
//   or of route "unmatched" (404, 405); then runs the instance's own first check (the API node's query check),
//   in the same hook;
// - each route's handler, wrapped when the route is registered, first gives the response that route's
//   observer (made then, with the route's name, counts and line in hand).
// Cheap on purpose (E1 answers tens of thousands of requests a second, and issue 28 allows logs and metrics 5%
// of that; `npm run bench -- e1` runs `serve --metrics --log-format json`):
// - no `onSend` or `onResponse` hook and no Fastify request logger: Fastify runs an `onSend` hook through a
//   runner made for each request (a few % of E1's requests/s), and an `onResponse` hook or a logger makes it
//   put two listeners on every response and take them off again ("finish" and "error": a fifth of E1's
//   requests/s). One `onRequest` hook, which the node has anyway; a route's hook would cost Fastify's hook
//   runner a step a request, where the handler's wrapper costs a call;
// - no lookup per request answered by its handler: Fastify's `request.routeOptions` builds an object at
//   every read.
// A request's time is from its `onRequest` hooks to the last byte of its answer handed to the connection (for
// E9's streamed results file, its end). A connection closed before the answer ends is not observed.
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ServerResponse, type ServerOptions } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { requestLineFor } from './log.js';
import type { Metrics } from './metrics.js';

/** Routes probed often: their requests are counted but not logged (a load balancer asks every few seconds). */
export const QUIET_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Counts and logs an answered request. */
type Observe = (response: ObservedResponse) => void;

/**
 * The responses of an observed node's HTTP server (`http`/`https` options of Fastify: `OBSERVED_SERVER`): each
 * is counted and logged once, when it ends.
 */
export class ObservedResponse extends ServerResponse {
  /** Counts and logs this response when it ends; null until its request's hooks run, and once observed. */
  observe: Observe | null = null;
  /** The request this answers (its id and key id go in its line). */
  request: FastifyRequest | null = null;
  /** When the request's hooks began (`performance.now()`). */
  arrivedAt = 0;

  override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
    const observe = this.observe;
    if (observe !== null) {
      this.observe = null;
      observe(this);
    }
    return super.end(chunk, encoding as BufferEncoding, callback as () => void);
  }
}

/** Node HTTP(S) server options that make an observed node's responses (see observeRequests). */
export const OBSERVED_SERVER: ServerOptions = {
  // Node's type asks for a class generic in its request type; ObservedResponse answers IncomingMessage.
  ServerResponse: ObservedResponse as unknown as typeof ServerResponse,
};

export interface RequestObservers {
  readonly logger?: Logger | undefined;
  readonly metrics?: Metrics | undefined;
}

/**
 * Counts and logs the requests of `app`'s routes: call before any route is registered, on an instance whose
 * server was made with OBSERVED_SERVER (its `http` or `https` options). `then`: the instance's own first
 * `onRequest` hook, run in the same hook once the request's arrival is noted (each hook costs Fastify's hook
 * runner a call a request), and installed alone when nothing observes.
 */
export function observeRequests(
  app: FastifyInstance,
  watchers: RequestObservers,
  then?: onRequestHookHandler,
): void {
  const metrics = watchers.metrics;
  // Request lines are at info: a node started at a higher level (`--log-level warn`) logs none, and with no
  // metrics either observes nothing, at no cost.
  const logger = watchers.logger?.isLevelEnabled('info') ? watchers.logger : undefined;
  if (!logger && !metrics) {
    if (then) app.addHook('onRequest', then);
    return;
  }
  const observerOf = (route: string): Observe => {
    const requests = metrics?.requestsOf(route);
    const line = logger && !QUIET_ROUTES.has(route) ? requestLineFor(logger, route) : undefined;
    return (response) => {
      const now = performance.now();
      const ms = now - response.arrivedAt;
      const status = response.statusCode;
      requests?.observe(status, ms / 1000);
      const request = response.request;
      line?.(request?.id ?? '', status, ms, request?.keyId ?? null, now);
    };
  };
  // One observer a route (a GET route's HEAD twin shares it), made when the route is registered.
  const observers = new Map<string, Observe>();
  const observerFor = (route: string): Observe => {
    let observe = observers.get(route);
    if (observe === undefined) observers.set(route, (observe = observerOf(route)));
    return observe;
  };
  const unmatched = observerFor('unmatched');
  // Answered before its route's handler ran (or by the not-found handler): the route is looked up then.
  const early: Observe = (response) => {
    const request = response.request;
    const route = request === null || request.is404 ? undefined : request.routeOptions.url;
    (route === undefined ? unmatched : observerFor(route))(response);
  };
  app.addHook('onRequest', function (request, reply, done) {
    const response = reply.raw as ObservedResponse;
    response.arrivedAt = performance.now();
    response.request = request;
    response.observe = early;
    if (then) then.call(this, request, reply, done);
    else done();
  });
  // Each route's handler first gives the response its route's observer: a call, where a hook of the route
  // would cost Fastify's hook runner a step for every request.
  app.addHook('onRoute', (route) => {
    const routeObserve = observerFor(route.url ?? route.path);
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request, reply) {
      (reply.raw as ObservedResponse).observe = routeObserve;
      return handler.call(this, request, reply);
    };
  });
}
