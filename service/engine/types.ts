import type { DomainType } from '../../shared/api/verification.js';

/** What a key configures about one verification (held in the service DB, see service/store). */
export interface VerifyPolicy {
  /** Suggest `email_corrections` for syntax or spelling errors. */
  readonly corrections: boolean;
  /**
   * Client allow list (code 55). Entries are lower-case whole addresses (`jane@example.com`) or domains
   * (`example.com`, matching that domain exactly).
   */
  readonly allow: ReadonlySet<string>;
  /** Client suppression list (code 255); same entry forms as `allow`. */
  readonly suppress: ReadonlySet<string>;
  /**
   * Known bouncers (code 520): whether `local@domain`, compared lower-cased, has a hard bounce that counts
   * today (service/identity/bounces.ts). Absent: the key has none, or none are imported.
   */
  readonly isBounced?: (local: string, domain: string) => boolean;
}

export const NO_POLICY: VerifyPolicy = { corrections: false, allow: new Set(), suppress: new Set() };

/** The engine's answer for one address: a status code and what was learnt on the way. */
export interface Verdict {
  /** The address in standardised form (trimmed, domain lower-cased, IDN domain in Unicode form kept). */
  readonly address: string;
  readonly code: number;
  readonly domainType?: DomainType;
  readonly roleAccount?: boolean;
  /** Suggested corrections, each of which passes every check itself. Only when policy.corrections. */
  readonly corrections?: readonly string[];
}
