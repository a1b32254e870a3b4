// The intelligence policy of a request's `fields` (E5, E6's query) and of each E6 record's own `fields`:
// shared by the request thread (the request's policy) and the bulk worker (each record's).
import { recordError, type RecordError } from '../../shared/api/errors.js';
import { HttpError, printable } from '../requestError.js';
import { KEY_FIELDS, parseRequestFieldList, SECTION_FIELDS, type RequestField } from './fields.js';
import { intelligencePolicyFor, type IntelligencePolicy, type KeyAccess } from './policy.js';

/** The `fields` parameter (E5 and E6's query): undefined when absent or blank (every field). */
export function requestedFields(params: Record<string, string>): Set<RequestField> | undefined {
  const raw = params.fields;
  if (raw === undefined || raw.trim() === '') return undefined;
  const parsed = parseRequestFieldList(raw);
  if (!parsed.ok)
    throw new HttpError(
      400,
      `Unknown field '${printable(parsed.unknown)}' in 'fields'; known fields: ${[...KEY_FIELDS, ...SECTION_FIELDS].join(', ')}.`,
    );
  return parsed.fields;
}

/**
 * E6: the policy of one record's own `fields` (each element holds E5's parameters), or its per-record
 * error: 400 for an unknown field, 401 for one the key does not permit. Records repeat a few field lists:
 * each list is judged once per request.
 */
export function recordPolicies(key: KeyAccess): (fields: string) => IntelligencePolicy | RecordError {
  const judged = new Map<string, IntelligencePolicy | RecordError>();
  return (fields) => {
    let result = judged.get(fields);
    if (result === undefined) {
      try {
        const policy = intelligencePolicyFor(key, requestedFields({ fields }));
        result = policy.ok ? policy.policy : recordError(policy.status, policy.message);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        result = recordError(error.status, error.message);
      }
      if (judged.size < 1000) judged.set(fields, result);
    }
    return result;
  };
}
