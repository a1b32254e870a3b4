// One vocabulary for every screen and command: what each status, code and domain type is called and means.
// Verify, Results, History, the exports' summaries and `mailsieve clean` all name answers from this table.
//
// Names follow the key's verification mode (the connection's key decides): a `safe_to_send` key reads
// "Trap" and "Catch-all" where a legacy (`email_validation`) key reads "Risky" and "Unverifiable". One
// answer gets one name: a single-address answer is first put in the list vocabulary by the same rule the
// service applies to list rows (answerListStatus), so Verify and Results say the same of the same address.
import { describeStatusCode, statusForCode, type VerificationMode } from './api/codes.js';
import { formatCount } from './count.js';

/** The statuses of list results (the legacy vocabulary; DESIGN.md). */
export const LIST_STATUSES = ['valid', 'corrected', 'unknown', 'unverifiable', 'risky', 'invalid'] as const;
export type ListStatus = (typeof LIST_STATUSES)[number];

export interface StatusWords {
  /** The name under a `safe_to_send` key. */
  readonly safeToSend: string;
  /** The name under a legacy (`email_validation`) key. */
  readonly legacy: string;
  readonly meaning: string;
}

/** Every status of both modes. The list statuses are named per mode; E1-only statuses keep their name. */
export const STATUS_WORDS: Readonly<Record<string, StatusWords>> = {
  valid: {
    safeToSend: 'Valid',
    legacy: 'Valid',
    meaning: 'Passed the checks that could be made; safe to mail.',
  },
  corrected: {
    safeToSend: 'Corrected',
    legacy: 'Corrected',
    meaning:
      'Had a syntax or spelling error that was fixed: the corrected address is the one to mail (it passes every check itself).',
  },
  unknown: {
    safeToSend: 'Unknown',
    legacy: 'Unknown',
    meaning:
      'No check could confirm delivery (offline: the syntax is fine). Mail with care or check again online.',
  },
  unverifiable: {
    safeToSend: 'Catch-all',
    legacy: 'Unverifiable',
    meaning: 'The domain accepts every address, so the mailbox cannot be checked; some bounces expected.',
  },
  risky: {
    safeToSend: 'Trap',
    legacy: 'Risky',
    meaning: 'Deliverable but high risk: spam trap, disposable address or complainer. Do not mail.',
  },
  invalid: {
    safeToSend: 'Invalid',
    legacy: 'Invalid',
    meaning: 'Do not mail: bad syntax, a dead domain, or no such mailbox.',
  },
  safetosend: {
    safeToSend: 'Safe to send',
    legacy: 'Valid',
    meaning: 'Passed all checks and is covered by the provider’s deliverability guarantee.',
  },
  trap: {
    safeToSend: 'Trap',
    legacy: 'Risky',
    meaning: 'Deliverable but high risk: spam trap, disposable address or complainer. Do not mail.',
  },
  catchall: {
    safeToSend: 'Catch-all',
    legacy: 'Unverifiable',
    meaning: 'The domain accepts every address, so the mailbox cannot be checked; some bounces expected.',
  },
};

/** The name of a status under a key of `mode`. */
export function statusName(status: string, mode: VerificationMode): string {
  const words = STATUS_WORDS[status];
  if (!words) return status;
  return mode === 'safe_to_send' ? words.safeToSend : words.legacy;
}

export function statusMeaning(status: string): string {
  return STATUS_WORDS[status]?.meaning ?? 'A status this version of Mailsieve does not know.';
}

/** What each domain type means (spec: domain types). */
export const DOMAIN_TYPE_WORDS: Readonly<Record<string, string>> = {
  biz: 'A company’s domain',
  disposable: 'A disposable (throw-away) mail domain',
  edu: 'An educational institution',
  freeisp: 'A free mail provider',
  gov: 'A government domain',
  org: 'A non-profit organisation',
  paidisp: 'A paid mail provider',
  parked: 'A parked domain (no active website)',
  privacy: 'A privacy-protecting mail service',
  wireless: 'A wireless carrier’s domain (do not send unsolicited mail)',
};

