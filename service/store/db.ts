import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from './migrate.js';
import { SERVICE_MIGRATIONS } from './migrations/index.js';

export type ServiceDb = Database.Database;

export const SERVICE_DB_FILE = 'service.sqlite';

export interface OpenOptions {
  /**
   * better-sqlite3's compiled addon to load. Under Electron the app passes the build made for Electron's ABI,
   * so Node (tests, CLI, browser mode) and Electron each keep their own build (DESIGN.md).
   */
  readonly nativeBinding?: string;
}

/** Opens (creating as needed) the service database in `dataDir`, in WAL mode, migrated to the latest schema. */
export function openServiceDb(dataDir: string, options: OpenOptions = {}): ServiceDb {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new Database(
    join(dataDir, SERVICE_DB_FILE),
    options.nativeBinding ? { nativeBinding: options.nativeBinding } : {},
  );
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, SERVICE_MIGRATIONS);
  return db;
}
