// E5 `GET /v5/td` (email intelligence and email activity metrics for one person) and E6 `POST /v5/ei/bulk`,
// answered from the reference data (docs/identity.md).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PERSON_QUERY_KEYS, type PersonQuery } from '../../../shared/api/bulk.js';
import {
  hasEmailRoute,
  hasPostalRoute,
  intelligenceAnswer,
  isErrorAnswer,
  NO_PERSON_NAMED,
} from '../../identity/answers.js';
import { requestedFields } from '../../identity/requestPolicy.js';
import {
  intelligenceBulkLimit,
  intelligencePolicyFor,
  isActivityMetricsKey,
  type IntelligencePolicy,
  type KeyAccess,
} from '../../identity/policy.js';
import type { IdentityStore } from '../../identity/store.js';
import { authorise, reserveQueries, type AuthContext } from '../auth.js';
import { HttpError, sendError } from '../errors.js';
import { printable, singleValued } from '../params.js';
import { registerRoute } from '../routes.js';
import type { BulkPool } from '../../identity/bulkPool.js';
import { bulkBodyText, bulkRoute, sendBulk } from './bulkBody.js';
import { keyOf } from '../bodies.js';
import { sendJson } from './replies.js';

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

export function registerIntelligence(
  app: FastifyInstance,
  auth: AuthContext,
  store: IdentityStore,
  bulk: BulkPool,
): void {
  registerRoute(app, 'GET', '/v5/td', async (request, reply) => {
    const key = await authorise(auth, request, reply, 'query', null, { rateLimited: true });
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
    // One billable query (spec "Limits"): within the key's quota, or 403; given back for a record error.
    const reservation = await reserveQueries(auth, key, reply, 1);
    if (!reservation) return reply;
    const answer = intelligenceAnswer(store, query, policy);
    await reservation.settle(isErrorAnswer(answer) ? 0 : 1);
    const status = isErrorAnswer(answer) ? answer.error_code : 200;
    return params.format === 'html' ? sendHtml(reply, answer, status) : sendJson(reply, answer, status);
  });

  registerRoute(
    app,
    'POST',
    '/v5/ei/bulk',
    async (request, reply) => {
      // Checked by the route's hook, before the body was read.
      const key = keyOf(request);
      const params = singleValued(request.query);
      const policy = policyOf(key, params, reply);
      if (!policy) return reply;
      const body = bulkBodyText(request);
      return sendBulk(
        reply,
        bulk,
        {
          kind: 'intelligence',
          body,
          limit: intelligenceBulkLimit(key),
          policy,
          // What the worker judges each record's own `fields` by (structured-cloned: plain data only).
          key: {
            services: key.services,
            fields: key.fields,
            alternateMax: key.alternateMax,
            bulkLimit: key.bulkLimit,
          },
          isActivityMetrics: isActivityMetricsKey(key),
          nowS: Math.floor(Date.now() / 1000),
        },
        auth,
        key,
      );
    },
    bulkRoute(app, auth),
  );
}
