// The provider's API key as stored: the secret itself (in the secret store) and the origin it was saved with
// (a history setting), which is the only origin it is ever sent to (keyOrigin.ts).
import { getSetting, setSetting, type HistoryDb } from '../history/db.js';
import type { SecretStore } from '../secrets.js';
import { KEY_ORIGIN_SETTING, originOf, type SavedKey } from './keyOrigin.js';

/** The secret name of the provider's API key. */
export const PROVIDER_KEY = 'provider-api-key';

/** Saves a typed key for the origin of `baseUrl`. */
export function saveProviderKey(db: HistoryDb, secrets: SecretStore, baseUrl: string, key: string): void {
  secrets.set(PROVIDER_KEY, key);
  setSetting(db, KEY_ORIGIN_SETTING, originOf(baseUrl));
}

/**
 * The saved key and its origin. A key saved before origins were kept belongs to the provider address saved
 * with it, if any.
 */
export function savedProviderKey(
  db: HistoryDb,
  secrets: SecretStore,
  connection: { readonly baseUrl?: string | undefined },
): SavedKey | undefined {
  const key = secrets.has(PROVIDER_KEY) ? secrets.get(PROVIDER_KEY) : undefined;
  if (!key) return undefined;
  const origin =
    getSetting<string>(db, KEY_ORIGIN_SETTING) ??
    (connection.baseUrl !== undefined ? originOf(connection.baseUrl) : undefined);
  return { key, origin };
}
