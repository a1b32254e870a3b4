import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HTTPMethods,
  RouteHandlerMethod,
  RouteOptions,
} from 'fastify';
import { closeUnread, hasBody } from './bodies.js';
import { sendError } from './errors.js';

interface KnownRoute {
  readonly pattern: RegExp;
  readonly methods: Set<string>;
}

/**
 * The routes of each server: a route registered in an encapsulated context (E7's, with its multipart parser)
 * is known to the not-found handler of the root context too.
 */
const knownRoutes = new WeakMap<FastifyInstance['server'], KnownRoute[]>();

function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/**
 * Registers a route and remembers its path, so a request with the wrong method gets 405 naming the right
 * one instead of a 404 that suggests the path does not exist.
 */
export function registerRoute(
  app: FastifyInstance,
  method: HTTPMethods,
  url: string,
  handler: RouteHandlerMethod,
  options: Pick<RouteOptions, 'bodyLimit' | 'onRequest'> = {},
): void {
  app.route({ method, url, handler, ...options });
  const routes = knownRoutes.get(app.server) ?? [];
  knownRoutes.set(app.server, routes);
  const pattern = patternOf(url);
  const existing = routes.find((r) => r.pattern.source === pattern.source);
  if (existing) existing.methods.add(method);
  else routes.push({ pattern, methods: new Set([method, ...(method === 'GET' ? ['HEAD'] : [])]) });
}

/** The methods a path accepts, or an empty list when no route has that path. */
export function methodsFor(app: FastifyInstance, path: string): string[] {
  const route = (knownRoutes.get(app.server) ?? []).find((r) => r.pattern.test(path));
  return route ? [...route.methods] : [];
}

/**
 * Answers the requests no route of `app` takes: 405 naming the methods the path accepts (and an Allow
 * header), or 404. In an `onRequest` hook of the not-found handler, before Fastify reads a body (up to 1 MiB):
 * a request with a body is answered with the connection closed, its body unread (service/http/bodies.ts).
 */
export function answerUnmatched(app: FastifyInstance): void {
  const answer = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const methods = methodsFor(app, path);
    if (methods.length > 0) {
      reply.header('allow', methods.join(', '));
      return sendError(
        reply,
        405,
        `Method ${request.method} is not allowed on ${path}; use ${methods.join(' or ')}.`,
      );
    }
    return sendError(reply, 404, `No such endpoint: ${request.method} ${path.slice(0, 200)}`);
  };
  const answerBeforeBody = async (request: FastifyRequest, reply: FastifyReply) => {
    if (hasBody(request)) closeUnread(request, reply);
    return answer(request, reply);
  };
  // Fastify's type names only preValidation and preHandler, but the not-found handler takes every lifecycle hook.
  app.setNotFoundHandler(
    { onRequest: answerBeforeBody } as Parameters<typeof app.setNotFoundHandler>[0],
    answer,
  );
}
