// A team server's database URL and its words, without PostgreSQL's client: what the command line needs before
// it knows a team server is asked for, so that the single service and the desktop never load pg or pg-boss
// (they are imported when a database is given: service/server.ts, electron/cli/).

/** The environment variable naming the team server's database. */
export const ENV_DATABASE_URL = 'MAILSIEVE_DATABASE_URL';

/**
 * A database URL as it may be shown: no password, whatever the URL. It is not parsed (a password with `/`, `#`,
 * `?` or `@` makes a URL that does not parse, or parses into other parts): everything between `://` and the
 * last `@` is the user and password, of which only the user is shown, and a `password=` parameter is masked.
 */
export function describeDatabase(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0];
  if (!scheme) return 'the database URL given';
  let rest = url.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const credentials = rest.slice(0, at);
    const colon = credentials.indexOf(':');
    rest = `${colon >= 0 ? `${credentials.slice(0, colon)}:***` : credentials}@${rest.slice(at + 1)}`;
  }
  const shown = `${scheme}${rest}`.replace(/([?&]password=)[^&#]*/gi, '$1***');
  return shown.length > 120 ? `${shown.slice(0, 120)}…` : shown;
}

export class DatabaseUrlProblem extends Error {}

const FORM = 'write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE';

/** Checks a database URL's form (postgres:// or postgresql://), in words that never hold its password. */
export function checkDatabaseUrl(url: string): void {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0];
  const at = url.lastIndexOf('@');
  // A user or password holding a character that ends the URL's authority ('/', '?', '#') or a second '@'
  // would be read as something else (a host, a path): say so rather than connect to the wrong place.
  if (scheme && at > scheme.length && /[/?#@]/.test(url.slice(scheme.length, at)))
    throw new DatabaseUrlProblem(
      `The database URL ${describeDatabase(url)} is not a URL as written: its user or password holds '/', '?', '#' or '@', which must be percent-encoded (%2F, %3F, %23, %40).`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlProblem(
      `${scheme ? `The database URL ${describeDatabase(url)}` : 'The database URL given'} is not a URL: ${FORM}.`,
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new DatabaseUrlProblem(
      `The database URL must start with postgres:// (got ${parsed.protocol}//): ${FORM}.`,
    );
}

/** PostgreSQL could not be used by a team node: the message says where and what to check, without the password. */
export class TeamDatabaseError extends Error {}
