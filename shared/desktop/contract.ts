// The desktop contract: every operation the UI can ask of the desktop core, as `domain:verb-noun` channels
// mapped to zod input/output schemas, and every event the core pushes. Electron main registers a handler per
// channel (IPC), browser mode serves the same channels over loopback HTTP, and the renderer's `window.app`
// has one function per channel. All types below are derived from these schemas, so the ends cannot drift.
//
// Secrets: no output schema here has a member that can carry an API key. A key travels one way only, in the
// inputs of `connection:set` and `connection:test`; what comes back is `keyMask` (the last 4 characters).
import { unknownCauseCountSchema } from '../unknownCauses.js';
import { EXPORT_FORMATS } from '../exportChoices.js';
import { rowFilterSchema } from '../rowFilter.js';
import { EXPORT_RECORD_KINDS } from '../exports.js';
import { REPORT_CSVS } from '../reportCsv.js';
import { budgetOutcomeSchema, jobChangesSchema, outcomesReportSchema } from '../outcomes.js';
import { z } from 'zod';
import { emailValidationReportingSchema, LIST_SERVICE_KEYS, listResourceSchema } from '../api/list.js';
import { LIST_SERVICE_INPUTS, LIST_SERVICE_TITLES, QUOTA_PERIODS } from '../api/listServices.js';
import {
  COLUMN_ROLES,
  ENCODINGS,
  EXPORT_CHOICES,
  FILE_FORMATS,
  HISTORY_SORTS,
  JOB_STATUSES,
  PURCHASE_MATCH_TYPES,
  RESULT_STATUSES,
  WARNING_CODES,
} from './constants.js';
import { servicesLackingInputs } from './listServices.js';
import { CHECKS_LEVELS, checksInfoSchema, checksInputSchema, jobChecksSchema } from './checks.js';

export * from './constants.js';

// ---------------------------------------------------------------------------------------------------------
// Replies

export const replyErrorSchema = z.object({ code: z.string(), message: z.string() });
export type ReplyError = z.infer<typeof replyErrorSchema>;

/** Every channel answers a value, never an exception. */
export type Reply<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ReplyError };

export function replySchema<T extends z.ZodType>(value: T) {
  return z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), value }),
    z.object({ ok: z.literal(false), error: replyErrorSchema }),
  ]);
}

// ---------------------------------------------------------------------------------------------------------
// Column roles (the mapper)

const columnRoleSchema = z.enum(COLUMN_ROLES);

// ---------------------------------------------------------------------------------------------------------
// App and connection

export const appInfoSchema = z.object({
  mode: z.enum(['electron', 'browser']),
  version: z.string(),
  platform: z.string(),
  /** Electron shows native open/save dialogs; browser mode uses the page's file input and downloads. */
  hasNativeDialogs: z.boolean(),
  /** Where history and results live (shown on the Connection screen). */
  home: z.string(),
});
export type AppInfo = z.infer<typeof appInfoSchema>;

export const EMBEDDED_STATES = ['stopped', 'starting', 'running', 'failed'] as const;

export const connectionInfoSchema = z.object({
  kind: z.enum(['embedded', 'provider']),
  embedded: z.object({
    state: z.enum(EMBEDDED_STATES),
    /** Why it failed, in words. */
    message: z.string().optional(),
    /** While it runs: the checks level it runs at now (the sidebar names it). */
    level: z.enum(CHECKS_LEVELS).optional(),
  }),
  provider: z
    .object({
      baseUrl: z.string(),
      /** `••••abcd`: the stored key's last 4 characters, or null when no key is stored. */
      keyMask: z.string().nullable(),
      // "Allow plain HTTP on my network" (issue #14): true when the saved connection allows it.
      allowPlainHttp: z.boolean().optional(),
    })
    .nullable(),
  /** Where keys are kept, and whether they can be: Linux's plain-text safeStorage backend is refused. */
  vault: z.object({
    storage: z.enum(['safeStorage', 'file']),
    isAvailable: z.boolean(),
    message: z.string().optional(),
  }),
});
export type ConnectionInfo = z.infer<typeof connectionInfoSchema>;

const baseUrlSchema = z
  .string()
  .trim()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'Enter the service’s address, starting with https://');

export const connectionInputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('embedded') }),
  z.object({
    kind: z.literal('provider'),
    baseUrl: baseUrlSchema,
    /** Omitted to keep the stored key, which is sent only to the address it was saved with. */
    apiKey: z.string().trim().min(1, 'Enter the API key').max(512).optional(),
    /** "Allow plain HTTP on my network": an http:// provider off this machine (the key in clear text). */
    allowPlainHttp: z.boolean().optional(),
  }),
]);
export type ConnectionInput = z.infer<typeof connectionInputSchema>;

