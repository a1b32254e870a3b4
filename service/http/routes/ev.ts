// E1: GET /v5/ev — verify one email address.
import type { FastifyInstance } from 'fastify';
import { verifyOffline } from '../../engine/index.js';
import type { Verdict, VerifyPolicy } from '../../engine/types.js';
import type { KeyRecord } from '../../store/keys.js';
import { statusForCode } from '../../../shared/api/codes.js';
import { E1_TIMEOUT_MAX_S } from '../../../shared/api/verification.js';
import type { EmailValidationResult, SafeToSendResult, VerifyResponse } from '../../../shared/api/verification.js';
import { authorise, type AuthContext } from '../auth.js';
import { HttpError } from '../errors.js';
import { numberParam, singleValued } from '../params.js';
import { registerRoute } from '../routes.js';

const policies = new WeakMap<KeyRecord, VerifyPolicy>();

/** The engine policy a key configures, built once per cached key record. */
export function policyOf(key: KeyRecord): VerifyPolicy {
  let policy = policies.get(key);
  if (!policy) {
    policy = { corrections: key.services.has('corrections'), allow: key.allow, suppress: key.suppress };
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

export function registerEv(app: FastifyInstance, auth: AuthContext): void {
  registerRoute(app, 'GET', '/v5/ev', (request, reply) => {
    const key = authorise(auth, request, reply, 'query', 'validation', { rateLimited: true });
    if (!key) return reply;
    const params = singleValued(request.query);
    const email = params.email;
    if (email === undefined) throw new HttpError(400, "Missing parameter 'email': give the address to verify.");
    // A blank address is present but says nothing: that is a verdict (100, general syntax error), as for a
    // blank cell in a list, not a malformed request.
    const timeout = numberParam(params, 'timeout');
    if (timeout !== undefined && (timeout <= 0 || timeout > E1_TIMEOUT_MAX_S))
      throw new HttpError(
        400,
        `Parameter 'timeout' must be more than 0 and at most ${E1_TIMEOUT_MAX_S} seconds; got ${timeout}.`,
      );
    const verdict = verifyOffline(email, policyOf(key));
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(verificationResponse(verdict, key)));
  });
}
