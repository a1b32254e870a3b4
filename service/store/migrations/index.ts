import type { Migration } from '../migrate.js';
import { createKeys } from './0010-create-keys.js';
import { createLists } from './0020-create-lists.js';
import { keyChecks } from './0030-key-checks.js';
import { identity } from './0040-identity.js';
import { listServices } from './0050-list-services.js';
import { listOnline } from './0060-list-online.js';
import { personAnswers } from './0070-person-answers.js';
import { listParts } from './0080-list-parts.js';
import { keyQuotas } from './0090-key-quotas.js';
import { bounces } from './0100-bounces.js';
import { keyLimits } from './0110-key-limits.js';
import { uploadLimits } from './0120-upload-limits.js';
import { blockLists } from './0130-block-lists.js';

export const SERVICE_MIGRATIONS: readonly Migration[] = [
  createKeys,
  createLists,
  keyChecks,
  identity,
  listServices,
  listOnline,
  personAnswers,
  listParts,
  keyQuotas,
  bounces,
  keyLimits,
  uploadLimits,
  blockLists,
];
