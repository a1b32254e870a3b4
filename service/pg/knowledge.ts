// What the verifier nodes of a team server share of mail domains, in PostgreSQL (the port: SharedKnowledge in
// service/engine/online/cache.ts): a domain's MX answer and its catch-all verdict, learnt by one node for all.
// A node about to ask claims the domain (a row with its name and a claim that expires); the others wait for
// the answer it stores, polling, and take the claim over if it expires. The claimer renews its claims while it
// asks (a probe may wait minutes for its turn at a busy host), so a claim expires only when its node died.
// Answers expire as the verifier says (a DNS TTL, six hours for a catch-all verdict); an answer not worth
// keeping is not stored.
import { randomUUID } from 'node:crypto';
import type { LearntLimits } from '../engine/online/allowance.js';
import type { SharedKnowledge } from '../engine/online/cache.js';
import { sleep } from '../engine/online/cache.js';
import type { PgPool } from './db.js';

/** How long a claim holds, unless renewed, before another node may take the domain over. */
const CLAIM_MS = 30_000;
/** How soon a node waiting for another's answer looks for it first; it looks less often as it waits. */
const POLL_MS = 100;
const POLL_MAX_MS = 2_000;

export interface SharedKnowledgeOptions {
  /** How long a claim holds unless renewed (default 30 s; its node renews it every third of that). */
  readonly claimMs?: number;
}

export interface KnowledgeStats {
  /** Lookups this node ran itself (claimed), and answers it took from the cluster. */
  readonly asked: number;
  readonly shared: number;
}

export class PgSharedKnowledge implements SharedKnowledge {
  private readonly node = randomUUID();
  private asked = 0;
  private sharedAnswers = 0;
  private readonly claimMs: number;
  /** This node's claims being asked for now; while there are any, one query every third of a claim renews them all. */
  private claims = 0;
  private renewal: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: PgPool,
    private readonly closing: AbortSignal = new AbortController().signal,
    options: SharedKnowledgeOptions = {},
  ) {
    this.claimMs = options.claimMs ?? CLAIM_MS;
    closing.addEventListener('abort', () => this.stopRenewing(), { once: true });
  }

  get stats(): KnowledgeStats {
    return { asked: this.asked, shared: this.sharedAnswers };
  }

  async load<V>(
    kind: 'mx' | 'catchall',
    domain: string,
    lookup: () => Promise<V>,
    ttlOf: (value: V) => number,
  ): Promise<V> {
    for (let waited = 0; ;) {
      let claimed: boolean;
      try {
        const { rows } = await this.pool.query<{ value: V | null; fresh: boolean; mine: boolean }>(
          `INSERT INTO domain_knowledge (kind, domain, claimed_by, claimed_until)
           VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
           ON CONFLICT (kind, domain) DO UPDATE SET claimed_by = excluded.claimed_by,
             claimed_until = excluded.claimed_until
           WHERE (domain_knowledge.expires_at IS NULL OR domain_knowledge.expires_at <= now())
             AND (domain_knowledge.claimed_until IS NULL OR domain_knowledge.claimed_until <= now())
           RETURNING value, false AS fresh, true AS mine`,
          [kind, domain, this.node, this.claimMs],
        );
        claimed = rows.length > 0;
        if (!claimed) {
          const known = await this.pool.query<{ value: V | null; fresh: boolean }>(
            `SELECT value, expires_at > now() AS fresh FROM domain_knowledge WHERE kind = $1 AND domain = $2`,
            [kind, domain],
          );
          const row = known.rows[0];
          if (row?.fresh && row.value !== null) {
            this.sharedAnswers++;
            return row.value;
          }
        }
      } catch {
        // The database cannot be reached: the node asks for itself rather than fail the check.
        this.asked++;
        return lookup();
      }
      if (!claimed) {
        // Another node is asking: its answer comes (or its claim expires, its node dead, and this node asks).
        await sleep(Math.min(POLL_MAX_MS, POLL_MS * 2 ** waited++), this.closing);
        if (this.closing.aborted) return lookup();
        continue;
      }
      this.asked++;
      let value: V;
      this.holdClaim();
      try {
        value = await lookup();
      } catch (error) {
        await this.release(kind, domain);
        throw error;
      } finally {
        this.dropClaim();
      }
      const ttlMs = ttlOf(value);
      try {
        if (ttlMs > 0)
          await this.pool.query(
            `UPDATE domain_knowledge SET value = $3, expires_at = now() + $4 * interval '1 millisecond',
               claimed_by = NULL, claimed_until = NULL
             WHERE kind = $1 AND domain = $2 AND claimed_by = $5`,
            [kind, domain, JSON.stringify(value), ttlMs, this.node],
          );
        else await this.release(kind, domain);
      } catch {
        // Not shared this time; the answer still serves this node.
      }
      return value;
    }
  }

  /** What the nodes learnt of `host`'s limits, those still holding (issue #26). */
  async loadLimits(host: string, port: number): Promise<LearntLimits | undefined> {
    try {
      const { rows } = await this.pool.query<{ limits: LearntLimits }>(
        `SELECT limits FROM host_limits WHERE host = $1 AND port = $2 AND expires_at > now()`,
        [host, port],
      );
      const limits = rows[0]?.limits;
      if (!limits) return undefined;
      const now = Date.now();
      const holding = Object.fromEntries(Object.entries(limits).filter(([, one]) => one && one.until > now));
      return Object.keys(holding).length > 0 ? (holding) : undefined;
    } catch {
      // The database cannot be reached: this node finds the limits for itself.
      return undefined;
    }
  }

  /** Keeps what a refusal taught this node of `host`: each limit replaces the one stored, until its end. */
  saveLimits(host: string, port: number, limits: LearntLimits): void {
    const ends = Object.values(limits).map((one) => one?.until ?? 0);
    if (ends.length === 0) return;
    void this.pool
      .query(
        `INSERT INTO host_limits (host, port, limits, expires_at)
         VALUES ($1, $2, $3, to_timestamp($4 / 1000.0))
         ON CONFLICT (host, port) DO UPDATE SET limits = host_limits.limits || excluded.limits,
           expires_at = greatest(host_limits.expires_at, excluded.expires_at)`,
        [host, port, JSON.stringify(limits), Math.max(...ends)],
      )
      // Not shared this time: this node still keeps to what it learnt.
      .catch(() => undefined);
  }

  private holdClaim(): void {
    if (this.claims++ > 0 || this.closing.aborted) return;
    this.renewal = setInterval(() => {
      void this.pool
        .query(
          `UPDATE domain_knowledge SET claimed_until = now() + $2 * interval '1 millisecond'
           WHERE claimed_by = $1 AND claimed_until IS NOT NULL`,
          [this.node, this.claimMs],
        )
        // Not renewed this time (the database is away): the claims may expire and another node ask too.
        .catch(() => undefined);
    }, this.claimMs / 3);
    this.renewal.unref();
  }

  private dropClaim(): void {
    if (--this.claims === 0) this.stopRenewing();
  }

  private stopRenewing(): void {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = undefined;
  }

  private async release(kind: string, domain: string): Promise<void> {
    await this.pool
      .query(
        `UPDATE domain_knowledge SET claimed_by = NULL, claimed_until = NULL
         WHERE kind = $1 AND domain = $2 AND claimed_by = $3`,
        [kind, domain, this.node],
      )
      .catch(() => undefined);
  }
}
