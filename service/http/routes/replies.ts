// JSON answers of E2–E6: bodies, and per-record errors whose code is the HTTP status.
import type { FastifyReply } from 'fastify';
import type { RecordError } from '../../../shared/api/errors.js';

export function sendJson(reply: FastifyReply, body: unknown, status = 200): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** A single-record data error: the per-record error object, with its code as the HTTP status. */
export function sendRecordError(reply: FastifyReply, error: RecordError): FastifyReply {
  return sendJson(reply, error, error.error_code);
}
