// E1 (`GET /v5/ev`) responses: the `safe_to_send` and `email_validation` objects of the spec.
import { z } from 'zod';
import { LEGACY_STATUSES, SAFE_TO_SEND_STATUSES } from './codes.js';

export const DOMAIN_TYPES = [
  'biz',
  'disposable',
  'edu',
  'freeisp',
  'gov',
  'org',
  'paidisp',
  'parked',
  'privacy',
  'wireless',
] as const;
export type DomainType = (typeof DOMAIN_TYPES)[number];

// Statuses and domain types are read tolerantly: a newer service may add values (spec: versioning), and a
// client must not reject a whole answer for one. The enumerations above are what this version produces.
const knownOr = <T extends readonly [string, ...string[]]>(values: T) =>
  z.union([z.enum(values), z.string()]);

// Members in the order of the spec's field table; loose objects keep members a newer service may add.
const verificationFields = (statuses: readonly [string, ...string[]]) => ({
  address: z.string(),
  status: knownOr(statuses),
  status_code: z.number().int(),
  domain_type: knownOr(DOMAIN_TYPES).optional(),
  role_account: z.boolean().optional(),
  email_corrections: z.array(z.string()).optional(),
});

export const safeToSendResultSchema = z.looseObject({
  ...verificationFields(SAFE_TO_SEND_STATUSES),
  engagement_score: z.number().min(0).max(10).optional(),
});
export type SafeToSendResult = z.infer<typeof safeToSendResultSchema>;

export const emailValidationResultSchema = z.looseObject(verificationFields(LEGACY_STATUSES));
export type EmailValidationResult = z.infer<typeof emailValidationResultSchema>;

/** The whole E1 200 body: one member, by the key's configured mode. */
export const verifyResponseSchema = z.union([
  z.object({ safe_to_send: safeToSendResultSchema }),
  z.object({ email_validation: emailValidationResultSchema }),
]);
export type VerifyResponse = z.infer<typeof verifyResponseSchema>;

/**
 * E1 with `explain=1` (a Mailsieve extension): the answer plus `explain`, what was asked and answered on the
 * way (DNS answers, the SMTP conversation). Another service ignores the parameter and sends no `explain`.
 */
export const explainedVerifyResponseSchema = z.intersection(
  verifyResponseSchema,
  z.object({ explain: z.array(z.string()).optional() }),
);
export type ExplainedVerifyResponse = z.infer<typeof explainedVerifyResponseSchema>;

/** The result object of an E1 answer, whichever mode produced it. */
export function verificationOf(response: VerifyResponse): SafeToSendResult | EmailValidationResult {
  return 'safe_to_send' in response ? response.safe_to_send : response.email_validation;
}

/** E1's `timeout` parameter, seconds: default 10, at most 30, fractions allowed. */
export const E1_TIMEOUT_DEFAULT_S = 10;
export const E1_TIMEOUT_MAX_S = 30;

/**
 * E1's query parameters (besides `api_key`). The service reads them by hand on its hot path (a schema's parse
 * costs E1 a measurable share of its time); this is their contract, for the API document (GET /openapi.json).
 */
export const verifyQuerySchema = z.object({
  /** The address to verify, URL encoded. */
  email: z.string(),
  /** Seconds the check may take, fractions allowed (default 10, at most 30). */
  timeout: z.number().gt(0).max(30).optional(),
  /** A Mailsieve extension: `1` or `true` adds `explain`, what was asked and answered on the way. */
  explain: z.enum(['1', 'true', '0', 'false']).optional(),
});
