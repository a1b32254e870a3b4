// E1: GET /v5/ev — verify one email address.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { verifyOffline } from '../../engine/index.js';
import { NO_POLICY, type Verdict, type VerifyPolicy } from '../../engine/types.js';
import type { KeyRecord } from '../../store/keys.js';
import { statusForCode } from '../../../shared/api/codes.js';
import { E1_TIMEOUT_DEFAULT_S, E1_TIMEOUT_MAX_S } from '../../../shared/api/verification.js';
import { minLevel, type ChecksLevel, type OnlineVerifier } from '../../engine/online/index.js';
import type {
  EmailValidationResult,
  SafeToSendResult,
  VerifyResponse,
} from '../../../shared/api/verification.js';
import { authorise, chargeQueries, thenMaybe, type AuthContext } from '../auth.js';
import { HttpError } from '../errors.js';
import { numberParam, singleValued } from '../params.js';
import { registerRoute } from '../routes.js';
import { EngagementScores, withEngagementScore } from '../../identity/engagement.js';
import type { IdentityStore } from '../../identity/store.js';
import type { BounceLookup } from '../../identity/bounces.js';

const policies = new WeakMap<KeyRecord, VerifyPolicy>();

/**
 * The engine policy a key configures, built once per cached key record. With known bouncers, each
 * verification asks `bounces` about its address as of that moment (service/identity/bounces.ts).
 */
export function policyOf(key: KeyRecord, bounces?: BounceLookup): VerifyPolicy {
  let policy = policies.get(key);
  if (!policy) {
    // A legacy key has no allow or suppression list (codes 55 and 255 do not occur in that mode); a key
    // made before that rule keeps its entries in the store, unused.
    const isLegacy = key.mode === 'email_validation';
    const maxAgeDays = key.bounceMaxAgeDays;
    policy = {
      corrections: key.services.has('corrections'),
      allow: isLegacy ? NO_POLICY.allow : key.allow,
      suppress: isLegacy ? NO_POLICY.suppress : key.suppress,
      ...(bounces && key.knownBouncers
        ? { isBounced: (local: string, domain: string) => bounces.isBounced(local, domain, maxAgeDays) }
        : {}),
    };
    policies.set(key, policy);
  }
  return policy;
}

/** The E1 answer for a verdict, in the key's mode, with only the members the spec says are present. */
export function verificationResponse(verdict: Verdict, key: KeyRecord): VerifyResponse {
  const status = statusForCode(verdict.code, key.mode, { legacyAcceptAll: key.legacyAcceptAll });
  const result: SafeToSendResult | EmailValidationResult = {
    address: verdict.address,
    status,
    status_code: verdict.code,
  };
  if (verdict.domainType) result.domain_type = verdict.domainType;
  if (verdict.roleAccount) result.role_account = true;
  if (verdict.corrections && verdict.corrections.length > 0 && key.services.has('corrections'))
    result.email_corrections = [...verdict.corrections];
  return key.mode === 'safe_to_send' ? { safe_to_send: result } : { email_validation: result };
}

/** The online verifier of a service, and the highest checks level the service allows (`serve --checks`). */
export interface OnlineContext {
  readonly verifier: OnlineVerifier;
  readonly ceiling: ChecksLevel;
}

/**
 * The time an online check may take, of E1's `timeout`: all of it but a margin for answering, so that the
 * answer arrives within `timeout` (spec: a timeout gives a normal 200 with code 5).
 */
export function checkBudgetMs(timeoutS: number): number {
  const ms = timeoutS * 1000;
  return ms - Math.min(150, ms * 0.1);
}

/** `explain=1|true|0|false`: a Mailsieve extension adding the check's conversation as `explain` (strings). */
function explainParam(raw: string | undefined): boolean {
  if (raw === undefined || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new HttpError(400, "Parameter 'explain' takes 1, true, 0 or false.");
}

export function registerEv(
  app: FastifyInstance,
  auth: AuthContext,
  online?: OnlineContext,
  identity?: IdentityStore,
  bounces?: BounceLookup,
): void {
  const scores = identity && new EngagementScores(identity);
  /** Sends the answer, with engagement_score from the reference data's activity (docs/identity.md). */
  const send = (reply: FastifyReply, body: VerifyResponse & { explain?: readonly string[] }) =>
    reply.type('application/json; charset=utf-8').send(JSON.stringify(withEngagementScore(body, scores)));

  /** The answer for an authorised key, once its query is charged (a key with a quota past it gets 403). */
  const answer = (key: KeyRecord, request: FastifyRequest, reply: FastifyReply) => {
    const params = singleValued(request.query);
    const email = params.email;
    if (email === undefined)
      throw new HttpError(400, "Missing parameter 'email': give the address to verify.");
    // A blank address is present but says nothing: that is a verdict (100, general syntax error), as for a
    // blank cell in a list, not a malformed request.
    const timeout = numberParam(params, 'timeout');
    if (timeout !== undefined && (timeout <= 0 || timeout > E1_TIMEOUT_MAX_S))
      throw new HttpError(
        400,
        `Parameter 'timeout' must be more than 0 and at most ${E1_TIMEOUT_MAX_S} seconds; got ${timeout}.`,
      );
    const explain = explainParam(params.explain);
    // One billable query (spec "Limits"): within the key's quota, or 403.
    return thenMaybe(chargeQueries(auth, key, reply, 1), (isCharged) => {
      if (!isCharged) return reply;
      const level = online ? minLevel(key.checks, online.ceiling) : 'offline';
      if (level === 'offline' || !online) {
        const body = verificationResponse(verifyOffline(email, policyOf(key, bounces)), key);
        if (!explain) return send(reply, body);
        return send(reply, {
          ...body,
          explain: [
            `Checked offline only: DNS and SMTP checks are not enabled for this key or service (key: ${key.checks}, service: ${online?.ceiling ?? 'offline'})`,
          ],
        });
      }
      // E1's timeout bounds the whole online check (DNS, SMTP, greylisting retries, the catch-all probe).
      return online.verifier
        .verify(email, policyOf(key, bounces), {
          level,
          budgetMs: checkBudgetMs(timeout ?? E1_TIMEOUT_DEFAULT_S),
          explain,
        })
        .then((verdict) => {
          const body = verificationResponse(verdict, key);
          return send(reply, explain ? { ...body, explain: verdict.explain ?? [] } : body);
        });
    });
  };

  // Not an async function: an offline answer is sent at once, without a promise to settle (issue 23). (A team
  // server's key lookup, rate limit and quota may ask PostgreSQL: then it answers through their promise.)
  registerRoute(app, 'GET', '/v5/ev', (request, reply) =>
    thenMaybe(authorise(auth, request, reply, 'query', 'validation', { rateLimited: true }), (key) =>
      key ? answer(key, request, reply) : reply,
    ),
  );
}
