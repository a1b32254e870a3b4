import { chmodSync, existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { startService, type RunningService } from '../../service/server.js';
import { openServiceDb, type ServiceDb } from '../../service/store/db.js';
import {
  createKey,
  findActiveKey,
  setKeyChecks,
  setKeyKnownBouncers,
  setKeyMaxUploads,
} from '../../service/store/keys.js';
import { deleteStoredList } from '../../service/lists/backend/store.js';
import type { OnlineServiceOptions } from '../../service/http/app.js';
import { SERVICE_NAMES } from '../../shared/api/services.js';
import type { ListServiceOptions } from '../../service/lists/node/processor.js';
import {
  decideChecks,
  effectiveNetwork,
  type ChecksChoice,
  type ChecksDecision,
  type NetworkSettings,
} from './checks/level.js';

/** The embedded key lives beside the service data it opens, in a file only the user can read. */
export const EMBEDDED_KEY_FILE = 'embedded.key';

export interface EmbeddedService {
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The folder of its database (reference data imported from the app goes there). */
  readonly dataDir: string;
  readonly service: RunningService;
  /**
   * The checks level this service runs lists and E1 with, and why. While an Automatic decision is being made
   * (`isDecidedWhileStarting`): offline, "deciding".
   */
  readonly checks: ChecksDecision;
  /** The checks decision, once made. */
  readonly decided: Promise<ChecksDecision>;
  /** Deletes a list's row and stored files (the user deleted its job). */
  deleteList(listId: number): void;
  close(): Promise<void>;
}

/** What the desktop core needs of its embedded service (tests may give one of their own). */
export type EmbeddedHandle = Pick<EmbeddedService, 'baseUrl' | 'apiKey' | 'close'> &
  Partial<Pick<EmbeddedService, 'deleteList' | 'checks' | 'dataDir'>>;

export interface EmbeddedServiceOptions {
  /**
   * The checks setting (Automatic, Offline only, Domains, Mailboxes). Without it the service runs offline
   * unless `online.checks` says otherwise (as `verify --checks` does).
   */
  readonly checks?: ChecksChoice;
  /** Resolver, SMTP port, HELO name, MAIL FROM and SOCKS5 proxy (over MAILSIEVE_DNS_SERVERS / _SMTP_PORT). */
  readonly network?: NetworkSettings;
  /** Verifier settings as `serve` takes them (the level is `checks` when that is given). */
  readonly online?: OnlineServiceOptions;
  /** Retries of temporary failures: first delay and the longest a list waits (ms; 0: no retries). */
  readonly retry?: { readonly delayMs?: number; readonly maxWaitMs?: number };
  /**
   * Start the service while Automatic's preflight runs instead of after it (a list job: the decision is made
   * while the list uploads, and lists wait for it before they run; single checks run offline meanwhile).
   */
  readonly isDecidedWhileStarting?: boolean;
  readonly nativeBinding?: string;
}

/**
 * Returns the key the app uses with its embedded service, creating one (every service, no rate limit: the
 * caller is this machine's own app; no limit of uploads at once: it sends a split file's parts together) when
 * none is stored or the stored one was revoked. Its known bouncers are on: the bounces the user imports answer
 * code 520 (none do before an import).
 */
export function provisionEmbeddedKey(db: ServiceDb, dataDir: string): string {
  const file = join(dataDir, EMBEDDED_KEY_FILE);
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    const record = stored ? findActiveKey(db, stored) : undefined;
    if (record) {
      // Keys made before online checks existed: the app's own key may go as far as the service allows.
      if (record.checks !== 'smtp') setKeyChecks(db, record.id, 'smtp');
      // Keys made before bounces could be imported.
      if (!record.knownBouncers) setKeyKnownBouncers(db, record.id, true);
      // Keys made before uploads at once were limited: the app sends the parts of a split file together.
      if (record.maxUploads !== 0) setKeyMaxUploads(db, record.id, 0);
      return stored;
    }
  }
  const { key } = createKey(db, {
    label: 'embedded (this app)',
    mode: 'safe_to_send',
    services: SERVICE_NAMES,
    rateLimit: 0,
    // The app's own key allows every check; how far checks go is the service's setting (startEmbeddedService).
    checks: 'smtp',
    knownBouncers: true,
    // The parts of a split file are uploaded together, as many as there are.
    maxUploads: 0,
  });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${key}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
  return key;
}

/**
 * Starts the embedded Email Data Service on an ephemeral loopback port with its provisioned key. With
 * `checks`, the level is decided first (Automatic runs the preflight: at most a few seconds); without it,
 * online checks are off unless `options.online.checks` turns them on. MAILSIEVE_DNS_SERVERS and
 * MAILSIEVE_SMTP_PORT override the resolver and port 25 under what `network` and `online` give.
 */
export async function startEmbeddedService(
  dataDir: string,
  options: EmbeddedServiceOptions = {},
): Promise<EmbeddedService> {
  const network = effectiveNetwork({ ...options.network });
  const { checks: onlineChecks, ...onlineRest } = options.online ?? {};
  const deciding: Promise<ChecksDecision> = options.checks
    ? decideChecks(options.checks, { ...network, ...onlineRest })
    : Promise.resolve({
        choice: onlineChecks ?? 'offline',
        level: onlineChecks ?? 'offline',
        reason: onlineChecks ? `${onlineChecks}: chosen` : 'offline: the default of this command',
      });
  let checks: ChecksDecision = {
    choice: options.checks ?? 'offline',
    level: 'offline',
    reason: `${options.checks ?? 'offline'}: deciding`,
  };
  const decided = deciding.then((decision) => (checks = decision));
  if (!options.isDecidedWhileStarting) await decided;
  const db = openServiceDb(dataDir, options.nativeBinding ? { nativeBinding: options.nativeBinding } : {});
  try {
    const apiKey = provisionEmbeddedKey(db, dataDir);
    const lists: { -readonly [K in keyof ListServiceOptions]: ListServiceOptions[K] } = {};
    if (options.nativeBinding) lists.nativeBinding = options.nativeBinding;
    if (options.retry?.delayMs !== undefined) lists.retryDelayMs = options.retry.delayMs;
    if (options.retry?.maxWaitMs !== undefined) lists.maxWaitMs = options.retry.maxWaitMs;
    const service = await startService({
      dataDir,
      db,
      host: '127.0.0.1',
      port: 0,
      online: {
        ...network,
        ...onlineRest,
        checks: checks.level,
        ...(options.isDecidedWhileStarting
          ? { checksDecided: decided.then((decision) => decision.level) }
          : {}),
      },
      ...(Object.keys(lists).length > 0 ? { lists } : {}),
    });
    return {
      baseUrl: service.url,
      apiKey,
      dataDir,
      service,
      get checks() {
        return checks;
      },
      decided,
      deleteList: (listId) => deleteStoredList(db, dataDir, listId),
      async close() {
        await service.close();
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