/**
 * The quota of a key, in numbers only (the key itself never crosses to the renderer), as our service tells it
 * (`GET /v5/key`): `limited` with what is used and left in the current period and when it renews (ISO 8601,
 * UTC; null for a quota in all); `unlimited` when the service says the key has none (the local service's);
 * `unknown` when the service does not say (the provider has no `GET /v5/key`) or could not be asked.
 */
export const keyQuotaSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('limited'),
    limit: z.number().int().min(0),
    used: z.number().int().min(0),
    left: z.number().int().min(0),
    period: z.enum(QUOTA_PERIODS),
    renewsAt: z.string().nullable(),
    isTrial: z.boolean(),
  }),
  z.object({ status: z.literal('unlimited') }),
  z.object({ status: z.literal('unknown') }),
]);
export type KeyQuota = z.infer<typeof keyQuotaSchema>;

export const connectionTestSchema = z.object({
  /** The verification mode the key answers in. */
  mode: z.enum(['safe_to_send', 'email_validation']),
  latencyMs: z.number(),
  baseUrl: z.string(),
  /** The tested key's quota (told by our own service, whose `GET /v5/key` the test calls instead of E1). */
  quota: keyQuotaSchema,
});
export type ConnectionTest = z.infer<typeof connectionTestSchema>;

const listServiceSchema = z.enum(LIST_SERVICE_KEYS);

/**
 * The list services new jobs may run on the connection in use (docs/list-services.md): the embedded service
 * allows every one; another service says so through `GET /v5/key` (a Mailsieve extension), else the user's
 * choice on the Connection screen stands (validation only until they choose).
 */
export const allowedServicesSchema = z.object({
  services: z.array(listServiceSchema),
  source: z.enum(['embedded', 'key', 'chosen']),
  /** The key's fields (E7 `fields` names) when the service said them; null: not known (offer every one). */
  fields: z.array(z.string()).nullable(),
  /** What the user ticked for a provider that does not say (kept whichever connection is in use). */
  chosen: z.array(listServiceSchema),
});
export type AllowedServices = z.infer<typeof allowedServicesSchema>;

// ---------------------------------------------------------------------------------------------------------
// Files and inspection

export const stagedFileSchema = z.object({
  fileId: z.string(),
  name: z.string(),
  size: z.number(),
});
export type StagedFile = z.infer<typeof stagedFileSchema>;

export const recentFileSchema = z.object({
  path: z.string(),
  name: z.string(),
  size: z.number(),
  openedAt: z.string(),
});
export type RecentFile = z.infer<typeof recentFileSchema>;

export const inspectionWarningSchema = z.object({ code: z.enum(WARNING_CODES), message: z.string() });
export type InspectionWarning = z.infer<typeof inspectionWarningSchema>;

export const inspectedColumnSchema = z.object({
  /** 0-based. */
  index: z.number().int(),
  /** The header cell, or `Column N` for a file without a header. */
  name: z.string(),
  /** Share of the sample's non-empty values that look like addresses, 0–1. */
  emailShare: z.number(),
  suggestedRole: columnRoleSchema,
  /** Why that role: the header names it, its contents say so, or a remembered preset. */
  suggestedBy: z.enum(['header', 'content', 'preset', 'none']),
});
export type InspectedColumn = z.infer<typeof inspectedColumnSchema>;

export const inspectionSchema = z.object({
  fileId: z.string(),
  name: z.string(),
  size: z.number(),
  format: z.enum(FILE_FORMATS),
  /** For a .zip: the one file inside. */
  innerName: z.string().optional(),
  encoding: z.enum(ENCODINGS),
  delimiter: z.string(),
  delimiterHow: z.enum(['given', 'content', 'extension']),
  header: z.boolean(),
  headerHow: z.enum(['given', 'detected']),
  /** Data rows (header excluded). */
  rowCount: z.number(),
  isRowCountEstimate: z.boolean(),
  columns: z.array(inspectedColumnSchema),
  /** The first 50 data rows. */
  rows: z.array(z.array(z.string())),
  warnings: z.array(inspectionWarningSchema),
  /** The header signature under which a mapping preset is remembered. */
  signature: z.string(),
  isPresetApplied: z.boolean(),
  /** Rows per part when the file is split (the service's limit per list). */
  partLimit: z.number(),
  // xlsx sheet picker (issue #12): a workbook's sheets, and the one read (the first unless one was chosen).
  sheets: z.array(z.string()).optional(),
  sheet: z.string().optional(),
});
export type Inspection = z.infer<typeof inspectionSchema>;

export const inspectInputSchema = z.object({
  fileId: z.string(),
  /** xlsx sheet picker (issue #12): read this sheet; the answer's fileId then names the file with it. */
  sheet: z.string().min(1).max(200).optional(),
  delimiter: z.string().min(1).max(1).optional(),
  header: z.boolean().optional(),
});

