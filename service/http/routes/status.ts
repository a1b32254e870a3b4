// GET /v5/status — a Mailsieve extension: which checks this service runs for the calling key, and whether
// DNS answers and mail servers can be reached from here, so a user can tell why answers come back unknown
// (code 5). It needs a key (query parameter or header `api_key`, any service): the preflight makes outbound
// DNS and SMTP connections and tells how this machine's network is set up, which is not for anyone who asks.
// The answer holds no secret: DNS server addresses, the SMTP port, the probe's findings (the identity
// conversation's verdict, not its transcript). The preflight is
// cached for 30 s, so calling this often does not multiply outbound connections.
import type { FastifyInstance } from 'fastify';
import { minLevel } from '../../engine/online/index.js';
import { authorise, type AuthContext } from '../auth.js';
import { registerRoute } from '../routes.js';
import type { OnlineContext } from './ev.js';

export interface StatusResponse {
  /** The level E1 runs for this key: the key's level, capped by the service's. */
  checks: string;
  key_checks: string;
  service_checks: string;
  dns: { ok: boolean; detail: string; servers: readonly string[] };
  smtp: { ok: boolean; detail: string; port: number };
  /** Whether the probe domain's mail server took this service's HELO name and sender, and what to set. */
  identity: {
    ok: boolean;
    detail: string;
    helo_name: string;
    mail_from: string;
    refused_at?: string;
    problems: { text: string; option: string }[];
  };
  checked_at: string;
}

export function registerStatus(app: FastifyInstance, auth: AuthContext, online: OnlineContext): void {
  registerRoute(app, 'GET', '/v5/status', async (request, reply) => {
    const placement = request.headers.api_key !== undefined ? 'header' : 'query';
    const key = await authorise(auth, request, reply, placement, null, { rateLimited: true });
    if (!key) return reply;
    const preflight = await online.verifier.preflight();
    const body: StatusResponse = {
      checks: minLevel(key.checks, online.ceiling),
      key_checks: key.checks,
      service_checks: online.ceiling,
      dns: preflight.dns,
      smtp: preflight.smtp,
      identity: {
        ok: preflight.identity.ok,
        detail: preflight.identity.detail,
        helo_name: preflight.identity.heloName,
        mail_from: preflight.identity.mailFrom,
        ...(preflight.identity.refusedAt ? { refused_at: preflight.identity.refusedAt } : {}),
        problems: preflight.identity.problems.map(({ text, option }) => ({ text, option })),
      },
      checked_at: preflight.checkedAt,
    };
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
}
