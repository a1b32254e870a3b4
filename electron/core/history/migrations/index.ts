import type { Migration } from '../../../../service/store/migrate.js';
import { createJobs } from './0010-create-jobs.js';
import { createPresets } from './0020-create-presets.js';
import { createSettings } from './0030-create-settings.js';
import { listServices } from './0040-list-services.js';
import { jobChecks } from './0050-job-checks.js';
import { jobCounts } from './0060-job-counts.js';
import { jobOutcomes } from './0070-job-outcomes.js';

export const HISTORY_MIGRATIONS: readonly Migration[] = [
  createJobs,
  createPresets,
  createSettings,
  listServices,
  jobChecks,
  jobCounts,
  jobOutcomes,
];