export const mappingSchema = z.object({
  delimiter: z.string().min(1).max(1),
  header: z.boolean(),
  /**
   * One role per column, in column order; at most one `email` (none only for services that do without:
   * email append, intelligence by hashes or by name and address).
   */
  roles: z
    .array(columnRoleSchema)
    .min(1)
    .refine((roles) => roles.filter((r) => r === 'email').length <= 1, 'Mark only one column as Email'),
});
export type Mapping = z.infer<typeof mappingSchema>;

export const precheckSchema = z.object({
  /** Rows that will be sent (blank rows are not). */
  rowsToSend: z.number(),
  /** Of those, rows whose address fails the offline syntax check. */
  invalid: z.number(),
  /** Rows whose address appears more than once (every occurrence). */
  duplicates: z.number(),
  blank: z.number(),
  /** Rows beyond the service's per-list limit when the file is not split. */
  overLimit: z.number(),
  parts: z.number(),
});
export type Precheck = z.infer<typeof precheckSchema>;

// ---------------------------------------------------------------------------------------------------------
// Jobs

export const jobOptionsSchema = z.object({
  /** Match report only: buy no data (all services but validation); the job waits for a purchase. */
  reportOnly: z.boolean(),
  /** Split a file over the per-list limit into parts, one job each. */
  split: z.boolean(),
  /** The list services to run (E7 `services`). Jobs from before list services ran validation only. */
  services: z
    .array(listServiceSchema)
    .min(1, 'Choose at least one service')
    .default(['email_validation'])
    .transform((services) => LIST_SERVICE_KEYS.filter((key) => services.includes(key))),
  /** E7 `fields`: the intelligence fields to return; omitted, every field the key has. */
  fields: z.array(z.string().min(1).max(64)).min(1, 'Choose at least one field').max(64).optional(),
});
export type JobOptions = z.infer<typeof jobOptionsSchema>;
export type JobOptionsInput = z.input<typeof jobOptionsSchema>;

/** Says which chosen service lacks the columns it reads, in words. */
export function describeMissingInputs(services: readonly (typeof LIST_SERVICE_KEYS)[number][]): string {
  return services
    .map((service) => `${LIST_SERVICE_TITLES[service]} needs ${LIST_SERVICE_INPUTS[service]}.`)
    .join(' ');
}

export const startJobInputSchema = z
  .object({
    fileId: z.string(),
    mapping: mappingSchema,
    options: jobOptionsSchema,
  })
  .superRefine((input, context) => {
    const lacking = servicesLackingInputs(input.options.services, input.mapping.roles);
    if (lacking.length > 0)
      context.addIssue({ code: 'custom', path: ['mapping'], message: describeMissingInputs(lacking) });
  });
export type StartJobInput = z.infer<typeof startJobInputSchema>;

export const serviceProgressSchema = z.object({
  name: z.string(),
  status: z.string(),
  completed: z.number(),
  input: z.number(),
});

/** The online phase of a list with DNS or SMTP checks (E8's `online`, a Mailsieve extension). */
export const onlineProgressSchema = z.object({
  rowsToCheck: z.number(),
  rowsChecked: z.number(),
  domainsTotal: z.number(),
  domainsDone: z.number(),
  ratePerSecond: z.number(),
  /** Rows waiting for a retry of a temporary failure, and when it is asked (ISO 8601); 0 and null: none. */
  retryRows: z.number(),
  retryAt: z.string().nullable(),
  isFinishedEarly: z.boolean(),
  /** Unknown rows so far, by cause, largest first (E8's `online.unknown_causes`). */
  unknownCauses: z.array(unknownCauseCountSchema).optional(),
  /** The mail host whose allowance the list waits on, in words (E8's `online.paced_by.words`). */
  pacedBy: z.string().optional(),
});
export type OnlineProgress = z.infer<typeof onlineProgressSchema>;

export const jobProgressSchema = z.object({
  jobId: z.number().int(),
  status: z.enum(JOB_STATUSES),
  /** The list's status at the service (Pending, Processing, Results…), once submitted. */
  listStatus: z.string().nullable(),
  sentBytes: z.number(),
  totalBytes: z.number(),
  completed: z.number(),
  total: z.number(),
  /** Bytes per second while uploading, records per second while processing. */
  rate: z.number().nullable(),
  etaSeconds: z.number().nullable(),
  services: z.array(serviceProgressSchema),
  /** The online phase, for a list with DNS or SMTP checks. */
  online: onlineProgressSchema.nullable().optional(),
  /** A re-check of the job's unknown rows under way: how far it is, in words (issue #11). */
  recheck: z.object({ words: z.string() }).optional(),
});
export type JobProgress = z.infer<typeof jobProgressSchema>;

