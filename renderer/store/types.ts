import type { ReportCsv } from '../../shared/reportCsv.js';
// The shape of the renderer's state. Every asynchronous thing is a discriminated union of its states.
import type { ExportChoices } from '../../shared/exportChoices.js';
import type { RowFilter } from '../../shared/rowFilter.js';
import type { ListServiceKey } from '../../shared/api/listServiceNames.js';
import type { PurchaseMatchType } from '../../shared/desktop/constants.js';
import type {
  AllowedServices,
  AppInfo,
  ColumnRole,
  ConnectionInfo,
  ConnectionInput,
  ConnectionTest,
  ExportInfo,
  KeyQuota,
  ExportChoice,
  Inspection,
  JobDetail,
  JobList,
  JobProgress,
  JobStatus,
  Precheck,
  Preview,
  ResultsCounts,
  RecentFile,
  ResultStatus,
  StagedFile,
  VerifyAnswer,
  PersonAnswer,
  PersonLookupInput,
  ReferenceImport,
  ReferenceImportProgress,
  ReferenceKind,
} from '../../shared/desktop/contract.js';
import type { HistorySort } from '../../shared/desktop/constants.js';
import type { JobChanges, OutcomesReport } from '../../shared/outcomes.js';

export type Screen =
  | { readonly name: 'new' }
  | { readonly name: 'job'; readonly jobId: number }
  /** A job's printable summary (issue #12). */
  | { readonly name: 'summary'; readonly jobId: number }
  | { readonly name: 'history' }
  | { readonly name: 'verify' }
  | { readonly name: 'lookup' }
  | { readonly name: 'connection' };

export type Loadable<T> =
  | { readonly status: 'idle' }
  | { readonly status: 'loading' }
  | { readonly status: 'ready'; readonly value: T }
  | { readonly status: 'failed'; readonly error: string };

export interface Notice {
  readonly id: number;
  readonly text: string;
  readonly tone: 'info' | 'error';
}

export interface NavigationSlice {
  readonly appState: 'loading' | 'ready' | 'failed';
  readonly startupError: string | null;
  readonly screen: Screen;
  readonly notice: Notice | null;
  /** False while the app's core does not answer (browser mode: the app was stopped). */
  readonly isAppLinked: boolean;
  readonly setAppLinked: (isLinked: boolean) => void;
  readonly navigate: (screen: Screen) => void;
  readonly notify: (text: string, tone?: Notice['tone']) => void;
  readonly init: () => Promise<void>;
}

export interface ConnectionSlice {
  readonly appInfo: AppInfo | null;
  readonly connection: ConnectionInfo | null;
  readonly connectionAction:
    | { readonly status: 'idle' }
    | { readonly status: 'working'; readonly what: 'test' | 'save' | 'clear' }
    | { readonly status: 'tested'; readonly value: ConnectionTest }
    | { readonly status: 'saved' }
    | { readonly status: 'failed'; readonly error: string };
  readonly recentFiles: readonly RecentFile[];
  /** The list services new jobs may run on the connection in use. */
  readonly allowedServices: Loadable<AllowedServices>;
  readonly loadAllowedServices: () => Promise<void>;
  /** The quota of the saved connection's key (numbers only: the key stays in the core). */
  readonly keyQuota: Loadable<KeyQuota>;
  readonly loadKeyQuota: () => Promise<void>;
  /** What the user says their provider key has (when the service cannot say). */
  readonly setChosenServices: (services: readonly ListServiceKey[]) => Promise<void>;
  readonly setConnectionInfo: (info: ConnectionInfo) => void;
  readonly testConnection: (input: ConnectionInput) => Promise<void>;
  readonly saveConnection: (input: ConnectionInput) => Promise<void>;
  readonly clearKey: () => Promise<void>;
  readonly loadRecentFiles: () => Promise<void>;
}

