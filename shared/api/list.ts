// List processing (E7–E10): the list resource (status document, also the callback payload), its
// per-service reporting, the E7 query parameters and 202 body, and the E9 purchase body.
//
// Documents from a service are read tolerantly: objects keep members this version does not know (our own
// `reason` is one, a newer service may add more), and status strings outside the spec's tables are kept as
// strings rather than failing the whole document. Count members of a report are optional, since a report
// may leave out a zero.
import { unknownCauseCountSchema } from '../unknownCauses.js';
import { fileNameProblem } from '../fileName.js';
import { z } from 'zod';
import { CALLBACK_URL_MAX_LENGTH } from './limits.js';
import { LIST_SERVICE_KEYS, LIST_SERVICE_NEEDS, type ListServiceKey } from './listServiceNames.js';

export { LIST_SERVICE_KEYS, LIST_SERVICE_NEEDS, type ListServiceKey };

/** A schema accepting the known values and, tolerantly, any other string; the type keeps the known ones. */
function knownOr<const T extends readonly [string, ...string[]]>(values: T) {
  return z.union([z.enum(values), z.custom<string & {}>((value) => typeof value === 'string')]);
}

// ---------------------------------------------------------------------------------------------------------
// Services

/**
 * Parses E7's `services` (a Mailsieve extension) or `mailsieve clean --services`: comma-separated list service
 * keys (`email_validation`, …) or the key service names of DESIGN.md that stand for them (`validation`,
 * `intelligence` or `eam`, `email_append`, `alternate_email`); `all` for every list service. Other key
 * service names (`corrections`, `postal_append`) are settings of the key, not list services: they are
 * accepted and stand for nothing. Returns the services, or the first word that is none.
 */
export function parseListServices(
  text: string,
): { ok: true; services: ListServiceKey[] } | { ok: false; unknown: string } {
  const chosen = new Set<ListServiceKey>();
  for (const raw of text.split(',')) {
    const word = raw.trim().toLowerCase();
    if (word === '') continue;
    if (word === 'all') {
      LIST_SERVICE_KEYS.forEach((key) => chosen.add(key));
      continue;
    }
    if ((LIST_SERVICE_KEYS as readonly string[]).includes(word)) {
      chosen.add(word as ListServiceKey);
      continue;
    }
    const byName = LIST_SERVICE_KEYS.find((key) =>
      (LIST_SERVICE_NEEDS[key] as readonly string[]).includes(word),
    );
    if (byName) chosen.add(byName);
    else if (word === 'corrections' || word === 'postal_append') continue;
    else return { ok: false, unknown: raw.trim() };
  }
  return { ok: true, services: LIST_SERVICE_KEYS.filter((key) => chosen.has(key)) };
}

export const LIST_STATUSES = [
  'Pending',
  'Processed',
  'Processing',
  'Results',
  'Cancelled',
  'Invalid',
  'Error',
] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];

/** List statuses after which the list no longer changes: polling stops there. */
export const LIST_FINAL_STATUSES = [
  'Results',
  'Cancelled',
  'Invalid',
  'Error',
] as const satisfies readonly ListStatus[];

export function isFinalListStatus(status: string): boolean {
  return (LIST_FINAL_STATUSES as readonly string[]).includes(status);
}

/**
 * A list submitted with `report=true` whose match reports are ready: `Processed` with every service
 * `Completed`. It waits there for a purchase (E9), after which it runs again to `Results`.
 */
export function isAwaitingPurchase(list: { status: string; services: Record<string, unknown> }): boolean {
  if (list.status !== 'Processed') return false;
  const services = Object.values(list.services).filter(
    (service): service is { status: string } =>
      typeof service === 'object' && service !== null && 'status' in service,
  );
  return services.length > 0 && services.every((service) => service.status === 'Completed');
}

export const SERVICE_STATUSES = ['Pending', 'Processing', 'Completed', 'Cancelled', 'Error'] as const;
export type ServiceStatus = (typeof SERVICE_STATUSES)[number];

// ---------------------------------------------------------------------------------------------------------
// Reporting

const count = z.number().int().nonnegative();

function countsKeyedBy<const K extends readonly string[]>(keys: K) {
  const shape = Object.fromEntries(keys.map((key) => [key, count.optional()])) as {
    [P in K[number]]: z.ZodOptional<typeof count>;
  };
  return z.looseObject(shape);
}