/** Match reports of the services beyond validation (shared/desktop/listServices.ts `MatchReports`). */
export const matchReportsSchema = z.object({
  email_intelligence: z.record(z.string(), z.number()).optional(),
  email_append: z.object({ individual: z.number(), household: z.number() }).optional(),
  alternate_email_append: z.record(z.string(), z.number()).optional(),
});

/** What the user bought of a report-only job (E9), and when. */
export const jobPurchaseSchema = z.object({
  /** E9 `fields`: intelligence fields and service keys. */
  fields: z.array(z.string()),
  matchType: z.enum(PURCHASE_MATCH_TYPES),
  at: z.string(),
});
export type JobPurchase = z.infer<typeof jobPurchaseSchema>;

export const jobSummarySchema = z.object({
  id: z.number().int(),
  createdAt: z.string(),
  fileName: z.string(),
  status: z.enum(JOB_STATUSES),
  rows: z.number().nullable(),
  /**
   * Ready to mail: the rows the job's default export writes, the figure its Results, Summary and PDF show
   * (issue 39: not the valid and corrected rows, duplicates included); null until its results are counted.
   */
  ready: z.number().nullable(),
  invalid: z.number().nullable(),
  connection: z.string(),
  /** The checks level the job ran with (null: not recorded, a job from before). */
  checks: jobChecksSchema.shape.level.nullable().default(null),
  /** Rows its results could not check, codes 5 and 10 (null: no validation reporting): Re-check (issue #11). */
  unknown: z.number().nullable().default(null),
  hasResults: z.boolean().default(false),
});
export type JobSummary = z.infer<typeof jobSummarySchema>;

export const jobListInputSchema = z.object({
  search: z.string().max(200).optional(),
  status: z.enum(JOB_STATUSES).optional(),
  /** ISO dates (YYYY-MM-DD), inclusive. */
  from: z.string().optional(),
  to: z.string().optional(),
  sort: z.enum(HISTORY_SORTS).default('created'),
  direction: z.enum(['asc', 'desc']).default('desc'),
});
export type JobListInput = z.input<typeof jobListInputSchema>;

export const jobListSchema = z.object({ total: z.number(), items: z.array(jobSummarySchema) });
export type JobList = z.infer<typeof jobListSchema>;

export const exportInfoSchema = z.object({
  id: z.number().int(),
  /** What the export left out by choice (duplicates, role, disposable), when it was shaped for import. */
  leftOut: z.object({ duplicates: z.number(), role: z.number(), disposable: z.number() }).optional(),
  jobId: z.number().int(),
  createdAt: z.string(),
  kind: z.enum(EXPORT_RECORD_KINDS),
  statuses: z.array(z.string()),
  fileName: z.string(),
  rows: z.number(),
  bytes: z.number(),
  /** An export planned against a bounce budget (issue 37): its expected rate and what it left out. */
  budget: budgetOutcomeSchema.optional(),
});
export type ExportInfo = z.infer<typeof exportInfoSchema>;

export const timelineEntrySchema = z.object({
  at: z.string(),
  status: z.string(),
  message: z.string().nullable(),
});

// ---------------------------------------------------------------------------------------------------------
// Re-check unknown rows (issue #11): the versions of a job's results, and a re-check under way.

/** A version of a job's results: 1 the first results, then one per re-check with what it changed. */
export const jobVersionSchema = z.object({
  version: z.number().int(),
  createdAt: z.string(),
  resultsName: z.string(),
  checks: jobChecksSchema,
  /** "412 unknown → 380 valid, 25 invalid, 7 still unknown"; null for version 1. */
  change: z.string().nullable(),
  isCurrent: z.boolean(),
});
export type JobVersion = z.infer<typeof jobVersionSchema>;

export const jobRecheckSchema = z.object({
  /** Rows the current results could not check (codes 5 and 10); null when the job has no validation. */
  unknownRows: z.number().nullable(),
  /** How far a re-check under way is, in words; null when none runs. */
  running: z.string().nullable(),
  /** How the last re-check of this run of the app ended when it did not complete (stopped, failed). */
  error: z.string().nullable(),
  /** Empty until the first re-check. */
  versions: z.array(jobVersionSchema),
});
export type JobRecheck = z.infer<typeof jobRecheckSchema>;