/** How far reading a file is: bytes of the total, and rows seen (the pre-check). */
export interface FileProgress {
  readonly bytesRead: number;
  readonly totalBytes: number;
  readonly rows: number;
}

export type PrecheckState =
  | { readonly status: 'idle' }
  | { readonly status: 'loading'; readonly progress: FileProgress | null }
  | { readonly status: 'ready'; readonly value: Precheck }
  | { readonly status: 'failed'; readonly error: string }
  | { readonly status: 'cancelled' };

export type NewJobState =
  | { readonly status: 'empty' }
  | { readonly status: 'adding'; readonly name: string; readonly progress: FileProgress | null }
  | { readonly status: 'failed'; readonly error: string }
  | {
      readonly status: 'mapping';
      readonly file: StagedFile;
      readonly inspection: Inspection;
      readonly isReinspecting: boolean;
      readonly roles: readonly ColumnRole[];
      /** The list services chosen (Validation by default). */
      readonly services: readonly ListServiceKey[];
      /** Intelligence fields to return; null: every field the key has. */
      readonly fields: readonly string[] | null;
      readonly reportOnly: boolean;
      /** Split into parts when the exact count is over the limit (a file within it always goes whole). */
      readonly split: boolean;
      readonly precheck: PrecheckState;
      /**
       * The exact count of the file's rows in this layout, from its last pre-check: kept while another
       * pre-check of the same layout runs (another email column, the split), dropped when the layout changes.
       */
      readonly counted: { readonly rowsToSend: number; readonly blank: number } | null;
      readonly start:
        | { readonly status: 'idle' }
        | { readonly status: 'starting' }
        | { readonly status: 'failed'; readonly error: string };
    };

export interface NewJobSlice {
  readonly newJob: NewJobState;
  readonly addFile: (file: File) => Promise<void>;
  readonly openListDialog: () => Promise<void>;
  readonly openStaged: (file: StagedFile) => Promise<void>;
  readonly openRecent: (path: string) => Promise<void>;
  /** Reads the file again with another layout, or (an .xlsx list) another sheet: then its layout afresh. */
  readonly reinspect: (change: { header?: boolean; delimiter?: string; sheet?: string }) => Promise<void>;
  readonly setRole: (column: number, role: ColumnRole) => void;
  readonly setReportOnly: (value: boolean) => void;
  readonly setService: (service: ListServiceKey, isChosen: boolean) => void;
  readonly setFields: (fields: readonly string[] | null) => void;
  /** Drops chosen services the connection no longer allows (Validation stays when nothing is left). */
  readonly keepAllowedServices: (allowed: readonly ListServiceKey[]) => void;
  readonly setSplit: (value: boolean) => void;
  readonly runPrecheck: () => Promise<void>;
  /** Progress of the pre-check of the file on screen (a core event). */
  readonly setFileProgress: (progress: FileProgress & { readonly fileId: string }) => void;
  /** Stops adding a file (its upload) or its pre-check. */
  readonly cancelFileWork: () => Promise<void>;
  readonly startCleaning: () => Promise<void>;
  readonly resetNewJob: () => void;
}

export type ExportState =
  | { readonly status: 'idle' }
  | { readonly status: 'working' }
  | { readonly status: 'done'; readonly info: ExportInfo; readonly path: string | null }
  | { readonly status: 'failed'; readonly error: string };

/** A file saved for the user: where (null: the browser's downloads) and its name. */
export interface SavedFile {
  readonly path: string | null;
  readonly fileName: string;
}

export interface JobBrief {
  readonly id: number;
  readonly fileName: string;
  readonly status: JobStatus;
}

