// How far a verification may go: offline (syntax, lists), dns (the domain's mail routing), smtp (the
// mailbox, asked of the domain's mail server). Set per key and capped per service run (docs/online-checks.md).
export const CHECK_LEVELS = ['offline', 'dns', 'smtp'] as const;
export type ChecksLevel = (typeof CHECK_LEVELS)[number];
export type OnlineLevel = Exclude<ChecksLevel, 'offline'>;

export const DEFAULT_KEY_CHECKS: ChecksLevel = 'offline';

export function isChecksLevel(value: string): value is ChecksLevel {
  return (CHECK_LEVELS as readonly string[]).includes(value);
}

/** The lower of two levels: a key's level is capped by the service's. */
export function minLevel(a: ChecksLevel, b: ChecksLevel): ChecksLevel {
  return CHECK_LEVELS[Math.min(CHECK_LEVELS.indexOf(a), CHECK_LEVELS.indexOf(b))];
}