export const jobDetailSchema = z.object({
  id: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  status: z.enum(JOB_STATUSES),
  message: z.string().nullable(),
  file: z.object({
    name: z.string(),
    size: z.number(),
    sha256: z.string().nullable(),
    format: z.enum(FILE_FORMATS),
    encoding: z.string().nullable(),
  }),
  mapping: mappingSchema,
  options: jobOptionsSchema,
  connection: z.object({ kind: z.enum(['embedded', 'provider']), baseUrl: z.string().nullable() }),
  part: z.object({ index: z.number(), count: z.number() }).nullable(),
  listId: z.number().nullable(),
  rows: z.number().nullable(),
  timeline: z.array(timelineEntrySchema),
  /** The last status document (E8), as the service sent it (typed by shared/api's schema). */
  lastDocument: listResourceSchema.nullable(),
  /** The email_validation reporting of that document (the last one it gave: kept while a purchase reruns). */
  reporting: emailValidationReportingSchema.nullable(),
  /** The other services' match reports (the last ones the service gave; kept while a purchase reruns). */
  matchReports: matchReportsSchema,
  /** For a report-only job: what was bought, once it was. */
  purchase: jobPurchaseSchema.nullable(),
  /** Whether the results file is on disk (re-export works offline from it). */
  hasResults: z.boolean(),
  /** Re-check unknown rows: the versions of the results and a re-check under way (issue #11). */
  recheck: jobRecheckSchema.optional(),
  /** Rows marked `Duplicate` in the results (every occurrence). */
  duplicates: z.number().nullable(),
  resultsName: z.string().nullable(),
  exports: z.array(exportInfoSchema),
  progress: jobProgressSchema.nullable(),
  /** Statuses the key's mode reports for good addresses on the connection used (offline: unknown). */
  checks: z.enum(['offline', 'online', 'provider']),
  /** The checks level the job ran with and why (null: a job from before levels were recorded). */
  checksRun: jobChecksSchema.nullable(),
});
export type JobDetail = z.infer<typeof jobDetailSchema>;

// Results numbers and the drill-down (issue #12 "one truthful set of numbers", "drill down anywhere"; #11 "why,
// per row"): the counts of a results file, and the rows matching a filter a page at a time.
export const resultsCountsSchema = z.object({
  rows: z.number(),
  /** The default export's kind and the rows it writes (Ready to mail). */
  exportKind: z.string(),
  ready: z.number(),
  invalid: z.number(),
  risky: z.number(),
  unknown: z.number(),
  duplicatesLeftOut: z.number(),
  /** Rows by final status (lower case). */
  statuses: z.record(z.string(), z.number()),
  /** Rows by (code, final status). */
  codes: z.array(z.object({ code: z.number(), status: z.string(), rows: z.number() })),
  domainTypes: z.record(z.string(), z.number()),
  roleAccounts: z.number(),
  duplicates: z.number(),
});
export type ResultsCounts = z.infer<typeof resultsCountsSchema>;

export const previewInputSchema = z.object({
  jobId: z.number().int(),
  /** Rows of this status (kept for older callers; `filter` says more). */
  status: z.enum(RESULT_STATUSES).optional(),
  /** Which rows: omitted or empty, every row. */
  filter: rowFilterSchema.optional(),
  /** The first matching row to answer (0-based) and how many. */
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(500).default(100),
});
export const previewSchema = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.array(z.string())),
  /** Whether more matching rows exist beyond `rows`. */
  hasMore: z.boolean(),
  /** Every matching row, and where `rows` start among them. */
  total: z.number(),
  offset: z.number(),
  /** Each row's number in the list (1-based). */
  numbers: z.array(z.number()),
  /** Where the row view's columns are (-1: none): the address, status, code, domain type, correction. */
  layout: z.object({
    email: z.number(),
    status: z.number(),
    code: z.number(),
    domainType: z.number(),
    validEmail: z.number(),
  }),
  /** Why, per row (what was checked and what answered), kept with the job; null when the job has none. */
  whys: z.array(z.string()).nullable(),
  /** Said of every row when there is no why per row ("Checked offline: syntax only"). */
  whyNote: z.string().nullable(),
});
export type Preview = z.infer<typeof previewSchema>;

export const exportInputSchema = z
  .object({
    jobId: z.number().int(),
    kind: z.enum(EXPORT_CHOICES),
    statuses: z.array(z.enum(RESULT_STATUSES)).optional(),
    /** "Export these rows": only the rows a drill-down shows (with kind `all`: as they are in the results). */
    filter: rowFilterSchema.optional(),
    /**
     * Exports for import (shared/exportChoices.ts): duplicates, role and disposable addresses left out as
     * chosen, in a format. Omitted: each kind's defaults, as CSV.
     */
    choices: z
      .object({
        dedupe: z.boolean(),
        dropRole: z.boolean(),
        dropDisposable: z.boolean(),
        format: z.enum(EXPORT_FORMATS),
      })
      .optional(),
    /**
     * "Keep the expected bounce rate under X%" (issue 37), in percent: the safe rows, then accept-all and
     * unknown rows in order of their measured risk while the file's expected rate stays under it.
     */
    maxBounceRate: z.number().min(0).max(100).optional(),
  })
  .refine((input) => input.kind !== 'custom' || (input.statuses?.length ?? 0) > 0, {
    message: 'Choose at least one status to export',
  });
