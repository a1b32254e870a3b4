// A bounded cache of values that expire, with the lookups in flight shared: every caller asking for a key
// while its lookup runs gets the same promise, so a list of 50 addresses at one domain asks DNS once.

import type { LearntLimits } from './allowance.js';

/**
 * What verifier nodes share of a mail domain (a team server's PostgreSQL: service/pg/knowledge.ts): its MX
 * answer and whether it accepts any address, learnt by one node for every node. `load` answers what is known
 * and fresh; else the caller that claims the domain runs `lookup` (the others wait for its answer), keeps the
 * answer `ttlOf(value)` ms (0: not kept) and answers it.
 */
export interface SharedKnowledge {
  load<V>(kind: 'mx' | 'catchall', domain: string, lookup: () => Promise<V>, ttlOf: (value: V) => number): Promise<V>;
  /**
   * What the nodes learnt of a mail host's limits (allowance.ts): `loadLimits` answers those still holding,
   * `saveLimits` keeps what a refusal taught this node, each limit until its own end.
   */
  loadLimits?(host: string, port: number): Promise<LearntLimits | undefined>;
  saveLimits?(host: string, port: number, limits: LearntLimits): void;
}

interface Entry<V> {
  readonly value: V;
  readonly expiresAt: number;
}

export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  peek(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    // Re-inserting moves the key to the end: Map order is the eviction order (oldest first).
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /**
   * The cached value, else the running lookup for the key, else a new lookup. `ttlOf` gives how long a
   * result stays (0: not cached). `lookup` must not reject.
   */
  getOrLoad(
    key: string,
    lookup: () => Promise<V>,
    ttlOf: (value: V) => number,
  ): { value: Promise<V>; cached: boolean } {
    const hit = this.peek(key);
    if (hit !== undefined) return { value: Promise.resolve(hit), cached: true };
    const running = this.inFlight.get(key);
    if (running) return { value: running, cached: true };
    const promise = lookup().then((value) => {
      this.inFlight.delete(key);
      this.set(key, value, ttlOf(value));
      return value;
    });
    this.inFlight.set(key, promise);
    return { value: promise, cached: false };
  }

  clear(): void {
    this.entries.clear();
    this.inFlight.clear();
  }
}

/** Resolves with `promise`, or with `onTimeout()` once `deadline` (ms since the epoch) passes. */
export function withDeadline<T>(promise: Promise<T>, deadline: number, onTimeout: () => T): Promise<T> {
  const wait = deadline - Date.now();
  if (wait <= 0) return Promise.resolve(onTimeout());
  return new Promise<T>((resolve) => {
    const timer = setTimeout(() => resolve(onTimeout()), wait);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(onTimeout());
      },
    );
  });
}

/** A promise that resolves after `ms`, unless `signal` aborts first (then it resolves at once). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
