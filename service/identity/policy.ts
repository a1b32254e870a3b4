// What a key (and a request's `fields`) lets an answer contain. The HTTP routes build a policy once per
// request, a list run once per list; the answer functions (answers.ts) only read it.
import { INTELLIGENCE_FIELDS, type IntelligenceField } from '../../shared/api/intelligence.js';
import { BULK_INTELLIGENCE_LIMIT } from '../../shared/api/limits.js';
import type { ServiceName } from '../../shared/api/services.js';
import { isIntelligenceField, MONTH_LAST_OPEN, type KeyField, type RequestField } from './fields.js';

/** The key settings the identity services read (a `KeyRecord` has them all). */
export interface KeyAccess {
  readonly services: ReadonlySet<ServiceName>;
  readonly fields: ReadonlySet<KeyField> | null;
  readonly alternateMax: number;
  readonly bulkLimit: number;
}

/** What an intelligence answer (E5, an E6 element, a list row) may contain. */
export interface IntelligencePolicy {
  /** Intelligence fields returned when the person has them. */
  readonly fields: ReadonlySet<IntelligenceField>;
  /** `eam`, always present when true. */
  readonly eam: boolean;
  /** `month_last_open` inside `eam`, when an open was seen in the last 12 months. */
  readonly monthLastOpen: boolean;
  /** `postal_address`, for a person with a complete address. */
  readonly postalAddress: boolean;
}

/** What an identity-matching answer (E2, E3, an E4 element, a list row) may contain. */
export interface IdentityPolicy {
  readonly alternateEmail: boolean;
  readonly emailAppend: boolean;
  readonly postalAppend: boolean;
  /** Alternate email matches per answer, 1–5. */
  readonly alternateMax: number;
}

export type PolicyResult<T> =
  | { readonly ok: true; readonly policy: T }
  | { readonly ok: false; readonly status: 401 | 403; readonly message: string };

function keyHasField(key: KeyAccess, field: KeyField): boolean {
  return key.fields === null || key.fields.has(field);
}

/**
 * An activity-metrics key: EAM without intelligence. E6 applies the spec's older activity-metrics rules to
 * it: identifiers only, unique identifiers, its own record limit and per-record error text.
 */
export function isActivityMetricsKey(key: KeyAccess): boolean {
  return key.services.has('eam') && !key.services.has('intelligence');
}

/**
 * Records per E6 request for this key: its `bulkLimit` (default 5,000), which only an activity-metrics key
 * may raise above 5,000, to 10,000 (DESIGN.md).
 */
export function intelligenceBulkLimit(key: KeyAccess): number {
  return isActivityMetricsKey(key) ? key.bulkLimit : Math.min(key.bulkLimit, BULK_INTELLIGENCE_LIMIT);
}

/**
 * The intelligence policy of a key, limited to `requested` (a request's `fields`) when given. A key with
 * neither `intelligence` nor `eam` gets 403 (no response section); a request naming a field the key is not
 * enabled for gets 401 (the spec's Authentication rule 5), naming the field.
 */
export function intelligencePolicyFor(
  key: KeyAccess,
  requested?: ReadonlySet<RequestField>,
): PolicyResult<IntelligencePolicy> {
  const hasIntelligence = key.services.has('intelligence');
  const hasEam = key.services.has('eam');
  if (!hasIntelligence && !hasEam)
    return {
      ok: false,
      status: 403,
      message:
        'Access denied: this API key is not enabled for email intelligence or email activity metrics (services intelligence, eam).',
    };
  const enabled = new Set<IntelligenceField>(
    hasIntelligence ? INTELLIGENCE_FIELDS.filter((field) => keyHasField(key, field)) : [],
  );
  const monthLastOpen = hasEam && keyHasField(key, MONTH_LAST_OPEN);
  const postalAddress = key.services.has('postal_append');
  if (!requested) return { ok: true, policy: { fields: enabled, eam: hasEam, monthLastOpen, postalAddress } };

  const lacking: string[] = [];
  const fields = new Set<IntelligenceField>();
  for (const name of requested) {
    if (isIntelligenceField(name)) {
      if (enabled.has(name)) fields.add(name);
      else lacking.push(name);
    } else if (name === 'eam' && !hasEam) lacking.push(name);
    else if (name === MONTH_LAST_OPEN && !monthLastOpen) lacking.push(name);
    else if (name === 'postal_address' && !postalAddress) lacking.push(name);
  }
  // Authentication rule 5: requesting data the key's credentials do not permit is a 401.
  if (lacking.length > 0)
    return {
      ok: false,
      status: 401,
      message: `Unauthorized: this API key is not permitted the field${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')}.`,
    };
  return {
    ok: true,
    policy: { fields, eam: hasEam, monthLastOpen, postalAddress: requested.has('postal_address') },
  };
}

/** The identity-matching policy of a key; 403 when it has none of the three identity services. */
export function identityPolicyFor(key: KeyAccess): PolicyResult<IdentityPolicy> {
  const policy: IdentityPolicy = {
    alternateEmail: key.services.has('alternate_email'),
    emailAppend: key.services.has('email_append'),
    postalAppend: key.services.has('postal_append'),
    alternateMax: key.alternateMax,
  };
  if (!policy.alternateEmail && !policy.emailAppend && !policy.postalAppend)
    return {
      ok: false,
      status: 403,
      message:
        'Access denied: this API key is not enabled for identity matching (services alternate_email, email_append, postal_append).',
    };
  return { ok: true, policy };
}
