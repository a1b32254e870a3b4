// The plain data the list pipeline's threads and its backends share: what the list processor (main thread) and
// the pipeline worker tell each other, and what the pipeline hands the backend port to keep (a plan, a part's
// results and counts). Plain data only: these cross a worker_threads boundary by structured clone. This file
// imports nothing of service/lists/ (ESLint keeps it so): every room of the folder may import it.
import type { ListServiceKey } from '../../shared/api/list.js';
import type { UnknownCauseCount } from '../../shared/unknownCauses.js';
import type { OnlineLevel } from '../engine/online/levels.js';
import type { IntelligencePolicy } from '../identity/policy.js';

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
  /** What decided each check (the explain rows' Host, Reply, Source and Checked At); '' where none. */
  readonly hosts: string[];
  readonly replies: string[];
  readonly sources: string[];
  readonly checkedAts: string[];
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

/** The list services other than validation, whose state is kept as JSON (`service_state`). */
export type IdentityListService = Exclude<ListServiceKey, 'email_validation'>;

/** What the services other than validation need to run a list, as data a worker can receive. */
export interface IdentityJob {
  /** The service database (read-only here). */
  readonly dbPath: string;
  readonly nativeBinding?: string | undefined;
  /** Count matches only (`report=true` before a purchase): nothing is appended. */
  readonly report: boolean;
  /** The intelligence policy (the key's fields, limited by E7's `fields` or what was bought). */
  readonly intelligence?: IntelligencePolicy | undefined;
  /** Email append: `I` appends Individual matches only, `H` both kinds. */
  readonly emailAppendMatchType: 'I' | 'H';
  /** Alternate email matches per row (the key's maximum, 1–5). */
  readonly alternateMax: number;
  /** One clock for the whole list's activity metrics (Unix seconds). */
  readonly nowS: number;
}

/** Column indexes (0-based) of what the services read, -1 when the file has none. */
export interface IdentityColumns {
  readonly email: number;
  readonly md5: number;
  readonly sha1: number;
  readonly first: number;
  readonly last: number;
  readonly full: number;
  readonly street: number;
  readonly street2: number;
  readonly city: number;
  readonly state: number;
  readonly zip: number;
}

/** The counts behind the services' `reporting`, as plain data. */
export interface IdentityReportState {
  /** [field, rows matched] in the order first matched. */
  readonly fields: [string, number][];
  readonly append: { Individual: number; Household: number };
  /** Alternate matches by rank (0–4) and kind. */
  readonly alternate: { Individual: number; Household: number }[];
}

/** A ReportCounter's counts as plain data (JSON): what a part reports, summed when its list is complete. */
export interface ReportState {
  readonly statuses: number[];
  readonly domainTypes: number[];
  /** [code, count] of codes that occurred. */
  readonly codes: [number, number][];
  readonly invalidCodes: [number, number][];
  readonly roles: number;
}

/** Where a part lies in the list's text: its rows, and its bytes (from the end of the row before it). */
export interface PartBounds {
  readonly index: number;
  readonly firstRow: number;
  readonly rowCount: number;
  /** Offset in the text of the part's first byte: the end of the row before (or of the header, or the BOM). */
  readonly byteStart: number;
  /** The end of the part's last row; for the last part, the end of the text (trailing blank lines). */
  readonly byteEnd: number;
}

/** What writing any part of a list needs to know of the whole list: plain data, the same for every part. */
export interface PartContext {
  readonly listId: number;
  readonly delimiter: string;
  /** The line break written after each row (the input's own). */
  readonly newline: string;
  /** The byte that ends a line in the input (LF, or CR for old Mac files). */
  readonly breakByte: number;
  /** Fields of every row. */
  readonly columnCount: number;
  /** 0-based index of the email field; -1 when the list has none. */
  readonly emailIndex: number;
  readonly runsValidation: boolean;
  /** Columns appended to each row (validation's and the other services'). */
  readonly appendedCount: number;
  /** Whether the first part's bytes begin after the header row's content (its line break is in the gap). */
  readonly hasHeader: boolean;
  readonly partCount: number;
  /** Write the explain rows (a list with online checks whose validation writes results). */
  readonly explain: boolean;
  /** A report-only run of services to buy: parts are counted, nothing is written. */
  readonly isReportOnly: boolean;
  /** The services other than validation, when they run. */
  readonly identity?: {
    readonly job: IdentityJob;
    readonly services: readonly IdentityListService[];
    readonly columns: IdentityColumns;
  };
  /** The services that run (for the list's record once complete). */
  readonly services: readonly ListServiceKey[];
  /** The online checks of the rows left undecided offline: their level, and the key's policy. */
  readonly check?: { readonly level: OnlineLevel; readonly policy: ListPolicy };
  /** A zip list's results are a zip archive holding one file of this name, with its input file's time. */
  readonly zipEntryName?: string;
  readonly zipEntryTime?: { readonly date: number; readonly time: number };
}

/** The online phase of one part, as E8's `online` sums it over the parts. */
export interface PartOnlineState {
  readonly rows_to_check: number;
  readonly rows_checked: number;
  readonly domains_total: number;
  readonly domains_done: number;
  /** Rows waiting for a retry, and when it is asked (null: none waits). */
  readonly retry_rows: number;
  readonly retry_at: string | null;
  readonly retry_attempt: number;
  /** The part's rows answered unknown so far, by cause (every cause: the list sums and trims them). */
  readonly unknown_causes?: UnknownCauseCount[];
  /** The mail host whose allowance this node's checks wait on, while one does (E8's `online.paced_by`). */
  readonly paced_by?: PacedBy;
}

/** E8's `online.paced_by`. */
export interface PacedBy {
  readonly host: string;
  readonly allowance: string;
  readonly waiting: number;
  readonly words: string;
}

/** What planning a list gave, to keep with its run. */
export interface PlanRecord {
  readonly records: number;
  readonly head: Uint8Array;
  readonly context: PartContext;
  readonly parts: readonly PartBounds[];
  /** Rows complete before any online check. */
  readonly completedOffline: number;
  /** Per part: its rows complete before any online check, and its rows and distinct domains to check. */
  readonly partStarts: readonly {
    readonly completed: number;
    readonly rowsToCheck: number;
    readonly domains: number;
  }[];
  /** The team server's stored form of each part's rows (PartRows, encoded); the single node keeps them in memory. */
  readonly encodedRows?: readonly Uint8Array[];
  /** Where the plan read the list's text, when it was extracted from a zip (the team server stores it). */
  readonly extractedText?: string;
}

/** A part's results, as partWriter.ts wrote them. */
export interface PartResult {
  /** The results bytes; none when the pipeline worker wrote them to the backend's file itself (`isWritten`). */
  readonly chunks: readonly Uint8Array[];
  readonly isWritten?: boolean;
  readonly size: number;
  readonly explain: string;
  readonly report: ReportState;
  readonly identity?: IdentityReportState;
}
