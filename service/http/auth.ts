import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRecord } from '../store/keys.js';
import { quotaExceededMessage, type Charge, type UsageMeter } from '../store/usage.js';
import type { ServiceName } from '../../shared/api/services.js';
import type { AuthFailureLimit } from './authFailures.js';
import { sendError, sendInvalidKey } from './errors.js';
import { publish } from '../ops/events.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The id of the request's key once it is known (the request's log line names it; never the key). */
    keyId: number | null;
  }
}

/** Where the spec puts the key: query parameter on E1–E6, header `api_key` on E7–E10. */
export type KeyPlacement = 'query' | 'header';

/**
 * Keys by value for the request path: from a cache, synchronously, when they are in it (the single node's
 * SQLite registry always answers so); the team server's registry asks PostgreSQL on a miss.
 */
export interface KeyLookup {
  lookup(key: string): KeyRecord | undefined | Promise<KeyRecord | undefined>;
  /** Whether this node has found the key valid before: a lookup of it is no guess (a team server's registry). */
  isKnown?(key: string): boolean;
  /** Forgets every cached key (they are read again on their next use). */
  invalidate(): void;
}

export interface AuthContext {
  readonly keys: KeyLookup;
  /** Quotas and the rate limit (service/store/usage.ts). */
  readonly usage: UsageMeter;
  /** Failed authentications per client address (a team server's API node): past the limit, 429. */
  readonly failures?: AuthFailureLimit;
}

/** A value, or a promise of it: the single node answers at once, the team server after asking PostgreSQL. */
export type Maybe<T> = T | Promise<T>;

export function isPromise<T>(value: Maybe<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/** `then` over a value or a promise, staying synchronous for a value. */
export function thenMaybe<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return isPromise(value) ? value.then(next) : next(value);
}

function keyFrom(request: FastifyRequest, placement: KeyPlacement): string | string[] | undefined {
  if (placement === 'header') return request.headers.api_key;
  return (request.query as Record<string, string | string[] | undefined>).api_key;
}

/**
 * Authenticates a request and checks it may use `service`. Answers the request itself (401, 403, 429) and
 * gives undefined when it may not proceed.
 */
export function authorise(
  context: AuthContext,
  request: FastifyRequest,
  reply: FastifyReply,
  placement: KeyPlacement,
  service: ServiceName | null,
  options: { rateLimited: boolean },
): Maybe<KeyRecord | undefined> {
  const given = keyFrom(request, placement);
  const failures = context.failures;
  // Asked only while some address has failed lately: a request path with none pays one property read. An
  // address past its limit may still use a key this node has found valid before; any other is not looked up.
  if (failures && !failures.isEmpty) {
    const wait = failures.retryAfterS(request.ip);
    if (wait > 0 && !(typeof given === 'string' && context.keys.isKnown?.(given))) {
      reply.header('retry-after', String(wait));
      sendError(
        reply,
        429,
        `Too many requests: too many failed authentications from this address; try again in ${wait} s.`,
      );
      return undefined;
    }
  }
  if (typeof given !== 'string' || given === '') {
    sendInvalidKey(reply);
    return undefined;
  }
  return thenMaybe(context.keys.lookup(given), (key) => {
    if (!key) {
      failures?.fail(request.ip);
      sendInvalidKey(reply);
      return undefined;
    }
    request.keyId = key.id;
    const admit = (isWithinRate: boolean): KeyRecord | undefined => {
      if (!isWithinRate) {
        publish('rate.limited', { keyId: key.id });
        reply.header('retry-after', '1');
        sendError(reply, 429, `Too many requests: this key is limited to ${key.rateLimit} calls per second.`);
        return undefined;
      }
      if (service && !key.services.has(service)) {
        sendError(reply, 403, `Access denied: this API key is not enabled for the ${service} service.`);
        return undefined;
      }
      return key;
    };
    return options.rateLimited ? thenMaybe(context.usage.takeRate(key), admit) : admit(true);
  });
}

/** Answers 403 (query limit exceeded) for `n` queries that did not fit the key's quota. */
function refuseCharge(key: KeyRecord, reply: FastifyReply, used: number, n: number, what: string): void {
  publish('quota.refused', { keyId: key.id });
  sendError(reply, 403, quotaExceededMessage(key.quota!, used, n, what));
}

/**
 * Counts `n` billable queries (an E1 call) against the key: true when they fit its quota; otherwise answers
 * 403 (query limit exceeded) itself and gives false.
 */
export function chargeQueries(
  context: AuthContext,
  key: KeyRecord,
  reply: FastifyReply,
  n: number,
  what = 'queries',
): Maybe<boolean> {
  return thenMaybe(context.usage.charge(key, n), (charge: Charge) => {
    if (charge.ok) return true;
    refuseCharge(key, reply, charge.used, n, what);
    return false;
  });
}

/** Queries reserved before the work they pay for (reserveQueries), settled once it is done. */
export interface Reservation {
  /**
   * Counts `answered` queries in all: those reserved beyond them are given back, in the period they were
   * charged in (any beyond the reservation are added there).
   */
  settle(answered: number): Maybe<void>;
}

/**
 * Reserves `n` billable queries of the key before their work (E2–E6: what a request may be answered with),
 * all or none: undefined, with 403 (query limit exceeded) answered, when they do not fit its quota. The work
 * then settles the reservation with the records it answered from the data. A key without a quota is refused
 * nothing, so nothing is reserved: its records answered are counted when settled (in memory, as E1's calls).
 */
export function reserveQueries(
  context: AuthContext,
  key: KeyRecord,
  reply: FastifyReply,
  n: number,
  what = 'queries',
): Maybe<Reservation | undefined> {
  const usage = context.usage;
  const quota = key.quota;
  if (!quota) return { settle: (answered) => thenMaybe(usage.charge(key, answered), () => undefined) };
  return thenMaybe(usage.charge(key, n), (charge: Charge) => {
    if (!charge.ok) {
      refuseCharge(key, reply, charge.used, n, what);
      return undefined;
    }
    return {
      settle: (answered) =>
        answered === n ? undefined : usage.adjust(key.id, quota, answered - n, charge.period),
    };
  });
}

/**
 * Whether a key with a quota has nothing left: then it answers 403 (query limit exceeded) itself and gives true.
 * A bulk request's key is asked this before its body is read (routes/bulkBody.ts).
 */
export function refuseExhausted(
  context: AuthContext,
  key: KeyRecord,
  reply: FastifyReply,
  what: string,
): Maybe<boolean> {
  const quota = key.quota;
  if (!quota) return false;
  return thenMaybe(context.usage.used(key), (used) => {
    if (used < quota.limit) return false;
    refuseCharge(key, reply, used, 1, what);
    return true;
  });
}