export const REPORT_STATUS_KEYS = [
  'Valid',
  'Invalid',
  'Risky',
  'Unknown',
  'Unverifiable',
  'Corrected',
] as const;
export const REPORT_INVALID_CATEGORY_KEYS = [
  'Syntax Errors',
  'Domain Errors',
  'Mailbox Errors',
  'Suppressions',
] as const;
export const REPORT_DOMAIN_TYPE_KEYS = [
  'Disposable',
  'Free ISP',
  'Paid ISP',
  'Wireless',
  'Education',
  'Government',
  'Business',
  'Non-profit',
  'Parked',
  'Privacy',
  'Unknown',
] as const;
export const REPORT_EMAIL_MATCH_KEYS = ['Individual match', 'Household match'] as const;
export const REPORT_ALTERNATE_MATCH_KEYS = [
  'Individual match',
  'Household match',
  '2nd Individual match',
  '2nd Household match',
  '3rd Individual match',
  '3rd Household match',
  '4th Individual match',
  '4th Household match',
  '5th Individual match',
  '5th Household match',
] as const;

/** The attribute table of the spec names the domain counts `domain_types`; reports show `domain_type`. */
function renameDomainTypes(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !('domain_types' in value)) return value;
  const { domain_types, ...rest } = value as Record<string, unknown>;
  return 'domain_type' in rest ? rest : { ...rest, domain_type: domain_types };
}

export const emailValidationReportingSchema = z.preprocess(
  renameDomainTypes,
  z.looseObject({
    statuses: countsKeyedBy(REPORT_STATUS_KEYS).optional(),
    invalid_categories: countsKeyedBy(REPORT_INVALID_CATEGORY_KEYS).optional(),
    domain_type: countsKeyedBy(REPORT_DOMAIN_TYPE_KEYS).optional(),
    role_accounts: count.optional(),
    /** Counts keyed by status code as a string; codes this version does not know are kept. */
    status_codes: z.record(z.string(), count).optional(),
    trap_hits: z.looseObject({ 'Trap Hits': count }).optional(),
  }),
);
export type EmailValidationReporting = z.infer<typeof emailValidationReportingSchema>;

/** One member per matched field name. */
export const emailIntelligenceReportingSchema = z.record(z.string(), z.looseObject({ 'Total Count': count }));
export type EmailIntelligenceReporting = z.infer<typeof emailIntelligenceReportingSchema>;

export const emailAppendReportingSchema = z.looseObject({
  email_match_type: countsKeyedBy(REPORT_EMAIL_MATCH_KEYS).optional(),
});
export type EmailAppendReporting = z.infer<typeof emailAppendReportingSchema>;

export const alternateEmailAppendReportingSchema = z.looseObject({
  alternate_match_type: countsKeyedBy(REPORT_ALTERNATE_MATCH_KEYS).optional(),
});
export type AlternateEmailAppendReporting = z.infer<typeof alternateEmailAppendReportingSchema>;

function serviceSchema<R extends z.ZodType>(reporting: R) {
  return z.looseObject({
    input_count: count,
    /** Compare to `input_count` for progress. */
    completed_count: count,
    status: knownOr(SERVICE_STATUSES),
    /** Present once the service is complete. */
    reporting: reporting.optional(),
  });
}

export const emailValidationServiceSchema = serviceSchema(emailValidationReportingSchema);
export const emailIntelligenceServiceSchema = serviceSchema(emailIntelligenceReportingSchema);
export const emailAppendServiceSchema = serviceSchema(emailAppendReportingSchema);
export const alternateEmailAppendServiceSchema = serviceSchema(alternateEmailAppendReportingSchema);
export type EmailValidationService = z.infer<typeof emailValidationServiceSchema>;
export type EmailIntelligenceService = z.infer<typeof emailIntelligenceServiceSchema>;
export type EmailAppendService = z.infer<typeof emailAppendServiceSchema>;
export type AlternateEmailAppendService = z.infer<typeof alternateEmailAppendServiceSchema>;

/** One child per service run; a service the list did not run is absent. */
export const listServicesSchema = z.looseObject({
  email_validation: emailValidationServiceSchema.optional(),
  email_intelligence: emailIntelligenceServiceSchema.optional(),
  email_append: emailAppendServiceSchema.optional(),
  alternate_email_append: alternateEmailAppendServiceSchema.optional(),
});
export type ListServices = z.infer<typeof listServicesSchema>;

// ---------------------------------------------------------------------------------------------------------
// The list resource

/** The status document of E8, and the payload of the list-completion callback. */
export const listResourceSchema = z.looseObject({
  list_id: z.number().int(),
  name: z.string(),
  status: knownOr(LIST_STATUSES),
  /** Non-blank records with data to process; header row excluded. */
  records: count,
  /** Bytes originally in the list. */
  size_bytes: count,
  /** Submission time, ISO 8601 UTC. */
  created_at: z.string(),
  services: listServicesSchema,
  /** Our addition: why a list is `Invalid` or `Error`, in words for a person. */
  reason: z.string().optional(),
  /** Our addition: the checks level the list runs (ran) with: offline, dns or smtp. */
  checks: z.enum(['offline', 'dns', 'smtp']).optional(),
  /** Our addition: the online phase of a list with DNS or SMTP checks (see listOnlineSchema). */
  online: z.lazy(() => listOnlineSchema).optional(),
  /** Our addition: the delimiter the file was read with (the `delimiter` parameter, or detected). */
  delimiter: z.string().optional(),
});
export type ListResource = z.infer<typeof listResourceSchema>;

