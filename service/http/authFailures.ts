// Failed authentications per client address (a team server's API node): a key that is not known costs the node
// a query to PostgreSQL (a short cache of misses spares it the same key again: service/pg/keys.ts), so an
// address that keeps trying keys that do not work is stopped, with 429 and Retry-After, until its window
// ends. Counted by each node in memory: behind a load balancer, `serve --trust-proxy` gives each client's own
// address (X-Forwarded-For) instead of the balancer's.

/** Failed authentications an address may have in a window, per API node. */
export const AUTH_FAILURES_PER_WINDOW = 30;
/** The window, in ms. */
export const AUTH_FAILURE_WINDOW_MS = 60_000;
/** Addresses tracked at most; past that the oldest windows are forgotten. */
const MAX_ADDRESSES = 100_000;

export class AuthFailureLimit {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly limit = AUTH_FAILURES_PER_WINDOW,
    private readonly windowMs = AUTH_FAILURE_WINDOW_MS,
  ) {}

  /** Whether any address has failed lately (the request path asks nothing more when none has). */
  get isEmpty(): boolean {
    return this.windows.size === 0;
  }

  /** Seconds until `address` may try again, or 0 when it may now. */
  retryAfterS(address: string, now = Date.now()): number {
    const window = this.windows.get(address);
    if (!window) return 0;
    if (now - window.start >= this.windowMs) {
      this.windows.delete(address);
      return 0;
    }
    return window.failures >= this.limit ? Math.ceil((window.start + this.windowMs - now) / 1000) : 0;
  }

  /** Counts one failed authentication of `address`. NOTE: mutates the counts. */
  fail(address: string, now = Date.now()): void {
    const window = this.windows.get(address);
    if (window && now - window.start < this.windowMs) {
      window.failures++;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= MAX_ADDRESSES) this.sweep(now);
    this.windows.set(address, { start: now, failures: 1 });
  }

  private sweep(now: number): void {
    for (const [address, window] of this.windows)
      if (now - window.start >= this.windowMs) this.windows.delete(address);
    // Still full: the oldest go (a Map iterates in insertion order).
    for (const address of this.windows.keys()) {
      if (this.windows.size < MAX_ADDRESSES) break;
      this.windows.delete(address);
    }
  }
}
