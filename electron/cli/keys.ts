// `mailsieve keys`: the API keys of a service — the single node's (its SQLite database, `--data-dir`) or a team
// server's (PostgreSQL, `--database` or MAILSIEVE_DATABASE_URL): create (with a quota or as a trial), list,
// revoke, and each key's usage against its quota.
import { readFileSync } from 'node:fs';
import { openServiceDb } from '../../service/store/db.js';
import {
  createKey,
  keyConfigProblem,
  DEFAULT_RATE_LIMIT,
  DEFAULT_BOUNCE_MAX_AGE_DAYS,
  DEFAULT_MAX_BYTES_DAY,
  DEFAULT_MAX_LISTS,
  DEFAULT_MAX_UPLOADS,
  BOUNCE_MAX_AGE_DAYS_LIMIT,
  listKeys,
  revokeKey,
  TRIAL_QUOTA,
  type KeyConfig,
  type KeyQuota,
  type KeyRecord,
} from '../../service/store/keys.js';
import { periodOf, SqliteUsageMeter } from '../../service/store/usage.js';
import { databaseUrlOf, type DatabaseCliOptions } from './teamOptions.js';
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
import { formatCount } from '../../shared/count.js';

/** The keys of one service, and their usage: the single node's or a team server's. */
interface KeyStore {
  create(config: KeyConfig): Promise<string>;
  list(): Promise<KeyRecord[]>;
  revoke(keyOrId: string): Promise<boolean>;
  usage(keys: readonly KeyRecord[]): Promise<Map<number, number>>;
  close(): Promise<void>;
}

async function openKeyStore(options: { dataDir: string } & DatabaseCliOptions): Promise<KeyStore> {
  const url = databaseUrlOf(options);
  if (url) {
    // PostgreSQL's client is loaded only for a team server's keys (the single node's need none of it).
    const [{ databaseProblem, openPostgres }, { createPgKey, listPgKeys, revokePgKey }, { PgUsageMeter }] =
      await Promise.all([
        import('../../service/pg/db.js'),
        import('../../service/pg/keys.js'),
        import('../../service/pg/usage.js'),
      ]);
    let pool;
    try {
      pool = await openPostgres(url, { max: 2 });
    } catch (error) {
      throw new CliError(databaseProblem(url, error));
    }
    const meter = new PgUsageMeter(pool);
    return {
      create: async (config) => (await createPgKey(pool, config)).key,
      list: () => listPgKeys(pool),
      revoke: (keyOrId) => revokePgKey(pool, keyOrId),
      usage: (keys) => meter.usage(keys),
      close: () => pool.end(),
    };
  }
  const db = openServiceDb(options.dataDir);
  const meter = new SqliteUsageMeter(db);
  return {
    create: (config) => Promise.resolve(createKey(db, config).key),
    list: () => Promise.resolve(listKeys(db)),
    revoke: (keyOrId) => Promise.resolve(revokeKey(db, keyOrId, options.dataDir)),
    usage: (keys) => meter.usage(keys),
    close: async () => {
      await meter.close();
      db.close();
    },
  };
}

async function withKeyStore<T>(
  options: { dataDir: string } & DatabaseCliOptions,
  work: (store: KeyStore) => Promise<T>,
): Promise<T> {
  const store = await openKeyStore(options);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const QUOTA_PERIODS = ['day', 'month', 'total'] as const;

/** `--quota N [--quota-period day|month|total]` or `--trial` (the spec's trial: 100 queries in all). */
function quotaOf(options: CreateOptions): KeyQuota | undefined {
  if (options.trial) {
    if (options.quota !== undefined || options.quotaPeriod !== undefined)
      throw new CliError(
        '--trial sets the trial quota (100 queries in all): give it without --quota or --quota-period.',
      );
    return TRIAL_QUOTA;
  }
  if (options.quotaPeriod !== undefined && options.quota === undefined)
    throw new CliError('--quota-period goes with --quota N.');
  if (options.quota === undefined) return undefined;
  const period = (options.quotaPeriod ?? 'total') as KeyQuota['period'];
  if (!QUOTA_PERIODS.includes(period))
    throw new CliError(`--quota-period takes day, month or total; got '${options.quotaPeriod}'.`);
  return { limit: intOption('--quota', options.quota, 0, Number.MAX_SAFE_INTEGER), period, isTrial: false };
}

export interface CreateOptions extends DatabaseCliOptions {
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
  quota?: string;
  quotaPeriod?: string;
  trial?: boolean;
  knownBouncers?: boolean;
  bounceMaxAgeDays?: string;
  maxLists?: string;
  maxBytesDay?: string;
  maxUploads?: string;
}

function readListFile(file: string, what: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\r?\n/);
  } catch {
    throw new CliError(`Cannot read the ${what} file ${file}.`);
  }
}

