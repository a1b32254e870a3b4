// The records of a bulk body (E4 `POST /v5/eppend/bulk`, E6 `POST /v5/ei/bulk`): its text parsed as the spec
// answers it — 400 `Invalid JSON` for a text that is not a JSON array, 400 `Too many records requested. Limit
// is N and you requested M.` above the limit, and a per-record error for an element that is not a record. Run
// by the bulk workers (bulkWork.ts), off the request thread; the HTTP side only hands over the body's text
// (service/http/routes/bulkBody.ts).
import { PERSON_QUERY_KEYS, type PersonQuery } from '../../shared/api/bulk.js';
import { INVALID_JSON, recordError, tooManyRecords, type RecordError } from '../../shared/api/errors.js';
import { HttpError } from '../requestError.js';

export type BulkElement =
  | { readonly ok: true; readonly query: PersonQuery; readonly fields?: string }
  | { readonly ok: false; readonly error: RecordError };

function elementOf(value: unknown, index: number): BulkElement {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      ok: false,
      error: recordError(400, `Record ${index + 1} is not an object of email, name and postal parameters.`),
    };
  const query: Record<string, string> = {};
  for (const name of PERSON_QUERY_KEYS) {
    const member = (value as Record<string, unknown>)[name];
    if (member === undefined || member === null) continue;
    // A ZIP code sent as a number is still a ZIP code.
    if (typeof member === 'string' || typeof member === 'number') query[name] = String(member);
    else
      return {
        ok: false,
        error: recordError(400, `Record ${index + 1}: parameter '${name}' must be a string.`),
      };
  }
  // E5's `fields`, per record (E6): a comma-separated string, or an array of names.
  const fields = (value as Record<string, unknown>).fields;
  if (fields === undefined || fields === null) return { ok: true, query };
  if (typeof fields === 'string') return { ok: true, query, fields };
  if (Array.isArray(fields) && fields.every((name) => typeof name === 'string'))
    return { ok: true, query, fields: fields.join(',') };
  return {
    ok: false,
    error: recordError(
      400,
      `Record ${index + 1}: parameter 'fields' must be a string of comma-separated names.`,
    ),
  };
}

/** The records of a bulk body's text, or an HttpError (400) the route answers with. */
export function parseBulkText(body: string, limit: number): BulkElement[] {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new HttpError(400, INVALID_JSON);
  }
  if (!Array.isArray(value))
    throw new HttpError(400, `${INVALID_JSON}: the body must be a JSON array of records.`);
  if (value.length > limit) throw new HttpError(400, tooManyRecords(limit, value.length));
  return value.map(elementOf);
}