/**
 * Our addition to E8: progress of a list's online checks, and its wait for a retry of temporary failures
 * (greylisting, timeouts). `retry_rows` rows wait for a retry at `retry_at` (ISO 8601 UTC); POST
 * /v5/list/{id}/finish ends the wait (those rows stay unknown, code 5).
 */
export const listOnlineSchema = z.looseObject({
  /** Rows undecided offline, to check online. */
  rows_to_check: count,
  /** Of those, rows with their final online verdict. */
  rows_checked: count,
  domains_total: count,
  /** Domains all of whose addresses have had their first answer. */
  domains_done: count,
  /** Rows checked online per second, over the online phase so far. */
  rate_per_s: z.number().nonnegative(),
  /** Rows waiting for a retry (0: none). */
  retry_rows: count,
  /** When the next retry is asked, ISO 8601 UTC; null when none waits. */
  retry_at: z.string().nullable(),
  /** Retries asked so far. */
  retry_attempt: count,
  /** The wait was ended early (Finish now): rows still waiting stayed unknown. */
  finished_early: z.boolean().optional(),
  /**
   * The mail host whose allowance the list waits on, while one does (issue #26): its name, what it allows this
   * computer in words, how many addresses wait for it, and the whole sentence: "mx.bigcorp.com allows this
   * computer 2 connections at a time and about 30 a minute: 240 addresses wait for it".
   */
  paced_by: z
    .object({ host: z.string(), allowance: z.string(), waiting: count, words: z.string() })
    .optional(),
  /**
   * Rows answered unknown (code 5) so far, by cause, largest first: "412 rows: mx.example.net refused this
   * machine's HELO name" with the setting that would change it (shared/unknownCauses.ts).
   */
  unknown_causes: z.array(unknownCauseCountSchema).optional(),
});
export type ListOnline = z.infer<typeof listOnlineSchema>;

/** The callback POSTs the same document as E8. */
export const listCallbackSchema = listResourceSchema;
export type ListCallback = ListResource;

/** Progress over the services of a list: completed and input counts summed. */
export function listProgress(list: Pick<ListResource, 'services'>): { completed: number; total: number } {
  let completed = 0;
  let total = 0;
  for (const key of LIST_SERVICE_KEYS) {
    const service = list.services[key];
    if (!service) continue;
    completed += Math.min(service.completed_count, service.input_count);
    total += service.input_count;
  }
  return { completed, total };
}

// ---------------------------------------------------------------------------------------------------------
// E7: submit a list

export const LIST_NAME_DEFAULT = 'myfile.csv';
export const LIST_FILE_EXTENSIONS = ['.txt', '.csv', '.zip'] as const;
export type ListFileExtension = (typeof LIST_FILE_EXTENSIONS)[number];
/** The delimiter when neither the parameter nor the file's extension says otherwise. */
export const DELIMITER_DEFAULT = '\t';

/** The extension of a list file name (lower-cased), or undefined when it is not one the spec allows. */
export function listFileExtension(name: string): ListFileExtension | undefined {
  const match = /\.(txt|csv|zip)$/i.exec(name);
  return match ? (`.${match[1].toLowerCase()}` as ListFileExtension) : undefined;
}

/**
 * The delimiter a list is read with: the `delimiter` parameter, else by extension (`.csv` comma, `.txt`
 * tab), else tab. For a `.zip`, pass the name of the file inside.
 */
export function effectiveDelimiter(params: { delimiter?: string | undefined }, fileName: string): string {
  if (params.delimiter !== undefined) return params.delimiter;
  return listFileExtension(fileName) === '.csv' ? ',' : DELIMITER_DEFAULT;
}

export const listNameSchema = z
  .string()
  .superRefine((name, context) => {
    const problem = fileNameProblem(name);
    if (problem) context.addIssue({ code: 'custom', message: problem, abort: true });
  })
  .refine((name) => /^.+\.(txt|csv|zip)$/i.test(name), 'The name must end in .txt, .csv or .zip');

/**
 * One character (one code point). Line breaks and the double quote are refused as well: they would make
 * the file unreadable as delimited text.
 */
