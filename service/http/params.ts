import { HttpError, printable } from '../requestError.js';
import { isParsedQuery } from './query.js';

export { printable } from '../requestError.js';

/** No parameter value may be longer than this; an address over 254 characters is already code 130. */
export const MAX_PARAMETER_LENGTH = 4096;

/**
 * Reads a query string object into single string values, rejecting a parameter given more than once or
 * longer than MAX_PARAMETER_LENGTH with a 400 a person can act on.
 */
export function singleValued(query: unknown): Readonly<Record<string, string>> {
  // The node's parsed query (query.ts) is given as it is when each parameter is a string within the length:
  // a copy cost E1 a new object and a store of each parameter by a name known only at run time (hence the
  // result is read-only).
  if (isParsedQuery(query)) {
    let isSingleValued = true;
    for (const name in query) {
      const value = query[name];
      if (typeof value !== 'string' || value.length > MAX_PARAMETER_LENGTH) {
        isSingleValued = false;
        break;
      }
    }
    if (isSingleValued) return query as Record<string, string>;
  }
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
export function numberParam(params: Readonly<Record<string, string>>, name: string): number | undefined {
  const raw = params[name];
  if (raw === undefined) return undefined;
  const value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(value))
    throw new HttpError(400, `Parameter '${name}' must be a number; got '${printable(raw)}'.`);
  return value;
}

/** Whether the `%` at `at` starts an escape of an ASCII byte (`%00`–`%7F`). */
function isAsciiEscape(url: string, at: number): boolean {
  const high = url.charCodeAt(at + 1);
  const low = url.charCodeAt(at + 2);
  const letter = low | 0x20; // a-f and A-F alike
  return high >= 0x30 && high <= 0x37 && ((low >= 0x30 && low <= 0x39) || (letter >= 0x61 && letter <= 0x66));
}

/**
 * Why a request's query string is not validly percent-encoded (`a%ZZb`, a lone `%`, `%FF` that is no UTF-8),
 * or undefined. Parsers pass such text through as it is, which would judge a different address than the
 * client meant: it is a malformed request (400), as the spec's "parameters not URL encoded" says.
 */
export function queryEncodingProblem(url: string): string | undefined {
  const question = url.indexOf('?');
  if (question < 0) return undefined;
  // Most queries escape ASCII alone (E1's `%40`): each such escape decodes, so the parts need no decoding.
  // (Found with indexOf, not a regular expression: a third of the cost, for E1's one `%`.)
  let percent = url.indexOf('%', question);
  while (percent !== -1 && isAsciiEscape(url, percent)) percent = url.indexOf('%', percent + 3);
  if (percent === -1) return undefined;
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
