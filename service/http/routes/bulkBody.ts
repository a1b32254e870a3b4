// The request bodies of the bulk endpoints E4 (`POST /v5/eppend/bulk`) and E6 (`POST /v5/ei/bulk`): a JSON
// array of person records, read the way the spec answers them — 400 `Invalid JSON` for a body that is not
// JSON *or* is sent without an `application/json` content type, 400 `Too many records requested. Limit is N
// and you requested M.` above the limit, and a per-record error for an element that is not a record.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PERSON_QUERY_KEYS, type PersonQuery } from '../../../shared/api/bulk.js';
import { INVALID_JSON, recordError, tooManyRecords, type RecordError } from '../../../shared/api/errors.js';
import { BulkBusyError, type BulkPool } from '../../identity/bulkPool.js';
import type { BulkTask } from '../../identity/bulkWork.js';
import type { AuthContext } from '../auth.js';
import { beforeBody, keyCheck } from '../bodies.js';
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
    onRequest: beforeBody(app, (request: FastifyRequest, reply: FastifyReply) => {
      declaredTypes.set(request, request.headers['content-type']);
      request.headers['content-type'] = 'text/plain; charset=utf-8';
      return key(request, reply);
    }),
  };
}

function isJsonType(type: string | undefined): boolean {
  return type !== undefined && type.split(';')[0].trim().toLowerCase() === 'application/json';
}

export type BulkElement =
  | { readonly ok: true; readonly query: PersonQuery; readonly fields?: string }
  | { readonly ok: false; readonly error: RecordError };

function elementOf(value: unknown, index: number): BulkElement {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      ok: false,
      error: recordError(400, `Record ${index + 1} is not an object of email, name and postal parameters.`),
    };
  const query: Record<string, string> = {};
  for (const name of PERSON_QUERY_KEYS) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined || member === null) continue;
    // A ZIP code sent as a number is still a ZIP code.
    if (typeof member === 'string' || typeof member === 'number') query[name] = String(member);
    else
      return {
        ok: false,
        error: recordError(400, `Record ${index + 1}: parameter '${name}' must be a string.`),
      };
  }
  // E5's `fields`, per record (E6): a comma-separated string, or an array of names.
  const fields = (value as Record<string, unknown>).fields;
  if (fields === undefined || fields === null) return { ok: true, query };
  if (typeof fields === 'string') return { ok: true, query, fields };
  if (Array.isArray(fields) && fields.every((name) => typeof name === 'string'))
    return { ok: true, query, fields: fields.join(',') };
  return {
    ok: false,
    error: recordError(
      400,
      `Record ${index + 1}: parameter 'fields' must be a string of comma-separated names.`,
    ),
  };
}

/**
 * The bulk body of a request as text, or an HttpError (400 `Invalid JSON`) when it was not sent as JSON. The
 * records are parsed by `parseBulkText`, off the request thread (service/identity/bulkPool.ts).
 */
export function bulkBodyText(request: FastifyRequest): string {
  const body = request.body;
  if (!isJsonType(declaredTypes.get(request)) || typeof body !== 'string')
    throw new HttpError(400, INVALID_JSON);
  return body;
}

/** The records of a bulk body's text, or an HttpError (400) the route answers with. */
export function parseBulkText(body: string, limit: number): BulkElement[] {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new HttpError(400, INVALID_JSON);
  }
  if (!Array.isArray(value))
    throw new HttpError(400, `${INVALID_JSON}: the body must be a JSON array of records.`);
  if (value.length > limit) throw new HttpError(400, tooManyRecords(limit, value.length));
  return value.map(elementOf);
}

/**
 * Answers a bulk request with the pool's work: its JSON, a request-level error, or 503 when the queue is full.
 * `charge` counts the records answered against the key's quota (E6); when they do not fit, it has answered 403
 * and nothing is sent (a request is never answered in part).
 */
export async function sendBulk(
  reply: FastifyReply,
  pool: BulkPool,
  task: BulkTask,
  charge?: (records: number) => Promise<boolean> | boolean,
): Promise<FastifyReply> {
  let outcome;
  try {
    outcome = await pool.run(task);
  } catch (error) {
    if (!(error instanceof BulkBusyError)) throw error;
    reply.header('retry-after', '5');
    return sendError(reply, 503, error.message);
  }
  if (!outcome.ok) return sendError(reply, outcome.status, outcome.message);
  if (charge && !(await charge(outcome.records))) return reply;
  const { json } = outcome;
  return reply
    .code(200)
    .type('application/json; charset=utf-8')
    .send(Buffer.from(json.buffer, json.byteOffset, json.byteLength));
}
