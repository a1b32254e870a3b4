// E5 `GET /v5/td` (email intelligence and email activity metrics for one person) and E6 `POST /v5/ei/bulk`,
// answered from the reference data (docs/identity.md).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PERSON_QUERY_KEYS, type PersonQuery } from '../../../shared/api/bulk.js';
import {
  DUPLICATE_IDENTIFIERS,
  INVALID_EMAIL_PARAMETER,
  INVALID_IDENTIFIER,
  recordError,
  type RecordError,
} from '../../../shared/api/errors.js';
import {
  blankEmailError,
  hasEmailRoute,
  hasPostalRoute,
  intelligenceAnswer,
  isErrorAnswer,
  NO_PERSON_NAMED,
} from '../../identity/answers.js';
import {
  KEY_FIELDS,
  parseRequestFieldList,
  SECTION_FIELDS,
  type RequestField,
} from '../../identity/fields.js';
import { canonicalEmail, md5Of } from '../../identity/normalise.js';
import {
  intelligenceBulkLimit,
  intelligencePolicyFor,
  isActivityMetricsKey,
  type IntelligencePolicy,
  type KeyAccess,
} from '../../identity/policy.js';
import type { IdentityStore } from '../../identity/store.js';
import { authorise, type AuthContext } from '../auth.js';
import { HttpError, sendError } from '../errors.js';
import { printable, singleValued } from '../params.js';
import { registerRoute } from '../routes.js';
import { BULK_BODY_LIMIT, readBulkBody, type BulkElement } from './bulkBody.js';
import { sendJson } from './replies.js';

/** The `fields` parameter (E5 and E6's query): undefined when absent or blank (every field). */
function requestedFields(params: Record<string, string>): Set<RequestField> | undefined {
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

/** The key's intelligence policy for this request; answers 403 itself and returns undefined when denied. */
function policyOf(
  key: KeyAccess,
  params: Record<string, string>,
  reply: FastifyReply,
): IntelligencePolicy | undefined {
  const result = intelligencePolicyFor(key, requestedFields(params));
  if (result.ok) return result.policy;
  sendError(reply, result.status, result.message);
  return undefined;
}

/**
 * E6: the policy of one record's own `fields` (each element holds E5's parameters), or its per-record
 * error: 400 for an unknown field, 401 for one the key does not permit. Records repeat a few field lists:
 * each list is judged once per request.
 */
function recordPolicies(key: KeyAccess): (fields: string) => IntelligencePolicy | RecordError {
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

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]);

/** `format=html`: the answer pretty-printed in a page for a browser; every character of it escaped. */
function sendHtml(reply: FastifyReply, body: unknown, status = 200): FastifyReply {
  const page =
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Email intelligence</title>\n' +
    '<style>body{font-family:system-ui,sans-serif;margin:2rem}pre{background:#f6f8fa;padding:1rem;border-radius:6px}</style>\n' +
    `</head>\n<body>\n<h1>Email intelligence</h1>\n<pre>${escapeHtml(JSON.stringify(body, null, 2))}</pre>\n</body>\n</html>\n`;
  return reply
    .code(status)
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(page);
}

function personQueryOf(params: Record<string, string>): PersonQuery {
  const query: Record<string, string> = {};
  for (const name of PERSON_QUERY_KEYS) if (params[name] !== undefined) query[name] = params[name];
  return query;
}

/** An activity-metrics key names addresses only: `email`, `md5_email` or `sha1_email`. */
const ADDRESS_ONLY = 'Give email, md5_email or sha1_email: activity metrics are looked up by address.';

/** The identifier an activity-metrics record is unique by: the MD5 of its address, or its hash as given. */
function identifierOf(query: PersonQuery): string | undefined {
  if (query.email !== undefined && query.email.trim() !== '') {
    const canonical = canonicalEmail(query.email);
    return canonical === undefined ? `raw:${query.email.trim()}` : `md5:${md5Of(canonical).toString('hex')}`;
  }
  if (query.sha1_email?.trim()) return `sha1:${query.sha1_email.trim().toLowerCase()}`;
  if (query.md5_email?.trim()) return `md5:${query.md5_email.trim().toLowerCase()}`;
  return undefined;
}

export function registerIntelligence(app: FastifyInstance, auth: AuthContext, store: IdentityStore): void {
  registerRoute(app, 'GET', '/v5/td', (request, reply) => {
    const key = authorise(auth, request, reply, 'query', null, { rateLimited: true });
    if (!key) return reply;
    const params = singleValued(request.query);
    if (params.format !== undefined && params.format !== 'html')
      throw new HttpError(400, `Parameter 'format' takes only html; got '${printable(params.format)}'.`);
    const policy = policyOf(key, params, reply);
    if (!policy) return reply;
    const query = personQueryOf(params);
    // A blank `email` is answered by intelligenceAnswer: the per-record `Invalid identifier.`, as on E6.
    if (!hasEmailRoute(query) && !hasPostalRoute(query) && query.email === undefined)
      throw new HttpError(400, `Missing parameters. ${NO_PERSON_NAMED}`);
    const answer = intelligenceAnswer(store, query, policy);
    const status = isErrorAnswer(answer) ? answer.error_code : 200;
    return params.format === 'html' ? sendHtml(reply, answer, status) : sendJson(reply, answer, status);
  });

  registerRoute(
    app,
    'POST',
    '/v5/ei/bulk',
    (request, reply) => {
      const key = authorise(auth, request, reply, 'query', null, { rateLimited: true });
      if (!key) return reply;
      const params = singleValued(request.query);
      const policy = policyOf(key, params, reply);
      if (!policy) return reply;
      const records = readBulkBody(request, intelligenceBulkLimit(key));
      const isActivityMetrics = isActivityMetricsKey(key);
      if (isActivityMetrics) {
        const seen = new Set<string>();
        for (const record of records) {
          const identifier = record.ok ? identifierOf(record.query) : undefined;
          if (identifier === undefined) continue;
          if (seen.has(identifier)) throw new HttpError(400, DUPLICATE_IDENTIFIERS);
          seen.add(identifier);
        }
      }
      const options = {
        nowS: Math.floor(Date.now() / 1000),
        invalidEmailMessage: isActivityMetrics ? INVALID_EMAIL_PARAMETER : INVALID_IDENTIFIER,
      };
      const recordPolicyOf = recordPolicies(key);
      const answer = (record: BulkElement) => {
        if (!record.ok) return record.error;
        if (isActivityMetrics && !hasEmailRoute(record.query))
          return blankEmailError(record.query) ?? recordError(400, ADDRESS_ONLY);
        const recordPolicy = record.fields === undefined ? policy : recordPolicyOf(record.fields);
        if (isErrorAnswer(recordPolicy)) return recordPolicy;
        return intelligenceAnswer(store, record.query, recordPolicy, options);
      };
      return sendJson(reply, records.map(answer));
    },
    { bodyLimit: BULK_BODY_LIMIT },
  );
}
