// GET /v5/key — a Mailsieve extension: what the calling key may have (its services, the list services they
// give, its fields and its alternate email maximum), so a client (the desktop's column mapper) offers only
// what the key allows; its verification mode; and its quota (limit, used, left, period, when it renews), as
// the usage port counts it on either adapter (SQLite or PostgreSQL). Not billable: the desktop's connection
// test asks it instead of spending an E1 query. The key goes in the `api_key` header (or the query, as
// E1–E6). The provider has no such endpoint; clients fall back to asking the user.
import type { FastifyInstance } from 'fastify';
import { SERVICE_NAMES } from '../../../shared/api/services.js';
import { listServicesOfKey, type KeyInfo } from '../../../shared/api/listServices.js';
import { KEY_FIELDS } from '../../identity/fields.js';
import { quotaInfo } from '../../store/usage.js';
import { authorise, type AuthContext } from '../auth.js';
import { registerRoute } from '../routes.js';

export function registerKeyInfo(app: FastifyInstance, auth: AuthContext): void {
  registerRoute(app, 'GET', '/v5/key', async (request, reply) => {
    const placement = request.headers.api_key !== undefined ? 'header' : 'query';
    const key = await authorise(auth, request, reply, placement, null, { rateLimited: true });
    if (!key) return reply;
    const used = key.quota ? ((await auth.usage.usage([key])).get(key.id) ?? 0) : 0;
    const body: KeyInfo = {
      services: SERVICE_NAMES.filter((name) => key.services.has(name)),
      list_services: listServicesOfKey(key.services),
      fields: KEY_FIELDS.filter((field) => key.fields === null || key.fields.has(field)),
      alternate_max: key.alternateMax,
      mode: key.mode,
      ...(key.quota ? { quota: quotaInfo(key.quota, used) } : {}),
    };
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
}
