import { HttpError, printable } from '../requestError.js';

export { printable } from '../requestError.js';

/** No parameter value may be longer than this; an address over 254 characters is already code 130. */
export const MAX_PARAMETER_LENGTH = 4096;

/**
 * Reads a query string object into single string values, rejecting a parameter given more than once or
 * longer than MAX_PARAMETER_LENGTH with a 400 a person can act on.
 */
export function singleValued(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (query === null || typeof query !== 'object') return out;
  const values = query as Record<string, unknown>;
  // A loop over the names, not Object.entries (an array a parameter, E1's every request): Fastify's parsed
  // query has no prototype, so `in` sees its own parameters only; Object.hasOwn keeps any other object's.
  for (const name in values) {
    if (!Object.hasOwn(values, name)) continue;
    const value = values[name];
    if (Array.isArray(value))
      throw new HttpError(400, `Parameter '${printable(name)}' was given more than once.`);
    const text = typeof value === 'string' ? value : String(value);
    if (text.length > MAX_PARAMETER_LENGTH)
      throw new HttpError(
        400,
        `Parameter '${printable(name)}' is too long (${text.length} characters; at most ${MAX_PARAMETER_LENGTH}).`,
      );
    out[name] = text;
  }
  return out;
}

/** Parses a number parameter; `undefined` when absent. */
export function numberParam(params: Record<string, string>, name: string): number | undefined {
  const raw = params[name];
  if (raw === undefined) return undefined;
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(value))
    throw new HttpError(400, `Parameter '${name}' must be a number; got '${printable(raw)}'.`);
  return value;
}

/** A `%` that does not start an escape of an ASCII byte (`%00`–`%7F`). */
const NOT_AN_ASCII_ESCAPE = /%(?![0-7][0-9A-Fa-f])/;

/**
 * Why a request's query string is not validly percent-encoded (`a%ZZb`, a lone `%`, `%FF` that is no UTF-8),
 * or undefined. Parsers pass such text through as it is, which would judge a different address than the
 * client meant: it is a malformed request (400), as the spec's "parameters not URL encoded" says.
 */
export function queryEncodingProblem(url: string): string | undefined {
  const question = url.indexOf('?');
  if (question < 0) return undefined;
  // Most queries escape ASCII alone (E1's `%40`): each such escape decodes, so the parts need no decoding.
  if (!NOT_AN_ASCII_ESCAPE.test(url)) return undefined;
  const query = url.slice(question + 1);
  for (const part of query.split('&')) {
    try {
      decodeURIComponent(part.replaceAll('+', ' '));
    } catch {
      const name = part.split('=')[0];
      let shown = name;
      try {
        shown = decodeURIComponent(name);
      } catch {
        // the name itself is malformed: shown as sent
      }
      return `Malformed percent-encoding in parameter '${printable(shown)}': write % as %25, and each byte as % and two hex digits.`;
    }
  }
  return undefined;
}
