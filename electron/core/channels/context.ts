// What every domain of the desktop core shares: the options it was created with, the history DB, the event
// emitter, the app home's folders, the connection (embedded service, provider client, secrets), the staged
// files and the job scheduler. desktop.ts assembles one; each domain module (connection, files, jobs,
// history, verify, lookup) registers its channels' handlers over it.
import type {
  AppEvent,
  AppInfo,
  Channel,
  ChannelOutput,
  ChannelParsedInput,
  EventPayload,
} from '../../../shared/desktop/contract.js';
import type { EmbeddedHandle } from '../embedded.js';
import type { HistoryDb } from '../history/db.js';
import type { JobManager } from '../jobs/scheduler.js';
import type { JobRechecks } from '../results/recheckJob.js';
import type { SecretStore } from '../secrets.js';
import type { Connection } from './connection.js';
import type { Staging } from './files.js';
import type { JobResultsReader } from '../results/jobView.js';

/** A failure the user reads: the reply's error code and message. */
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
  readonly startEmbedded?: () => Promise<EmbeddedHandle>;
  /**
   * How often the embedded service is polled (default: as often as `mailsieve clean` does,
   * LOCAL_POLL_MIN_INTERVAL_MS; it is on loopback; the provider always gets 5 s).
   */
  readonly localPollIntervalMs?: number;
  /** Don't take up unfinished jobs at start (tests that look at them first). */
  readonly isResumeDeferred?: boolean;
}

export type Listener = <E extends AppEvent>(event: E, payload: EventPayload<E>) => void;

/** The handlers of some channels: each gets its input parsed by the contract's schema (desktop.ts). */
export type Handlers<C extends Channel = Channel> = {
  [K in C]: (input: ChannelParsedInput<K>) => Promise<ChannelOutput<K>> | ChannelOutput<K>;
};

/** What exists before the domains: the base every domain's state is built on. */
export interface CoreBase {
  readonly options: DesktopCoreOptions;
  readonly home: string;
  /** `<home>/results`: one folder per job (its input copy, results file, exports). */
  readonly resultsDir: string;
  /** `<home>/staging`: uploads and prepared parts not yet a job's. */
  readonly stagingDir: string;
  readonly db: HistoryDb;
  readonly emit: Listener;
}

export interface CoreContext extends CoreBase {
  readonly connection: Connection;
  readonly staging: Staging;
  readonly jobs: JobManager;
  /** Re-checks of finished jobs' unknown rows under way (issue #11). */
  readonly rechecks: JobRechecks;
  /** Jobs taken up at start, left unfinished by the last run (NOTE: set once resume has run). */
  readonly resumed: { ids: number[] };
  /** A finished job's numbers, rows and why per row, read from its results (../results/jobView.ts). */
  readonly results: JobResultsReader;
}
