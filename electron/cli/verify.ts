import { createClient } from '../../shared/api/client.js';
import { describeStatusCode } from '../../shared/api/codes.js';
import { verificationOf, type VerifyResponse } from '../../shared/api/verification.js';
import { startEmbeddedService } from '../core/embedded.js';
import { CliError } from './errors.js';

export interface VerifyOptions {
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
    `${result.address}  ${result.status}  ${result.status_code} ${describeStatusCode(result.status_code)}` +
    (notes.length ? `  (${notes.join('; ')})` : '')
  );
}

export async function verify(emails: string[], options: VerifyOptions): Promise<void> {
  const apiKey = options.apiKey ?? process.env.MAILSIEVE_API_KEY;
  if (options.baseUrl && !apiKey) throw new CliError('--base-url needs --api-key (or MAILSIEVE_API_KEY).');
  if (!options.baseUrl && options.apiKey) throw new CliError('--api-key goes with --base-url.');
  const timeout = options.timeout === undefined ? undefined : Number(options.timeout);
  if (timeout !== undefined && !(timeout > 0 && timeout <= 30))
    throw new CliError(`--timeout takes seconds, more than 0 and at most 30; got '${options.timeout}'.`);
  const embedded = options.baseUrl ? undefined : await startEmbeddedService(options.dataDir);
  try {
    let client;
    try {
      client = createClient({
        baseUrl: options.baseUrl ?? embedded!.baseUrl,
        apiKey: embedded ? embedded.apiKey : apiKey!,
      });
    } catch {
      throw new CliError(`--base-url must be an http or https URL; got '${options.baseUrl}'.`);
    }
    for (const email of emails) {
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
