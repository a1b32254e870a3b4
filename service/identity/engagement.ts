// E1's `engagement_score` (spec: "Email verification result"), added to a verification answer from the
// activity data of the reference store.
import type { VerifyResponse } from '../../shared/api/verification.js';
import { ChangeWatch, RECHECK_MS } from '../store/changes.js';
import { engagementScoreFrom } from './eam.js';
import { canonicalEmail } from './normalise.js';
import { summarisePacked, type IdentityStore } from './store.js';

/** The statuses the spec gives a score for; never invalid, trap or unknown. */
const SCORED_STATUSES: ReadonlySet<string> = new Set(['safetosend', 'valid', 'catchall']);

/** Addresses whose activity EngagementScores keeps: the ones asked about most recently. */
const MAX_CACHED = 4096;

/**
 * The engagement scores of E1's answers, read on the request path. Each lookup took the database's read lock
 * (about a seventh of E1's time), so the store is asked only when the database holds activity events at all,
 * and an address's events once while they stay as they are: what was read is kept until the database changes
 * (ChangeWatch: an import or `data clear` in another process is seen within `recheckMs`).
 */
export class EngagementScores {
  private readonly changes: ChangeWatch;
  private generation = -1;
  private hasActivity = false;
  /** Packed events (store.ts packActivity) by the address as given; null: not stored or not an address. */
  private readonly cached = new Map<string, Buffer | null>();

  constructor(
    private readonly store: IdentityStore,
    recheckMs = RECHECK_MS,
  ) {
    this.changes = new ChangeWatch(store.db, recheckMs);
  }

  /** The score of an address (any form) as of `nowS`, or undefined when it has no activity. */
  of(address: string, nowS?: number): number | undefined {
    const generation = this.changes.generation();
    if (generation !== this.generation) {
      this.generation = generation;
      this.cached.clear();
      this.hasActivity = this.store.hasActivity();
    }
    if (!this.hasActivity) return undefined;
    let packed = this.cached.get(address);
    if (packed === undefined) {
      const canonical = canonicalEmail(address);
      packed = (canonical !== undefined && this.store.packedActivityOf(canonical)) || null;
      // NOTE: a Map iterates in insertion order: the first key is the oldest.
      if (this.cached.size >= MAX_CACHED) this.cached.delete(this.cached.keys().next().value!);
      this.cached.set(address, packed);
    }
    if (packed === null) return undefined;
    // The clock is read only for an address with activity: E1 asks every answer without any.
    const at = nowS ?? Math.floor(Date.now() / 1000);
    return engagementScoreFrom(summarisePacked(packed, at), at);
  }
}

/**
 * Adds `engagement_score` to every `safe_to_send` answer ("included at no charge for verification
 * subscribers": no `eam` or `intelligence` service needed) whose status is safetosend, valid or catchall,
 * when the address has activity data. The legacy `email_validation` object has no such member. NOTE: mutates
 * `body`.
 */
export function withEngagementScore<T extends VerifyResponse>(
  body: T,
  scores: EngagementScores | undefined,
  nowS?: number,
): T {
  if (!scores || !('safe_to_send' in body)) return body;
  const result = body.safe_to_send;
  if (!SCORED_STATUSES.has(result.status)) return body;
  const score = scores.of(result.address, nowS);
  if (score !== undefined) result.engagement_score = score;
  return body;
}
