// A failed connection test in words a person can act on: never a library's message (an OpenSSL dump,
// ECONNREFUSED) nor an internal field name.
import type { ApiError } from '../../../shared/api/client.js';

function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

/** Why the service at `baseUrl` could not be used, in one sentence. */
export function connectionErrorWords(error: ApiError, baseUrl: string): string {
  const host = hostOf(baseUrl);
  const text = `${error.message} ${error.body ?? ''}`;
  if (error.kind === 'http') {
    if (error.status === 401) return 'The service refused the API key (401): check the key.';
    if (error.status === 403) return 'The service refused this API key for verification (403).';
    if (error.status === 404)
      return `${host} answers, but not as an Email Data Service (404): check the address and its path.`;
    if (error.status === 429) return 'The service is busy (429): try again in a minute.';
    if ((error.status ?? 0) >= 500)
      return `The service at ${host} has a problem of its own (HTTP ${error.status}): try again later.`;
    return `The service at ${host} refused the test call (HTTP ${error.status}).`;
  }
  if (error.kind === 'timeout') return `${host} did not answer in time: check the address, or try again.`;
  if (error.kind === 'invalid-response')
    return `${host} answers, but not as an Email Data Service: check the address.`;
  if (/wrong version number|packet length too long|EPROTO|ssl3_get_record|http request/i.test(text))
    return `This address speaks HTTP, not HTTPS: write http:// at the start of ${host}, or check the port.`;
  if (/ECONNREFUSED/.test(text)) return `Nothing answers at ${host} — is the service running?`;
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/.test(text))
    return `No computer is known by the name ${host.replace(/:\d+$/, '')}: check the address.`;
  if (/CERT|certificate|self[- ]signed/i.test(text))
    return `The certificate of ${host} is not trusted, so the connection was not made.`;
  if (/ECONNRESET|socket hang up|EPIPE|other side closed/i.test(text))
    return `${host} closed the connection: check that the address and port are the service’s.`;
  if (/EHOSTUNREACH|ENETUNREACH/.test(text)) return `${host} cannot be reached from this computer.`;
  return `The service at ${host} could not be reached.`;
}
