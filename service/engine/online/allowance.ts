// What one mail host allows this machine (one source address): conversations at once, new connections a
// minute, recipients a conversation, refused recipients before it slows down or hangs up, and, once a host has
// said so, recipients a minute. Mail servers count per client address, so one allowance is kept per host, port
// and source address for the whole process: the list's checks, the catch-all probes, E1's checks, the
// preflight's identity conversation and retries all count against it, whichever verifier asks.
//
// Each limit starts at the configured ceiling and is lowered only by the refusal that names it (classify.ts
// `refusedLimit`), multiplicatively; after the refusal it climbs back additively, reaching the refused level
// again `recoverMs` later (TCP's AIMD): a host that refused once at the start is back at full pace within
// `recoverMs`, while a host that refuses again at the same level waits twice as long before it is tried there
// again (then four times, …), so it settles just under its limit instead of being hit again and again. A team
// server shares what was learnt (SharedKnowledge.limits): a new node starts at the learnt pace.
//
// Recipients a conversation are the exception: "452 4.5.3 too many recipients" is a number the server is set
// to (Postfix's smtpd_recipient_limit; Microsoft's servers take one), not a sign of load. It is kept exactly (the
// recipients the server took before refusing one), for an hour, without climbing back, and it is no reason to
// wait: the next conversation opens at once. Since such a host needs more conversations for the same addresses,
// its connections a minute may go above the configured ceiling, as many more as its conversations are shorter
// than the configured recipients a conversation, up to RATE_FACTOR_MAX times the ceiling (`rateCeiling`).
export type LimitName = 'concurrency' | 'rate' | 'recipients' | 'recipientRate' | 'errors';

export const LIMIT_NAMES: readonly LimitName[] = [
  'concurrency',
  'rate',
  'recipients',
  'recipientRate',
  'errors',
];

/** A learnt limit as kept for other nodes: the level just under the refusal, until `until` (epoch ms). */
export interface LearntLimit {
  readonly value: number;
  readonly until: number;
}
export type LearntLimits = Partial<Record<LimitName, LearntLimit>>;

export interface AllowanceOptions {
  readonly maxConcurrency: number;
  readonly maxConnectsPerMinute: number;
  readonly maxRcptPerSession: number;
  readonly maxErrorsPerSession: number;
  /** The window of the per-minute limits (default 60 s; tests shorten it). */
  readonly windowMs: number;
  /** Time after a refusal at which the lowered limit is back at the refused level (default 90 s). */
  readonly recoverMs: number;
  /**
   * How long a connection that ended without the server's goodbye (reset, dropped in a tarpit, refused) still
   * counts as open: the server notices it only at its next read or write (Postfix: after its error sleep).
   */
  readonly closeGraceMs: number;
}

/** The longest a refused level is avoided: repeated refusals double the time, up to this. */
const MAX_HOLD_MS = 3_600_000;

/**
 * How far above the configured connections a minute a host that takes few recipients a conversation may be
 * asked (4: 120 a minute for the default 30, one every half second, under pacing's 250 ms).
 */
export const RATE_FACTOR_MAX = 4;

/**
 * One limit: the configured `max`, lowered by refusals. `value(now)` is what may be used now: the lowered
 * value plus what it climbed back since the refusal, never above the refused level minus one while that level
 * is held.
 */
class Limit {
  /** The configured ceiling (for connections a minute, as the host's recipients make it: `rateCeiling`). */
  max: number;
  private lowered: number;
  private refusedAt = -Infinity;
  private ceiling = Infinity;
  private holdUntil = 0;
  private strikes = 0;
  private step = 0;

  constructor(max: number) {
    this.max = max;
    this.lowered = max;
  }

  get isLowered(): boolean {
    return this.refusedAt > -Infinity;
  }

  value(now: number, recoverMs: number): number {
    if (this.refusedAt === -Infinity) return this.max;
    const cap = now < this.holdUntil ? this.ceiling : this.max;
    // (A clock read before the refusal climbs nothing.)
    const steps = Math.max(0, Math.floor((now - this.refusedAt) / (recoverMs / 6)));
    const climbed = this.lowered + this.step * steps;
    const value = Math.max(1, Math.min(cap, climbed, this.max));
    // Back at the configured ceiling: forget the refusal (later refusals start afresh).
    if (value >= this.max && now >= this.holdUntil + recoverMs) {
      this.refusedAt = -Infinity;
      this.strikes = 0;
    }
    return value;
  }

