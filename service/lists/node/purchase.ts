// What a key may ask of a list beyond validation, checked at E7 and E9, and the settings a list run gets
// for its services other than validation (docs/list-services.md).
import {
  LIST_SERVICE_KEYS,
  LIST_SERVICE_NEEDS,
  type ListServiceKey,
  type PurchaseRequest,
  type SubmitListParams,
} from '../../../shared/api/list.js';
import { listServicesOfKey } from '../../../shared/api/listServices.js';
import { canonicalFieldName, parseRequestFieldList, type RequestField } from '../../identity/fields.js';
import { intelligencePolicyFor, type IntelligencePolicy, type KeyAccess } from '../../identity/policy.js';
import type { ListRecord } from '../backend/store.js';
import type { IdentityJob } from '../types.js';

export type Checked<T> = { ok: true; value: T } | { ok: false; status: 400 | 403; message: string };

function keyHas(key: KeyAccess, service: ListServiceKey): boolean {
  return LIST_SERVICE_NEEDS[service].some((name) => key.services.has(name));
}

/** A request's field names: 400 for an unknown one. */
function requestFields(names: readonly string[], what: string): Checked<Set<RequestField>> {
  const parsed = parseRequestFieldList(names.join(','));
  if (!parsed.ok)
    return {
      ok: false,
      status: 400,
      message: `${what}: '${parsed.unknown}' is not a field (intelligence fields such as age or household_income, eam, month_last_open, postal_address).`,
    };
  return { ok: true, value: parsed.fields };
}

/**
 * E7: the services a list runs and whether they were named. Named services must all be the key's (403
 * naming the one it lacks); without `services`, the key's list services (403 when it has none). E7's
 * `fields` must be fields (400) the key has (403), when the list runs email intelligence.
 */
export function submissionServices(
  key: KeyAccess,
  params: SubmitListParams,
): Checked<{ services: ListServiceKey[]; isExplicit: boolean }> {
  let services: ListServiceKey[];
  const isExplicit = params.services !== undefined && params.services.length > 0;
  if (isExplicit) {
    services = LIST_SERVICE_KEYS.filter((service) => params.services!.includes(service));
    const lacking = services.find((service) => !keyHas(key, service));
    if (lacking)
      return {
        ok: false,
        status: 403,
        message: `Access denied: this API key is not enabled for ${lacking} (service ${LIST_SERVICE_NEEDS[lacking].join(' or ')}).`,
      };
  } else {
    services = listServicesOfKey(key.services);
    if (services.length === 0)
      return {
        ok: false,
        status: 403,
        message:
          'Access denied: this API key is not enabled for any list service (validation, intelligence, eam, email_append, alternate_email).',
      };
  }
  if (params.fields !== undefined && params.fields.length > 0) {
    const fields = requestFields(params.fields, "Parameter 'fields'");
    if (!fields.ok) return fields;
    if (services.includes('email_intelligence')) {
      const policy = intelligencePolicyFor(key, fields.value);
      if (!policy.ok) return { ok: false, status: 403, message: policy.message };
    }
  }
  return { ok: true, value: { services, isExplicit } };
}

/**
 * E9's body for a list awaiting purchase: `fields` may name request fields and the list's own services
 * (400 otherwise, or for a service the list did not run), each one the key has (403).
 */
export function checkPurchase(
  key: KeyAccess,
  list: ListRecord,
  body: PurchaseRequest,
): Checked<PurchaseRequest> {
  if (body.fields === undefined) return { ok: true, value: body };
  const serviceNames = body.fields.filter((name) =>
    (LIST_SERVICE_KEYS as readonly string[]).includes(name.trim().toLowerCase()),
  );
  for (const name of serviceNames) {
    const service = name.trim().toLowerCase() as ListServiceKey;
    if (!list.services.includes(service))
      return {
        ok: false,
        status: 400,
        message: `Invalid purchase body: fields: list ${list.id} did not run ${service} (it ran ${list.services.join(', ')}).`,
      };
  }
  const others = body.fields.filter((name) => !serviceNames.includes(name));
  const fields = requestFields(others, 'Invalid purchase body: fields');
  if (!fields.ok) return fields;
  if (fields.value.size > 0) {
    const policy = intelligencePolicyFor(key, fields.value);
    if (!policy.ok) return { ok: false, status: 403, message: policy.message };
  }
  return { ok: true, value: body };
}

/** What a purchase buys of email intelligence: the policy limited to the bought names. */
function boughtIntelligence(
  policy: IntelligencePolicy,
  bought: ReadonlySet<string> | undefined,
): IntelligencePolicy {
  if (!bought || bought.has('email_intelligence')) return policy;
  const eam = policy.eam && (bought.has('eam') || bought.has('month_last_open'));
  return {
    fields: new Set([...policy.fields].filter((field) => bought.has(field))),
    eam,
    monthLastOpen: eam && policy.monthLastOpen,
    postalAddress: policy.postalAddress && bought.has('postal_address'),
  };
}

/**
 * The services a list runs now and the settings of those other than validation: before a purchase, as E7
 * asked (`report=true`: counts only); after one, what was bought (a service key buys its columns whole; a
 * service not named in `fields` is not bought, and does not run again).
 */
export function identityJobFor(
  list: ListRecord,
  key: KeyAccess,
  dbPath: string,
  nativeBinding: string | undefined,
  nowMs = Date.now(),
): { ok: true; job: IdentityJob; services: ListServiceKey[] } | { ok: false; reason: string } {
  const purchase = list.purchase;
  const bought =
    purchase?.fields !== undefined ? new Set(purchase.fields.map(canonicalFieldName)) : undefined;
  let intelligence: IntelligencePolicy | undefined;
  if (list.services.includes('email_intelligence')) {
    let requested: Set<RequestField> | undefined;
    if (list.options.fields !== undefined && list.options.fields.length > 0) {
      const parsed = parseRequestFieldList(list.options.fields.join(','));
      if (parsed.ok) requested = parsed.fields;
    }
    const policy = intelligencePolicyFor(key, requested);
    if (!policy.ok)
      return { ok: false, reason: `${policy.message} (the key changed after the list was submitted)` };
    intelligence = boughtIntelligence(policy.policy, bought);
  }
  const isBought = (service: ListServiceKey) =>
    service === 'email_validation' ||
    bought === undefined ||
    bought.has(service) ||
    (service === 'email_intelligence' &&
      intelligence !== undefined &&
      (intelligence.fields.size > 0 || intelligence.eam || intelligence.postalAddress));
  const services = purchase ? list.services.filter(isBought) : [...list.services];
  return {
    ok: true,
    services,
    job: {
      dbPath,
      nativeBinding,
      report: list.options.report === true && purchase === null,
      intelligence,
      emailAppendMatchType: purchase?.options?.email_append?.match_type ?? 'H',
      alternateMax: key.alternateMax,
      nowS: Math.floor(nowMs / 1000),
    },
  };
}