/** The report's `domain_type` keys, by domain type (service/lists/report.ts counts by them). */
export const DOMAIN_TYPE_REPORT_KEYS: Readonly<Record<string, string>> = {
  disposable: 'Disposable',
  freeisp: 'Free ISP',
  paidisp: 'Paid ISP',
  wireless: 'Wireless',
  edu: 'Education',
  gov: 'Government',
  biz: 'Business',
  org: 'Non-profit',
  parked: 'Parked',
  privacy: 'Privacy',
};

/** The domain type of a report key (`Free ISP` → `freeisp`). */
export function domainTypeOfReportKey(key: string): string | undefined {
  return Object.keys(DOMAIN_TYPE_REPORT_KEYS).find((type) => DOMAIN_TYPE_REPORT_KEYS[type] === key);
}

export function domainTypeMeaning(domainType: string): string {
  return DOMAIN_TYPE_WORDS[domainType] ?? domainType;
}

/** Code 525 on a disposable domain: the address is throw-away, not a spam trap. */
export const DISPOSABLE_MEANING = 'Disposable (throw-away) address';

/**
 * Code 520, the spec's "Matched to known bouncers", in the words of whoever reads it: mail to the address
 * bounced before (on the local service, a hard bounce of the user's own, imported from their email platform).
 */
export const BOUNCED_BEFORE_MEANING = 'Bounced before';

/**
 * The meaning of a code for one answer or row. Code 525 covers spam traps and disposable domains alike; with
 * the domain type `disposable` it says which.
 */
export function codeMeaning(code: number, domainType?: string | null): string {
  if (code === 525 && domainType === 'disposable') return DISPOSABLE_MEANING;
  if (code === 520) return BOUNCED_BEFORE_MEANING;
  return describeStatusCode(code);
}

/**
 * The list status of a single-address answer, by the rule the service applies to list rows
 * (service/lists/verdicts.ts): the legacy status of its code, or `corrected` when corrections are on and
 * exactly one correction is offered for an address that is not valid.
 */
export function answerListStatus(
  code: number,
  corrections: readonly string[] | undefined,
  options: { readonly corrections?: boolean; readonly legacyAcceptAll?: boolean } = {},
): ListStatus {
  const status = statusForCode(code, 'email_validation', { legacyAcceptAll: options.legacyAcceptAll });
  if (options.corrections !== false && status !== 'valid' && corrections?.length === 1) return 'corrected';
  return status as ListStatus;
}

/** The headline groups of a job's rows. */
export type RowGroup = 'ready' | 'invalid' | 'risky' | 'unknown';

/**
 * The group a list status counts under in the Results headline: Ready to mail (what the default export
 * takes: valid, corrected; offline also unknown and unverifiable, see readyStatuses), Invalid, Risky, Unknown.
 */
export function groupOf(status: string, isOffline: boolean): RowGroup {
  if (status === 'invalid') return 'invalid';
  if (status === 'risky' || status === 'trap') return 'risky';
  if (status === 'valid' || status === 'corrected' || status === 'safetosend') return 'ready';
  return isOffline ? 'ready' : 'unknown';
}

/** The headline's names, per mode. */
export function groupName(group: RowGroup, mode: VerificationMode): string {
  switch (group) {
    case 'ready':
      return 'Ready to mail';
    case 'invalid':
      return 'Invalid';
    case 'risky':
      return mode === 'safe_to_send' ? 'Trap' : 'Risky';
    case 'unknown':
      return 'Unknown';
  }
}

/**
 * Why the pre-check and Results may differ: "825 invalid; 818 more were corrected". The pre-check counts
 * every address that fails the syntax check; Results count a fixed one as corrected.
 */
export function invalidExplained(invalid: number, corrected: number): string {
  return corrected > 0
    ? `${formatCount(invalid)} invalid; ${formatCount(corrected)} more were corrected`
    : `${formatCount(invalid)} invalid`;
}
