import type { KeyRecord } from '../store/keys.js';

/**
 * Calls per second per key, counted in one-second windows (spec: more than 500 calls per second gets 429).
 * A key's `rateLimit` of 0 means no limit.
 */
export class RateLimiter {
  private readonly windows = new Map<number, { start: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  take(key: KeyRecord): boolean {
    if (key.rateLimit <= 0) return true;
    const now = this.now();
    const window = this.windows.get(key.id);
    if (!window || now - window.start >= 1000) {
      this.windows.set(key.id, { start: now, count: 1 });
      return true;
    }
    window.count += 1;
    return window.count <= key.rateLimit;
  }
}
