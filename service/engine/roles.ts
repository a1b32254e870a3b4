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

/** Both answers from one key, for the engine's own per-address path. */
export function usernameKind(key: string): 'unaccepted' | 'role' | undefined {
  if (UNACCEPTED.has(key)) return 'unaccepted';
  return ROLES.has(key) ? 'role' : undefined;
}