export interface JobsSlice {
  /** Jobs running now (the sidebar's indicator) and those taken up from the last run of the app. */
  readonly activity: { readonly running: readonly JobBrief[]; readonly resumed: readonly JobBrief[] };
  readonly loadActivity: () => Promise<void>;
  readonly jobs: Readonly<Record<number, Loadable<JobDetail>>>;
  readonly progress: Readonly<Record<number, JobProgress>>;
  /** The drill-down open on Results: which rows (a filter), its title, and its first page. */
  readonly preview: {
    readonly jobId: number;
    /** A key for the control that opened it (shows it pressed). */
    readonly key: string;
    readonly filter: RowFilter;
    readonly title: string;
    readonly state: Loadable<Preview>;
  } | null;
  /** Each job's Results numbers (counted once by the core from its results file). */
  readonly counts: Readonly<Record<number, Loadable<ResultsCounts>>>;
  readonly loadCounts: (jobId: number) => Promise<void>;
  readonly exportState: ExportState;
  readonly purchaseState: PurchaseState;
  readonly loadJob: (jobId: number) => Promise<void>;
  readonly setProgress: (progress: JobProgress) => void;
  readonly cancelJob: (jobId: number) => Promise<void>;
  /** Runs a cancelled or failed job again, as a new job, and shows it. */
  readonly rerunJob: (jobId: number) => Promise<void>;
  readonly deleteJob: (jobId: number) => Promise<boolean>;
  readonly showPreview: (jobId: number, key: string, filter: RowFilter, title: string) => Promise<void>;
  /** A page of the open drill-down's rows (the virtualised row view asks as it scrolls). */
  readonly readRows: (
    jobId: number,
    filter: RowFilter,
    offset: number,
    limit: number,
  ) => Promise<Loadable<Preview>>;
  readonly closePreview: () => void;
  readonly exportJob: (
    jobId: number,
    kind: ExportChoice,
    statuses: readonly ResultStatus[],
    choices?: ExportChoices,
    filter?: RowFilter,
    /** "Keep the expected bounce rate under X%" (issue 37), in percent: the safe and clean exports. */
    maxBounceRate?: number,
  ) => Promise<void>;
  /** Shows a saved export in its folder (Electron only). */
  readonly showInFolder: (path: string) => Promise<void>;
  readonly resetExport: () => void;
  /** Printable summary: a report CSV of the job saved where the user says; null when cancelled. */
  readonly saveReport: (jobId: number, report: ReportCsv) => Promise<SavedFile | null>;
  /** Printable summary: the page saved as PDF (Electron) or printed (browser mode); null when cancelled. */
  readonly saveSummaryPdf: (fileName: string) => Promise<SavedFile | null>;
  readonly purchaseJob: (
    jobId: number,
    fields: readonly string[],
    matchType: PurchaseMatchType,
  ) => Promise<boolean>;
  readonly resetPurchase: () => void;
  /** Re-check unknown rows (issue #11): starts one (its progress comes as job:progress) or stops it. */
  readonly recheckJob: (jobId: number) => Promise<boolean>;
  readonly cancelRecheck: (jobId: number) => Promise<void>;
}

export type PurchaseState =
  | { readonly status: 'idle' }
  | { readonly status: 'working'; readonly jobId: number }
  | { readonly status: 'failed'; readonly jobId: number; readonly error: string };

export interface HistoryQuery {
  readonly search: string;
  readonly status: JobStatus | '';
  readonly from: string;
  readonly to: string;
  readonly sort: HistorySort;
  readonly direction: 'asc' | 'desc';
}

export interface HistorySlice {
  readonly historyQuery: HistoryQuery;
  readonly history: Loadable<JobList>;
  readonly setHistoryQuery: (patch: Partial<HistoryQuery>) => void;
  readonly loadHistory: () => Promise<void>;
}

export interface VerifySlice {
  readonly verify:
    | { readonly status: 'idle' }
    | { readonly status: 'checking'; readonly email: string }
    | { readonly status: 'done'; readonly answer: VerifyAnswer }
    | { readonly status: 'failed'; readonly error: string };
  readonly verifyAddress: (email: string) => Promise<void>;
}

