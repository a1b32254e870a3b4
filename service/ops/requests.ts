// Every answered request of a node counted (metrics) and logged (one line, never its URL or key), by two hooks:
// `onRequest` notes when the request arrived, and an `onSend` hook of each route, made when the route is
// registered with the route's name, its counts and its line in hand, counts and logs it when its answer is
// handed to the connection. Cheap on purpose (E1 answers tens of thousands of requests a second, and issue 28
// allows logs and metrics 5% of that; `npm run bench -- e1` runs `serve --metrics --log-format json`):
// - no `onResponse` hook and no Fastify request logger: either makes Fastify 5 put two listeners on every
//   response and take them off again ("finish" and "error"), which cost E1 a fifth of its requests/s on the
//   bench. A request's time is therefore the time to its answer, not to the answer's last byte (the same for
//   every answer but E9's streamed results files);
// - no lookup per request: Fastify's `request.routeOptions` builds an object at every read.
// Requests no route matched (404, 405) are counted and logged as route "unmatched".
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { requestLineFor } from './log.js';
import type { Metrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** When the request arrived (`performance.now()`), for its line and its duration metric. */
    arrivedAt: number;
  }
}

/** Routes probed often: their requests are counted but not logged (a load balancer asks every few seconds). */
export const QUIET_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export interface RequestObservers {
  readonly logger?: Logger | undefined;
  readonly metrics?: Metrics | undefined;
}

type Observe = (request: FastifyRequest, reply: FastifyReply) => void;

/** Counts and logs the requests of `app`'s routes: call before any route is registered. */
export function observeRequests(app: FastifyInstance, { logger, metrics }: RequestObservers): void {
  if (!logger && !metrics) return;
  const observerOf = (route: string): Observe => {
    const requests = metrics?.requestsOf(route);
    const line = logger && !QUIET_ROUTES.has(route) ? requestLineFor(logger, route) : undefined;
    return (request, reply) => {
      const ms = performance.now() - request.arrivedAt;
      const status = reply.statusCode;
      requests?.observe(status, ms / 1000);
      line?.(request.id, status, ms, request.keyId ?? null);
    };
  };
  app.decorateRequest('arrivedAt', 0);
  app.addHook('onRequest', (request, _reply, done) => {
    request.arrivedAt = performance.now();
    done();
  });
  app.addHook('onRoute', (route) => {
    const observe = observerOf(route.url ?? route.path);
    const hook: onSendHookHandler = (request, reply, payload, done) => {
      observe(request, reply);
      done(null, payload);
    };
    const hooks = route.onSend;
    route.onSend = hooks === undefined ? [hook] : [...(Array.isArray(hooks) ? hooks : [hooks]), hook];
  });
  // Fastify's not-found handler runs the instance's hooks, not a route's.
  const unmatched = observerOf('unmatched');
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.is404) unmatched(request, reply);
    done(null, payload);
  });
}
