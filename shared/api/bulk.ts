// The person query of E5 and the bulk endpoints E4 (`POST /v5/eppend/bulk`) and E6 (`POST /v5/ei/bulk`):
// request elements, response elements, and E5's query parameters. Limits are in limits.ts.
import { z } from 'zod';
import { recordErrorSchema } from './errors.js';
import { identityResponseSchema } from './identity.js';
import { intelligenceResponseSchema } from './intelligence.js';

/**
 * One person: by email, hashed email, or name + postal address (E5's parameters). Every member is a
 * string; whether a record names a person at all is judged per record (`identityRouteOf`), and a record
 * that does not gets a per-record error, not a failed request.
 */
export const personQuerySchema = z.object({
  email: z.string().optional(),
  /** MD5 of the address, lower-cased and stripped of white space before hashing. */
  md5_email: z.string().optional(),
  /** SHA-1 of the address, prepared the same way. */
  sha1_email: z.string().optional(),
  first: z.string().optional(),
  middle: z.string().optional(),
  last: z.string().optional(),
  street: z.string().optional(),
  city: z.string().optional(),
  /** Two-letter U.S. state abbreviation. */
  state: z.string().optional(),
  /** Five digits, optionally a dash and four more. */
  zip: z.string().optional(),
});
export type PersonQuery = z.infer<typeof personQuerySchema>;

/** The members of a person query, in the spec's order. */
export const PERSON_QUERY_KEYS = personQuerySchema.keyof().options;

/** An element of an E4 or E6 request body. */
export const bulkRecordSchema = personQuerySchema;
export type BulkRecord = PersonQuery;

/** E4 and E6 request bodies. The record limit depends on the endpoint and the key: see limits.ts. */
export const bulkRequestSchema = z.array(bulkRecordSchema);

/** The address as prepared before hashing for `md5_email` / `sha1_email`. */
export function normaliseEmailForHash(email: string): string {
  return email.replace(/\s+/g, '').toLowerCase();
}

export const MD5_HEX = /^[0-9a-f]{32}$/i;
export const SHA1_HEX = /^[0-9a-f]{40}$/i;

export type IdentityRoute = 'email' | 'sha1_email' | 'md5_email' | 'postal';

/**
 * How a query names its person, or undefined when it names none. The postal route needs a street, first
 * and last names, and either a ZIP or a city and state.
 */
export function identityRouteOf(query: PersonQuery): IdentityRoute | undefined {
  const has = (value: string | undefined) => value !== undefined && value.trim() !== '';
  if (has(query.email)) return 'email';
  if (has(query.sha1_email)) return 'sha1_email';
  if (has(query.md5_email)) return 'md5_email';
  if (
    has(query.street) &&
    has(query.first) &&
    has(query.last) &&
    (has(query.zip) || (has(query.city) && has(query.state)))
  )
    return 'postal';
  return undefined;
}

const commaList = z.string().transform((value) =>
  value
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field !== ''),
);

/**
 * E5's query string as the service receives it (besides `api_key`): the person, `format=html` to
 * pretty-print for a browser, and `fields` (comma-separated) to limit the fields returned.
 */
export const intelligenceQuerySchema = personQuerySchema.extend({
  format: z.literal('html').optional(),
  fields: commaList.optional(),
});
export type IntelligenceQueryParams = z.infer<typeof intelligenceQuerySchema>;

/** E6 response element: a person's result, `{}` when unmatched, or a per-record error object. */
export const intelligenceBulkElementSchema = z.union([recordErrorSchema, intelligenceResponseSchema]);
export type IntelligenceBulkElement = z.infer<typeof intelligenceBulkElementSchema>;
/** E6 response: the same length and order as the request. */
export const intelligenceBulkResponseSchema = z.array(intelligenceBulkElementSchema);

/** E4 response element: an identity-matching result, `{}` when unmatched, or a per-record error object. */
export const identityBulkElementSchema = z.union([recordErrorSchema, identityResponseSchema]);
export type IdentityBulkElement = z.infer<typeof identityBulkElementSchema>;
export const identityBulkResponseSchema = z.array(identityBulkElementSchema);
