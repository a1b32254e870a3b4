// Role accounts (`role_account`) and the usernames whose addresses are not accepted (code 500), from the
// curated lists in data/. Both are matched on the username: the local part before any "+tag", lower-case,
// without the separators people vary (no-reply, no_reply, no.reply and noreply are one username).
import { readDataList } from './lists.js';

/** The username a local part is matched by: before "+", lower-case, without ".", "-" and "_". */
export function usernameKey(local: string): string {
  const plus = local.indexOf('+');
  const username = (plus < 0 ? local : local.slice(0, plus)).toLowerCase();
  for (let i = 0; i < username.length; i++) {
    const c = username.charCodeAt(i);
    if (c === 46 || c === 45 || c === 95) return username.replace(/[._-]/g, '');
  }
  return username;
}

const UNACCEPTED: ReadonlySet<string> = new Set(readDataList('unaccepted-usernames.txt').map(usernameKey));
const ROLES: ReadonlySet<string> = new Set([
  ...readDataList('role-accounts.txt').map(usernameKey),
  ...UNACCEPTED,
]);

/** A group or job-role mailbox (info@, sales@, support@ …); every unaccepted username is one too. */
export function isRoleAccount(local: string): boolean {
  return ROLES.has(usernameKey(local));
}

/**
 * Complaint desks (abuse@, noc@, security@, spam reports) and addresses that take no mail (no-reply@,
 * mailer-daemon@): code 500, "Usernames of this kind not accepted".
 */
export function isUnacceptedUsername(local: string): boolean {
  return UNACCEPTED.has(usernameKey(local));
}

/** Both answers from one key. */
export function usernameKind(key: string): 'unaccepted' | 'role' | undefined {
  if (UNACCEPTED.has(key)) return 'unaccepted';
  return ROLES.has(key) ? 'role' : undefined;
}

/**
 * A hash of usernameKey(local) for an ASCII local part, computed from its characters without making the key
 * (-1 for a local part that is not ASCII).
 */
function usernameHash(local: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < local.length; i++) {
    let c = local.charCodeAt(i);
    if (c === 43 /* + */) break;
    if (c >= 0x80) return -1;
    if (c === 46 || c === 45 || c === 95) continue;
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

/** The hashes of every role and unaccepted username: nearly every local part is none of them. */
const KNOWN_HASHES: ReadonlySet<number> = new Set([...ROLES].map(usernameHash));

/**
 * usernameKind(usernameKey(local)), for the engine's per-address path: a local part whose key's hash is no
 * known username's is answered without making its key (no lower-case copy, no separators removed).
 */
export function usernameKindOf(local: string): 'unaccepted' | 'role' | undefined {
  const hash = usernameHash(local);
  if (hash >= 0 && !KNOWN_HASHES.has(hash)) return undefined;
  return usernameKind(usernameKey(local));
}