export type ExportInput = z.infer<typeof exportInputSchema>;

// Printable summary (issue #12): the spec's match report and chart data CSVs of a job, saved as its exports.
export const saveReportInputSchema = z.object({
  jobId: z.number().int(),
  report: z.enum(REPORT_CSVS),
});
export type SaveReportInput = z.infer<typeof saveReportInputSchema>;

/** Buying a report-only job's results (E9): the fields to buy and the email append match type. */
export const purchaseInputSchema = z.object({
  jobId: z.number().int(),
  /** Matched intelligence fields and service keys (`email_append`, `alternate_email_append`). */
  fields: z.array(z.string().min(1).max(64)).min(1, 'Choose at least one field to buy').max(64),
  matchType: z.enum(PURCHASE_MATCH_TYPES).default('H'),
});
export type PurchaseInput = z.input<typeof purchaseInputSchema>;

// ---------------------------------------------------------------------------------------------------------
// Verify one address

export const verifyInputSchema = z.object({ email: z.string().trim().min(1, 'Enter an address').max(512) });
export const verifyAnswerSchema = z.object({
  mode: z.enum(['safe_to_send', 'email_validation']),
  address: z.string(),
  status: z.string(),
  statusCode: z.number(),
  domainType: z.string().nullable(),
  isRoleAccount: z.boolean(),
  corrections: z.array(z.string()),
  engagementScore: z.number().nullable(),
  connection: z.enum(['embedded', 'provider']),
  /** What the service could check: offline checks confirm syntax only. */
  checks: z.enum(['offline', 'online', 'provider']),
  /** The checks level of the local service and why (the provider's: `provider`). */
  checksRun: jobChecksSchema,
  /** What was asked and answered (DNS answers, the SMTP conversation); the local service's answers only. */
  explain: z.array(z.string()),
});
export type VerifyAnswer = z.infer<typeof verifyAnswerSchema>;

// ---------------------------------------------------------------------------------------------------------
// Look up one person (E5)

const HASH_HEX = /^([0-9a-f]{32}|[0-9a-f]{40})$/i;
const part = (max: number) => z.string().trim().max(max).default('');

/** Whom to look up: by address, by the MD5/SHA-1 of an address, or by name and postal address. */
export const personLookupInputSchema = z.discriminatedUnion('by', [
  z.object({ by: z.literal('email'), email: z.string().trim().min(1, 'Enter an address').max(512) }),
  z.object({
    by: z.literal('hash'),
    hash: z
      .string()
      .trim()
      .regex(HASH_HEX, 'Enter an MD5 (32 hex digits) or SHA-1 (40 hex digits) hash of the address'),
  }),
  z
    .object({
      by: z.literal('postal'),
      first: z.string().trim().min(1, 'Enter the first name').max(100),
      last: z.string().trim().min(1, 'Enter the last name').max(100),
      street: z.string().trim().min(1, 'Enter the street').max(200),
      city: part(100),
      state: part(40),
      zip: part(10),
    })
    .refine((input) => input.zip !== '' || (input.city !== '' && input.state !== ''), {
      message: 'Enter the ZIP code, or the city and state',
      path: ['zip'],
    }),
]);
export type PersonLookupInput = z.input<typeof personLookupInputSchema>;

/**
 * A person's E5 answer, reduced to what the screen explains. Enumerated values stay plain strings: a provider
 * may add a value, and one new band must not fail the whole answer.
 */
export const personAnswerSchema = z.object({
  connection: z.enum(['embedded', 'provider']),
  /** False for `{}`: nobody in the reference data matched. */
  isMatch: z.boolean(),
  /** Scalar intelligence fields present in the answer, by their API names. */
  attributes: z.record(z.string(), z.union([z.string(), z.number()])),
  /** Names of the interests present and true. */
  interests: z.array(z.string()),
  eam: z
    .object({
      dateFirstSeen: z.string(),
      longevity: z.number(),
      velocity: z.number(),
      popularity: z.number(),
      monthLastOpen: z.string().nullable(),
    })
    .nullable(),
  postalAddress: z
    .object({
      firstName: z.string(),
      lastName: z.string(),
      address: z.string(),
      city: z.string(),
      state: z.string(),
      zip: z.string(),
    })
    .nullable(),
});
export type PersonAnswer = z.infer<typeof personAnswerSchema>;

// ---------------------------------------------------------------------------------------------------------
// Import reference data from Look up a person (issue #15): a people or activity file, or a bounces file (issue
// #22: the user's own hard bounces, code 520), the same import as `mailsieve data import
// people|activity|bounces`, into the local service's store.

export const REFERENCE_KINDS = ['people', 'activity', 'bounces'] as const;
export type ReferenceKind = (typeof REFERENCE_KINDS)[number];