  /** The host refused at `at` (this limit's level when it did): lower to `lowered`, avoid `at` a while. */
  refuse(at: number, lowered: number, now: number, recoverMs: number): void {
    const current = this.value(now, recoverMs);
    // Refused again soon after the last refusal's hold: the limit is real; avoid it twice as long.
    this.strikes = now < this.holdUntil + recoverMs ? this.strikes + 1 : 1;
    this.lowered = Math.max(1, Math.min(lowered, current));
    this.ceiling = Math.max(1, Math.min(at - 1, this.max));
    this.holdUntil = now + Math.min(MAX_HOLD_MS, recoverMs * 2 ** (this.strikes - 1));
    this.refusedAt = now;
    // Climbs to the configured ceiling in `recoverMs` (capped at the refused level while that is held).
    const top = Number.isFinite(this.max) ? this.max : this.ceiling;
    this.step = Math.max(1, Math.ceil((top - this.lowered) / 6));
  }

  /**
   * The host named this limit exactly (`value`, a number it is set to, not a sign of load): held there, never
   * above, until `holdMs` from now; a lower one named later lowers it again. Then back at the ceiling.
   */
  fix(value: number, now: number, holdMs: number, recoverMs: number): void {
    const current = this.value(now, recoverMs);
    this.lowered = Math.max(1, Math.min(value, current, this.max));
    this.ceiling = this.lowered;
    this.holdUntil = Math.max(this.holdUntil, now + holdMs);
    this.refusedAt = now;
    this.strikes = Math.max(this.strikes, 1);
    // No climbing while held (the cap is the named level); back at the ceiling once the hold is over.
    const top = Number.isFinite(this.max) ? this.max : this.ceiling;
    this.step = Math.max(1, top - this.lowered);
  }

  /** What another node learnt: start there, until its hold ends. */
  learn(learnt: LearntLimit, now: number, recoverMs: number): void {
    if (learnt.until <= now) return;
    if (this.isLowered && this.ceiling <= learnt.value) return;
    this.lowered = Math.max(1, Math.min(learnt.value, this.max));
    this.ceiling = this.lowered;
    this.holdUntil = learnt.until;
    this.refusedAt = now;
    this.strikes = Math.max(this.strikes, 1);
    // Held at the learnt level until its end, then back to the configured ceiling as after a refusal.
    const top = Number.isFinite(this.max) ? this.max : this.ceiling;
    this.step = Math.max(1, Math.ceil((top - this.lowered) / 6));
    void recoverMs;
  }

  /** What to share: the level just under the refusal, while it is held. */
  learnt(now: number): LearntLimit | undefined {
    if (!this.isLowered || now >= this.holdUntil) return undefined;
    return { value: this.ceiling, until: this.holdUntil };
  }
}

/** A host's allowance for this process: see the top of the file. */
export class HostAllowance {
  /** Conversations open or opening (counting those whose closing the server may not have seen yet). */
  open = 0;
  /** Nothing new before this time: the host said "too many connections" (a rate). */
  pausedUntil = 0;
  pauseDetail = '';
  /** Recipients may not be asked before this time (a recipient rate refusal). */
  rcptPausedUntil = 0;
  private readonly connects: number[] = [];
  private readonly rcpts: number[] = [];
  private readonly limits: Record<LimitName, Limit>;
  /** Lanes waiting for a conversation of this host to end (in any pool): woken when one does. */
  readonly waiters = new Set<() => void>();
  users = 0;
  /** Called when a refusal lowered a limit (a team node shares it). */
  onLearnt: ((learnt: LearntLimits) => void) | undefined;

  constructor(
    readonly host: string,
    readonly options: AllowanceOptions,
  ) {
    this.limits = {
      concurrency: new Limit(options.maxConcurrency),
      rate: new Limit(options.maxConnectsPerMinute),
      recipients: new Limit(options.maxRcptPerSession),
      recipientRate: new Limit(Infinity),
      errors: new Limit(options.maxErrorsPerSession),
    };
  }

  limit(name: LimitName, now = Date.now()): number {
    if (name === 'rate') this.limits.rate.max = this.rateCeiling(now);
    return this.limits[name].value(now, this.options.recoverMs);
  }

