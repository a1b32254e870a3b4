// Every answered request of a node counted (metrics) and logged (one line, never its URL or key): by a hook of
// each route, made when the route is registered, with the route's name and its counts and line in hand, so a
// request pays no lookup (Fastify's `request.routeOptions` builds an object at every read). Requests no route
// matched (404, 405) are counted and logged as route "unmatched". Measured by `npm run bench -- e1`, which runs
// `serve --metrics --log-format json` (docs/operations.md "Cost").
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { requestLineFor } from './log.js';
import type { Metrics } from './metrics.js';

/** Routes probed often: their requests are counted but not logged (a load balancer asks every few seconds). */
export const QUIET_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export interface RequestObservers {
  readonly logger?: Logger | undefined;
  readonly metrics?: Metrics | undefined;
}

/** Counts and logs the requests of `app`'s routes: call before any route is registered. */
export function observeRequests(app: FastifyInstance, { logger, metrics }: RequestObservers): void {
  if (!logger && !metrics) return;
  const hookOf = (route: string) => {
    const requests = metrics?.requestsOf(route);
    const line = logger && !QUIET_ROUTES.has(route) ? requestLineFor(logger, route) : undefined;
    return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const ms = reply.elapsedTime;
      const status = reply.statusCode;
      requests?.observe(status, ms / 1000);
      line?.(request.id, status, ms, request.keyId ?? null);
      done();
    };
  };
  app.addHook('onRoute', (route) => {
    const hook = hookOf(route.url ?? route.path) as onResponseHookHandler;
    const hooks = route.onResponse;
    route.onResponse = hooks === undefined ? [hook] : [...(Array.isArray(hooks) ? hooks : [hooks]), hook];
  });
  // Fastify's not-found handler runs the instance's hooks, not a route's.
  const unmatched = hookOf('unmatched');
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched(request, reply, done);
    else done();
  });
}
