// The key's quota and the connection's test call on our own service, asked in the main-process core with
// `GET /v5/key` (a Mailsieve extension, not billable): only numbers go on to the renderer, never the key.
// The provider has no such endpoint (404): its connection is tested with an E1 call, as before, and its
// quota stays unknown.
import type { ApiError, ApiResult } from '../../../shared/api/client.js';
import type { KeyInfo } from '../../../shared/api/listServices.js';
import type { KeyQuota } from '../../../shared/desktop/contract.js';

/** What the app shows of a key's quota, from what our service says of the key. */
export function keyQuotaOf(info: KeyInfo): KeyQuota {
  // A service of ours from before the quota was told says no mode either: it cannot be said to have none.
  if (info.mode === undefined) return { status: 'unknown' };
  const quota = info.quota;
  if (!quota) return { status: 'unlimited' };
  return {
    status: 'limited',
    limit: quota.limit,
    used: quota.used,
    left: quota.left,
    period: quota.period,
    renewsAt: quota.renews_at,
    isTrial: quota.trial,
  };
}

/** The key's quota from the answer to `GET /v5/key`: unknown when the service did not say. */
export function keyQuotaFrom(answer: ApiResult<KeyInfo>): KeyQuota {
  return answer.ok ? keyQuotaOf(answer.value) : { status: 'unknown' };
}

/**
 * Whether a connection test that asked `GET /v5/key` makes the E1 call instead: the service answered, but not
 * as ours does (the provider's 404; or a 401 from a service that wants the key elsewhere on paths it does not
 * know; or a body of its own). Only no answer at all (network, timeout) is the test's answer already.
 */
export function needsE1Test(error: ApiError): boolean {
  return error.kind === 'http' || error.kind === 'invalid-response';
}
