// E1's `engagement_score` (spec: "Email verification result"), added to a verification answer from the
// activity data of the reference store.
import type { VerifyResponse } from '../../shared/api/verification.js';
import { engagementScore } from './answers.js';
import type { IdentityStore } from './store.js';

/** The statuses the spec gives a score for; never invalid, trap or unknown. */
const SCORED_STATUSES: ReadonlySet<string> = new Set(['safetosend', 'valid', 'catchall']);

/**
 * Adds `engagement_score` to every `safe_to_send` answer ("included at no charge for verification
 * subscribers": no `eam` or `intelligence` service needed) whose status is safetosend, valid or catchall,
 * when the address has activity data. The legacy `email_validation` object has no such member. NOTE: mutates
 * `body`.
 */
export function withEngagementScore<T extends VerifyResponse>(
  body: T,
  store: IdentityStore | undefined,
  nowS?: number,
): T {
  if (!store || !('safe_to_send' in body)) return body;
  const result = body.safe_to_send;
  if (!SCORED_STATUSES.has(result.status)) return body;
  const score = engagementScore(store, result.address, nowS);
  if (score !== undefined) result.engagement_score = score;
  return body;
}