export interface LookupSlice {
  readonly lookup:
    | { readonly status: 'idle' }
    | { readonly status: 'looking'; readonly query: PersonLookupInput }
    | { readonly status: 'done'; readonly query: PersonLookupInput; readonly answer: PersonAnswer }
    | { readonly status: 'failed'; readonly query: PersonLookupInput; readonly error: string };
  readonly lookUpPerson: (query: PersonLookupInput) => Promise<void>;
  /** Clears the answer on screen (the lookup mode changed). */
  readonly clearLookup: () => void;
  /** Importing a people or activity file into the local service (issue #15). */
  readonly referenceImport: ReferenceImportState;
  /** Imports `file` (browser mode: uploaded first), or the one the native dialog picks (the desktop app). */
  readonly importReferenceFile: (kind: ReferenceKind, file?: File) => Promise<void>;
  readonly cancelReferenceImport: () => Promise<void>;
  readonly setReferenceImportProgress: (progress: ReferenceImportProgress) => void;
}

export type ReferenceImportState =
  | { readonly status: 'idle' }
  | {
      readonly status: 'uploading';
      readonly kind: ReferenceKind;
      readonly fileName: string;
      readonly progress: { readonly bytesRead: number; readonly totalBytes: number } | null;
    }
  | {
      readonly status: 'importing';
      readonly kind: ReferenceKind;
      readonly fileName: string;
      readonly progress: ReferenceImportProgress | null;
      readonly isCancelling: boolean;
    }
  | { readonly status: 'done'; readonly report: ReferenceImport }
  | {
      readonly status: 'failed';
      readonly kind: ReferenceKind;
      readonly fileName: string;
      readonly error: string;
    };

/**
 * Reading a campaign's bounce export for a job (History → a job → Campaign results): the files copied to the
 * app first (browser mode), then read by the core; a failure in words. One at a time (the core's rule too).
 */
export type OutcomesImportState =
  | { readonly status: 'idle' }
  | {
      readonly status: 'uploading';
      readonly jobId: number;
      readonly fileName: string;
      readonly progress: { readonly bytesRead: number; readonly totalBytes: number } | null;
    }
  | { readonly status: 'reading'; readonly jobId: number; readonly fileName: string }
  | { readonly status: 'done'; readonly jobId: number }
  | { readonly status: 'failed'; readonly jobId: number; readonly error: string };

export interface OutcomesSlice {
  /** Each job's kept campaign results (null: none imported yet), as the core keeps them with the job. */
  readonly outcomes: Readonly<Record<number, Loadable<OutcomesReport | null>>>;
  readonly outcomesImport: OutcomesImportState;
  readonly loadOutcomes: (jobId: number) => Promise<void>;
  /** Reads the bounce export (and the sent list) against the job; its report replaces the job's earlier one. */
  readonly importOutcomes: (
    jobId: number,
    files: { bounces: File; sent?: File | undefined },
  ) => Promise<void>;
}

export type AppState = NavigationSlice &
  ConnectionSlice &
  NewJobSlice &
  JobsSlice &
  HistorySlice &
  VerifySlice &
  LookupSlice &
  OutcomesSlice &
  ChangesSlice;

/** What changed since the last run (issue 37): a page of a job's changed rows, and their export. */
export interface ChangesSlice {
  /** Each job's comparison with its earlier run, with the page shown (its first row's place). */
  readonly changes: Readonly<Record<number, Loadable<JobChanges & { readonly offset: number }>>>;
  readonly loadChanges: (jobId: number, offset: number) => Promise<void>;
  readonly changesExport:
    | { readonly status: 'idle' }
    | { readonly status: 'working'; readonly jobId: number }
    | {
        readonly status: 'done';
        readonly jobId: number;
        readonly info: ExportInfo;
        readonly path: string | null;
      }
    | { readonly status: 'failed'; readonly jobId: number; readonly error: string };
  /** Writes the changed rows' export and saves it (a native dialog, or a download in browser mode). */
  readonly exportChanges: (jobId: number) => Promise<void>;
}
