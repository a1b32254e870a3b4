import type { PgMigration } from '../migrate.js';
import { teamServer } from './0010-team-server.js';
import { nodeStatus } from './0020-node-status.js';
import { keyLimits } from './0030-key-limits.js';
import { hostLimits } from './0040-host-limits.js';
import { uploadLimits } from './0050-upload-limits.js';
import { partRanges } from './0060-part-ranges.js';

export const PG_MIGRATIONS: readonly PgMigration[] = [
  teamServer,
  nodeStatus,
  keyLimits,
  hostLimits,
  uploadLimits,
  partRanges,
];