export async function createKeyCommand(options: CreateOptions): Promise<void> {
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
  const quota = quotaOf(options);
  const maxLists =
    options.maxLists === undefined
      ? DEFAULT_MAX_LISTS
      : intOption('--max-lists', options.maxLists, 0, 1_000_000);
  const maxBytesDay =
    options.maxBytesDay === undefined
      ? DEFAULT_MAX_BYTES_DAY
      : intOption('--max-bytes-day', options.maxBytesDay, 0, Number.MAX_SAFE_INTEGER);
  const maxUploads =
    options.maxUploads === undefined
      ? DEFAULT_MAX_UPLOADS
      : intOption('--max-uploads', options.maxUploads, 0, 1_000_000);
  const key = await withKeyStore(options, (store) =>
    store.create({
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
      maxLists,
      maxBytesDay,
      maxUploads,
      ...(options.label ? { label: options.label } : {}),
      ...(quota ? { quota } : {}),
    }),
  );
  process.stdout.write(`${key}\n`);
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
    quota: key.quota ? key.quota.limit : null,
    quota_period: key.quota ? key.quota.period : null,
    trial: key.quota?.isTrial === true,
    max_lists: key.maxLists,
    max_bytes_day: key.maxBytesDay,
    max_uploads: key.maxUploads,
    known_bouncers: key.knownBouncers,
    bounce_max_age_days: key.bounceMaxAgeDays,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
  };
}

const describeQuota = (quota: KeyQuota | null) =>
  quota === null
    ? 'no quota'
    : quota.isTrial
      ? `trial: ${formatCount(quota.limit)} queries`
      : `quota ${formatCount(quota.limit)}${quota.period === 'total' ? '' : `/${quota.period}`}`;

export async function listKeysCommand(
  options: { dataDir: string; json?: boolean } & DatabaseCliOptions,
): Promise<void> {
  const records = await withKeyStore(options, (store) => store.list());
  const keys = records.map(describeKey);
  if (options.json) {
    for (const key of keys) process.stdout.write(`${JSON.stringify(key)}\n`);
    return;
  }
  if (keys.length === 0) {
    process.stdout.write('No keys. Create one with `mailsieve keys create`.\n');
    return;
  }
  records.forEach((record, i) => {
    const key = keys[i];
    const state = key.revoked_at ? `revoked ${key.revoked_at}` : 'active';
    const limit = key.rate_limit === 0 ? 'no rate limit' : `${key.rate_limit}/s`;
    const bouncers = key.known_bouncers ? `  known bouncers (${key.bounce_max_age_days} days)` : '';
    const uploads = key.max_uploads === 0 ? 'no upload limit' : `${key.max_uploads} uploads at once`;
    process.stdout.write(
      `#${key.id}  ${key.key}  ${key.mode}  ${key.services.join(',')}  checks ${key.checks}  ${limit}${bouncers}  ` +
        `${uploads}  ` +
        `${describeQuota(record.quota)}  ${state}${key.label ? `  "${key.label}"` : ''}\n`,
    );
  });
}

export async function revokeKeyCommand(
  keyOrId: string,
  options: { dataDir: string } & DatabaseCliOptions,
): Promise<void> {
  const revoked = await withKeyStore(options, (store) => store.revoke(keyOrId.trim()));
  if (!revoked) throw new CliError('No active key matches that key or id.');
  process.stdout.write('Key revoked.\n');
}

/** `keys usage`: each key's billable queries in the current period of its quota, and what is left. */
export async function keysUsageCommand(
  options: { dataDir: string; json?: boolean } & DatabaseCliOptions,
): Promise<void> {
  const { keys, used } = await withKeyStore(options, async (store) => {
    const keys = await store.list();
    return { keys, used: await store.usage(keys) };
  });
  const rows = keys.map((key) => {
    const n = used.get(key.id) ?? 0;
    return {
      id: key.id,
      key: `…${key.hint}`,
      label: key.label,
      period: periodOf(key.quota?.period ?? 'total'),
      used: n,
      quota: key.quota ? key.quota.limit : null,
      left: key.quota ? Math.max(0, key.quota.limit - n) : null,
      trial: key.quota?.isTrial === true,
      revoked: key.revokedAt !== null,
    };
  });
  if (options.json) {
    for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write('No keys. Create one with `mailsieve keys create`.\n');
    return;
  }
  for (const row of rows) {
    const period = row.period === 'total' ? 'in all' : `in ${row.period}`;
    const of =
      row.quota === null
        ? 'no quota'
        : `of ${formatCount(row.quota)}${row.trial ? ' (trial)' : ''}, ${formatCount(row.left ?? 0)} left`;
    process.stdout.write(
      `#${row.id}  ${row.key}  ${formatCount(row.used)} used ${period}  ${of}${row.revoked ? '  revoked' : ''}` +
        `${row.label ? `  "${row.label}"` : ''}\n`,
    );
  }
}
