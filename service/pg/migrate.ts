// Schema changes of the team server's database: numbered steps (as the SQLite store's), applied with the version
// they bring in one transaction (a failed step leaves the database as it was), under a transaction-scoped
// advisory lock, so that several nodes
// starting at once migrate once: the first takes the lock and applies the steps, the others wait for it and
// find nothing left to do. A database from a newer Mailsieve is refused.
import type { PgClient, PgPool } from './db.js';

export interface PgMigration {
  readonly version: number;
  readonly name: string;
  up(client: PgClient): Promise<void>;
}

/** The advisory lock key of migrations ("mailsiev" in ASCII). */
const MIGRATION_LOCK = 0x6d61696c73696576n;

export class NewerPostgresSchemaError extends Error {
  constructor(found: number, known: number) {
    super(
      `This database was written by a newer version of Mailsieve (schema ${found}, this version knows up to ${known}). ` +
        'Update Mailsieve on this node to use it.',
    );
  }
}

export async function migratePostgres(pool: PgPool, migrations: readonly PgMigration[]): Promise<number> {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  const latest = sorted.at(-1)?.version ?? 0;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS mailsieve_schema (id int PRIMARY KEY CHECK (id = 1), version int NOT NULL)',
    );
    await client.query(
      'INSERT INTO mailsieve_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING',
    );
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM mailsieve_schema WHERE id = 1',
    );
    const current = rows[0]?.version ?? 0;
    if (current > latest) throw new NewerPostgresSchemaError(current, latest);
    let applied = 0;
    for (const migration of sorted) {
      if (migration.version <= current) continue;
      await migration.up(client);
      await client.query('UPDATE mailsieve_schema SET version = $1 WHERE id = 1', [migration.version]);
      applied++;
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
