// The team server's PostgreSQL: one pool per process, and the few ways the rest of the code uses it — a query,
// a transaction, a failure to connect in words (the URL's own words: url.ts). PostgreSQL restarted under a
// running node: queries in flight fail (the job or request is retried), and the pool connects again.
import pg from 'pg';
import { migratePostgres } from './migrate.js';
import { PG_MIGRATIONS } from './migrations/index.js';
import { checkDatabaseUrl, describeDatabase } from './url.js';

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

/** Either a pool or a client inside a transaction: what a query function takes first. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

// bigint and numeric counts come back as numbers (ids and counts stay far below 2^53).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/**
 * The words for a failure to reach PostgreSQL: where, and what to check, never the password. Without `url`
 * (readiness, which anyone may ask) they name neither the database nor its user, host or port, and leave out
 * the error's own message (`connect ETIMEDOUT 10.0.0.5:5432`).
 */
export function databaseProblem(url: string | undefined, error: unknown): string {
  const code = (error as { code?: string }).code;
  const at = url === undefined ? '' : ` at ${describeDatabase(url)}`;
  if (code === 'ECONNREFUSED')
    return `Cannot connect to PostgreSQL${at}: nothing listens there (is the server running?).`;
  if (code === 'ENOTFOUND') return `Cannot connect to PostgreSQL${at}: the host name does not resolve.`;
  if (code === '28P01' || code === '28000') return `PostgreSQL${at} refused the user or password in the URL.`;
  if (code === '3D000') return `PostgreSQL${at} has no such database: create it first (createdb).`;
  if (url === undefined) return `PostgreSQL could not be used${code ? ` (${code})` : ''}.`;
  const message = error instanceof Error ? error.message : String(error);
  return `PostgreSQL${at} could not be used: ${message}`;
}

export interface OpenPgOptions {
  /** Connections in the pool (default 20). */
  readonly max?: number;
  /** Name shown in pg_stat_activity. */
  readonly applicationName?: string;
}

/** Opens a pool and brings the schema up to date (under a lock: nodes starting at once migrate once). */
export async function openPostgres(url: string, options: OpenPgOptions = {}): Promise<PgPool> {
  checkDatabaseUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'mailsieve',
    connectionTimeoutMillis: 10_000,
  });
  // A connection lost while idle (PostgreSQL restarted) is dropped by the pool; nothing else to do.
  pool.on('error', () => undefined);
  try {
    await migratePostgres(pool, PG_MIGRATIONS);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return pool;
}

/** Connections of a node's pool for uploads (openUploadPool). */
export const DEFAULT_UPLOAD_CONNECTIONS = 4;

/**
 * The pool E7 stores uploads with, apart from the node's pool: an upload holds a connection for its whole
 * insert (a list of 1 GiB takes a while), so twenty at once would otherwise take every connection and other
 * clients' requests would wait for one. Uploads past `max` wait their turn here, for as long as it takes.
 * The schema is the main pool's business (openPostgres): this one only connects.
 */
export function openUploadPool(url: string, max: number): PgPool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    application_name: 'mailsieve-uploads',
    connectionTimeoutMillis: 0,
  });
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `work` in a transaction on one client, committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection lost while the client is out of the pool (PostgreSQL restarted between two statements of the
  // transaction) is told as the client's 'error' event, which the pool listens to only while the client is
  // idle in it: unheard, it would end the process. The statement under way or the next one fails instead (the
  // transaction is rolled back with the connection), and the broken client is not given back to the pool.
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
  };
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    // (A broken client keeps its listener: it is ended, not pooled, and may still tell of its end.)
    if (!lost) client.off('error', onLost);
    client.release(lost);
  }
}
