// The desktop core: the one implementation of the desktop contract (shared/desktop/contract.ts), free of
// Electron. Electron main wires it to IPC, browser mode to loopback HTTP; tests call it directly. Inputs are
// parsed with the contract's schemas here and nowhere else; every reply is a value.
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createClient, redact, type Client } from '../../shared/api/client.js';
import { verificationOf } from '../../shared/api/verification.js';
import { isRecordError } from '../../shared/api/errors.js';
import type { IntelligenceResponse } from '../../shared/api/intelligence.js';
import { LIST_SERVICE_KEYS, listFileExtension, type ListServiceKey } from '../../shared/api/list.js';
import { LIST_SERVICE_TITLES } from '../../shared/api/listServices.js';
import {
  CHANNELS,
  INTELLIGENCE_CHOICES,
  isChannel,
  isExportedStatus,
  type AllowedServices,
  type AppEvent,
  type AppInfo,
  type Channel,
  type ChannelOutput,
  type ChannelParsedInput,
  type ConnectionInfo,
  type ConnectionInput,
  type EventPayload,
  type JobDetail,
  type PersonAnswer,
  type Reply,
  type StagedFile,
} from '../../shared/desktop/contract.js';
import type { EmbeddedService } from './embedded.js';
import { serviceDataDir } from './home.js';
import { inspectFile } from './files/inspect.js';
import { FileProblem, formatOf } from './files/source.js';
import {
  deleteJob,
  getExport,
  getJob,
  getPreset,
  getSetting,
  HISTORY_DB_FILE,
  insertExport,
  insertJob,
  jobExports,
  jobTimeline,
  listJobs,
  openHistoryDb,
  recentFiles,
  savePreset,
  setJobFileFacts,
  setSetting,
  touchRecentFile,
  type HistoryDb,
  type JobRecord,
} from './history/db.js';
import { JobManager, PurchaseFailure } from './jobManager.js';
import { ACTIVE_JOB_STATUSES } from '../../shared/desktop/constants.js';
import { createChecksSetting, ChecksSettingProblem, PROXY_PASSWORD_SECRET } from './checksSetting.js';
import type { ChecksDecision } from './checks.js';
import { jobChecksOf, setJobChecks } from './history/checks.js';
import { jobsWithStatus } from './history/db.js';
import { finishListWait, ListOnlineError } from './listOnline.js';
import { previewRows, writeExport } from './results.js';
import { maskSecret, type SecretStore } from './secrets.js';

/** The secret name of the provider's API key. */
export const PROVIDER_KEY = 'provider-api-key';
/** A harmless address for a connection test (E1 on the reserved example domain). */
const TEST_ADDRESS = 'postmaster@example.com';
/** The setting holding the list services the user says their provider key has (when it cannot say). */
const CHOSEN_SERVICES_SETTING = 'providerServices';

export class ReplyFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface DesktopCoreOptions {
  /** The app home: history.sqlite, results/, staging/, service/. */
  readonly home: string;
  readonly secrets: SecretStore;
  readonly mode: AppInfo['mode'];
  readonly hasNativeDialogs: boolean;
  readonly version: string;
  /** better-sqlite3's addon for this runtime (Electron). */
  readonly nativeBinding?: string;
  /** Starts the embedded service (default: the real one in `<home>/service`). Tests may point elsewhere. */
  readonly startEmbedded?: () => Promise<Pick<EmbeddedService, 'baseUrl' | 'apiKey' | 'close'>>;
  /** How often the embedded service is polled (it is on loopback; the provider always gets 5 s). */
  readonly localPollIntervalMs?: number;
  /** Don't take up unfinished jobs at start (tests that look at them first). */
  readonly isResumeDeferred?: boolean;
}

type Listener = <E extends AppEvent>(event: E, payload: EventPayload<E>) => void;

type Handlers = {
  [C in Channel]: (input: ChannelParsedInput<C>) => Promise<ChannelOutput<C>> | ChannelOutput<C>;
};

interface StoredConnection {
  readonly kind: 'embedded' | 'provider';
  readonly baseUrl?: string;
}

export interface DesktopCore {
  /** Runs one channel on untrusted input; always answers a reply. */
  handle(channel: string, input: unknown): Promise<Reply<unknown>>;
  on(listener: Listener): () => void;
  /** A file the user picked: staged by reference (Electron, recent files) … */
  addPath(path: string): StagedFile;
  /** … or copied into the staging folder first (browser mode uploads). */
  stagingPathFor(name: string): { fileId: string; path: string };
  registerStaged(fileId: string, path: string, name: string): StagedFile;
  /** The file of an export, for the shell to save or the web host to send. */
  exportFile(exportId: number): { path: string; fileName: string } | undefined;
  /** Takes up jobs left unfinished by the last run (when deferred at creation). */
  resumeJobs(): number[];
  readonly db: HistoryDb;
  close(): Promise<void>;
}

