// What the list processor (main thread) and the pipeline worker tell each other. Plain data only: these
// cross a worker_threads boundary by structured clone.
import type { ListServiceKey } from '../../shared/api/list.js';
import type { OnlineLevel } from '../engine/online/levels.js';
import type { IdentityJob } from './identityPass.js';
import type { PartResult, PlanRecord } from './backend.js';
import type { PartBounds, PartContext } from './parts.js';

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

/** One list to plan, from its stored input. */
export interface ListJob {
  readonly listId: number;
  /** The stored input, as a file of this node. */
  readonly inputPath: string;
  /** A folder of this node for the plan's own files (the text of a zip, extracted). */
  readonly workDir: string;
  /** The list's name (E7 `name`), which says .txt, .csv or .zip. */
  readonly name: string;
  readonly delimiter?: string | undefined;
  readonly header?: boolean | undefined;
  readonly emailColumn?: number | undefined;
  readonly policy: ListPolicy;
  readonly limits: ListLimits;
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
  /** A list with online checks keeps what was checked and answered for each row (the explain CSV). */
  readonly explain?: boolean | undefined;
  /** Rows per part (default PART_ROWS). The results are the same bytes whatever the parts. */
  readonly partRows?: number | undefined;
  /**
   * Without `partRows`: cut the list into at least this many parts (of at least SPREAD_MIN_ROWS rows, at most
   * PART_ROWS), so that several nodes share its online checks, even those of one domain (parts.ts).
   */
  readonly spreadParts?: number | undefined;
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

/** A request to the pipeline worker; each is answered by a message with the same `id`. */
export type PipelineRequest =
  | {
      readonly type: 'plan';
      readonly id: number;
      /** The plan's name while it is kept here: `<list>:<run>`. */
      readonly key: string;
      readonly job: ListJob;
      /** Encode each part's rows for storage (the team server), besides keeping the plan in memory. */
      readonly encode: boolean;
      /** Whether more lists wait: when not, the verify workers are stopped once the plan is made. */
      readonly isMoreQueued: boolean;
    }
  /** The distinct addresses a part of a planned list checks online (the plan is in this worker's memory). */
  | { readonly type: 'addresses'; readonly id: number; readonly key: string; readonly part: number }
  | {
      readonly type: 'write';
      readonly id: number;
      readonly key: string;
      readonly context: PartContext;
      readonly bounds: PartBounds;
      /** The part's rows and text, when this worker does not hold the plan (a part of another node's plan). */
      readonly stored?: { readonly rows: Uint8Array; readonly text: Uint8Array };
      /** The service database for the services other than validation, on this node. */
      readonly identityDbPath?: string;
      /** Write the results bytes to this file (a temporary name, then renamed) rather than send them back. */
      readonly outputPath?: string;
      readonly verdicts?: OnlineVerdicts;
    }
  | { readonly type: 'forget'; readonly key: string };

export type PlanReply =
  | { readonly kind: 'planned'; readonly record: PlanRecord }
  | { readonly kind: 'invalid'; readonly reason: string; readonly records: number }
  | { readonly kind: 'error'; readonly reason: string };

export type PipelineMessage =
  | { readonly type: 'ready' }
  | {
      readonly type: 'progress';
      readonly key: string;
      readonly records: number;
      readonly completed: number;
    }
  /** The services that run, once the file's columns are known. */
  | {
      readonly type: 'services';
      readonly key: string;
      /** Undefined while the columns are not known yet. */
      readonly services: readonly ListServiceKey[] | undefined;
      /** The delimiter the file is read with (given, or detected from its content). */
      readonly delimiter?: string;
    }
  | { readonly type: 'planned'; readonly id: number; readonly outcome: PlanReply }
  | {
      readonly type: 'addresses';
      readonly id: number;
      readonly addresses: string[];
      readonly rowCounts: number[];
    }
  | { readonly type: 'written'; readonly id: number; readonly result: PartResult }
  | { readonly type: 'failed'; readonly id: number; readonly reason: string };
