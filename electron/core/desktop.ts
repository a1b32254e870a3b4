// The desktop core: the one implementation of the desktop contract (shared/desktop/contract.ts), free of
// Electron. Electron main wires it to IPC, browser mode to loopback HTTP; tests call it directly. Inputs are
// parsed with the contract's schemas here and nowhere else; every reply is a value.
//
// This file only assembles the shared context and dispatches: each domain's channels live in channels/
// (connection, files, jobs, history, verify, lookup), registered over that context.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_POLL_MIN_INTERVAL_MS, redact } from '../../shared/api/client.js';
import {
  CHANNELS,
  isChannel,
  type AppEvent,
  type EventPayload,
  type Reply,
  type StagedFile,
} from '../../shared/desktop/contract.js';
import { connectionHandlers, createConnection, PROVIDER_KEY } from './channels/connection.js';
import {
  ReplyFailure,
  type CoreBase,
  type CoreContext,
  type DesktopCoreOptions,
  type Handlers,
  type Listener,
} from './channels/context.js';
import { createStaging, fileHandlers } from './channels/files.js';
import { exportFileOf, historyHandlers } from './channels/history.js';
import { jobHandlers } from './channels/jobs.js';
import { lookupHandlers } from './channels/lookup.js';
import { createReferenceImports } from './reference/import.js';
import { reportHandlers } from './channels/reports.js';
import { outcomesHandlers } from './channels/outcomes.js';
import { verifyHandlers } from './channels/verify.js';
import { FileProblem } from './files/source.js';
import { HISTORY_DB_FILE, getJob, openHistoryDb, type HistoryDb } from './history/db.js';
import { jobResultsReader } from './results/jobView.js';
import { JobRechecks } from './results/recheckJob.js';
import { JobManager } from './jobs/scheduler.js';
import { dropPreparedExports } from './jobs/preparedExport.js';
import { setOutputLockBinding } from './jobs/outputFolder.js';
import { PROXY_PASSWORD_SECRET } from './checks/setting.js';

export { PROVIDER_KEY, ReplyFailure, type DesktopCoreOptions };
// The secret store a host without safeStorage (browser mode, the desktop bench) hands the core, from the core's
// own bundle (dist/desktop/core.js).
export { FileSecretStore } from './secrets.js';

export interface DesktopCore {
  /** Runs one channel on untrusted input; always answers a reply. */
  handle(channel: string, input: unknown): Promise<Reply<unknown>>;
  on(listener: <E extends AppEvent>(event: E, payload: EventPayload<E>) => void): () => void;
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
  // The results folders' locks are SQLite files too (jobs/outputFolder.ts): the same build of the addon.
  if (options.nativeBinding) setOutputLockBinding(options.nativeBinding);
  // Staged uploads of an earlier run are no one's: jobs keep their own copies.
  rmSync(stagingDir, { recursive: true, force: true });
  // So are the default exports prepared for a job that completed then (jobs/preparedExport.ts).
  dropPreparedExports(resultsDir);
  const db = openHistoryDb(
    join(home, HISTORY_DB_FILE),
    options.nativeBinding ? { nativeBinding: options.nativeBinding } : {},
  );
  const listeners = new Set<Listener>();
  const emit: Listener = (event, payload) => {
    for (const listener of listeners) listener(event, payload);
  };

  // The shared context: what exists first, then the domains' state built on it.
  const base: CoreBase = { options, home, resultsDir, stagingDir, db, emit };
  const connection = createConnection(base);
  const staging = createStaging(base);
  const results = jobResultsReader(db, resultsDir);
  const jobs = new JobManager({
    db,
    resultsDir,
    connect: async (job) => {
      const client = await connection.clientFor(job.connectionKind, job.connectionUrl);
      return {
        client,
        pollIntervalMs:
          job.connectionKind === 'embedded'
            ? (options.localPollIntervalMs ?? LOCAL_POLL_MIN_INTERVAL_MS)
            : 5000,
      };
    },
    onProgress: (progress) => emit('job:progress', progress),
    onChange: (jobId) => emit('jobs:changed', { jobIds: [jobId] }),
    countsOf: (job) => results.countsRequest(job),
    onCompleted: (jobId) => {
      // The why per row of a local job with online checks, kept with the job (the service runs: it just ran it).
      const job = getJob(db, jobId);
      // The Results numbers, counted now rather than when Results first opens (a large list takes seconds).
      if (job?.resultsPath && job.resultsName && job.options.services.includes('email_validation'))
        void results.counts(job, { path: job.resultsPath, name: job.resultsName }).catch(() => undefined);
      const apiKey = connection.embeddedApiKey();
      if (!job || job.connectionKind !== 'embedded' || apiKey === undefined) return;
      void connection
        .ensureEmbedded()
        .then((service) => results.saveExplanations(job, { baseUrl: service.baseUrl, apiKey }))
        .catch(() => undefined);
    },
  });
  connection.setRunningProbe((jobId) => jobs.isRunning(jobId));
  const rechecks = new JobRechecks({
    db,
    connection,
    localPollIntervalMs: options.localPollIntervalMs ?? LOCAL_POLL_MIN_INTERVAL_MS,
    onProgress: (progress) => emit('job:progress', progress),
    onChange: (jobId) => emit('jobs:changed', { jobIds: [jobId] }),
  });
  // A new Checks setting waits for local re-checks as for local jobs (the service restarts to take it).
  connection.setLocalWorkProbe(() => rechecks.hasLocalRunning());
  const ctx: CoreContext = { ...base, connection, staging, jobs, rechecks, resumed: { ids: [] }, results };
  const referenceImports = createReferenceImports(
    options.nativeBinding ? { nativeBinding: options.nativeBinding } : {},
  );

  const handlers: Handlers = {
    'app:get-info': () => ({
      mode: options.mode,
      version: options.version,
      platform: process.platform,
      hasNativeDialogs: options.hasNativeDialogs,
      home,
    }),
    ...connectionHandlers(ctx),
    ...fileHandlers(ctx),
    ...jobHandlers(ctx),
    ...historyHandlers(ctx),
    ...verifyHandlers(ctx),
    ...lookupHandlers(ctx, referenceImports),
    ...reportHandlers(ctx),
    ...outcomesHandlers(ctx),
  };

  /** No reply shows a key: the provider's, nor the embedded service's. */
  function redactSecrets(message: string): string {
    const key = options.secrets.availability.isAvailable ? options.secrets.get(PROVIDER_KEY) : undefined;
    let out = key ? redact(message, key) : message;
    const embeddedKey = connection.embeddedApiKey();
    if (embeddedKey) out = redact(out, embeddedKey);
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
            // Messages written for people stand alone; a field name means nothing to them.
            message: !issue
              ? 'Invalid input.'
              : issue.code === 'custom' || /^(Enter|Choose)\b/.test(issue.message)
                ? issue.message
                : `${issue.path.join('.') || 'input'}: ${issue.message}`,
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
    addPath: (path) => staging.addPath(path),
    stagingPathFor: (name) => staging.stagingPathFor(name),
    registerStaged: (fileId, path, name) => staging.registerStaged(fileId, path, name),
    exportFile: (exportId) => exportFileOf(ctx, exportId),
    resumeJobs: () => (ctx.resumed.ids = jobs.resume()),
    async close() {
      await staging.checks.close();
      await referenceImports.close();
      await jobs.close();
      await rechecks.close();
      await connection.close();
      db.close();
    },
  };
  if (!options.isResumeDeferred) ctx.resumed.ids = jobs.resume();
  return core;
}
