// Verify: one address through E1 on the current connection, as the Verify screen shows it.
import { verificationOf } from '../../../shared/api/verification.js';
import { ReplyFailure, type CoreContext, type Handlers } from './context.js';

export function verifyHandlers(ctx: CoreContext): Handlers<'verify:address'> {
  const { currentClient } = ctx.connection;
  return {
    'verify:address': async (input) => {
      const { client, kind } = await currentClient();
      // Our own service explains its answer (DNS answers, the SMTP conversation); a provider's is not asked.
      const result =
        kind === 'embedded'
          ? await client.verifyExplained(input.email, { timeout: 10 })
          : await client.verify(input.email, { timeout: 10 });
      if (!result.ok)
        throw new ReplyFailure('connection-failed', `The service did not answer: ${result.error.message}`);
      const jobChecks = await ctx.connection.currentJobChecks(kind);
      const answer = verificationOf(result.value);
      return {
        mode: 'safe_to_send' in result.value ? ('safe_to_send' as const) : ('email_validation' as const),
        address: answer.address,
        status: answer.status,
        statusCode: answer.status_code,
        domainType: answer.domain_type ?? null,
        isRoleAccount: answer.role_account === true,
        corrections: answer.email_corrections ?? [],
        engagementScore:
          'engagement_score' in answer && typeof answer.engagement_score === 'number'
            ? answer.engagement_score
            : null,
        connection: kind,
        checks:
          jobChecks.level === 'offline'
            ? ('offline' as const)
            : kind === 'embedded'
              ? ('online' as const)
              : ('provider' as const),
        checksRun: jobChecks,
        explain: (result.value as { explain?: string[] }).explain ?? [],
      };
    },
  };
}
