import { codeMeaning } from '../../shared/vocabulary.js';
import { z } from 'zod';
import { verificationOf, verifyResponseSchema, type VerifyResponse } from '../../shared/api/verification.js';
import { startEmbeddedService } from '../core/embedded.js';
import { clientFor } from './connect.js';
import { CliError } from './errors.js';
import { hasOnlineOptions, onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';

export interface VerifyOptions extends OnlineCliOptions {
  explain?: boolean;
  json?: boolean;
  baseUrl?: string;
  apiKey?: string;
  dataDir: string;
  timeout?: string;
}

/** Words for a domain type in the readable table. */
const DOMAIN_WORDS: Record<string, string> = {
  biz: 'business',
  disposable: 'disposable',
  edu: 'education',
  freeisp: 'free ISP',
  gov: 'government',
  org: 'non-profit',
  paidisp: 'paid ISP',
  parked: 'parked',
  privacy: 'privacy relay',
  wireless: 'wireless',
};

export function formatVerification(response: VerifyResponse): string {
  const result = verificationOf(response);
  const notes = [
    result.domain_type ? (DOMAIN_WORDS[result.domain_type] ?? result.domain_type) : '',
    result.role_account ? 'role account' : '',
    result.email_corrections?.length ? `did you mean ${result.email_corrections.join(' or ')}?` : '',
    result.status_code === 10 ? 'checked offline: syntax only' : '',
  ].filter(Boolean);
  return (
    `${result.address}  ${result.status}  ${result.status_code} ${codeMeaning(result.status_code, result.domain_type)}` +
    (notes.length ? `  (${notes.join('; ')})` : '')
  );
}

/** E1's answer with the `explain` member that our service adds when asked (`explain=1`). */
const explainedSchema = z.object({ explain: z.array(z.string()).optional() });

/**
 * E1 with `explain=1`, a Mailsieve extension: the answer plus what was asked and answered on the way. The
 * shared client keeps to the spec's answer, so this one call is made here. The key goes in the query, as
 * E1 wants it, and is never printed, not even in an error.
 */
async function verifyExplained(
  baseUrl: string,
  apiKey: string,
  email: string,
  timeout: number | undefined,
): Promise<{ response: VerifyResponse; explain: readonly string[] }> {
  const url = new URL('/v5/ev', baseUrl);
  url.searchParams.set('email', email);
  if (timeout !== undefined) url.searchParams.set('timeout', String(timeout));
  url.searchParams.set('explain', '1');
  url.searchParams.set('api_key', apiKey);
  let answer: Response;
  try {
    answer = await fetch(url, { signal: AbortSignal.timeout(((timeout ?? 10) + 10) * 1000) });
  } catch (error) {
    throw new CliError(`Could not verify ${email}: the service did not answer (${(error as Error).name}).`);
  }
  const text = await answer.text();
  if (answer.status === 401) throw new CliError(`Could not verify ${email}: 401 Invalid API key.`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliError(`Could not verify ${email}: HTTP ${answer.status}, not a JSON answer.`);
  }
  if (answer.status !== 200) {
    const message = (body as { error_msg?: unknown }).error_msg;
    throw new CliError(
      `Could not verify ${email}: HTTP ${answer.status}${typeof message === 'string' ? ` ${message}` : ''}`,
    );
  }
  const response = verifyResponseSchema.safeParse(body);
  if (!response.success) throw new CliError(`Could not verify ${email}: the answer is not an E1 answer.`);
  return {
    response: response.data,
    explain: explainedSchema.parse(body).explain ?? [
      '(the service gave no explanation: it may not be a Mailsieve service)',
    ],
  };
}

export async function verify(emails: string[], options: VerifyOptions): Promise<void> {
  const apiKey = options.apiKey ?? process.env.MAILSIEVE_API_KEY;
  if (options.baseUrl && !apiKey) throw new CliError('--base-url needs --api-key (or MAILSIEVE_API_KEY).');
  if (!options.baseUrl && options.apiKey) throw new CliError('--api-key goes with --base-url.');
  const timeout = options.timeout === undefined ? undefined : Number(options.timeout);
  if (timeout !== undefined && !(timeout > 0 && timeout <= 30))
    throw new CliError(`--timeout takes seconds, more than 0 and at most 30; got '${options.timeout}'.`);
  if (options.baseUrl && hasOnlineOptions(options))
    throw new CliError(
      '--checks, --dns-servers, --smtp-port, --helo-name, --mail-from and --smtp-concurrency set up the embedded service; with --base-url the key decides.',
    );
  const online = options.baseUrl ? undefined : onlineOptionsFrom(options, 'offline');
  const embedded = online ? await startEmbeddedService(options.dataDir, { online }) : undefined;
  try {
    const client = clientFor(embedded, options.baseUrl, apiKey);
    for (const email of emails) {
      if (options.explain) {
        const { response, explain } = await verifyExplained(
          options.baseUrl ?? embedded!.baseUrl,
          embedded ? embedded.apiKey : apiKey!,
          email,
          timeout,
        );
        if (options.json) process.stdout.write(`${JSON.stringify({ ...response, explain })}\n`);
        else
          process.stdout.write(
            `${formatVerification(response)}\n${explain.map((line) => `    ${line}`).join('\n')}\n`,
          );
        continue;
      }
      const answer = await client.verify(email, timeout === undefined ? {} : { timeout });
      if (!answer.ok) throw new CliError(`Could not verify ${email}: ${answer.error.message}`);
      process.stdout.write(
        `${options.json ? JSON.stringify(answer.value) : formatVerification(answer.value)}\n`,
      );
    }
  } finally {
    await embedded?.close();
  }
}
