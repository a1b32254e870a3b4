// The request bodies of the bulk endpoints E4 (`POST /v5/eppend/bulk`) and E6 (`POST /v5/ei/bulk`): a JSON
// array of person records, read the way the spec answers them — 400 `Invalid JSON` for a body that is not
// JSON *or* is sent without an `application/json` content type, 400 `Too many records requested. Limit is N
// and you requested M.` above the limit, and a per-record error for an element that is not a record.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { INVALID_JSON } from '../../../shared/api/errors.js';
import { BulkBusyError, BulkShareError, type BulkPool } from '../../identity/bulkPool.js';
import type { BulkTask } from '../../identity/bulkWork.js';
import type { KeyRecord } from '../../store/keys.js';
import { refuseExhausted, reserveQueries, type AuthContext } from '../auth.js';
import { beforeBody, keyCheck, keyOf } from '../bodies.js';
import { HttpError, sendError } from '../errors.js';

/** Bulk bodies may be long: 10,000 records of a few hundred bytes each, with room to spare. */
const BULK_BODY_LIMIT = 16 * 1024 * 1024;

const declaredTypes = new WeakMap<FastifyRequest, string | undefined>();

/**
 * The route options of a bulk endpoint: its longer body limit, and a hook that checks the key (in the query,
 * rate-limited; the handler takes it with `keyOf`) before a byte of the body is read, then times the body
 * (service/http/bodies.ts). The hook also has the body received as text, whatever content type it was sent
 * with (the declared type remembered): Fastify would answer a missing or other content type with 415 and bad
 * JSON with its own message; the spec answers both with 400 `Invalid JSON`, which the route can only give if
 * it reads the body itself. A hook of these routes alone: a hook of the whole service would run on every
 * request (E1's too).
 */
export function bulkRoute(app: FastifyInstance, auth: AuthContext) {
  const key = keyCheck(auth, 'query', { rateLimited: true });
  return {
    bodyLimit: BULK_BODY_LIMIT,
    onRequest: beforeBody(app, async (request: FastifyRequest, reply: FastifyReply) => {
      declaredTypes.set(request, request.headers['content-type']);
      request.headers['content-type'] = 'text/plain; charset=utf-8';
      await key(request, reply);
      // A key whose quota is used up is refused (403) before its body too: none of it could be answered.
      if (!reply.sent) await refuseExhausted(auth, keyOf(request), reply, 'records');
    }),
  };
}

function isJsonType(type: string | undefined): boolean {
  return type !== undefined && type.split(';')[0].trim().toLowerCase() === 'application/json';
}

/**
 * The bulk body of a request as text, or an HttpError (400 `Invalid JSON`) when it was not sent as JSON. The
 * records are parsed by `parseBulkText` (service/identity/bulkRecords.ts), off the request thread
 * (service/identity/bulkPool.ts).
 */
export function bulkBodyText(request: FastifyRequest): string {
  const body = request.body;
  if (!isJsonType(declaredTypes.get(request)) || typeof body !== 'string')
    throw new HttpError(400, INVALID_JSON);
  return body;
}

const isJsonSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * The records of a bulk body's text, counted without parsing it (a parse is work for the bulk pool, after the
 * quota): the members of its top-level array, exact for any JSON array of up to `limit` members, `limit + 1`
 * for a longer one (counting stops there: 16 MiB of `1,` is not walked to its end), and 1 for a text that is
 * not an array. One pass over at most the text, strings skipped by searching for their end; a 5,000-record
 * E6 body is counted in about a third of the time JSON.parse takes for it.
 */
export function bulkRecordCount(body: string, limit: number): number {
  const end = body.length;
  let at = 0;
  while (at < end && isJsonSpace(body.charCodeAt(at))) at++;
  if (body.charCodeAt(at) !== 0x5b /* [ */) return 1;
  let depth = 0;
  let commas = 0;
  let isEmpty = true;
  for (at += 1; at < end; at++) {
    const code = body.charCodeAt(at);
    if (code === 0x22 /* " */) {
      // The closing quote: the next one not escaped (preceded by an even number of backslashes).
      let close = body.indexOf('"', at + 1);
      for (;;) {
        if (close < 0) return commas + 1;
        let slashes = 0;
        while (body.charCodeAt(close - 1 - slashes) === 0x5c /* \ */) slashes++;
        if (slashes % 2 === 0) break;
        close = body.indexOf('"', close + 1);
      }
      at = close;
      isEmpty = false;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      depth++;
      isEmpty = false;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      if (depth === 0) break;
      depth--;
    } else if (code === 0x2c /* , */) {
      if (depth === 0 && ++commas >= limit) return limit + 1;
    } else if (!isJsonSpace(code)) isEmpty = false;
  }
  return isEmpty ? 0 : commas + 1;
}

/** Answers a request the bulk queue would not take: 429 past the key's share of it, 503 when it is full. */
function sendQueueRefusal(reply: FastifyReply, refusal: BulkShareError | BulkBusyError): FastifyReply {
  reply.header('retry-after', '5');
  return sendError(reply, refusal instanceof BulkShareError ? 429 : 503, refusal.message);
}

/**
 * Answers a bulk request of `key` with the pool's work: its JSON, a request-level error, 429 past the key's
 * share of the queue, or 503 when the queue is full. Each record is a billable query (spec "Limits"): the
 * body's records are reserved against the key's quota before any work (403 when they do not fit: a request is
 * never answered in part), and those not answered from the data (per-record errors, or all of a request
 * refused) are given back before the answer is sent.
 */
export async function sendBulk(
  reply: FastifyReply,
  pool: BulkPool,
  task: BulkTask,
  auth: AuthContext,
  key: KeyRecord,
): Promise<FastifyReply> {
  const refusal = pool.refusal(key.id);
  if (refusal) return sendQueueRefusal(reply, refusal);
  // Counted for a key with a quota (bulkRoute's hook refused one with nothing left before the body): its
  // records are reserved, all or none. A body the parse will refuse (400: not an array, or more records than
  // the limit) reserves one record, so that the parse is paid for too.
  const counted = key.quota ? bulkRecordCount(task.body, task.limit) : 0;
  const reservation = await reserveQueries(auth, key, reply, counted > task.limit ? 1 : counted, 'records');
  if (!reservation) return reply;
  let outcome;
  try {
    outcome = await pool.run(task, key.id);
  } catch (error) {
    await reservation.settle(0);
    if (error instanceof BulkShareError || error instanceof BulkBusyError)
      return sendQueueRefusal(reply, error);
    throw error;
  }
  await reservation.settle(outcome.ok ? outcome.answered : 0);
  if (!outcome.ok) return sendError(reply, outcome.status, outcome.message);
  const { json } = outcome;
  return reply
    .code(200)
    .type('application/json; charset=utf-8')
    .send(Buffer.from(json.buffer, json.byteOffset, json.byteLength));
}
