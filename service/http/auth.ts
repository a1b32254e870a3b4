import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRecord, KeyRegistry } from '../store/keys.js';
import type { ServiceName } from '../../shared/api/services.js';
import { sendError, sendInvalidKey } from './errors.js';
import type { RateLimiter } from './rateLimit.js';

/** Where the spec puts the key: query parameter on E1–E6, header `api_key` on E7–E10. */
export type KeyPlacement = 'query' | 'header';

export interface AuthContext {
  readonly keys: KeyRegistry;
  readonly limiter: RateLimiter;
}

function keyFrom(request: FastifyRequest, placement: KeyPlacement): string | string[] | undefined {
  if (placement === 'header') return request.headers.api_key;
  return (request.query as Record<string, string | string[] | undefined>).api_key;
}

/**
 * Authenticates a request and checks it may use `service`. Answers the request itself (401, 403, 429) and
 * returns undefined when it may not proceed.
 */
export function authorise(
  context: AuthContext,
  request: FastifyRequest,
  reply: FastifyReply,
  placement: KeyPlacement,
  service: ServiceName | null,
  options: { rateLimited: boolean },
): KeyRecord | undefined {
  const given = keyFrom(request, placement);
  if (typeof given !== 'string' || given === '') {
    sendInvalidKey(reply);
    return undefined;
  }
  const key = context.keys.lookup(given);
  if (!key) {
    sendInvalidKey(reply);
    return undefined;
  }
  if (options.rateLimited && !context.limiter.take(key)) {
    reply.header('retry-after', '1');
    sendError(reply, 429, `Too many requests: this key is limited to ${key.rateLimit} calls per second.`);
    return undefined;
  }
  if (service && !key.services.has(service)) {
    sendError(reply, 403, `Access denied: this API key is not enabled for the ${service} service.`);
    return undefined;
  }
  return key;
}