  /**
   * The ceiling of connections a minute: the configured one, for conversations that may carry the configured
   * recipients; for a host that takes fewer a conversation, as many more as its conversations are shorter, up
   * to RATE_FACTOR_MAX times (a host whose rate it is too much for says so, and its own refusal lowers it).
   */
  private rateCeiling(now: number): number {
    const base = this.options.maxConnectsPerMinute;
    const recipients = this.limits.recipients;
    if (!recipients.isLowered || !Number.isFinite(base)) return base;
    const perConversation = recipients.value(now, this.options.recoverMs);
    const configured = this.options.maxRcptPerSession;
    if (perConversation >= configured) return base;
    return Math.min(base * RATE_FACTOR_MAX, Math.ceil((base * configured) / perConversation));
  }

  /**
   * The host took `count` recipients in a conversation and answered the next "too many recipients": its limit
   * a conversation (see the top of the file). No conversation asks more from now on, for an hour (shared with a
   * team's nodes); nothing waits for it.
   */
  limitRecipients(count: number): void {
    const now = Date.now();
    this.limits.recipients.fix(count, now, MAX_HOLD_MS, this.options.recoverMs);
    this.onLearnt?.(this.learnt(now));
  }

  isLowered(name: LimitName): boolean {
    return this.limits[name].isLowered;
  }

  /** Our window, with a margin for the server's clock (Postfix's anvil counts whole seconds). */
  private get window(): number {
    return this.options.windowMs + Math.min(2000, this.options.windowMs / 30);
  }

  /** When a new connection may be opened (now or later), by rate and pause; `undefined`: only when one ends. */
  nextConnectTime(now: number): number | undefined {
    if (this.open >= this.limit('concurrency', now)) return undefined;
    const window = this.window;
    while (this.connects.length > 0 && this.connects[0] <= now - window) this.connects.shift();
    let at = Math.max(now, this.pausedUntil);
    const perMinute = this.limit('rate', now);
    if (this.connects.length >= perMinute)
      at = Math.max(at, this.connects[this.connects.length - perMinute] + window);
    return at;
  }

