// Per-key limits of the list endpoints (E7 has its own: lists in progress, bytes a day): E8's status, the
// downloads of E10's results and of explain's explanations, and the changes finish and purchase make. Each
// costs the node database reads or a whole file sent, and none is billable, so without a limit one key could
// ask them as fast as its connections allow. A token bucket per key and kind of call lets a burst through and
// refills at a steady pace; downloads are also limited in how many run at once. Past a limit: 429 with
// Retry-After (when the next call fits) and words. The allowances are far above what a client following the
// spec asks (E8 once every 5 s per list, each file downloaded once), so such a client is never refused.
//
// Counted in this node's memory, per node: behind a balancer over N API nodes a key gets up to N times each
// allowance. A key without a rate limit (`--rate-limit 0`, as the desktop's own key to its embedded service,
// which polls it every 250 ms) has none of these limits either.
import type { FastifyReply } from 'fastify';
import type { KeyRecord } from '../store/keys.js';
import { publish } from '../ops/events.js';
import { sendError } from './errors.js';

/** The kinds of list calls limited: E8; E10 and explain; finish and purchase. */
export type ListCall = 'status' | 'download' | 'change';

interface Allowance {
  /** Calls a key may make at once after a quiet while. */
  readonly burst: number;
  /** Calls a second it may make for good (the bucket's refill). */
  readonly perSecond: number;
}

/**
 * The allowances per key and node. E8: 20 a second, bursts of 60 (100 lists polled every 5 s fit, where a key
 * may have 20 lists in progress by default; so does a test polling every 50 ms). Downloads: 20 a minute,
 * bursts of 20, at most 4 at once. Finish and purchase: one a second, bursts of 20.
 */
export const LIST_ALLOWANCES: Readonly<Record<ListCall, Allowance>> = {
  status: { burst: 60, perSecond: 20 },
  download: { burst: 20, perSecond: 1 / 3 },
  change: { burst: 20, perSecond: 1 },
};
/** Downloads (results or explanations) of one key running at once on a node. */
export const DOWNLOADS_AT_ONCE = 4;

interface Bucket {
  tokens: number;
  /** When `tokens` was counted (ms). */
  at: number;
}

export class ListThrottle {
  private readonly buckets: Record<ListCall, Map<number, Bucket>> = {
    status: new Map(),
    download: new Map(),
    change: new Map(),
  };
  /** Downloads of each key being sent now. */
  private readonly downloading = new Map<number, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Whether the key may make one more call of this kind; otherwise answers 429 with Retry-After itself and
   * gives false. An admitted download counts as running until its reply is done or its connection is gone.
   */
  admit(key: KeyRecord, call: ListCall, reply: FastifyReply): boolean {
    if (key.rateLimit <= 0) return true;
    if (call === 'download' && (this.downloading.get(key.id) ?? 0) >= DOWNLOADS_AT_ONCE)
      return this.refuse(
        key,
        reply,
        1,
        `this key may download ${DOWNLOADS_AT_ONCE} results or explanation files at once`,
      );
    const allowance = LIST_ALLOWANCES[call];
    const buckets = this.buckets[call];
    const now = this.now();
    let bucket = buckets.get(key.id);
    if (!bucket) {
      bucket = { tokens: allowance.burst, at: now };
      buckets.set(key.id, bucket);
    }
    bucket.tokens = Math.min(
      allowance.burst,
      bucket.tokens + ((now - bucket.at) / 1000) * allowance.perSecond,
    );
    bucket.at = now;
    if (bucket.tokens < 1)
      return this.refuse(
        key,
        reply,
        Math.ceil((1 - bucket.tokens) / allowance.perSecond),
        call === 'status'
          ? `this key may ask a list's status ${allowance.perSecond} times a second (the spec asks once every 5 s a list)`
          : call === 'download'
            ? `this key may download ${allowance.perSecond * 60} results or explanation files a minute`
            : `this key may finish or purchase lists ${allowance.perSecond === 1 ? 'once' : `${allowance.perSecond} times`} a second`,
      );
    bucket.tokens -= 1;
    if (call === 'download') this.startDownload(key.id, reply);
    return true;
  }

  private startDownload(keyId: number, reply: FastifyReply): void {
    this.downloading.set(keyId, (this.downloading.get(keyId) ?? 0) + 1);
    reply.raw.once('close', () => {
      const left = (this.downloading.get(keyId) ?? 1) - 1;
      if (left > 0) this.downloading.set(keyId, left);
      else this.downloading.delete(keyId);
    });
  }

  private refuse(key: KeyRecord, reply: FastifyReply, waitS: number, why: string): false {
    publish('rate.limited', { keyId: key.id });
    reply.header('retry-after', String(waitS));
    sendError(reply, 429, `Too many requests: ${why}; try again in ${waitS} s.`);
    return false;
  }
}
