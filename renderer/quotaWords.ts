// A key's quota in words: what is left of it (the Connection screen), and how far a list goes past it (New
// job, before Start cleaning). The numbers come from the core (`GET /v5/key` on our own service).
import type { KeyQuota } from '../shared/desktop/contract.js';
import { countOf, formatCount, formatDate } from './format.js';

export type LimitedQuota = Extract<KeyQuota, { status: 'limited' }>;

function renewal(quota: LimitedQuota): string {
  return quota.renewsAt ? `; it renews on ${formatDate(quota.renewsAt)}` : '';
}

/**
 * `This key has 4,990 of its 5,000 queries left this month; it renews on 12/01/2026, 01:00 AM.` (the renewal
 * in local time), or `This trial key has 100 of its 100 queries left.`
 */
export function quotaWords(quota: LimitedQuota): string {
  const period = quota.period === 'day' ? ' today' : quota.period === 'month' ? ' this month' : '';
  return (
    `This ${quota.isTrial ? 'trial key' : 'key'} has ${formatCount(quota.left)} of its ` +
    `${countOf(quota.limit, 'query', 'queries')} left${period}${renewal(quota)}.`
  );
}

/** What the Connection screen says of a key's quota; undefined when the service does not say. */
export function keyQuotaWords(quota: KeyQuota): string | undefined {
  if (quota.status === 'limited') return quotaWords(quota);
  if (quota.status === 'unlimited') return 'This key has no query limit.';
  return undefined;
}

/**
 * When a list has more rows than the key has queries left: by how many, in words. The service charges a
 * list's records at submission and refuses one larger than what is left (403), so this is said first.
 */
export function quotaShortfallWords(
  rows: number,
  isEstimate: boolean,
  quota: LimitedQuota,
): string | undefined {
  if (rows <= quota.left) return undefined;
  const over = rows - quota.left;
  return (
    `This list has ${isEstimate ? 'about ' : ''}${countOf(rows, 'row')}, ${isEstimate ? 'about ' : ''}` +
    `${formatCount(over)} more than the ${countOf(quota.left, 'query', 'queries')} left on this key: the ` +
    `service refuses a list larger than what is left${renewal(quota)}.`
  );
}
