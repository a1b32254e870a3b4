// List services through the desktop core, against a real service with demo reference data: which services a
// connection allows, a job with email intelligence limited to some fields, a report-only job that awaits
// purchase across a restart and is bought with a field selection, and email append on a list of names and
// postal addresses without an email column (docs/list-services.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Papa from 'papaparse';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LIST_SERVICE_KEYS } from '../../../shared/api/list.js';
import type { AllowedServices, JobDetail } from '../../../shared/desktop/contract.js';
import { createDesktopCore, PROVIDER_KEY, type DesktopCore } from '../../../electron/core/desktop.js';
import { setSetting } from '../../../electron/core/history/db.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { demoPeople, loadDemo } from '../../../service/identity/demo.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

const VALIDATION_COLUMNS = [
  'Validation Status',
  'Validation Code',
  'Domain Type',
  'Role Account',
  'Duplicate',
  'Valid Email',
];

function coreOn(home: string, service: TestService, key: string): DesktopCore {
  return createDesktopCore({
    home,
    secrets: new FileSecretStore(home),
    mode: 'browser',
    hasNativeDialogs: false,
    version: 'test',
    startEmbedded: () =>
      Promise.resolve({ baseUrl: service.url, apiKey: key, close: () => Promise.resolve() }),
    localPollIntervalMs: 50,
  });
}

async function value<T>(reply: Promise<{ ok: boolean; value?: unknown; error?: { message: string } }>) {
  const answer = await reply;
  if (!answer.ok) throw new Error(answer.error?.message);
  return answer.value as T;
}

