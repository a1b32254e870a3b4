import { readFileSync } from 'node:fs';
import { openServiceDb } from '../../service/store/db.js';
import {
  createKey,
  keyConfigProblem,
  DEFAULT_RATE_LIMIT,
  DEFAULT_BOUNCE_MAX_AGE_DAYS,
  BOUNCE_MAX_AGE_DAYS_LIMIT,
  listKeys,
  revokeKey,
  type KeyRecord,
} from '../../service/store/keys.js';
import { VERIFICATION_MODES, type VerificationMode } from '../../shared/api/codes.js';
import { parseServiceList, type ServiceName } from '../../shared/api/services.js';
import { CliError, intOption } from './errors.js';
import { parseChecks } from './onlineOptions.js';
import { parseKeyFieldList } from '../../service/identity/fields.js';
import {
  ALTERNATE_EMAIL_MATCHES_MAX,
  BULK_INTELLIGENCE_LIMIT,
  BULK_INTELLIGENCE_LIMIT_EAM,
} from '../../shared/api/limits.js';

export interface CreateOptions {
  dataDir: string;
  mode: string;
  corrections?: boolean;
  allow?: string;
  suppress?: string;
  rateLimit?: string;
  services?: string;
  label?: string;
  legacyAcceptAll?: boolean;
  checks?: string;
  fields?: string;
  alternateMax?: string;
  bulkLimit?: string;
  knownBouncers?: boolean;
  bounceMaxAgeDays?: string;
}

function readListFile(file: string, what: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\r?\n/);
  } catch {
    throw new CliError(`Cannot read the ${what} file ${file}.`);
  }
}

export function createKeyCommand(options: CreateOptions): void {
  if (!(VERIFICATION_MODES as readonly string[]).includes(options.mode))
    throw new CliError(`--mode takes ${VERIFICATION_MODES.join(' or ')}; got '${options.mode}'.`);
  let services: ServiceName[] = ['validation'];
  if (options.services !== undefined) {
    const parsed = parseServiceList(options.services);
    if (!parsed.ok) throw new CliError(`Unknown service '${parsed.unknown}' in --services.`);
    services = parsed.services;
  }
  if (options.corrections && !services.includes('corrections')) services.push('corrections');
  const rateLimit =
    options.rateLimit === undefined
      ? DEFAULT_RATE_LIMIT
      : intOption('--rate-limit', options.rateLimit, 0, 1_000_000);
  const checks = parseChecks(options.checks, 'offline');
  let fields = null;
  if (options.fields !== undefined) {
    const parsed = parseKeyFieldList(options.fields);
    if (!parsed.ok) throw new CliError(`Unknown field '${parsed.unknown}' in --fields.`);
    fields = parsed.fields;
  }
  const alternateMax =
    options.alternateMax === undefined
      ? 1
      : intOption('--alternate-max', options.alternateMax, 1, ALTERNATE_EMAIL_MATCHES_MAX);
  // DESIGN.md: only an activity-metrics key (eam without intelligence) may be raised to 10,000 records.
  const isActivityMetrics = services.includes('eam') && !services.includes('intelligence');
  const bulkLimit =
    options.bulkLimit === undefined
      ? BULK_INTELLIGENCE_LIMIT
      : intOption('--bulk-limit', options.bulkLimit, 1, BULK_INTELLIGENCE_LIMIT_EAM);
  if (bulkLimit > BULK_INTELLIGENCE_LIMIT && !isActivityMetrics)
    throw new CliError(
      `--bulk-limit above ${BULK_INTELLIGENCE_LIMIT} is for activity-metrics keys only (--services with eam and without intelligence).`,
    );
  const bounceMaxAgeDays =
    options.bounceMaxAgeDays === undefined
      ? DEFAULT_BOUNCE_MAX_AGE_DAYS
      : intOption('--bounce-max-age-days', options.bounceMaxAgeDays, 1, BOUNCE_MAX_AGE_DAYS_LIMIT);
  if (options.bounceMaxAgeDays !== undefined && !options.knownBouncers)
    throw new CliError('--bounce-max-age-days is for a key with --known-bouncers.');
  // The flags themselves are refused on a legacy key, even with an empty file (the store checks entries).
  const problem = keyConfigProblem({
    mode: options.mode as VerificationMode,
    allow: options.allow !== undefined ? ['(any)'] : [],
    suppress: options.suppress !== undefined ? ['(any)'] : [],
  });
  if (problem) throw new CliError(problem);
  const allow = options.allow ? readListFile(options.allow, 'allow list') : [];
  const suppress = options.suppress ? readListFile(options.suppress, 'suppression list') : [];
  const db = openServiceDb(options.dataDir);
  try {
    const { key } = createKey(db, {
      mode: options.mode as VerificationMode,
      services,
      rateLimit,
      allow,
      suppress,
      legacyAcceptAll: options.legacyAcceptAll ?? false,
      checks,
      fields,
      alternateMax,
      bulkLimit,
      knownBouncers: options.knownBouncers ?? false,
      bounceMaxAgeDays,
      ...(options.label ? { label: options.label } : {}),
    });
    process.stdout.write(`${key}\n`);
  } finally {
    db.close();
  }
}

function describeKey(key: KeyRecord) {
  return {
    id: key.id,
    key: `…${key.hint}`,
    label: key.label,
    mode: key.mode,
    services: [...key.services],
    rate_limit: key.rateLimit,
    allow_entries: key.allow.size,
    suppress_entries: key.suppress.size,
    legacy_accept_all: key.legacyAcceptAll,
    checks: key.checks,
    fields: key.fields === null ? 'all' : [...key.fields],
    alternate_max: key.alternateMax,
    bulk_limit: key.bulkLimit,
    known_bouncers: key.knownBouncers,
    bounce_max_age_days: key.bounceMaxAgeDays,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
  };
}

export function listKeysCommand(options: { dataDir: string; json?: boolean }): void {
  const db = openServiceDb(options.dataDir);
  try {
    const keys = listKeys(db).map(describeKey);
    if (options.json) {
      for (const key of keys) process.stdout.write(`${JSON.stringify(key)}\n`);
      return;
    }
    if (keys.length === 0) {
      process.stdout.write('No keys. Create one with `mailsieve keys create`.\n');
      return;
    }
    for (const key of keys) {
      const state = key.revoked_at ? `revoked ${key.revoked_at}` : 'active';
      const limit = key.rate_limit === 0 ? 'no rate limit' : `${key.rate_limit}/s`;
      const bouncers = key.known_bouncers ? `  known bouncers (${key.bounce_max_age_days} days)` : '';
      process.stdout.write(
        `#${key.id}  ${key.key}  ${key.mode}  ${key.services.join(',')}  checks ${key.checks}  ${limit}${bouncers}  ${state}` +
          `${key.label ? `  "${key.label}"` : ''}\n`,
      );
    }
  } finally {
    db.close();
  }
}

export function revokeKeyCommand(keyOrId: string, options: { dataDir: string }): void {
  const db = openServiceDb(options.dataDir);
  try {
    if (!revokeKey(db, keyOrId.trim())) throw new CliError('No active key matches that key or id.');
    process.stdout.write('Key revoked.\n');
  } finally {
    db.close();
  }
}
