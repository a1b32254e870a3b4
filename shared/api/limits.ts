// The spec's "Limits" table, as numbers the client, the service and the UI share.

/** Records per bulk intelligence request (E6). */
export const BULK_INTELLIGENCE_LIMIT = 5_000;
/**
 * The "conflicting statement" of the spec for activity-metrics keys on the same path (E6). Our service
 * applies it only when a key setting raises the limit (DESIGN.md).
 */
export const BULK_INTELLIGENCE_LIMIT_EAM = 10_000;
/** Records per identity-matching bulk request (E4). */
export const BULK_IDENTITY_LIMIT = 1_250;
/** Records per list file (E7). */
export const LIST_RECORD_LIMIT = 1_000_000;
/** Characters in E7's `callback_url`. */
export const CALLBACK_URL_MAX_LENGTH = 512;
/** Least time between two status requests for one list (E8), for a remote service. */
export const LIST_POLL_MIN_INTERVAL_MS = 5_000;
/** Calls per second per key on E1–E6 above which the service answers 429. */
export const RATE_LIMIT_PER_SECOND = 500;
/** Alternate email matches per response (E2): default and the most an arrangement allows. */
export const ALTERNATE_EMAIL_MATCHES_DEFAULT = 1;
export const ALTERNATE_EMAIL_MATCHES_MAX = 5;