/** The job once it stops moving: completed, failed, cancelled or awaiting purchase. */
async function settled(core: DesktopCore, jobId: number): Promise<JobDetail> {
  for (;;) {
    const job = await value<JobDetail>(core.handle('jobs:get', { jobId }));
    if (!['queued', 'uploading', 'processing', 'downloading'].includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function start(core: DesktopCore, path: string, roles: string[], options: Record<string, unknown>) {
  const staged = await value<{ fileId: string }>(core.handle('files:add-path', { path }));
  const started = await value<{ jobIds: number[] }>(
    core.handle('jobs:start', {
      fileId: staged.fileId,
      mapping: { delimiter: ',', header: true, roles },
      options: { reportOnly: false, split: false, ...options },
    }),
  );
  return started.jobIds[0];
}

/** The results file of a job, as rows (header first). */
async function resultRows(core: DesktopCore, jobId: number): Promise<string[][]> {
  const info = await value<{ id: number }>(core.handle('jobs:export', { jobId, kind: 'all' }));
  const text = readFileSync(core.exportFile(info.id)!.path, 'utf8');
  return Papa.parse<string[]>(text, { skipEmptyLines: true }).data;
}

describe('list services in the desktop core', () => {
  let service: TestService;
  let key: string;
  let home: ReturnType<typeof tempDir>;
  /** Known people: email, first, last, street, zip. */
  const people: string[][] = [];

  beforeAll(async () => {
    service = await startTestService();
    key = service.key({
      services: ['validation', 'intelligence', 'email_append', 'alternate_email', 'postal_append'],
      rateLimit: 0,
    });
    await loadDemo(service.db, { people: 40, seed: 3 });
    for (const { person } of demoPeople({ people: 40, seed: 3 }))
      if (person[1]) people.push([person[1], person[4], person[5], person[6], person[9]]);
  });
  afterAll(() => service.close());
  beforeEach(() => (home = tempDir()));
  afterEach(() => home.remove());

  it('offers every service on the embedded service, the key’s on ours, the user’s choice elsewhere', async () => {
    const core = coreOn(home.path, service, key);
    const fake: Server = createServer((_request, response) => {
      response.statusCode = 404;
      response.end('Not found');
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      expect(await value<AllowedServices>(core.handle('connection:get-services', {}))).toMatchObject({
        services: [...LIST_SERVICE_KEYS],
        source: 'embedded',
      });
      // Our service as "another service": GET /v5/key says what the key has.
      const limited = service.key({ services: ['validation', 'intelligence'], fields: ['age', 'gender'] });
      new FileSecretStore(home.path).set(PROVIDER_KEY, limited);
      setSetting(core.db, 'connection', { kind: 'provider', baseUrl: service.url });
      const byKey = await value<AllowedServices>(core.handle('connection:get-services', {}));
      expect(byKey).toMatchObject({
        services: ['email_validation', 'email_intelligence'],
        source: 'key',
        fields: ['age', 'gender'],
      });
      // A service without GET /v5/key (the provider answers 404): what the user ticked, validation at first.
      setSetting(core.db, 'connection', {
        kind: 'provider',
        baseUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`,
      });
      expect(await value<AllowedServices>(core.handle('connection:get-services', {}))).toMatchObject({
        services: ['email_validation'],
        source: 'chosen',
      });
      const ticked = await value<AllowedServices>(
        core.handle('connection:set-services', { services: ['email_append', 'email_validation'] }),
      );
      expect(ticked).toMatchObject({ services: ['email_validation', 'email_append'], source: 'chosen' });
      // A service not allowed is refused before anything is sent.
      const list = join(home.path, 'list.csv');
      writeFileSync(list, 'email\na@example.com\n');
      const staged = await value<{ fileId: string }>(core.handle('files:add-path', { path: list }));
      expect(
        await core.handle('jobs:start', {
          fileId: staged.fileId,
          mapping: { delimiter: ',', header: true, roles: ['email'] },
          options: { reportOnly: false, split: false, services: ['email_intelligence'] },
        }),
      ).toMatchObject({ ok: false, error: { code: 'not-allowed' } });
    } finally {
      fake.close();
      await core.close();
    }
  });

  it('runs email intelligence limited to some fields: match report and those columns only', async () => {
    const list = join(home.path, 'known.csv');
    writeFileSync(
      list,
      'Email,Notes\n' + people.map(([email]) => `${email},x`).join('\n') + '\nnobody@example.com,y\n',
    );
    const core = coreOn(home.path, service, key);
    try {
      const jobId = await start(core, list, ['email', 'ignore'], {
        services: ['email_validation', 'email_intelligence'],
        fields: ['age', 'gender'],
      });
      const job = await settled(core, jobId);
      expect(job.status).toBe('completed');
      expect(job.options.services).toEqual(['email_validation', 'email_intelligence']);
      const matched = job.matchReports.email_intelligence ?? {};
      expect(Object.keys(matched).sort()).toEqual(expect.arrayContaining(['age']));
      expect(Object.keys(matched).every((field) => field === 'age' || field === 'gender')).toBe(true);
      expect(matched.age).toBeGreaterThan(0);
      expect(matched.age).toBeLessThanOrEqual(people.length);
      const [header] = await resultRows(core, jobId);
      expect(header).toEqual(['Email', 'Notes', ...VALIDATION_COLUMNS, 'age', 'gender']);
    } finally {
      await core.close();
    }
  });

  it('keeps a report-only job awaiting purchase across a restart, then buys the fields chosen', async () => {
    const list = join(home.path, 'report.csv');
    writeFileSync(
      list,
      'email,first name,last name,street,zip\n' +
        people.map((person) => person.join(',')).join('\n') +
        '\nnobody@example.com,No,Body,1 Nowhere Rd,99999\n',
    );
    const first = coreOn(home.path, service, key);
    let jobId: number;
    try {
      jobId = await start(first, list, ['email', 'first_name', 'last_name', 'street', 'zip'], {
        services: ['email_validation', 'email_intelligence', 'email_append'],
        reportOnly: true,
      });
      const waiting = await settled(first, jobId);
      expect(waiting.status).toBe('awaiting-purchase');
      expect(waiting.hasResults).toBe(false);
      expect(waiting.matchReports.email_intelligence?.age).toBeGreaterThan(0);
      expect(waiting.matchReports.email_append?.individual).toBeGreaterThan(0);
    } finally {
      await first.close();
    }
    const second = coreOn(home.path, service, key);
    try {
      const kept = await value<JobDetail>(second.handle('jobs:get', { jobId }));
      expect(kept.status).toBe('awaiting-purchase');
      expect(kept.matchReports.email_intelligence?.age).toBeGreaterThan(0);
      // A field the list has no match for: the service refuses, the job still waits.
      expect(
        await second.handle('jobs:purchase', { jobId, fields: ['no_such_field'], matchType: 'H' }),
      ).toMatchObject({ ok: false, error: { code: 'purchase-failed' } });
      expect((await value<JobDetail>(second.handle('jobs:get', { jobId }))).status).toBe('awaiting-purchase');
      const bought = await value<JobDetail>(
        second.handle('jobs:purchase', { jobId, fields: ['age', 'email_append'], matchType: 'I' }),
      );
      expect(bought.status).toBe('processing');
      const done = await settled(second, jobId);
      expect(done.status).toBe('completed');
      expect(done.purchase).toMatchObject({ fields: ['age', 'email_append'], matchType: 'I' });
      expect(done.matchReports.email_intelligence?.age).toBeGreaterThan(0);
      const [header, ...rows] = await resultRows(second, jobId);
      expect(header).toEqual([
        'email',
        'first name',
        'last name',
        'street',
        'zip',
        ...VALIDATION_COLUMNS,
        'age',
        'Appended Email',
        'Email Match Type',
      ]);
      // Individual matches only were bought.
      expect(new Set(rows.map((row) => row.at(-1)))).not.toContain('Household');
      expect(rows.filter((row) => row.at(-1) === 'Individual').length).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  });

  it('appends emails to a list of names and addresses without an email column', async () => {
    const list = join(home.path, 'postal.csv');
    // "Nachname" and "PLZ" are no synonyms: the mapping names them in the file sent.
    writeFileSync(
      list,
      'Vorname,Nachname,Street,PLZ,City\n' +
        people
          .map(([, firstName, last, street, zip]) => `${firstName},${last},${street},${zip},`)
          .join('\n') +
        '\n',
    );
    const core = coreOn(home.path, service, key);
    try {
      const jobId = await start(core, list, ['first_name', 'last_name', 'street', 'zip', 'ignore'], {
        services: ['email_append'],
      });
      const job = await settled(core, jobId);
      expect(job.message).toBeNull();
      expect(job.status).toBe('completed');
      expect(job.duplicates).toBeNull();
      const found =
        (job.matchReports.email_append?.individual ?? 0) + (job.matchReports.email_append?.household ?? 0);
      expect(found).toBeGreaterThan(0);
      const [header, ...rows] = await resultRows(core, jobId);
      // The file sent named the columns for the service; the user gets their own names back.
      expect(header).toEqual([
        'Vorname',
        'Nachname',
        'Street',
        'PLZ',
        'City',
        'Appended Email',
        'Email Match Type',
      ]);
      expect(header).not.toContain('Validation Status');
      expect(rows.filter((row) => row.at(-2) !== '').length).toBe(found);
      const preview = await value<{ columns: string[]; rows: string[][] }>(
        core.handle('jobs:preview', { jobId }),
      );
      expect(preview.rows).toHaveLength(people.length);
      expect(preview.columns.slice(0, 2)).toEqual(['Vorname', 'Nachname']);
      expect(await core.handle('jobs:export', { jobId, kind: 'clean' })).toMatchObject({ ok: false });
      // Validation needs the email column: refused before anything is sent.
      expect(
        await core.handle('jobs:start', {
          fileId: (await value<{ fileId: string }>(core.handle('files:add-path', { path: list }))).fileId,
          mapping: {
            delimiter: ',',
            header: true,
            roles: ['first_name', 'last_name', 'street', 'zip', 'ignore'],
          },
          options: { reportOnly: false, split: false, services: ['email_validation', 'email_append'] },
        }),
      ).toMatchObject({
        ok: false,
        error: { message: expect.stringContaining('Validation needs') as string },
      });
    } finally {
      await core.close();
    }
  });
});
