import type { PgMigration } from '../migrate.js';
import { teamServer } from './0010-team-server.js';

export const PG_MIGRATIONS: readonly PgMigration[] = [teamServer];
