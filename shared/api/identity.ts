// Identity matching, one record per call: alternate email (E2, `GET /ae`), email append and postal append
// (E3, `GET /v5/eppend`). Strict result schemas describe what our service answers; response schemas are the
// tolerant reading of a client (unknown members kept, match types read as strings).
import { z } from 'zod';
import {
  emailMatchResponseSchema,
  emailMatchSchema,
  postalAddressResponseSchema,
  postalAddressSchema,
} from './intelligence.js';

// ---------------------------------------------------------------------------------------------------------
// Requests (query parameters besides `api_key`)

/** E2: the address to find other addresses of. */
export const alternateEmailQuerySchema = z.object({ email: z.string().min(1) });
export type AlternateEmailQuery = z.infer<typeof alternateEmailQuerySchema>;

/** E3, email append (postal to email): a name and a postal address. */
export const emailAppendQuerySchema = z.object({
  first: z.string().min(1),
  last: z.string().min(1),
  street: z.string().min(1),
  city: z.string().optional(),
  state: z.string().optional(),
  zip: z.string().optional(),
});
export type EmailAppendQuery = z.infer<typeof emailAppendQuerySchema>;

/** E3, postal append (email to postal). */
export const postalAppendQuerySchema = z.object({ email: z.string().min(1) });
export type PostalAppendQuery = z.infer<typeof postalAppendQuerySchema>;

/** E3 serves both modes on one path: an `email` parameter asks for postal append. */
export function eppendModeOf(query: { email?: string | undefined }): 'postal_append' | 'email_append' {
  return query.email !== undefined && query.email !== '' ? 'postal_append' : 'email_append';
}

// ---------------------------------------------------------------------------------------------------------
// Results as our service produces them (`{}` when nothing matched)

const noMatchSchema = z.strictObject({});
export type NoMatch = z.infer<typeof noMatchSchema>;

/** E2: Individual matches first, then Household; one by default, at most five by arrangement. */
export const alternateEmailResultSchema = z.union([
  z.strictObject({ alternate_email: z.array(emailMatchSchema).min(1) }),
  noMatchSchema,
]);
export type AlternateEmailResult = z.infer<typeof alternateEmailResultSchema>;

export const emailAppendResultSchema = z.union([
  z.strictObject({ email_append: z.array(emailMatchSchema).min(1) }),
  noMatchSchema,
]);
export type EmailAppendResult = z.infer<typeof emailAppendResultSchema>;

export const postalAppendResultSchema = z.union([
  z.strictObject({ postal_address: postalAddressSchema }),
  noMatchSchema,
]);
export type PostalAppendResult = z.infer<typeof postalAppendResultSchema>;

// ---------------------------------------------------------------------------------------------------------
// Responses as a client reads them (no match reads as an object without the member)

export const alternateEmailResponseSchema = z.looseObject({
  alternate_email: z.array(emailMatchResponseSchema).optional(),
});
export type AlternateEmailResponse = z.infer<typeof alternateEmailResponseSchema>;

export const emailAppendResponseSchema = z.looseObject({
  email_append: z.array(emailMatchResponseSchema).optional(),
});
export type EmailAppendResponse = z.infer<typeof emailAppendResponseSchema>;

export const postalAppendResponseSchema = z.looseObject({
  postal_address: postalAddressResponseSchema.optional(),
});
export type PostalAppendResponse = z.infer<typeof postalAppendResponseSchema>;

/** An identity-matching result of any kind (an E4 element that is not an error). */
export const identityResponseSchema = z.looseObject({
  alternate_email: z.array(emailMatchResponseSchema).optional(),
  email_append: z.array(emailMatchResponseSchema).optional(),
  postal_address: postalAddressResponseSchema.optional(),
});
export type IdentityResponse = z.infer<typeof identityResponseSchema>;
