// The known bouncers of a list (bounces.ts): read as the list starts, by the pipeline worker, on a read-only
// connection of its own; the verify workers get them as a shared set in the list's policy.
import Database from 'better-sqlite3';
import type { ListPolicy } from '../lists/types.js';
import type { KeyRecord } from '../store/keys.js';
import { hasBounces, knownBouncerSet } from './bounces.js';

/**
 * A list's policy with its known bouncers' set (`bounceSet`), read from the service's database on a
 * read-only connection of its own, as of now: run by the pipeline worker as a list starts. A policy without
 * `knownBouncers` is returned as it is.
 */
export function withKnownBouncers(policy: ListPolicy, nowS = Math.floor(Date.now() / 1000)): ListPolicy {
  const known = policy.knownBouncers;
  if (!known || policy.bounceSet) return policy;
  const db = new Database(known.dbPath, {
    readonly: true,
    fileMustExist: true,
    ...(known.nativeBinding ? { nativeBinding: known.nativeBinding } : {}),
  });
  try {
    const set = knownBouncerSet(db, known.maxAgeDays, nowS);
    return set ? { ...policy, bounceSet: set.buffer } : policy;
  } finally {
    db.close();
  }
}

/**
 * What a list of `key` needs to know of its known bouncers: undefined when the key has none, or no bounce is
 * imported (the list then looks nothing up), or the database is not a file another connection can open.
 */
export function knownBouncersFor(
  db: Database.Database,
  key: Pick<KeyRecord, 'knownBouncers' | 'bounceMaxAgeDays'>,
  nativeBinding: string | undefined,
): ListPolicy['knownBouncers'] {
  if (!key.knownBouncers || db.memory || !hasBounces(db)) return undefined;
  return { maxAgeDays: key.bounceMaxAgeDays, dbPath: db.name, nativeBinding };
}
