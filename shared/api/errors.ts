// The per-record error object and the error texts the spec quotes.
import { z } from 'zod';

/**
 * `{error_code, error_msg}`: a request-data problem on one record, inside a JSON response or as one element
 * of a bulk response. `error_code` follows the HTTP status code list (400 for bad data).
 */
export const recordErrorSchema = z.object({
  error_code: z.number().int(),
  error_msg: z.string(),
});
export type RecordError = z.infer<typeof recordErrorSchema>;

export function isRecordError(value: unknown): value is RecordError {
  return recordErrorSchema.safeParse(value).success;
}

export function recordError(error_code: number, error_msg: string): RecordError {
  return { error_code, error_msg };
}

/** Per-record text for a malformed email (code 400). */
export const INVALID_IDENTIFIER = 'Invalid identifier.';
/** Per-record text for a well-formed but non-existent U.S. postal address (code 400). */
export const INVALID_POSTAL_ADDRESS = 'Invalid United States postal address.';
/** Per-record text of the older activity-metrics description of E6. */
export const INVALID_EMAIL_PARAMETER = "Value of parameter 'email' is invalid.";

/** E1's plain-text 401 body. */
export const INVALID_API_KEY = 'Invalid API key.';

/** Bulk 400 body: unparseable body, commonly a missing `application/json` content type. */
export const INVALID_JSON = 'Invalid JSON';
/** Bulk 400 body: more records than the limit. */
export function tooManyRecords(limit: number, requested: number): string {
  return `Too many records requested. Limit is ${limit} and you requested ${requested}.`;
}
/** Bulk 400 body: identifiers in the body must be unique. The spelling is the spec's (sic). */
export const DUPLICATE_IDENTIFIERS = 'Duplicate identfiers';
