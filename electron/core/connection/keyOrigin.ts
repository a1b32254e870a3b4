// Where the provider's stored API key may go: only to the exact origin (scheme, host, port) it was saved
// with, and only over HTTPS off this machine. A new address needs the key typed again; a plain-HTTP
// address on another machine needs the user's explicit "allow plain HTTP on my network" setting, or the key
// would cross the network in clear text. The connection handlers of the desktop core call these before any
// request leaves.
import { isLoopbackHost } from '../../../shared/api/loopback.js';

/** The setting holding the origin the stored provider key was saved with. */
export const KEY_ORIGIN_SETTING = 'providerKeyOrigin';

export class ConnectionRuleError extends Error {
  constructor(
    readonly code: 'key-needed' | 'insecure-address',
    message: string,
  ) {
    super(message);
  }
}

/** The origin of a service address (`https://api.example.com:8443`), as the WHATWG URL parser gives it. */
export function originOf(baseUrl: string): string {
  return new URL(baseUrl).origin;
}

/**
 * Refuses a plain-HTTP provider address off loopback unless the user allowed plain HTTP on their network:
 * the API key travels in every request.
 */
export function checkProviderAddress(baseUrl: string, allowPlainHttp: boolean): void {
  const url = new URL(baseUrl);
  if (url.protocol === 'https:' || allowPlainHttp) return;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return;
  throw new ConnectionRuleError(
    'insecure-address',
    `${url.host} is on another machine and its address starts with http://: the API key would cross the network in clear text. ` +
      'Use its https:// address, or turn on “Allow plain HTTP on my network” if you trust every network between you and it.',
  );
}

export interface SavedKey {
  readonly key: string;
  /** The origin it was saved with; undefined for a key saved before origins were kept. */
  readonly origin: string | undefined;
}

/**
 * The key to send to `baseUrl`: the one just typed, else the saved one when it was saved for this very
 * origin. A saved key is never sent anywhere else; undefined when no key is saved (the caller says so).
 */
export function providerKeyFor(
  baseUrl: string,
  typedKey: string | undefined,
  saved: SavedKey | undefined,
): string | undefined {
  if (typedKey !== undefined) return typedKey;
  if (!saved) return undefined;
  const origin = originOf(baseUrl);
  if (saved.origin === origin) return saved.key;
  throw new ConnectionRuleError(
    'key-needed',
    saved.origin
      ? `The saved API key was saved for ${saved.origin} and is sent only there: type the key again to use ${origin}.`
      : `Type the API key again to use ${origin}: the saved key is sent only to the address it was saved with.`,
  );
}