/** The file to import: one staged in browser mode (`fileId`), or one the native dialog picked (`path`). */
export const referenceImportInputSchema = z
  .object({
    kind: z.enum(REFERENCE_KINDS),
    fileId: z.string().min(1).optional(),
    path: z.string().min(1).optional(),
  })
  .refine((input) => (input.fileId === undefined) !== (input.path === undefined), {
    message: 'Give the file to import',
  });
export type ReferenceImportInput = z.input<typeof referenceImportInputSchema>;

/** An import's outcome, as the CLI reports it: rows read, imported, rejected (the first ones by line). */
export const referenceImportSchema = z.object({
  kind: z.enum(REFERENCE_KINDS),
  fileName: z.string(),
  /** `cancelled`: stopped by the user; the rows written before it stopped stay. */
  status: z.enum(['done', 'cancelled']),
  rows: z.number(),
  imported: z.number(),
  rejected: z.number(),
  /** The first rejected rows (all are counted in `rejected`). */
  errors: z.array(z.object({ line: z.number(), message: z.string() })),
  warnings: z.array(z.string()),
  /**
   * people: people added and updated. activity: events added, and events already stored. bounces: addresses
   * added, and addresses whose latest hard bounce moved later.
   */
  added: z.number(),
  updated: z.number(),
  seconds: z.number(),
  /** bounces: the rows by kind (`imported` counts the hard bounces; soft and other rows are not stored). */
  bounces: z.object({ hard: z.number(), soft: z.number(), other: z.number() }).optional(),
});
export type ReferenceImport = z.infer<typeof referenceImportSchema>;

export const referenceImportProgressSchema = z.object({
  kind: z.enum(REFERENCE_KINDS),
  fileName: z.string(),
  rows: z.number(),
  imported: z.number(),
  rejected: z.number(),
  bytesRead: z.number(),
  totalBytes: z.number(),
});
export type ReferenceImportProgress = z.infer<typeof referenceImportProgressSchema>;

// ---------------------------------------------------------------------------------------------------------
// Channels

const none = z.object({}).strict();
const jobIdInput = z.object({ jobId: z.number().int() });

// After the campaign (issue 37): a file given to the core, by the id of a copy the app made (browser mode) or
// by its path (the native dialog).
const givenFileSchema = z
  .object({ fileId: z.string().min(1).optional(), path: z.string().min(1).optional() })
  .refine((input) => (input.fileId === undefined) !== (input.path === undefined), {
    message: 'Give the file',
  });
export const outcomesImportInputSchema = z.object({
  jobId: z.number().int(),
  /** The mailing platform's bounce or suppression export (any shape `data import bounces` reads). */
  bounces: givenFileSchema,
  /** The platform's sent or delivered list, when the user has one. */
  sent: givenFileSchema.optional(),
});
export type OutcomesImportInput = z.input<typeof outcomesImportInputSchema>;
export const jobChangesInputSchema = z.object({
  jobId: z.number().int(),
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(500).default(100),
});

