// The status-code table of the spec ("Status codes"), both verification modes, as one source of truth.
// Statuses of either mode are derived from a code here and nowhere else.

export const SAFE_TO_SEND_STATUSES = [
  'safetosend',
  'valid',
  'invalid',
  'trap',
  'catchall',
  'unknown',
  'corrected',
] as const;
export type SafeToSendStatus = (typeof SAFE_TO_SEND_STATUSES)[number];

export const LEGACY_STATUSES = ['valid', 'invalid', 'risky', 'unverifiable', 'unknown', 'corrected'] as const;
export type LegacyStatus = (typeof LEGACY_STATUSES)[number];

export const VERIFICATION_MODES = ['safe_to_send', 'email_validation'] as const;
export type VerificationMode = (typeof VERIFICATION_MODES)[number];

/** Which group of the list report's `invalid_categories` a code counts under. */
export type InvalidCategory = 'Syntax Errors' | 'Domain Errors' | 'Mailbox Errors' | 'Suppressions';

export interface StatusCodeInfo {
  readonly code: number;
  /** Status in `safe_to_send` mode. */
  readonly safeToSend: Exclude<SafeToSendStatus, 'corrected'>;
  /** Status in `email_validation` (legacy) mode; null where the table has a dash. */
  readonly legacy: Exclude<LegacyStatus, 'corrected'> | null;
  readonly meaning: string;
  readonly invalidCategory?: InvalidCategory;
}

const row = (
  code: number,
  safeToSend: StatusCodeInfo['safeToSend'],
  legacy: StatusCodeInfo['legacy'],
  meaning: string,
  invalidCategory?: InvalidCategory,
): StatusCodeInfo => ({ code, safeToSend, legacy, meaning, ...(invalidCategory ? { invalidCategory } : {}) });

export const STATUS_CODES: readonly StatusCodeInfo[] = [
  row(5, 'unknown', 'unknown', 'Timeout, no response in time'),
  row(10, 'valid', 'unknown', 'Syntax OK'),
  row(20, 'valid', 'unknown', 'Syntax OK and domain valid'),
  row(45, 'catchall', 'unverifiable', 'Domain is catch-all, validation unsupported'),
  row(50, 'safetosend', 'valid', 'Valid address'),
  row(55, 'valid', null, 'Allowed by client-configured exception'),
  row(100, 'invalid', 'invalid', 'General syntax error', 'Syntax Errors'),
  row(110, 'invalid', 'invalid', 'Invalid character in address', 'Syntax Errors'),
  row(115, 'invalid', 'invalid', 'Invalid domain syntax', 'Syntax Errors'),
  row(120, 'invalid', 'invalid', 'Invalid username syntax', 'Syntax Errors'),
  row(125, 'invalid', 'invalid', 'Invalid username syntax for that domain', 'Syntax Errors'),
  row(130, 'invalid', 'invalid', 'Address too long', 'Syntax Errors'),
  row(140, 'invalid', 'invalid', 'No username', 'Syntax Errors'),
  row(145, 'invalid', 'invalid', 'No domain', 'Syntax Errors'),
  row(150, 'invalid', 'invalid', 'No @ sign', 'Syntax Errors'),
  row(155, 'invalid', 'invalid', 'More than one @ sign', 'Syntax Errors'),
  row(200, 'invalid', 'invalid', 'Invalid top-level domain', 'Syntax Errors'),
  row(210, 'invalid', 'invalid', 'Extra space or character', 'Syntax Errors'),
  row(215, 'invalid', 'invalid', 'Unquoted spaces not allowed', 'Syntax Errors'),
  row(255, 'invalid', null, 'Not allowed by client-configured suppression', 'Suppressions'),
  row(310, 'invalid', 'invalid', 'Domain does not exist', 'Domain Errors'),
  row(325, 'invalid', 'invalid', 'Domain cannot receive email', 'Domain Errors'),
  row(400, 'invalid', 'invalid', 'Mailbox does not exist', 'Mailbox Errors'),
  row(410, 'invalid', 'invalid', 'Mailbox full', 'Mailbox Errors'),
  row(420, 'invalid', 'invalid', 'Mail not accepted for this domain', 'Mailbox Errors'),
  row(500, 'invalid', 'invalid', 'Usernames of this kind not accepted', 'Mailbox Errors'),
  row(505, 'invalid', 'invalid', 'Domain not accepted', 'Domain Errors'),
  row(510, 'invalid', 'invalid', 'Address not accepted', 'Mailbox Errors'),
  row(520, 'invalid', 'invalid', 'Matched to known bouncers', 'Mailbox Errors'),
  row(525, 'trap', 'risky', 'Spamtrap or suppressed (in legacy mode also: known complainer)'),
  row(530, 'trap', 'risky', 'Address opted out of commercial email'),
  row(535, 'trap', null, 'On a marketing-association Do Not Email list'),
  row(540, 'trap', null, 'Known or frequent complainer'),
  row(999, 'unknown', 'unknown', 'System error'),
];

const BY_CODE = new Map(STATUS_CODES.map((info) => [info.code, info]));

/** A person-readable meaning for any code, known or not. */
export function describeStatusCode(code: number): string {
  const info = BY_CODE.get(code);
  if (info) return info.meaning;
  if (code === 135 || code === 205 || code === 315) return 'Reported by the provider; meaning not published';
  return 'Code not known to this version of Mailsieve';
}

/**
 * Codes the table marks with a dash in legacy mode still need a legacy status when a legacy key meets them
 * (for example an allow-listed address). We take the nearest legacy meaning.
 */
const LEGACY_FALLBACK: Record<number, Exclude<LegacyStatus, 'corrected'>> = {
  55: 'valid',
  255: 'invalid',
  535: 'risky',
  540: 'risky',
};

export interface AcceptAllOptions {
  /**
   * From 2024-04-29 the spec reports accept-all domains (code 45) as `valid` in both modes.
   * True restores the older `catchall` / `unverifiable` statuses.
   */
  readonly legacyAcceptAll?: boolean;
}

/** Status of a code in the given mode. Unknown codes are tolerated by their range (spec: versioning). */
export function statusForCode(
  code: number,
  mode: VerificationMode,
  options: AcceptAllOptions = {},
): Exclude<SafeToSendStatus | LegacyStatus, 'corrected'> {
  if (code === 45 && !options.legacyAcceptAll) return 'valid';
  const info = BY_CODE.get(code);
  if (info) {
    if (mode === 'safe_to_send') return info.safeToSend;
    return info.legacy ?? LEGACY_FALLBACK[code] ?? 'unknown';
  }
  // A code this version does not know: judge it by its neighbourhood in the table.
  if (code >= 100 && code < 525) return 'invalid';
  if (code >= 525 && code < 999) return mode === 'safe_to_send' ? 'trap' : 'risky';
  return 'unknown';
}

/** The invalid category a code counts under in list reports, by table or by range for unknown codes. */
export function invalidCategoryForCode(code: number): InvalidCategory | undefined {
  const info = BY_CODE.get(code);
  if (info) return info.invalidCategory;
  if (code >= 100 && code < 300) return 'Syntax Errors';
  if (code >= 300 && code < 400) return 'Domain Errors';
  if (code >= 400 && code < 525) return 'Mailbox Errors';
  return undefined;
}
