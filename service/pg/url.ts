// A team server's database URL and its words, without PostgreSQL's client: what the command line needs before
// it knows a team server is asked for, so that the single service and the desktop never load pg or pg-boss
// (they are imported when a database is given: service/server.ts, electron/cli/).

/** The environment variable naming the team server's database. */
export const ENV_DATABASE_URL = 'MAILSIEVE_DATABASE_URL';

/** A database URL as it may be shown: no password. */
export function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the database URL given';
  }
}

export class DatabaseUrlProblem extends Error {}

/** Checks a database URL's form (postgres:// or postgresql://), in words. */
export function checkDatabaseUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DatabaseUrlProblem(
      `'${url.length > 80 ? `${url.slice(0, 80)}…` : url}' is not a database URL: write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.`,
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new DatabaseUrlProblem(
      `The database URL must start with postgres:// (got ${parsed.protocol}//): write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.`,
    );
}

/** PostgreSQL could not be used by a team node: the message says where and what to check, without the password. */
export class TeamDatabaseError extends Error {}