export const CHANNELS = {
  'app:get-info': { input: none, output: appInfoSchema },
  'connection:get': { input: none, output: connectionInfoSchema },
  'connection:test': { input: connectionInputSchema, output: connectionTestSchema },
  'connection:set': { input: connectionInputSchema, output: connectionInfoSchema },
  'keys:clear': { input: none, output: connectionInfoSchema },
  'connection:get-services': { input: none, output: allowedServicesSchema },
  /** The quota of the saved connection's key, as its service tells it (issue #29). */
  'connection:get-quota': { input: none, output: keyQuotaSchema },
  'connection:set-services': {
    input: z.object({ services: z.array(listServiceSchema).min(1, 'Choose at least one service') }),
    output: allowedServicesSchema,
  },
  'checks:get': { input: none, output: checksInfoSchema },
  // Checked again in the core (ChecksSetting.save): the password must not reach an error message.
  'checks:set': { input: checksInputSchema, output: checksInfoSchema },
  'checks:preflight': { input: none, output: checksInfoSchema },
  'files:add-path': { input: z.object({ path: z.string().min(1) }), output: stagedFileSchema },
  'files:list-recent': { input: none, output: z.array(recentFileSchema) },
  'files:inspect': { input: inspectInputSchema, output: inspectionSchema },
  'files:precheck': {
    input: z.object({ fileId: z.string(), mapping: mappingSchema, split: z.boolean() }),
    output: precheckSchema,
  },
  /** Cancels the pre-check of a file under way. */
  'files:cancel': { input: z.object({ fileId: z.string() }), output: z.object({ cancelled: z.boolean() }) },
  'jobs:start': { input: startJobInputSchema, output: z.object({ jobIds: z.array(z.number().int()) }) },
  'jobs:list': { input: jobListInputSchema, output: jobListSchema },
  /** Jobs running now, and those this run of the app took up from the last (left running when it closed). */
  'jobs:activity': {
    input: none,
    output: z.object({
      running: z.array(
        z.object({ id: z.number().int(), fileName: z.string(), status: z.enum(JOB_STATUSES) }),
      ),
      resumed: z.array(
        z.object({ id: z.number().int(), fileName: z.string(), status: z.enum(JOB_STATUSES) }),
      ),
    }),
  },
  'jobs:get': { input: jobIdInput, output: jobDetailSchema },
  'jobs:cancel': { input: jobIdInput, output: jobDetailSchema },
  'jobs:delete': { input: jobIdInput, output: z.object({ deleted: z.boolean() }) },
  /** A cancelled or failed job again, as a new job: its id. */
  'jobs:rerun': { input: jobIdInput, output: z.object({ jobId: z.number().int() }) },
  'jobs:preview': { input: previewInputSchema, output: previewSchema },
  'jobs:export': { input: exportInputSchema, output: exportInfoSchema },
  /** The Results screen's numbers of a job (issue #12): counted once from its results file, then kept. */
  'jobs:counts': { input: jobIdInput, output: resultsCountsSchema },
  // Printable summary (issue #12): a report CSV of the job (match report, chart data), kept as an export.
  'jobs:save-report': { input: saveReportInputSchema, output: exportInfoSchema },
  'jobs:purchase': { input: purchaseInputSchema, output: jobDetailSchema },
  /** Finish now: a job waiting for a retry of temporary failures stops waiting (those rows stay unknown). */
  'jobs:finish-now': { input: jobIdInput, output: jobDetailSchema },
  // Re-check unknown rows (issue #11): starts a re-check (progress on job:progress, the end on jobs:changed);
  // stops one under way (the results stay as they were).
  'jobs:recheck': { input: jobIdInput, output: jobDetailSchema },
  'jobs:recheck-cancel': { input: jobIdInput, output: jobDetailSchema },
  'verify:address': { input: verifyInputSchema, output: verifyAnswerSchema },
  'people:lookup': { input: personLookupInputSchema, output: personAnswerSchema },
  // Import reference data from Look up a person (issue #15).
  'people:import': { input: referenceImportInputSchema, output: referenceImportSchema },
  /** Cancels the import under way (the rows written so far stay). */
  'people:import-cancel': { input: none, output: z.object({ cancelled: z.boolean() }) },
  // After the campaign (issue 37): a job's verdicts against the campaign's bounces, kept with the job.
  'outcomes:import': { input: outcomesImportInputSchema, output: outcomesReportSchema },
  /** The job's last imported outcomes; null before any. */
  'outcomes:get': { input: jobIdInput, output: outcomesReportSchema.nullable() },
  /** What changed against the latest earlier job holding the same addresses (a page of the changed rows). */
  'jobs:changes': { input: jobChangesInputSchema, output: jobChangesSchema },
  /** An export of only the changed rows, kept as the job's export (kind `changed`). */
  'jobs:export-changes': { input: jobIdInput, output: exportInfoSchema },
} as const;

export type Channel = keyof typeof CHANNELS;
export const CHANNEL_NAMES = Object.keys(CHANNELS) as Channel[];
export type ChannelInput<C extends Channel> = z.input<(typeof CHANNELS)[C]['input']>;
export type ChannelParsedInput<C extends Channel> = z.output<(typeof CHANNELS)[C]['input']>;
export type ChannelOutput<C extends Channel> = z.output<(typeof CHANNELS)[C]['output']>;

export function isChannel(name: string): name is Channel {
  return Object.prototype.hasOwnProperty.call(CHANNELS, name);
}

// ---------------------------------------------------------------------------------------------------------
// Events (core → UI)

export const EVENTS = {
  /** Rows of the history changed (a write announces what it touched). */
  'jobs:changed': z.object({ jobIds: z.array(z.number().int()) }),
  'job:progress': jobProgressSchema,
  'connection:changed': connectionInfoSchema,
  /** A file opened from the menu (File → Open list…, Open recent) or dropped on the window. */
  'files:opened': stagedFileSchema,
  /** How far the pre-check of a file is: bytes of its text read, data rows seen. */
  'files:progress': z.object({
    fileId: z.string(),
    bytesRead: z.number(),
    totalBytes: z.number(),
    rows: z.number(),
  }),
  // Import reference data from Look up a person (issue #15): how far the import is.
  'people:import-progress': referenceImportProgressSchema,
} as const;

export type AppEvent = keyof typeof EVENTS;
export const EVENT_NAMES = Object.keys(EVENTS) as AppEvent[];
export type EventPayload<E extends AppEvent> = z.output<(typeof EVENTS)[E]>;
