import { createClient, type Client } from '../../shared/api/client.js';
import type { EmbeddedService } from '../core/embedded.js';
import { CliError } from './errors.js';

/**
 * The REST client a command talks through: the embedded service when one was started, else the service at
 * `--base-url` with its key. The API is the same either way (DESIGN.md, "One path for every job").
 */
export function clientFor(
  embedded: Pick<EmbeddedService, 'baseUrl' | 'apiKey'> | undefined,
  baseUrl: string | undefined,
  apiKey: string | undefined,
): Client {
  try {
    return createClient({
      baseUrl: embedded ? embedded.baseUrl : (baseUrl ?? ''),
      apiKey: embedded ? embedded.apiKey : (apiKey ?? ''),
    });
  } catch {
    throw new CliError(`--base-url must be an http or https URL; got '${baseUrl}'.`);
  }
}
