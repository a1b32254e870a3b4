import type { PgMigration } from '../migrate.js';
import { teamServer } from './0010-team-server.js';
import { keyLimits } from './0020-key-limits.js';

export const PG_MIGRATIONS: readonly PgMigration[] = [teamServer, keyLimits];
