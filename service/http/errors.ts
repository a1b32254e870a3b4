import type { FastifyReply } from 'fastify';

/** Request-level errors use the spec's error object shape: `{error_code, error_msg}`. */
export interface ErrorBody {
  error_code: number;
  error_msg: string;
}

export const INVALID_API_KEY = 'Invalid API key.';

export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  const body: ErrorBody = { error_code: status, error_msg: message };
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** 401 with the spec's plain-text body (E1 defines it; every endpoint answers the same way). */
export function sendInvalidKey(reply: FastifyReply): FastifyReply {
  return reply.code(401).type('text/plain; charset=utf-8').send(INVALID_API_KEY);
}

export { HttpError } from '../requestError.js';
