// The error a request's work throws to be answered with a status and words (the HTTP layer answers it in the
// spec's error shape: service/http/errors.ts), and the quoting of a client's words inside such a message. Below
// every room of the service: the identity, engine and list rooms throw it without reaching into service/http/
// (eslint.config.js forbids that).

/** A thrown error that a route handler means as an HTTP answer. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const CONTROL_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
// eslint-disable-next-line no-control-regex -- control characters are exactly what must not be echoed
const CONTROL = /[\u0000-\u001f\u007f]/g;

/**
 * A parameter name fit to quote back in a message: short, its control characters as escapes a person can
 * read ('\n', '\t', '\x00'), never as themselves.
 */
export function printable(name: string): string {
  const clean = name.replace(
    CONTROL,
    (char) => CONTROL_ESCAPES[char] ?? `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}
