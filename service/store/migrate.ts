import type { Database } from 'better-sqlite3';

/** One schema step. Versions go in steps of 10 (0010, 0020, …) so a fix can slot in between. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(db: Database): void;
}

export class NewerDatabaseError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `This database was written by a newer version of Mailsieve (schema ${found}, this version knows up to ${known}). ` +
        'Update Mailsieve to open it.',
    );
  }
}

/**
 * Runs every migration above the database's `user_version`, each in its own transaction together with the
 * version bump, so a crash leaves the database at the last complete step. Refuses a database from the future.
 */
export function migrate(db: Database, migrations: readonly Migration[]): void {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  const latest = sorted.at(-1)?.version ?? 0;
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) throw new NewerDatabaseError(current, latest);
  for (const migration of sorted) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
}