export function createDesktopCore(options: DesktopCoreOptions): DesktopCore {
  const home = options.home;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const resultsDir = join(home, 'results');
  const stagingDir = join(home, 'staging');
  // Staged uploads of an earlier run are no one's: jobs keep their own copies.
  rmSync(stagingDir, { recursive: true, force: true });
  const db = openHistoryDb(
    join(home, HISTORY_DB_FILE),
    options.nativeBinding ? { nativeBinding: options.nativeBinding } : {},
  );
  const listeners = new Set<Listener>();
  const emit: Listener = (event, payload) => {
    for (const listener of listeners) listener(event, payload);
  };
  const staged = new Map<string, { path: string; name: string; size: number }>();

  // ---------------------------------------------------------------------------------------------------
  // The embedded service: started when first needed, so the app is usable at once and offline.

  let embedded: Pick<EmbeddedService, 'baseUrl' | 'apiKey' | 'close'> | undefined;
  let embeddedStarting: Promise<Pick<EmbeddedService, 'baseUrl' | 'apiKey' | 'close'>> | undefined;
  let embeddedState: ConnectionInfo['embedded'] = { state: 'stopped' };
  /** The checks setting (issue #11); what the running service checks, and a restart waiting for local jobs. */
  const checks = createChecksSetting({ db, secrets: options.secrets });
  let runningChecks: Pick<ChecksDecision, 'level' | 'reason'> | undefined;
  let isRestartPending = false;
  let embeddedClosing: Promise<unknown> | undefined;
  // Loaded when first needed: the service's modules take a good part of a second to load, and the window
  // should be usable before that.
  const startEmbedded =
    options.startEmbedded ??
    (async () => {
      // The chosen checks level; Automatic asks the network first (a few seconds at most).
      const service = await (
        await import('./embedded.js')
      ).startEmbeddedService(serviceDataDir(home), {
        checks: checks.stored().choice,
        network: checks.network(),
        ...(options.nativeBinding ? { nativeBinding: options.nativeBinding } : {}),
      });
      runningChecks = { level: service.checks.level, reason: service.checks.reason };
      return service;
    });
  /** The pre-check and upload preparation load the verification engine: also on first use. */
  const preparation = () => import('./files/prepare.js');

  function ensureEmbedded(): Promise<Pick<EmbeddedService, 'baseUrl' | 'apiKey' | 'close'>> {
    if (isRestartPending && !hasLocalJobsRunning()) void restartEmbedded();
    if (embedded) return Promise.resolve(embedded);
    if (!embeddedStarting) {
      embeddedState = { state: 'starting' };
      emit('connection:changed', connectionInfo());
      const closing = embeddedClosing ?? Promise.resolve();
      embeddedStarting = closing.then(startEmbedded).then(
        (service) => {
          embedded = service;
          embeddedState = { state: 'running' };
          emit('connection:changed', connectionInfo());
          return service;
        },
        (error: unknown) => {
          embeddedStarting = undefined;
          embeddedState = {
            state: 'failed',
            message: `The local service did not start: ${(error as Error).message}`,
          };
          emit('connection:changed', connectionInfo());
          throw new ReplyFailure('connection-failed', embeddedState.message!);
        },
      );
    }
    return embeddedStarting;
  }

  function hasLocalJobsRunning(): boolean {
    return jobsWithStatus(db, ACTIVE_JOB_STATUSES).some(
      (job) => job.connectionKind === 'embedded' && jobs.isRunning(job.id),
    );
  }

  /** Stops the embedded service so that the next use starts it with the current checks setting. */
  function restartEmbedded(): void {
    isRestartPending = false;
    const starting = embeddedStarting;
    embedded = undefined;
    embeddedStarting = undefined;
    runningChecks = undefined;
    if (!starting) return;
    embeddedState = { state: 'stopped' };
    embeddedClosing = starting
      .then((service) => service.close())
      .catch(() => undefined)
      .finally(() => (embeddedClosing = undefined));
    emit('connection:changed', connectionInfo());
  }

  /** What a job runs with on the current connection. */
  async function currentJobChecks(kind: 'embedded' | 'provider') {
    if (kind === 'provider')
      return { level: 'provider' as const, reason: 'The provider’s service checks as your key allows.' };
    await ensureEmbedded();
    return (
      runningChecks ?? {
        level: 'offline' as const,
        reason: 'Offline: syntax, typos, role accounts and domain types.',
      }
    );
  }

  function storedConnection(): StoredConnection {
    return getSetting<StoredConnection>(db, 'connection') ?? { kind: 'embedded' };
  }

  function connectionInfo(): ConnectionInfo {
    const stored = storedConnection();
    const key = options.secrets.has(PROVIDER_KEY) ? options.secrets.get(PROVIDER_KEY) : undefined;
    return {
      kind: stored.kind,
      embedded: embeddedState,
      provider:
        stored.baseUrl !== undefined
          ? { baseUrl: stored.baseUrl, keyMask: key ? maskSecret(key) : null }
          : null,
      vault: {
        storage: options.secrets.storage,
        isAvailable: options.secrets.availability.isAvailable,
        ...(options.secrets.availability.message ? { message: options.secrets.availability.message } : {}),
      },
    };
  }

  async function clientFor(
    kind: 'embedded' | 'provider',
    baseUrl?: string | null,
    apiKey?: string,
  ): Promise<Client> {
    if (kind === 'embedded') {
      const service = await ensureEmbedded();
      return createClient({
        baseUrl: service.baseUrl,
        apiKey: service.apiKey,
        userAgent: 'Mailsieve desktop',
      });
    }
    const key = apiKey ?? options.secrets.get(PROVIDER_KEY);
    if (!baseUrl)
      throw new ReplyFailure(
        'not-configured',
        'No provider address is set: enter it on the Connection screen.',
      );
    if (!key)
      throw new ReplyFailure(
        'not-configured',
        'No API key is stored for the provider: enter it on the Connection screen.',
      );
    return createClient({ baseUrl, apiKey: key, userAgent: 'Mailsieve desktop' });
  }

  async function currentClient(): Promise<{
    client: Client;
    kind: 'embedded' | 'provider';
    baseUrl: string | null;
  }> {
    const stored = storedConnection();
    const client = await clientFor(stored.kind, stored.baseUrl);
    return {
      client,
      kind: stored.kind,
      baseUrl: stored.kind === 'provider' ? (stored.baseUrl ?? null) : null,
    };
  }

  function chosenServices(): ListServiceKey[] {
    const stored = getSetting<string[]>(db, CHOSEN_SERVICES_SETTING) ?? ['email_validation'];
    return LIST_SERVICE_KEYS.filter((key) => stored.includes(key));
  }

  /**
   * The list services new jobs may run: every one on the embedded service; for another service, what its key
   * says (`GET /v5/key`, a Mailsieve extension), else what the user ticked (the provider answers 404).
   */
  async function allowedServices(): Promise<AllowedServices> {
    const stored = storedConnection();
    const chosen = chosenServices();
    if (stored.kind === 'embedded')
      return { services: [...LIST_SERVICE_KEYS], source: 'embedded', fields: null, chosen };
    const fallback: AllowedServices = { services: chosen, source: 'chosen', fields: null, chosen };
    let client: Client;
    try {
      client = await clientFor('provider', stored.baseUrl);
    } catch {
      return fallback; // no key stored yet: the user's choice stands
    }
    const info = await client.keyInfo({ timeoutMs: 5000, retries: 0 });
    if (!info.ok) return fallback;
    const keyFields = new Set(info.value.fields);
    const sections = { eam: 'eam', postal_address: 'postal_append' } as const;
    return {
      services: LIST_SERVICE_KEYS.filter((key) => info.value.list_services.includes(key)),
      source: 'key',
      fields: INTELLIGENCE_CHOICES.filter((field) =>
        field === 'eam' || field === 'postal_address'
          ? info.value.services.includes(sections[field])
          : keyFields.has(field),
      ),
      chosen,
    };
  }

  async function testConnection(input: ConnectionInput) {
    const started = Date.now();
    const client =
      input.kind === 'embedded'
        ? await clientFor('embedded')
        : await clientFor('provider', input.baseUrl, input.apiKey);
    const result = await client.verify(TEST_ADDRESS, { timeout: 5, retries: 0, timeoutMs: 15_000 });
    if (!result.ok) {
      const error = result.error;
      const why =
        error.kind === 'http' && error.status === 401
          ? 'the service refused the API key (401)'
          : error.kind === 'http'
            ? `the service answered HTTP ${error.status}: ${error.message}`
            : error.message;
      throw new ReplyFailure('connection-failed', `The test call failed: ${why}. Nothing was saved.`);
    }
    return {
      mode: 'safe_to_send' in result.value ? ('safe_to_send' as const) : ('email_validation' as const),
      latencyMs: Date.now() - started,
      baseUrl: client.baseUrl,
    };
  }

  // ---------------------------------------------------------------------------------------------------
  // Jobs

  const jobs = new JobManager({
    db,
    resultsDir,
    connect: async (job) => {
      const client = await clientFor(job.connectionKind, job.connectionUrl);
      return {
        client,
        pollIntervalMs: job.connectionKind === 'embedded' ? (options.localPollIntervalMs ?? 250) : 5000,
      };
    },
    onProgress: (progress) => emit('job:progress', progress),
    onChange: (jobId) => emit('jobs:changed', { jobIds: [jobId] }),
  });

  function jobOrFail(jobId: number): JobRecord {
    const job = getJob(db, jobId);
    if (!job)
      throw new ReplyFailure('not-found', `Job ${jobId} is not in the history (it may have been deleted).`);
    return job;
  }

  function stagedOrFail(fileId: string) {
    const file = staged.get(fileId);
    if (!file) throw new ReplyFailure('not-found', 'That file is no longer open: add it again.');
    if (!existsSync(file.path))
      throw new ReplyFailure('file-unreadable', `“${file.name}” is no longer where it was: add it again.`);
    return file;
  }

  function detail(job: JobRecord): JobDetail {
    const reporting =
      job.lastDocument && typeof job.lastDocument === 'object'
        ? ((job.lastDocument as { services?: { email_validation?: { reporting?: unknown } } }).services
            ?.email_validation?.reporting ?? job.reporting)
        : job.reporting;
    return {
      id: job.id,
      createdAt: job.createdAt,
      updatedAt: job.updatedAt,
      status: job.status,
      message: job.message,
      file: {
        name: job.fileName,
        size: job.fileSize,
        sha256: job.fileSha256,
        format: job.fileFormat,
        encoding: job.fileEncoding,
      },
      mapping: job.mapping,
      options: job.options,
      connection: { kind: job.connectionKind, baseUrl: job.connectionUrl },
      part:
        job.partIndex !== null && job.partCount !== null
          ? { index: job.partIndex, count: job.partCount }
          : null,
      listId: job.listId,
      rows: job.rows,
      timeline: jobTimeline(db, job.id),
      lastDocument: job.lastDocument,
      reporting: reporting ?? null,
      matchReports: job.matchReports ?? {},
      purchase: job.purchase,
      hasResults: job.resultsPath !== null && existsSync(job.resultsPath),
      duplicates: job.duplicates,
      resultsName: job.resultsName,
      exports: jobExports(db, job.id).map(({ path: _path, ...info }) => info),
      progress: jobs.progress(job.id) ?? null,
      ...jobChecksDetail(job),
    };
  }

  /** The level a job ran with: recorded since issue #11; older local jobs ran offline. */
  function jobChecksDetail(job: JobRecord): Pick<JobDetail, 'checks' | 'checksRun'> {
    const recorded = jobChecksOf(db, job.id);
    const level = recorded?.level ?? (job.connectionKind === 'embedded' ? 'offline' : 'provider');
    return {
      checks: level === 'offline' ? 'offline' : level === 'provider' ? 'provider' : 'online',
      checksRun: recorded,
    };
  }

  function resultsOf(job: JobRecord): { path: string; name: string } {
    if (!job.resultsPath || !job.resultsName || !existsSync(job.resultsPath))
      throw new ReplyFailure(
        'no-results',
        job.status === 'completed'
          ? 'The results file of this job is missing from disk.'
          : 'This job has no results yet.',
      );
    return { path: job.resultsPath, name: job.resultsName };
  }

  const handlers: Handlers = {
    'app:get-info': () => ({
      mode: options.mode,
      version: options.version,
      platform: process.platform,
      hasNativeDialogs: options.hasNativeDialogs,
      home,
    }),
    'connection:get': () => connectionInfo(),
    'connection:test': (input) => testConnection(input),
    'connection:set': async (input) => {
      if (input.kind === 'provider') {
        if (input.apiKey !== undefined && !options.secrets.availability.isAvailable)
          throw new ReplyFailure(
            'secrets-unavailable',
            options.secrets.availability.message ?? 'Keys cannot be stored here.',
          );
        await testConnection(input);
        if (input.apiKey !== undefined) options.secrets.set(PROVIDER_KEY, input.apiKey);
        setSetting(db, 'connection', { kind: 'provider', baseUrl: input.baseUrl });
      } else {
        const stored = storedConnection();
        setSetting(db, 'connection', {
          kind: 'embedded',
          ...(stored.baseUrl ? { baseUrl: stored.baseUrl } : {}),
        });
      }
      const info = connectionInfo();
      emit('connection:changed', info);
      return info;
    },
    'keys:clear': () => {
      options.secrets.delete(PROVIDER_KEY);
      const stored = storedConnection();
      if (stored.kind === 'provider')
        setSetting(db, 'connection', { kind: 'embedded', baseUrl: stored.baseUrl });
      const info = connectionInfo();
      emit('connection:changed', info);
      return info;
    },
    'connection:get-services': () => allowedServices(),
    'connection:set-services': async (input) => {
      setSetting(
        db,
        CHOSEN_SERVICES_SETTING,
        LIST_SERVICE_KEYS.filter((key) => input.services.includes(key)),
      );
      return allowedServices();
    },
    'checks:get': () => checks.info(runningChecks ?? null, isRestartPending),
    'checks:set': (input) => {
      try {
        checks.save(input);
      } catch (error) {
        if (error instanceof ChecksSettingProblem) throw new ReplyFailure(error.code, error.message);
        throw error;
      }
      // The service takes the new level when it starts again: now, or once the local jobs running finish.
      if (hasLocalJobsRunning()) isRestartPending = true;
      else restartEmbedded();
      return checks.info(runningChecks ?? null, isRestartPending);
    },
    'checks:preflight': async () => {
      await checks.preflight();
      return checks.info(runningChecks ?? null, isRestartPending);
    },
    'files:add-path': (input) => core.addPath(input.path),
    'files:list-recent': () => recentFiles(db),
    'files:inspect': async (input) => {
      const file = stagedOrFail(input.fileId);
      return inspectFile({
        fileId: input.fileId,
        ...file,
        ...(input.delimiter !== undefined ? { delimiter: input.delimiter } : {}),
        ...(input.header !== undefined ? { header: input.header } : {}),
        presetFor: (signature) => getPreset(db, signature),
      });
    },
    'files:precheck': async (input) => {
      const file = stagedOrFail(input.fileId);
      if (input.mapping.roles.length === 0) throw new ReplyFailure('invalid-input', 'No columns.');
      return (await preparation()).precheck(file, input.mapping, input.split);
    },
    'jobs:start': async (input) => {
      const file = stagedOrFail(input.fileId);
      const format = formatOf(file.name);
      if (!format)
        throw new ReplyFailure('invalid-input', `“${file.name}” is not a .csv, .txt or .zip file.`);
      const stored = storedConnection();
      if (stored.kind === 'provider') await clientFor('provider', stored.baseUrl); // fails early without a key
      const allowed = await allowedServices();
      const refused = input.options.services.filter((service) => !allowed.services.includes(service));
      if (refused.length > 0)
        throw new ReplyFailure(
          'not-allowed',
          `${refused.map((service) => LIST_SERVICE_TITLES[service]).join(', ')} ${refused.length === 1 ? 'is' : 'are'} not available on this connection` +
            (allowed.source === 'chosen' ? ': tick it on the Connection screen if your key has it.' : '.'),
        );
      const inspection = await inspectFile({
        fileId: input.fileId,
        ...file,
        delimiter: input.mapping.delimiter,
        header: input.mapping.header,
      });
      if (inspection.columns.length !== input.mapping.roles.length)
        throw new ReplyFailure(
          'invalid-input',
          'The mapping does not match the file’s columns: inspect the file again.',
        );
      savePreset(db, inspection.signature, {
        roles: input.mapping.roles,
        delimiter: input.mapping.delimiter,
        header: input.mapping.header,
      });
      const prepareDir = join(stagingDir, `prepared-${randomUUID()}`);
      const { headerFor, prepareUpload, sha256File } = await preparation();
      // The file's own names, when the file sent renames them: previews and exports give them back.
      const headerNames = inspection.columns.map((column) => column.name);
      const sent = headerFor(input.mapping, headerNames, input.options.services).cells;
      const originalHeader =
        input.mapping.header && sent.some((cell, i) => cell !== headerNames[i]) ? headerNames : undefined;
      const parts = await prepareUpload(file, input.mapping, {
        split: input.options.split,
        dir: prepareDir,
        headerNames,
        services: input.options.services,
      });
      const sha256 = await sha256File(file.path);
      const ranWith = await currentJobChecks(stored.kind);
      const jobIds: number[] = [];
      for (const [index, part] of parts.entries()) {
        const id = insertJob(db, {
          fileName: file.name,
          filePath: part.path,
          uploadName: part.name,
          uploadHeader: part.header,
          fileSize: file.size,
          fileSha256: sha256,
          fileFormat: format,
          fileEncoding: inspection.encoding,
          mapping: input.mapping,
          options: input.options,
          connectionKind: stored.kind,
          connectionUrl: stored.kind === 'provider' ? (stored.baseUrl ?? null) : null,
          ...(originalHeader ? { originalHeader } : {}),
          ...(parts.length > 1 ? { partIndex: index + 1, partCount: parts.length } : {}),
          ...(part.rows !== null
            ? { rows: part.rows }
            : inspection.isRowCountEstimate
              ? {}
              : { rows: inspection.rowCount }),
        });
        // The job keeps its own copy of what it uploads, so a restart can upload it again. A file picked by
        // path (Electron) is read where it is; staged and prepared copies move into the job's folder.
        const dir = join(resultsDir, String(id), 'input');
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const isOwnCopy = part.path.startsWith(stagingDir);
        if (isOwnCopy) {
          const target = join(dir, basename(part.path));
          try {
            linkSync(part.path, target);
          } catch {
            copyFileSync(part.path, target);
          }
          db.prepare('UPDATE jobs SET file_path = ? WHERE id = ?').run(target, id);
        }
        setJobFileFacts(db, id, { sha256, rows: part.rows });
        setJobChecks(db, id, ranWith);
        jobIds.push(id);
      }
      rmSync(prepareDir, { recursive: true, force: true });
      for (const id of jobIds) jobs.start(id);
      emit('jobs:changed', { jobIds });
      return { jobIds };
    },
    'jobs:list': (input) => listJobs(db, input),
    'jobs:get': (input) => detail(jobOrFail(input.jobId)),
    'jobs:cancel': async (input) => {
      jobOrFail(input.jobId);
      await jobs.cancel(input.jobId);
      return detail(jobOrFail(input.jobId));
    },
    'jobs:delete': async (input) => {
      const job = jobOrFail(input.jobId);
      if (jobs.isRunning(job.id)) await jobs.cancel(job.id);
      const deleted = deleteJob(db, job.id);
      rmSync(join(resultsDir, String(job.id)), { recursive: true, force: true });
      emit('jobs:changed', { jobIds: [job.id] });
      return { deleted };
    },
    'jobs:preview': async (input) => {
      const job = jobOrFail(input.jobId);
      const results = resultsOf(job);
      return previewRows(
        results.path,
        results.name,
        job.mapping.delimiter,
        input.status ?? null,
        input.limit,
        job.originalHeader,
      );
    },
    'jobs:export': async (input) => {
      const job = jobOrFail(input.jobId);
      const results = resultsOf(job);
      if (input.kind !== 'all' && !job.options.services.includes('email_validation'))
        throw new ReplyFailure(
          'invalid-input',
          'This job ran no validation, so its rows have no status: export all rows.',
        );
      const statuses = input.kind === 'custom' ? (input.statuses ?? []) : [];
      const dir = join(resultsDir, String(job.id), 'exports');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const stem = results.name.replace(/\.(csv|txt|zip)$/i, '');
      const textExtension = listFileExtension(job.uploadName) === '.txt' ? '.txt' : '.csv';
      const suffix = input.kind === 'custom' ? statuses.join('+') : input.kind;
      const fileName = `${stem}-${suffix}${results.name.toLowerCase().endsWith('.zip') ? textExtension : (/\.[^.]+$/.exec(results.name)?.[0] ?? '.csv')}`;
      const path = join(dir, `${Date.now()}-${fileName}`);
      const written = await writeExport(
        results.path,
        results.name,
        job.mapping.delimiter,
        input.kind === 'all' ? null : (status) => isExportedStatus(input.kind, status, statuses),
        path,
        job.originalHeader,
      );
      const record = insertExport(db, {
        jobId: job.id,
        kind: input.kind,
        statuses,
        path,
        fileName,
        rows: written.rows,
        bytes: written.bytes,
      });
      emit('jobs:changed', { jobIds: [job.id] });
      const { path: _path, ...info } = record;
      return info;
    },
    'jobs:purchase': async (input) => {
      const job = jobOrFail(input.jobId);
      if (job.status !== 'awaiting-purchase')
        throw new ReplyFailure('not-awaiting-purchase', 'This job is not waiting for a purchase.');
      try {
        await jobs.purchase(job.id, { fields: input.fields, matchType: input.matchType });
      } catch (error) {
        if (error instanceof PurchaseFailure) throw new ReplyFailure(error.code, error.message);
        throw error;
      }
      return detail(jobOrFail(job.id));
    },
    'jobs:finish-now': async (input) => {
      const job = jobOrFail(input.jobId);
      if (job.connectionKind !== 'embedded' || job.listId === null)
        throw new ReplyFailure(
          'invalid-input',
          'Only a job of the local service waiting for a retry can finish now.',
        );
      const service = await ensureEmbedded();
      try {
        await finishListWait(service.baseUrl, service.apiKey, job.listId);
      } catch (error) {
        if (error instanceof ListOnlineError) throw new ReplyFailure('connection-failed', error.message);
        throw error;
      }
      return detail(jobOrFail(job.id));
    },
    'verify:address': async (input) => {
      const { client, kind } = await currentClient();
      // Our own service explains its answer (DNS answers, the SMTP conversation); a provider's is not asked.
      const result =
        kind === 'embedded'
          ? await client.verifyExplained(input.email, { timeout: 10 })
          : await client.verify(input.email, { timeout: 10 });
      if (!result.ok)
        throw new ReplyFailure('connection-failed', `The service did not answer: ${result.error.message}`);
      const jobChecks = await currentJobChecks(kind);
      const answer = verificationOf(result.value);
      return {
        mode: 'safe_to_send' in result.value ? ('safe_to_send' as const) : ('email_validation' as const),
        address: answer.address,
        status: answer.status,
        statusCode: answer.status_code,
        domainType: answer.domain_type ?? null,
        isRoleAccount: answer.role_account === true,
        corrections: answer.email_corrections ?? [],
        engagementScore:
          'engagement_score' in answer && typeof answer.engagement_score === 'number'
            ? answer.engagement_score
            : null,
        connection: kind,
        checks:
          jobChecks.level === 'offline'
            ? ('offline' as const)
            : kind === 'embedded'
              ? ('online' as const)
              : ('provider' as const),
        checksRun: jobChecks,
        explain: (result.value as { explain?: string[] }).explain ?? [],
      };
    },
    'people:lookup': lookUpPerson,
  };

  async function lookUpPerson(input: ChannelParsedInput<'people:lookup'>): Promise<PersonAnswer> {
    const { client, kind } = await currentClient();
    const query =
      input.by === 'email'
        ? { email: input.email }
        : input.by === 'hash'
          ? input.hash.length === 32
            ? { md5_email: input.hash.toLowerCase() }
            : { sha1_email: input.hash.toLowerCase() }
          : {
              first: input.first,
              last: input.last,
              street: input.street,
              ...(input.city ? { city: input.city } : {}),
              ...(input.state ? { state: input.state } : {}),
              ...(input.zip ? { zip: input.zip } : {}),
            };
    const result = await client.intelligence(query, { timeoutMs: 20_000 });
    if (!result.ok) {
      const error = result.error;
      if (error.kind === 'http' && error.status === 401)
        throw new ReplyFailure(
          'key-refused',
          'The service refused the API key (401): set a valid key on the Connection screen.',
        );
      if (error.kind === 'http' && error.status === 403)
        throw new ReplyFailure(
          'not-enabled',
          `This API key may not look people up (403)${error.recordError ? `: ${error.recordError.error_msg}` : '.'}`,
        );
      if (error.recordError) throw new ReplyFailure('record-error', error.recordError.error_msg);
      throw new ReplyFailure('connection-failed', `The service did not answer: ${error.message}`);
    }
    if (isRecordError(result.value)) throw new ReplyFailure('record-error', result.value.error_msg);
    return personAnswerOf(result.value, kind);
  }

  function redactSecrets(message: string): string {
    const key = options.secrets.availability.isAvailable ? options.secrets.get(PROVIDER_KEY) : undefined;
    let out = key ? redact(message, key) : message;
    if (embedded) out = redact(out, embedded.apiKey);
    const proxyPassword = options.secrets.availability.isAvailable
      ? options.secrets.get(PROXY_PASSWORD_SECRET)
      : undefined;
    if (proxyPassword) out = redact(out, proxyPassword);
    return out;
  }

  const core: DesktopCore = {
    db,
    async handle(channel, input) {
      if (!isChannel(channel))
        return { ok: false, error: { code: 'unknown-channel', message: `No such operation: ${channel}` } };
      const parsed = CHANNELS[channel].input.safeParse(input ?? {});
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return {
          ok: false,
          error: {
            code: 'invalid-input',
            message: issue ? `${issue.path.join('.') || 'input'}: ${issue.message}` : 'Invalid input.',
          },
        };
      }
      try {
        const handler = handlers[channel] as (input: unknown) => unknown;
        return { ok: true, value: await handler(parsed.data) };
      } catch (error) {
        if (error instanceof ReplyFailure)
          return { ok: false, error: { code: error.code, message: redactSecrets(error.message) } };
        if (error instanceof FileProblem)
          return { ok: false, error: { code: error.code, message: error.message } };
        const code = (error as { code?: unknown }).code;
        const message = error instanceof Error ? error.message : String(error);
        return {
          ok: false,
          error: {
            code:
              code === 'ENOENT'
                ? 'file-unreadable'
                : typeof code === 'string' && /^[a-z-]+$/.test(code)
                  ? code
                  : 'internal',
            message: redactSecrets(message),
          },
        };
      }
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    addPath(path) {
      let size: number;
      try {
        const stat = statSync(path);
        if (!stat.isFile()) throw new ReplyFailure('file-unreadable', `“${basename(path)}” is not a file.`);
        size = stat.size;
      } catch (error) {
        if (error instanceof ReplyFailure) throw error;
        throw new ReplyFailure('file-unreadable', `“${basename(path)}” cannot be read.`);
      }
      const name = basename(path);
      if (!formatOf(name))
        throw new ReplyFailure(
          'file-unreadable',
          `“${name}” is not a list file: choose a .csv, .txt or .zip file.`,
        );
      touchRecentFile(db, { path, name, size });
      return core.registerStaged(randomUUID(), path, name);
    },
    stagingPathFor(name) {
      const fileId = randomUUID();
      const dir = join(stagingDir, fileId);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const safe = basename(name).replace(/[^\w.\- ()+]/g, '_') || 'list.csv';
      return { fileId, path: join(dir, safe) };
    },
    registerStaged(fileId, path, name) {
      const size = statSync(path).size;
      staged.set(fileId, { path, name, size });
      return { fileId, name, size };
    },
    exportFile(exportId) {
      const record = getExport(db, exportId);
      return record && existsSync(record.path) ? { path: record.path, fileName: record.fileName } : undefined;
    },
    resumeJobs: () => jobs.resume(),
    async close() {
      await jobs.close();
      if (embeddedStarting) {
        const service = await embeddedStarting.catch(() => undefined);
        await service?.close();
      }
      db.close();
    },
  };
  if (!options.isResumeDeferred) jobs.resume();
  return core;
}

