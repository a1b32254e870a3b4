// E1's `engagement_score` (spec: "Email verification result"), added to a verification answer from the
// activity data of the reference store.
import type { ServiceName } from '../../shared/api/services.js';
import type { VerifyResponse } from '../../shared/api/verification.js';
import { engagementScore } from './answers.js';
import type { IdentityStore } from './store.js';

/** The statuses the spec gives a score for; never invalid, trap or unknown. */
const SCORED_STATUSES: ReadonlySet<string> = new Set(['safetosend', 'valid', 'catchall']);

/**
 * Adds `engagement_score` to a `safe_to_send` answer when the key has the `eam` or `intelligence` service
 * (the activity data is theirs), the status is safetosend, valid or catchall, and the address has activity.
 * The legacy `email_validation` object has no such member. NOTE: mutates `body`.
 */
export function withEngagementScore<T extends VerifyResponse>(
  body: T,
  key: { readonly services: ReadonlySet<ServiceName> },
  store: IdentityStore | undefined,
  nowS?: number,
): T {
  if (!store || !('safe_to_send' in body)) return body;
  if (!key.services.has('eam') && !key.services.has('intelligence')) return body;
  const result = body.safe_to_send;
  if (!SCORED_STATUSES.has(result.status)) return body;
  const score = engagementScore(store, result.address, nowS);
  if (score !== undefined) result.engagement_score = score;
  return body;
}
