import type { PgMigration } from '../migrate.js';
import { teamServer } from './0010-team-server.js';
import { hostLimits } from './0020-host-limits.js';

export const PG_MIGRATIONS: readonly PgMigration[] = [teamServer, hostLimits];