export const delimiterSchema = z
  .string()
  .refine((value) => [...value].length === 1, 'The delimiter must be one character')
  .refine((value) => !['\r', '\n', '"'].includes(value), 'The delimiter may not be a line break or a quote');

export const callbackUrlSchema = z
  .string()
  .max(CALLBACK_URL_MAX_LENGTH, `The callback URL may have at most ${CALLBACK_URL_MAX_LENGTH} characters`)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'The callback URL must be an http or https URL')
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.username === '' && url.password === '';
    } catch {
      return true;
    }
  }, 'The callback URL may not hold a user name or password (user:password@): it would never be delivered');

/** E7's query parameters as typed values. */
export const submitListParamsSchema = z.object({
  /** 1-based index of the email column; required when more than one email column exists. */
  email_column: z.number().int().min(1).optional(),
  /** Whether the first row is a header (default false); must be true when there are fields beside email. */
  header: z.boolean().optional(),
  delimiter: delimiterSchema.optional(),
  /** Produce only a match report and buy no data (all services but validation). */
  report: z.boolean().optional(),
  name: listNameSchema.optional(),
  fields: z.array(z.string().min(1)).optional(),
  callback_url: callbackUrlSchema.optional(),
  /**
   * A Mailsieve extension: the list services to run (default: every one the key has whose columns the file
   * holds). The provider decides services by the key, and may ignore it.
   */
  services: z.array(z.enum(LIST_SERVICE_KEYS)).optional(),
});
export type SubmitListParams = z.infer<typeof submitListParamsSchema>;

const commaList = z.string().transform((value) =>
  value
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field !== ''),
);

/**
 * E7's query string as the service receives it (every value a string), parsed to `SubmitListParams` under
 * the same rules. `action=report` is the spec's other spelling of `report=true`. Other members are ignored.
 */
export const submitListQuerySchema = z
  .object({
    email_column: z
      .string()
      .regex(/^\d+$/, 'email_column must be a whole number')
      .transform(Number)
      .pipe(z.number().int().min(1, 'email_column is 1-based'))
      .optional(),
    header: z.stringbool().optional(),
    delimiter: delimiterSchema.optional(),
    report: z.stringbool().optional(),
    action: z.literal('report').optional(),
    name: listNameSchema.optional(),
    fields: commaList.optional(),
    callback_url: callbackUrlSchema.optional(),
    services: z
      .string()
      .transform((value, context): ListServiceKey[] => {
        const parsed = parseListServices(value);
        if (parsed.ok) return parsed.services;
        context.addIssue({
          code: 'custom',
          message: `'${parsed.unknown}' is not a list service (email_validation, email_intelligence, email_append, alternate_email_append)`,
        });
        return z.NEVER;
      })
      .optional(),
  })
  .transform(({ action, ...params }): SubmitListParams =>
    action === 'report' && params.report === undefined ? { ...params, report: true } : params,
  );

/** `SubmitListParams` as query-string pairs (unset members left out). */
export function submitListQueryPairs(params: SubmitListParams): [string, string][] {
  const pairs: [string, string][] = [];
  if (params.email_column !== undefined) pairs.push(['email_column', String(params.email_column)]);
  if (params.header !== undefined) pairs.push(['header', String(params.header)]);
  if (params.delimiter !== undefined) pairs.push(['delimiter', params.delimiter]);
  if (params.report !== undefined) pairs.push(['report', String(params.report)]);
  if (params.name !== undefined) pairs.push(['name', params.name]);
  if (params.fields !== undefined) pairs.push(['fields', params.fields.join(',')]);
  if (params.callback_url !== undefined) pairs.push(['callback_url', params.callback_url]);
  if (params.services !== undefined) pairs.push(['services', params.services.join(',')]);
  return pairs;
}

/** E7's 202 body (the `Location` header carries `{base_url}/v5/list/<list_id>`). */
export const submitListAcceptedSchema = z.looseObject({
  list_id: z.number().int(),
  size_bytes: count,
});
export type SubmitListAccepted = z.infer<typeof submitListAcceptedSchema>;

// ---------------------------------------------------------------------------------------------------------
// E9: purchase

export const EMAIL_APPEND_PURCHASE_MATCH_TYPES = ['I', 'H'] as const;

/**
 * E9's optional body. `match_type` `I` buys Individual matches; `H` (as the spec's example uses it) buys
 * Individual and Household matches. Without `fields`, every matched field is bought.
 */
export const purchaseRequestSchema = z.object({
  fields: z.array(z.string().min(1)).optional(),
  options: z
    .object({
      email_append: z.object({ match_type: z.enum(EMAIL_APPEND_PURCHASE_MATCH_TYPES) }).optional(),
    })
    .optional(),
});
export type PurchaseRequest = z.infer<typeof purchaseRequestSchema>;
