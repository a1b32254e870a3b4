// Connection: the embedded service (started when first needed), the provider's address and key, the client
// every other domain calls the service with, and which list services new jobs may run.
import { createClient, type ApiError, type Client } from '../../../shared/api/client.js';
import { LIST_SERVICE_KEYS, type ListServiceKey } from '../../../shared/api/list.js';
import {
  INTELLIGENCE_CHOICES,
  type AllowedServices,
  type ConnectionInfo,
  type ConnectionInput,
  type ConnectionTest,
  type KeyQuota,
} from '../../../shared/desktop/contract.js';
import { ACTIVE_JOB_STATUSES } from '../../../shared/desktop/constants.js';
import type { ChecksDecision } from '../checks/level.js';
import { createChecksSetting, ChecksSettingProblem, type ChecksSetting } from '../checks/setting.js';
import type { EmbeddedHandle } from '../embedded.js';
import { jobsWithStatus } from '../history/db.js';
import { getSetting, setSetting } from '../history/db.js';
import { serviceDataDir } from '../home.js';
import { connectionErrorWords } from '../connection/failureWords.js';
import { keyQuotaFrom, keyQuotaOf, needsE1Test } from '../connection/keyQuota.js';
import { maskSecret } from '../secrets.js';
import { checkProviderAddress, providerKeyFor } from '../connection/keyOrigin.js';
import { PROVIDER_KEY, saveProviderKey, savedProviderKey } from '../connection/savedKey.js';
import { ReplyFailure, type CoreBase, type CoreContext, type Handlers } from './context.js';

export { PROVIDER_KEY } from '../connection/savedKey.js';
/** A harmless address for a connection test (E1 on the reserved example domain). */
const TEST_ADDRESS = 'postmaster@example.com';
/** The setting holding the list services the user says their provider key has (when it cannot say). */
const CHOSEN_SERVICES_SETTING = 'providerServices';

interface StoredConnection {
  readonly kind: 'embedded' | 'provider';
  readonly baseUrl?: string;
  /** The user allowed a plain-HTTP provider off loopback ("Allow plain HTTP on my network"). */
  readonly allowPlainHttp?: boolean;
}

export interface Connection {
  readonly storedConnection: () => StoredConnection;
  readonly connectionInfo: () => ConnectionInfo;
  readonly clientFor: (
    kind: 'embedded' | 'provider',
    baseUrl?: string | null,
    apiKey?: string,
    allowPlainHttp?: boolean,
  ) => Promise<Client>;
  readonly currentClient: () => Promise<{
    client: Client;
    kind: 'embedded' | 'provider';
    baseUrl: string | null;
  }>;
  readonly allowedServices: () => Promise<AllowedServices>;
  readonly testConnection: (input: ConnectionInput) => Promise<ConnectionTest>;
  /** The quota of the saved connection's key, as its service tells it. */
  readonly keyQuota: () => Promise<KeyQuota>;
  /** The embedded service's key, once it runs (replies never show it). */
  readonly embeddedApiKey: () => string | undefined;
  /** The embedded service, started if need be. */
  readonly ensureEmbedded: () => Promise<EmbeddedHandle>;
  /** The checks setting of the local service (issue #11). */
  readonly checks: ChecksSetting;
  /** What the running local service checks, when it runs. */
  readonly runningChecks: () => Pick<ChecksDecision, 'level' | 'reason'> | undefined;
  /** Whether a new checks setting waits for the local jobs running to finish. */
  readonly isRestartPending: () => boolean;
  /** The local service takes a new checks setting: now, or once the local jobs running finish. */
  readonly applyChecks: () => void;
  /** What a job runs with on the connection of `kind`. */
  readonly currentJobChecks: (
    kind: 'embedded' | 'provider',
  ) => Promise<{ level: 'offline' | 'dns' | 'smtp' | 'provider'; reason: string }>;
  /** Tells the connection which jobs really run (the scheduler exists after it). */
  readonly setRunningProbe: (isRunning: (jobId: number) => boolean) => void;
  /** Tells the connection whether other work uses the local service (a re-check of unknown rows). */
  readonly setLocalWorkProbe: (isBusy: () => boolean) => void;
  /** Stops the embedded service if it was started. */
  readonly close: () => Promise<void>;
}

