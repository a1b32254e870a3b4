// E2 `GET /ae` (alternate email), E3 `GET /v5/eppend` (email append and postal append) and E4
// `POST /v5/eppend/bulk`, answered from the reference data (docs/identity.md). Also registers E5/E6. Each
// record answered from the data is a billable query, reserved before the lookup (auth.ts reserveQueries).
import type { FastifyInstance } from 'fastify';
import { BULK_IDENTITY_LIMIT } from '../../../shared/api/limits.js';
import { eppendModeOf } from '../../../shared/api/identity.js';
import {
  alternateEmailAnswer,
  blankEmailError,
  emailAppendAnswer,
  emailForMatching,
  isErrorAnswer,
  postalAppendAnswer,
} from '../../identity/answers.js';
import { identityPolicyFor } from '../../identity/policy.js';
import { IdentityStore } from '../../identity/store.js';
import type { ServiceDb } from '../../store/db.js';
import { createReferenceIndexes } from '../../store/migrations/0040-identity.js';
import { authorise, reserveQueries, type AuthContext } from '../auth.js';
import { HttpError, sendError } from '../errors.js';
import { singleValued } from '../params.js';
import { registerRoute } from '../routes.js';
import { BulkPool } from '../../identity/bulkPool.js';
import { AnswerPreparer } from '../../identity/preparer.js';
import { bulkBodyText, bulkRoute, sendBulk } from './bulkBody.js';
import { keyOf } from '../bodies.js';
import { registerIntelligence } from './intelligence.js';
import { sendJson, sendRecordError } from './replies.js';

const has = (value: string | undefined) => value !== undefined && value.trim() !== '';

/** E3 email append's parameters that are missing, in the spec's order. */
function missingEmailAppendParameters(params: Record<string, string>): string[] {
  const missing: string[] = ['first', 'last', 'street'].filter((name) => !has(params[name]));
  if (!has(params.zip) && !(has(params.city) && has(params.state)))
    missing.push(
      has(params.city) ? 'state (or zip)' : has(params.state) ? 'city (or zip)' : 'zip (or city and state)',
    );
  return missing;
}

export function registerIdentity(
  app: FastifyInstance,
  auth: AuthContext,
  store: IdentityStore,
  bulk: BulkPool,
): void {
  registerRoute(app, 'GET', '/ae', async (request, reply) => {
    const key = await authorise(auth, request, reply, 'query', 'alternate_email', { rateLimited: true });
    if (!key) return reply;
    const params = singleValued(request.query);
    if (params.email === undefined)
      throw new HttpError(400, "Missing parameter 'email': give the address to find other addresses of.");
    // One billable query (spec "Limits"), reserved before the lookup; not counted when it is a record error.
    const reservation = await reserveQueries(auth, key, reply, 1);
    if (!reservation) return reply;
    const found = emailForMatching(store, params.email);
    await reservation.settle(found.ok ? 1 : 0);
    if (!found.ok) return sendRecordError(reply, found.error);
    return sendJson(reply, alternateEmailAnswer(store, found.match, key.alternateMax));
  });

  registerRoute(app, 'GET', '/v5/eppend', async (request, reply) => {
    const key = await authorise(auth, request, reply, 'query', null, { rateLimited: true });
    if (!key) return reply;
    const params = singleValued(request.query);
    if (eppendModeOf(params) === 'postal_append') {
      if (!key.services.has('postal_append'))
        return sendError(
          reply,
          403,
          'Access denied: this API key is not enabled for the postal_append service (email to postal address).',
        );
      const reservation = await reserveQueries(auth, key, reply, 1);
      if (!reservation) return reply;
      const found = emailForMatching(store, params.email ?? '');
      await reservation.settle(found.ok ? 1 : 0);
      if (!found.ok) return sendRecordError(reply, found.error);
      return sendJson(reply, postalAppendAnswer(found.match));
    }
    if (!['first', 'last', 'street', 'city', 'state', 'zip'].some((name) => has(params[name]))) {
      const blank = blankEmailError(params); // `email=` alone: a blank identifier, as on E2, E5 and E6
      if (blank) return sendRecordError(reply, blank);
      throw new HttpError(
        400,
        'Missing parameters: give email (postal append), or first, last, street and zip or city and state (email append).',
      );
    }
    if (!key.services.has('email_append'))
      return sendError(
        reply,
        403,
        'Access denied: this API key is not enabled for the email_append service (postal address to email).',
      );
    const missing = missingEmailAppendParameters(params);
    if (missing.length > 0)
      throw new HttpError(
        400,
        `Missing parameter${missing.length > 1 ? 's' : ''} for email append: ${missing.join(', ')}.`,
      );
    const reservation = await reserveQueries(auth, key, reply, 1);
    if (!reservation) return reply;
    const answer = emailAppendAnswer(store, params);
    await reservation.settle(isErrorAnswer(answer) ? 0 : 1);
    return isErrorAnswer(answer) ? sendRecordError(reply, answer) : sendJson(reply, answer);
  });

  registerRoute(
    app,
    'POST',
    '/v5/eppend/bulk',
    async (request, reply) => {
      // Checked by the route's hook, before the body was read.
      const key = keyOf(request);
      const policy = identityPolicyFor(key);
      if (!policy.ok) return sendError(reply, policy.status, policy.message);
      const body = bulkBodyText(request);
      return sendBulk(
        reply,
        bulk,
        { kind: 'identity', body, limit: BULK_IDENTITY_LIMIT, policy: policy.policy },
        auth,
        key,
      );
    },
    bulkRoute(app, auth),
  );
}

/**
 * Registers E2–E6 over the reference data of `db`, and returns the store, which E1 reads for
 * `engagement_score`.
 */
export function registerIdentityRoutes(
  app: FastifyInstance,
  auth: AuthContext,
  db: ServiceDb,
  options: { readonly nativeBinding?: string | undefined } = {},
): IdentityStore {
  // An import interrupted by a crash may have left its dropped indexes unbuilt.
  createReferenceIndexes(db);
  // E6 reads thousands of random pages of a large store per request. A 128 MiB page cache (SQLite's default
  // is 2 MiB; a cap, not an allocation, only ever raised) and reading the file through a memory map (no
  // system call per page) made E6 over a million people a quarter faster.
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  if (cacheSize < 0 && cacheSize > -131_072) db.pragma('cache_size = -131072');
  if ((db.pragma('mmap_size', { simple: true }) as number) === 0) db.pragma('mmap_size = 2147483648');
  const store = new IdentityStore(db);
  const bulk = new BulkPool({ dbPath: db.name, nativeBinding: options.nativeBinding }, store);
  app.addHook('onClose', () => bulk.close());
  // Answers of people imported or changed since they were last prepared, in the background.
  const preparer = new AnswerPreparer(db, options);
  app.addHook('onClose', () => preparer.close());
  registerIdentity(app, auth, store, bulk);
  registerIntelligence(app, auth, store, bulk);
  return store;
}
