// What the list processor (main thread) and the pipeline worker tell each other. Plain data only: these
// cross a worker_threads boundary by structured clone.
import type { EmailValidationReporting, ListServiceKey } from '../../shared/api/list.js';
import type { OnlineLevel } from '../engine/online/levels.js';
import type { IdentityJob } from './identityPass.js';
import type { IdentityListService } from './store.js';

/** The engine policy and status options of the key a list belongs to, as data a worker can receive. */
export interface ListPolicy {
  readonly corrections: boolean;
  readonly allow: readonly string[];
  readonly suppress: readonly string[];
  readonly legacyAcceptAll: boolean;
  /** The list has online checks: verify workers report the addresses of rows of code 10 (`undecided`). */
  readonly online?: boolean;
  /**
   * Known bouncers (code 520, service/identity/bounces.ts): the key has them and bounces are imported. The
   * pipeline worker reads the ones that count from this database as the list starts, into `bounceSet`.
   */
  readonly knownBouncers?: {
    readonly maxAgeDays: number;
    readonly dbPath: string;
    readonly nativeBinding?: string | undefined;
  };
  /** The hashes of the addresses whose bounce counts (bounces.ts knownBouncerSet), shared by the threads. */
  readonly bounceSet?: SharedArrayBuffer;
}

export interface ListLimits {
  /** Records per list (the spec's 1,000,000). */
  readonly maxRecords: number;
  /** Bytes in one row (its line break excluded). */
  readonly maxRowBytes: number;
  /** Bytes the one file inside a .zip may expand to. */
  readonly maxUncompressedBytes: number;
  /** Expansion ratio above which a large zip entry is taken for a zip bomb. */
  readonly maxCompressionRatio: number;
}

/** One list to process, from its stored input to its results file. */
export interface ListJob {
  readonly listId: number;
  /** The list's folder: `<dataDir>/lists/<id>`. */
  readonly dir: string;
  /** The stored input, inside `dir`. */
  readonly inputFile: string;
  /** The list's name (E7 `name`), which says .txt, .csv or .zip. */
  readonly name: string;
  readonly delimiter?: string | undefined;
  readonly header?: boolean | undefined;
  readonly emailColumn?: number | undefined;
  readonly policy: ListPolicy;
  readonly limits: ListLimits;
  /** File name of the results inside `dir` (written as `<name>.tmp` first, then renamed). */
  readonly resultsFile: string;
  /**
   * The level of online checks (the key's checks within the service's ceiling), when not offline: rows left
   * undecided offline (code 10) get their final verdicts from the service's online verifier on the main thread.
   */
  readonly online?: OnlineLevel | undefined;
  /** The services asked for (E7 `services`, or the key's); those whose columns the file has run. */
  readonly services: readonly ListServiceKey[];
  /** E7 named the services: one whose columns are missing makes the list Invalid rather than left out. */
  readonly servicesExplicit: boolean;
  /** For the services other than validation. */
  readonly identity?: IdentityJob | undefined;
  /** A list with online checks writes what was checked and answered for each row here (inside `dir`). */
  readonly explainFile?: string | undefined;
}

/**
 * Online verdicts of some distinct addresses, packed as the list writes them: per address, its index in the
 * request, the code, the packed flags (rowFlags.ts) and the `Valid Email` ('' for none).
 */
export interface OnlineVerdicts {
  readonly indexes: number[];
  readonly codes: number[];
  readonly flags: number[];
  readonly validEmails: string[];
  /** How far each check went (offline, dns, smtp), and what was checked and answered, in one line. */
  readonly checked: string[];
  readonly whys: string[];
}

export type ListOutcome =
  | {
      readonly kind: 'results';
      readonly records: number;
      readonly reporting: EmailValidationReporting;
      /** The services that ran. */
      readonly services: readonly ListServiceKey[];
      readonly serviceReporting: Partial<Record<IdentityListService, object>>;
      /** A report-only run of services to buy: no results file; the list awaits purchase. */
      readonly isAwaitingPurchase: boolean;
    }
  | { readonly kind: 'invalid'; readonly reason: string; readonly records: number }
  | { readonly kind: 'error'; readonly reason: string };

export type PipelineRequest =
  | {
      readonly type: 'run';
      readonly job: ListJob;
      /** Whether more lists are queued: when not, the verify workers are stopped once the job's verdicts are in. */
      readonly isMoreQueued: boolean;
    }
  /** Online verdicts for an `online` request, streamed as they come; `isLast` ends them. */
  | {
      readonly type: 'online-verdicts';
      readonly listId: number;
      readonly verdicts: OnlineVerdicts;
      readonly isLast: boolean;
    };

export type PipelineMessage =
  | { readonly type: 'ready' }
  | {
      readonly type: 'progress';
      readonly listId: number;
      readonly records: number;
      readonly inputCount: number;
      readonly completedCount: number;
      /** Rows done by the services other than validation, once they run (pass 2). */
      readonly identityCompleted?: number;
    }
  /** The services that run, once the file's columns are known. */
  | {
      readonly type: 'services';
      readonly listId: number;
      /** Undefined while the columns are not known yet. */
      readonly services: readonly ListServiceKey[] | undefined;
      /** The delimiter the file is read with (given, or detected from its content). */
      readonly delimiter?: string;
    }
  /** The distinct addresses of rows undecided offline, to be checked online by the main thread. */
  | {
      readonly type: 'online';
      readonly listId: number;
      readonly addresses: string[];
      /** How many rows hold each address. */
      readonly rowCounts: number[];
    }
  | { readonly type: 'done'; readonly listId: number; readonly outcome: ListOutcome };