export function createConnection({ options, home, db, emit }: CoreBase): Connection {
  // ---------------------------------------------------------------------------------------------------
  // The embedded service: started when first needed, so the app is usable at once and offline.

  let embedded: EmbeddedHandle | undefined;
  let embeddedStarting: Promise<EmbeddedHandle> | undefined;
  let embeddedState: ConnectionInfo['embedded'] = { state: 'stopped' };
  /** The checks setting (issue #11); what the running service checks, and a restart waiting for local jobs. */
  const checks = createChecksSetting({ db, secrets: options.secrets });
  let runningChecks: Pick<ChecksDecision, 'level' | 'reason'> | undefined;
  let isRestartPending = false;
  let embeddedClosing: Promise<unknown> | undefined;
  let isJobRunning: (jobId: number) => boolean = () => true;
  let isLocalWorkRunning: () => boolean = () => false;
  // Loaded when first needed: the service's modules take a good part of a second to load, and the window
  // should be usable before that.
  const startEmbedded =
    options.startEmbedded ??
    (async () => {
      // The chosen checks level; Automatic asks the network first (a few seconds at most).
      const service = await (
        await import('../embedded.js')
      ).startEmbeddedService(serviceDataDir(home), {
        checks: checks.stored().choice,
        network: checks.network(),
        ...(options.nativeBinding ? { nativeBinding: options.nativeBinding } : {}),
      });
      return service;
    });

  function hasLocalJobsRunning(): boolean {
    if (isLocalWorkRunning()) return true;
    return jobsWithStatus(db, ACTIVE_JOB_STATUSES).some(
      (job) => job.connectionKind === 'embedded' && isJobRunning(job.id),
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

  function ensureEmbedded(): Promise<EmbeddedHandle> {
    if (isRestartPending && !hasLocalJobsRunning()) restartEmbedded();
    if (embedded) return Promise.resolve(embedded);
    if (!embeddedStarting) {
      embeddedState = { state: 'starting' };
      emit('connection:changed', connectionInfo());
      const closing = embeddedClosing ?? Promise.resolve();
      embeddedStarting = closing.then(startEmbedded).then(
        (service) => {
          embedded = service;
          // What it runs at until it is restarted (a new Checks setting waits for the local jobs running).
          if (service.checks) runningChecks = { level: service.checks.level, reason: service.checks.reason };
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

  function storedConnection(): StoredConnection {
    return getSetting<StoredConnection>(db, 'connection') ?? { kind: 'embedded' };
  }

  function connectionInfo(): ConnectionInfo {
    const stored = storedConnection();
    const key = options.secrets.has(PROVIDER_KEY) ? options.secrets.get(PROVIDER_KEY) : undefined;
    return {
      kind: stored.kind,
      embedded:
        embeddedState.state === 'running' && runningChecks
          ? { ...embeddedState, level: runningChecks.level }
          : embeddedState,
      provider:
        stored.baseUrl !== undefined
          ? {
              baseUrl: stored.baseUrl,
              keyMask: key ? maskSecret(key) : null,
              ...(stored.allowPlainHttp ? { allowPlainHttp: true } : {}),
            }
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
    allowPlainHttp = storedConnection().allowPlainHttp ?? false,
  ): Promise<Client> {
    if (kind === 'embedded') {
      const service = await ensureEmbedded();
      return createClient({
        baseUrl: service.baseUrl,
        apiKey: service.apiKey,
        userAgent: 'Mailsieve desktop',
      });
    }
    if (!baseUrl)
      throw new ReplyFailure(
        'not-configured',
        'No provider address is set: enter it on the Connection screen.',
      );
    checkProviderAddress(baseUrl, allowPlainHttp);
    const key = providerKeyFor(baseUrl, apiKey, savedProviderKey(db, options.secrets, storedConnection()));
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

  /**
   * The quota of the saved connection's key: the local service's key has none; another service's is what its
   * `GET /v5/key` says (unknown for the provider, which has no such endpoint).
   */
  async function keyQuota(): Promise<KeyQuota> {
    const stored = storedConnection();
    if (stored.kind === 'embedded') return { status: 'unlimited' };
    let client: Client;
    try {
      client = await clientFor('provider', stored.baseUrl);
    } catch {
      return { status: 'unknown' }; // no key stored for this address
    }
    return keyQuotaFrom(await client.keyInfo({ timeoutMs: 5000, retries: 0 }));
  }

  /**
   * One call that shows the address and key work. On our own service it is `GET /v5/key`, which costs no
   * query (testing a trial key leaves its 100 queries whole) and tells the key's quota; a service without it
   * (the provider: 404) gets an E1 call on a harmless address, as always.
   */
  async function testConnection(input: ConnectionInput) {
    const started = Date.now();
    const client =
      input.kind === 'embedded'
        ? await clientFor('embedded')
        : await clientFor('provider', input.baseUrl, input.apiKey, input.allowPlainHttp ?? false);
    const failure = (error: ApiError) =>
      new ReplyFailure(
        'connection-failed',
        `${connectionErrorWords(error, client.baseUrl)} Nothing was saved.`,
      );
    const info = await client.keyInfo({ retries: 0, timeoutMs: 15_000 });
    if (info.ok && info.value.mode !== undefined) {
      // As the E1 call would answer 403 for a key without verification.
      if (!info.value.services.includes('validation'))
        throw failure({ kind: 'http', status: 403, message: 'validation not enabled' });
      return {
        mode: info.value.mode,
        latencyMs: Date.now() - started,
        baseUrl: client.baseUrl,
        quota: keyQuotaOf(info.value),
      };
    }
    if (!info.ok && !needsE1Test(info.error)) throw failure(info.error);
    const result = await client.verify(TEST_ADDRESS, { timeout: 5, retries: 0, timeoutMs: 15_000 });
    if (!result.ok) throw failure(result.error);
    return {
      mode: 'safe_to_send' in result.value ? ('safe_to_send' as const) : ('email_validation' as const),
      latencyMs: Date.now() - started,
      baseUrl: client.baseUrl,
      quota: keyQuotaFrom(info),
    };
  }

  return {
    storedConnection,
    connectionInfo,
    clientFor,
    currentClient,
    allowedServices,
    testConnection,
    keyQuota,
    ensureEmbedded,
    checks,
    runningChecks: () => runningChecks,
    isRestartPending: () => isRestartPending,
    applyChecks() {
      if (hasLocalJobsRunning()) isRestartPending = true;
      else restartEmbedded();
    },
    currentJobChecks,
    setRunningProbe(isRunning) {
      isJobRunning = isRunning;
    },
    setLocalWorkProbe(isBusy) {
      isLocalWorkRunning = isBusy;
    },
    embeddedApiKey: () => embedded?.apiKey,
    async close() {
      if (embeddedStarting) {
        const service = await embeddedStarting.catch(() => undefined);
        await service?.close();
      }
    },
  };
}

export type ConnectionChannel =
  | 'connection:get'
  | 'connection:test'
  | 'connection:set'
  | 'keys:clear'
  | 'checks:get'
  | 'checks:set'
  | 'checks:preflight'
  | 'connection:get-services'
  | 'connection:get-quota'
  | 'connection:set-services';

export function connectionHandlers(ctx: CoreContext): Handlers<ConnectionChannel> {
  const { options, db, emit } = ctx;
  const { storedConnection, connectionInfo, allowedServices, testConnection } = ctx.connection;
  return {
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
        if (input.apiKey !== undefined) saveProviderKey(db, options.secrets, input.baseUrl, input.apiKey);
        setSetting(db, 'connection', {
          kind: 'provider',
          baseUrl: input.baseUrl,
          ...(input.allowPlainHttp ? { allowPlainHttp: true } : {}),
        });
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
    'checks:get': () =>
      ctx.connection.checks.info(ctx.connection.runningChecks() ?? null, ctx.connection.isRestartPending()),
    'checks:set': (input) => {
      try {
        ctx.connection.checks.save(input);
      } catch (error) {
        if (error instanceof ChecksSettingProblem) throw new ReplyFailure(error.code, error.message);
        throw error;
      }
      // The service takes the new level when it starts again: now, or once the local jobs running finish.
      ctx.connection.applyChecks();
      return ctx.connection.checks.info(
        ctx.connection.runningChecks() ?? null,
        ctx.connection.isRestartPending(),
      );
    },
    'checks:preflight': async () => {
      await ctx.connection.checks.preflight();
      return ctx.connection.checks.info(
        ctx.connection.runningChecks() ?? null,
        ctx.connection.isRestartPending(),
      );
    },
    'connection:get-services': () => allowedServices(),
    'connection:get-quota': () => ctx.connection.keyQuota(),
    'connection:set-services': async (input) => {
      setSetting(
        db,
        CHOSEN_SERVICES_SETTING,
        LIST_SERVICE_KEYS.filter((key) => input.services.includes(key)),
      );
      return allowedServices();
    },
  };
}