  /**
   * Waits for a turn to open a connection outside a pool (the preflight's identity conversation), then counts
   * it as opened: false when `deadline` came first. The caller reports its end with `closed`.
   */
  async take(deadline: number): Promise<boolean> {
    for (;;) {
      const now = Date.now();
      if (now >= deadline) return false;
      const at = this.nextConnectTime(now);
      if (at !== undefined && at <= now) {
        this.opened(now);
        return true;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(0, Math.min(deadline, at ?? deadline) - now));
        this.waiters.add(wake);
      });
    }
  }

  /** A connection is being opened now. */
  opened(now: number): void {
    this.open++;
    this.connects.push(now);
  }

  /** A connection ended; `isClean`: the server closed it after its goodbye (it has stopped counting it). */
  closed(isClean: boolean): void {
    const release = () => {
      this.open--;
      for (const wake of [...this.waiters]) wake();
    };
    if (isClean) release();
    else setTimeout(release, this.options.closeGraceMs).unref();
  }

  /** Connections opened within the window. */
  recentConnects(now: number): number {
    const window = this.window;
    return this.connects.filter((at) => at > now - window).length;
  }

  /** How many recipients may be asked now (Infinity: no recipient rate is known). */
  rcptRoom(now: number): number {
    if (now < this.rcptPausedUntil) return 0;
    const perMinute = this.limit('recipientRate', now);
    if (!Number.isFinite(perMinute)) return Infinity;
    this.trimRcpts(now);
    return Math.max(0, perMinute - this.rcpts.length);
  }

  /** When recipients may be asked again (after a pause, or when the oldest in the window leaves it). */
  nextRcptTime(now: number): number {
    if (now < this.rcptPausedUntil) return this.rcptPausedUntil;
    const perMinute = this.limit('recipientRate', now);
    if (!Number.isFinite(perMinute) || this.rcpts.length < perMinute) return now;
    return this.rcpts[this.rcpts.length - perMinute] + this.window;
  }

  /** Recipients asked now. */
  asked(count: number, now: number): void {
    for (let i = 0; i < count; i++) this.rcpts.push(now);
    // Without a known recipient rate only the last window matters (for the refusal that names one).
    if (this.rcpts.length > 4096) this.trimRcpts(now);
  }

  private trimRcpts(now: number): void {
    const since = now - this.window;
    let drop = 0;
    while (drop < this.rcpts.length && this.rcpts[drop] <= since) drop++;
    if (drop > 0) this.rcpts.splice(0, drop);
  }

  /** Recipients asked within the window. */
  recipientsInWindow(now: number): number {
    this.trimRcpts(now);
    return this.rcpts.length;
  }

  /**
   * The host refused `name` at level `at`: lower it (multiplicative decrease: `lowered`, default half of
   * `at`), and for a rate, pause `pauseMs`.
   */
  refuse(
    name: LimitName,
    at: number,
    detail: string,
    options: { lowered?: number; pauseMs?: number } = {},
  ): void {
    const now = Date.now();
    // The ceiling the refusal is measured against (connections a minute: as the host's recipients make it).
    this.limit(name, now);
    this.limits[name].refuse(at, options.lowered ?? Math.floor(at / 2), now, this.options.recoverMs);
    if (options.pauseMs) {
      if (name === 'recipientRate') this.rcptPausedUntil = now + options.pauseMs;
      else this.pausedUntil = now + options.pauseMs;
      // What a check that runs out of time waiting is told (a pause is the host's doing).
      this.pauseDetail = detail;
    }
    if (name === 'rate') {
      // The lower rate counts from the end of the pause (the server's own count starts again too).
      this.connects.length = 0;
    }
    if (name === 'recipientRate') this.rcpts.length = 0;
    this.onLearnt?.(this.learnt(now));
  }

  /** What was learnt and still holds, to share. */
  learnt(now = Date.now()): LearntLimits {
    const out: LearntLimits = {};
    for (const name of LIMIT_NAMES) {
      const learnt = this.limits[name].learnt(now);
      if (learnt) out[name] = learnt;
    }
    return out;
  }

  /** Starts from what another node learnt. */
  learn(learnt: LearntLimits, now = Date.now()): void {
    // Recipients first: a host's connections a minute are measured against the ceiling they make.
    for (const name of ['recipients', ...LIMIT_NAMES.filter((other) => other !== 'recipients')] as const) {
      const one = learnt[name];
      if (!one) continue;
      this.limit(name, now);
      this.limits[name].learn(one, now, this.options.recoverMs);
    }
  }

  /** The allowance in words: "2 connections at a time and about 30 a minute". */
  describe(now = Date.now()): string {
    const concurrency = this.limit('concurrency', now);
    const rate = this.limit('rate', now);
    const perMinute = this.limit('recipientRate', now);
    const parts = [
      `${concurrency} ${concurrency === 1 ? 'connection' : 'connections'} at a time`,
      `about ${rate} a minute`,
    ];
    if (Number.isFinite(perMinute)) parts.push(`about ${perMinute} addresses a minute`);
    return parts.length === 2 ? parts.join(' and ') : `${parts[0]}, ${parts[1]} and ${parts[2]}`;
  }
}

const allowances = new Map<string, HostAllowance>();
let created = 0;

/** Whether nothing of `allowance` matters any more: no pool uses it, nothing open, counted or learnt. */
function isSpent(allowance: HostAllowance, now: number): boolean {
  return (
    allowance.users <= 0 &&
    allowance.open <= 0 &&
    allowance.recentConnects(now) === 0 &&
    Object.keys(allowance.learnt(now)).length === 0
  );
}

/**
 * The allowance of `host` (at `port`, from `source`: the source address or the proxy) for this process, shared
 * by every pool that asks; `releaseAllowance` when the pool is closed. Options are those of the first pool
 * that asks. Kept after the last pool let go while its connections still count (a preflight's conversation
 * counts in the minute of the list that follows it).
 */
export function hostAllowance(
  host: string,
  port: number,
  source: string,
  options: AllowanceOptions,
): HostAllowance {
  const key = `${source}|${host}|${port}`;
  let allowance = allowances.get(key);
  if (!allowance) {
    // Now and then, forget the allowances nothing uses any more.
    if (++created % 10_000 === 0) {
      const now = Date.now();
      for (const [other, entry] of allowances) if (isSpent(entry, now)) allowances.delete(other);
    }
    allowance = new HostAllowance(host, options);
    allowances.set(key, allowance);
  }
  allowance.users++;
  return allowance;
}

/** A pool no longer uses `allowance`. */
export function releaseAllowance(host: string, port: number, source: string, allowance: HostAllowance): void {
  allowance.users--;
  const key = `${source}|${host}|${port}`;
  if (isSpent(allowance, Date.now()) && allowances.get(key) === allowance) allowances.delete(key);
}
