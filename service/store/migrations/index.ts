import type { Migration } from '../migrate.js';
import { createKeys } from './0010-create-keys.js';

export const SERVICE_MIGRATIONS: readonly Migration[] = [createKeys];