/** The E5 answer as the screen reads it: scalar fields by name, true interests, EAM and postal address. */
function personAnswerOf(value: IntelligenceResponse, connection: 'embedded' | 'provider'): PersonAnswer {
  const { interests, eam, postal_address: postal, ...rest } = value;
  const attributes: Record<string, string | number> = {};
  for (const [name, field] of Object.entries(rest))
    if (typeof field === 'string' || typeof field === 'number') attributes[name] = field;
  const postalAddress =
    postal && (postal.address ?? '') !== ''
      ? {
          firstName: postal.first_name ?? '',
          lastName: postal.last_name ?? '',
          address: postal.address ?? '',
          city: postal.city ?? '',
          state: postal.state ?? '',
          zip: postal.zip ?? '',
        }
      : null;
  const trueInterests = Object.entries(interests ?? {})
    .filter(([, isSeen]) => isSeen === true)
    .map(([name]) => name);
  return {
    connection,
    // An EAM key answers `eam` for everyone (the spec's defaults for an unknown address), so `{}` alone
    // does not mean "no match": a person's data, or activity ever seen, does.
    isMatch:
      Object.keys(attributes).length > 0 ||
      trueInterests.length > 0 ||
      postalAddress !== null ||
      (eam !== undefined && eam.date_first_seen !== 'now'),
    attributes,
    interests: trueInterests,
    eam: eam
      ? {
          dateFirstSeen: eam.date_first_seen,
          longevity: eam.longevity,
          velocity: eam.velocity,
          popularity: eam.popularity,
          monthLastOpen: eam.month_last_open ?? null,
        }
      : null,
    postalAddress,
  };
}
