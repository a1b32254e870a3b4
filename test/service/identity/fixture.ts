// Reference data for the identity tests: small CSV files written to a temporary folder and imported with the
// real import functions into a real service's database, with activity dated relative to now.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { importActivityFile, importPeopleFile } from '../../../service/identity/import.js';
import type { BulkTask } from '../../../service/identity/bulkWork.js';
import { intelligencePolicyFor, type KeyAccess } from '../../../service/identity/policy.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { tempDir } from '../../helpers/service.js';

export const DAY_S = 86_400;
export const nowS = () => Math.floor(Date.now() / 1000);

/** An ISO date-time `days` ago (fractions allowed). */
export function daysAgo(days: number): string {
  return new Date(Date.now() - days * DAY_S * 1000).toISOString();
}

export function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

export function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/**
 * Each test of the calling `describe` gets a fresh service database (`db`, in `<dir>/svc`) in a temporary
 * folder (`dir`, for its files), closed and removed after it.
 */
export function serviceDbPerTest(): { readonly db: ServiceDb; readonly dir: string } {
  const current = {} as { db: ServiceDb; dir: string };
  let folder: ReturnType<typeof tempDir> | undefined;
  beforeEach(() => {
    folder = tempDir();
    current.dir = folder.path;
    current.db = openServiceDb(join(folder.path, 'svc'));
  });
  afterEach(() => {
    current.db.close();
    folder?.remove();
  });
  return current;
}

export function writeCsv(dir: string, name: string, rows: readonly (readonly string[])[]): string {
  const file = join(dir, name);
  const quote = (field: string) => (/[",\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field);
  writeFileSync(file, rows.map((row) => row.map(quote).join(',')).join('\n') + '\n');
  return file;
}

export const PEOPLE_HEADER = [
  'First Name',
  'Last Name',
  'Email',
  'Email 2',
  'Address',
  'City',
  'State',
  'Zip',
  'age',
  'gender',
  'household_income',
  'net_worth',
  'occupation',
  'rfm_avg_dollars',
  'rfm_last_order',
  'financial_segment',
  'interests.travel',
  'interests.pets',
] as const;

/**
 * The Doe household at 12 Main Street, Springfield IL 62704-1234: Jane (two addresses), John and Jim.
 * Ann Roe lives alone with only a 5-digit ZIP. Bob Poe has an address but no email.
 */
export const PEOPLE_ROWS: readonly (readonly string[])[] = [
  PEOPLE_HEADER,
  [
    'Jane',
    'Doe',
    'jane.doe@example.com',
    'jd@example.org',
    '12 Main Street',
    'Springfield',
    'IL',
    '62704-1234',
    '35-44',
    'Female',
    '50k-75k',
    '100k-250k',
    'Teacher',
    '120',
    '2024-05-01',
    'Active Savers',
    'yes',
    '',
  ],
  [
    'John',
    'Doe',
    'john.doe@example.com',
    '',
    '12 Main St.',
    'Springfield',
    'IL',
    '62704-1234',
    '35-44',
    'Male',
    '50k-75k',
    '',
    '',
    '',
    '',
    '',
    '',
    'true',
  ],
  [
    'Jim',
    'Doe',
    'jim.doe@example.net',
    '',
    '12 MAIN ST',
    'Springfield',
    'IL',
    '62704',
    '18-20',
    'Male',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
  ],
  [
    'Ann',
    'Roe',
    'ann.roe@example.com',
    '',
    '7 Elm Avenue',
    'Salem',
    'MA',
    '01970',
    '65+',
    'Female',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
  ],
  [
    'Bob',
    'Poe',
    '',
    '',
    '3 Oak Lane Apt 4',
    'Portland',
    'OR',
    '97201-0001',
    '45-54',
    'Male',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
  ],
];

/** Jane is seen for years, opens and clicks recently, at three sources; John only opened 400 days ago. */
export function activityRows(): string[][] {
  return [
    ['email', 'source', 'event', 'occurred_at'],
    ['jane.doe@example.com', 'crm', 'seen', daysAgo(800)],
    ['jane.doe@example.com', 'newsletter', 'open', daysAgo(20)],
    ['jane.doe@example.com', 'newsletter', 'click', daysAgo(10)],
    ['jane.doe@example.com', 'shop', 'open', daysAgo(5)],
    ['john.doe@example.com', 'newsletter', 'open', daysAgo(400)],
    // An address no person has: activity metrics still know it.
    ['lurker@example.com', 'newsletter', 'seen', daysAgo(3)],
  ];
}

/** Writes and imports the fixture into `db`. */
export async function importFixture(db: ServiceDb, dir: string): Promise<void> {
  const people = await importPeopleFile(db, writeCsv(dir, 'people.csv', PEOPLE_ROWS));
  if (people.rejected > 0) throw new Error(`fixture rejected: ${JSON.stringify(people.errors)}`);
  const activity = await importActivityFile(db, writeCsv(dir, 'activity.csv', activityRows()));
  if (activity.rejected > 0) throw new Error(`fixture rejected: ${JSON.stringify(activity.errors)}`);
}

/** GET a path of the service; the body as JSON when it is JSON. */
export async function getJson(
  base: string,
  path: string,
): Promise<{ status: number; body: unknown; type: string }> {
  const response = await fetch(`${base}${path}`);
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  return { status: response.status, type, body: type.includes('json') ? JSON.parse(text) : text };
}

export async function postJson(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, body: type.includes('json') ? JSON.parse(text) : text };
}

export const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

/** A key with intelligence, eam and postal append: every field, as most E6 keys have. */
export const INTELLIGENCE_KEY: KeyAccess = {
  services: new Set(['intelligence', 'eam', 'postal_append']),
  fields: null,
  alternateMax: 1,
  bulkLimit: 5000,
};

/** An E6 task (bulkWork.ts) answering `records` for `key`, as of now. */
export function intelligenceTask(
  records: unknown[],
  key: KeyAccess = INTELLIGENCE_KEY,
): Extract<BulkTask, { kind: 'intelligence' }> {
  const policy = intelligencePolicyFor(key);
  if (!policy.ok) throw new Error(policy.message);
  return {
    kind: 'intelligence',
    body: JSON.stringify(records),
    limit: 5000,
    policy: policy.policy,
    key,
    isActivityMetrics: false,
    nowS: nowS(),
  };
}
