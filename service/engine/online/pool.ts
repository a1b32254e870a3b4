// Connections to mail servers, shared by every check of a service (and so by every row of a list), so a
// list never floods one server: per MX host at most `perHostConcurrency` conversations at once, new
// connections to it at least `pacingMs` apart, each conversation reused for up to `maxRcptPerSession`
// recipients, and at most `maxSessions` conversations open in all. A host that refuses connections, or
// refuses us by policy, is remembered as such for a while, so the rest of a list does not knock again.
//
// A busy domain keeps moving within the server's own limits: a conversation asks up to `maxRcptPerSession`
// recipients but ends after `maxErrorsPerSession` refusals (servers count refused recipients as errors: Postfix
// slows every reply after 10 and disconnects after 20), so the next recipients go through a fresh connection
// instead of the server's tarpit; a reply that slows down after refusals is taken as the tarpit and lowers
// that host's allowance; new connections to a host stay under `maxConnectsPerMinute`. A server that answers
// "452 too many recipients" takes that many a conversation: no conversation asks more after, the refused
// recipients are asked in the next one, opened at once (allowance.ts says why its connections a minute rise).
//
// What a host allows (conversations at once, connections a minute, recipients, errors) is its HostAllowance
// (allowance.ts), shared by every pool of the process that talks to it from the same address: a refusal lowers
// only the limit it names, and the limit climbs back after a quiet period. A conversation counts against the
// host's concurrency until the server has closed it, so a new one never overlaps the end of the last.
import { causeOf, type UnknownCause } from '../../../shared/unknownCauses.js';
import {
  hostAllowance,
  releaseAllowance,
  type AllowanceOptions,
  type HostAllowance,
  type LearntLimits,
} from './allowance.js';
import {
  classifyRcpt,
  isRateLimit,
  isRefusalOfUs,
  refusalCause,
  blockListNamed,
  refusalKind,
  type BlockListMet,
  refusedLimit,
  type RcptClass,
  type RefusalKind,
} from './classify.js';
import { publish, type ConversationOutcome } from '../../ops/events.js';
import { formatReply, SmtpSession, type SessionConfig, type SessionFailure, type SmtpReply } from './smtp.js';

export interface PoolOptions {
  readonly session: Omit<SessionConfig, 'startTls'>;
  readonly perHostConcurrency: number;
  readonly maxSessions: number;
  readonly pacingMs: number;
  readonly maxRcptPerSession: number;
  readonly idleMs: number;
  /** How long a host that could not be reached is skipped. */
  readonly downTtlMs: number;
  /** How long a host that refused us by policy (5xx to the greeting, EHLO, MAIL FROM or a block) is skipped. */
  readonly blockTtlMs: number;
  /** Refused recipients after which a conversation is ended and the next ones asked on a fresh one. */
  readonly maxErrorsPerSession: number;
  /** New connections to one host within any minute (`connectWindowMs`). */
  readonly maxConnectsPerMinute: number;
  /** The window of `maxConnectsPerMinute` (default 60 s; tests shorten it). */
  readonly connectWindowMs?: number;
  /** How long a host that said "too many connections" (a rate) is left alone. */
  readonly rateBackoffMs: number;
  /** After a refusal, how long until the lowered limit is back at the refused level (default 90 s). */
  readonly recoverMs?: number;
  /** How long a connection reset by this machine still counts at the server (default 1 s). */
  readonly closeGraceMs?: number;
  /** Told when a mail server refuses this machine for a block list (kept for `mailsieve doctor`). */
  readonly onBlockList?: (met: BlockListMet) => void;
  /** A host's limits learnt elsewhere (a team's other nodes), and where to tell what was learnt here. */
  readonly learnt?: {
    load(host: string): LearntLimits | undefined | Promise<LearntLimits | undefined>;
    save(host: string, limits: LearntLimits): void;
  };
}

/** One host that sets the pace of what waits: its allowance in words and how many checks wait for it. */
export interface PacingHost {
  readonly host: string;
  readonly waiting: number;
  /** "allows this computer 2 connections at a time and about 30 a minute". */
  readonly allowance: string;
}

export type LaneOutcome =
  | { readonly kind: 'reply'; readonly reply: SmtpReply; readonly class: RcptClass }
  | { readonly kind: 'failure'; readonly failure: SessionFailure }
  /**
   * The caller stopped waiting (its signal aborted) before the job's turn came, or the job left a queue whose
   * next turn was further off than it would wait (`turnAt`: then): nothing was asked.
   */
  | { readonly kind: 'cancelled'; readonly turnAt?: number }
  /** The host is remembered as unreachable or refusing us; not contacted again. */
  | {
      readonly kind: 'skipped';
      readonly state: 'down' | 'blocked';
      readonly detail: string;
      readonly cause: UnknownCause;
    };

/** A conversation that could not be opened, by why (the operator's metrics). */
const CONVERSATION_OUTCOMES: Partial<Record<SessionFailure['kind'], ConversationOutcome>> = {
  rejected: 'refused',
  deferred: 'deferred',
  unreachable: 'unreachable',
  timeout: 'timeout',
};

interface Job {
  readonly address: string;
  /** Until its turn: the latest it may wait for a conversation. From its turn: its own budget's end. */
  deadline: number;
  /** The latest it may wait for a conversation (a turn lost to a host's refusal of this machine waits again). */
  readonly waitUntil: number;
  /** Time for the conversation itself, counted from the job's turn (undefined: `deadline` alone). */
  readonly budgetMs: number | undefined;
  readonly log: string[];
  retried: boolean;
  /** Leaves the queue, unasked, when the host's next new conversation is further off than this (ms). */
  readonly leaveAfterMs: number | undefined;
  resolve(outcome: LaneOutcome): void;
}

export interface PoolStats {
  /** SMTP connections opened. */
  sessions: number;
  /** RCPT TO commands sent. */
  rcpts: number;
  /** Most conversations open at once. */
  peakSessions: number;
  /** Refusals of this verifier, by the limit they name (`status` and the metrics count them per source address). */
  refusals: Record<RefusalKind, number>;
}

/**
 * The jobs waiting with each signal (a list part's slice, all its checks): one 'abort' listener per signal
 * calls them all, instead of a listener added and removed for every recipient (~4 µs each: about 3% of
 * the busy main thread of a 100,000-row list's checks).
 */
const waitingOn = new WeakMap<AbortSignal, Set<() => void>>();

function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = waitingOn.get(signal);
  if (!callbacks) {
    const all = new Set<() => void>();
    waitingOn.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        for (const call of [...all]) call();
        all.clear();
      },
      { once: true },
    );
    callbacks = all;
  }
  callbacks.add(callback);
  const registered = callbacks;
  return () => registered.delete(callback);
}

/** The longest an idle conversation is kept while its host's connections a minute are scarce (Lane.idleMs). */
const SCARCE_IDLE_MS = 15_000;
/**
 * A host's connections of the minute are scarce once this share of them is spent (Lane.idleMs): from the
 * third of 30, so that none of the first minute's is spent on a conversation closed on a few recipients.
 */
const SCARCE_SHARE = 0.1;
/** Answers of a host before the share it refuses sizes a conversation's room (Lane.roomOf). */
const ROOM_SAMPLE = 10;

export class SmtpPool {
  readonly stats: PoolStats = {
    sessions: 0,
    rcpts: 0,
    peakSessions: 0,
    refusals: { concurrency: 0, rate: 0, policy: 0, block: 0 },
  };

  /** @internal Counts a refusal of this verifier. */
  noteRefusal(kind: RefusalKind): void {
    this.stats.refusals[kind]++;
  }
  private readonly lanes = new Map<string, Lane>();
  private open = 0;
  private readonly waiting = new Set<Lane>();
  /** Lanes holding an idle conversation (a list makes thousands of lanes; only these can give a slot way). */
  private readonly idleLanes = new Set<Lane>();
  private isClosed = false;

  constructor(readonly options: PoolOptions) {}

  /** @internal The key of this pool's source: mail servers count per client address. */
  get sourceKey(): string {
    const { sourceAddress, proxy } = this.options.session;
    return proxy ? `socks5://${proxy.host}:${proxy.port}` : (sourceAddress ?? '');
  }

  /** @internal */
  get allowanceOptions(): AllowanceOptions {
    return {
      maxConcurrency: this.options.perHostConcurrency,
      maxConnectsPerMinute: this.options.maxConnectsPerMinute,
      maxRcptPerSession: this.options.maxRcptPerSession,
      maxErrorsPerSession: this.options.maxErrorsPerSession,
      windowMs: this.options.connectWindowMs ?? 60_000,
      recoverMs: this.options.recoverMs ?? 90_000,
      closeGraceMs: this.options.closeGraceMs ?? 1000,
    };
  }

  /**
   * The host whose allowance most checks wait for, when one holds more than `least` of them: what a list's
   * progress says ("mx.example.com allows this computer 2 connections at a time and about 30 a minute").
   */
  pacing(least = 20): PacingHost | undefined {
    let best: Lane | undefined;
    for (const lane of this.lanes.values()) if (!best || lane.waiting > best.waiting) best = lane;
    if (!best || best.waiting < least) return undefined;
    return {
      host: best.host,
      waiting: best.waiting,
      allowance: `allows this computer ${best.allowance.describe()}`,
    };
  }

  /**
   * Asks `host` (at one of `ips`) about one recipient, queued behind the host's other work until `deadline`;
   * with `budgetMs`, the conversation has that long from when its turn comes (a list's politeness may make an
   * address wait minutes at a busy host without eating its own time). With `leaveAfterMs`, it leaves the queue
   * unasked (cancelled, with the time of the turn) when no conversation open can take it and a new one may not
   * open before that long: a team node's address of a heavy domain, which another node may ask now.
   */
  rcpt(
    host: string,
    ips: readonly string[],
    address: string,
    deadline: number,
    log: string[],
    budgetMs?: number,
    isUrgent = false,
    signal?: AbortSignal,
    leaveAfterMs?: number,
  ): Promise<LaneOutcome> {
    if (signal?.aborted) return Promise.resolve({ kind: 'cancelled' });
    if (this.isClosed)
      return Promise.resolve({
        kind: 'failure',
        failure: { kind: 'unreachable', detail: 'the verifier is closed' },
      });
    let lane = this.lanes.get(host);
    if (!lane) {
      lane = new Lane(
        host,
        this,
        hostAllowance(host, this.options.session.port, this.sourceKey, this.allowanceOptions),
      );
      this.lanes.set(host, lane);
    }
    lane.ips = ips;
    return lane.submit(address, deadline, log, budgetMs, isUrgent, signal, leaveAfterMs);
  }

  /** @internal A lane asks for a connection slot; false means wait for `release`. */
  takeSlot(lane: Lane): boolean {
    if (this.open < this.options.maxSessions) {
      this.open++;
      this.stats.sessions++;
      this.stats.peakSessions = Math.max(this.stats.peakSessions, this.open);
      return true;
    }
    // Full: an idle conversation elsewhere gives way to work waiting here.
    // Its slot passes to this lane as it is: `open` stays the same.
    for (const other of this.idleLanes)
      if (other !== lane && other.closeOneIdle()) {
        this.stats.sessions++;
        return true;
      }
    this.waiting.add(lane);
    return false;
  }

  /** @internal */
  release(): void {
    this.open--;
    // The host whose longest-waiting check must end soonest goes first, so no check starves behind others.
    while (this.waiting.size > 0 && this.open < this.options.maxSessions) {
      let first: Lane | undefined;
      for (const lane of this.waiting) if (!first || lane.firstDeadline < first.firstDeadline) first = lane;
      // A lane that cannot use the slot now (pacing, nothing left to do) leaves it to the next one.
      this.waiting.delete(first!);
      first!.pump();
    }
  }

  /** @internal Whether a lane holds an idle conversation. */
  noteIdle(lane: Lane, hasIdle: boolean): void {
    if (hasIdle) this.idleLanes.add(lane);
    else this.idleLanes.delete(lane);
  }

  /** @internal A lane with nothing left to do no longer waits. */
  unwait(lane: Lane): void {
    this.waiting.delete(lane);
  }

  /** @internal Whether another host waits for a connection slot (then idle conversations give way). */
  get hasWaiters(): boolean {
    return this.waiting.size > 0;
  }

  /** @internal */
  get closed(): boolean {
    return this.isClosed;
  }

  close(): void {
    this.isClosed = true;
    for (const lane of this.lanes.values()) {
      lane.close();
      releaseAllowance(lane.host, this.options.session.port, this.sourceKey, lane.allowance);
    }
    this.lanes.clear();
    this.waiting.clear();
    this.idleLanes.clear();
  }
}

class Lane {
  ips: readonly string[] = [];
  private readonly queue: Job[] = [];
  /** Jobs of the queue that leave it when the next turn is far (Job.leaveAfterMs). */
  private leavers = 0;
  private readonly idle: { session: SmtpSession; timer: NodeJS.Timeout }[] = [];
  private sessions = 0;
  private nextConnectAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private downUntil = 0;
  private blockedUntil = 0;
  private reason = '';
  private cause: UnknownCause = causeOf('other');
  private isTlsBroken = false;
  private readonly live = new Set<SmtpSession>();
  /** Recipients this host answered, and of them those it refused (what a conversation's error allowance buys). */
  private rcptsAnswered = 0;
  private rcptsRefused = 0;
  /** This host refused this machine, and has not held a conversation since (the operator's log). */
  private isRefusing = false;
  /** Woken when a conversation of this host ends (in any pool): a slot of its concurrency is free. */
  private readonly wake = () => {
    this.allowance.waiters.delete(this.wake);
    this.pump();
  };
  /** What other nodes learnt of this host, asked once (undefined: not asked yet; null: asked). */
  private learning: Promise<void> | null | undefined;

  constructor(
    readonly host: string,
    private readonly pool: SmtpPool,
    readonly allowance: HostAllowance,
  ) {
    const learnt = pool.options.learnt;
    if (learnt && !allowance.onLearnt) allowance.onLearnt = (limits) => learnt.save(host, limits);
  }

  /** Checks waiting for this host. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Refused recipients a conversation of this host may have (lowered when its tarpit shows earlier). */
  private get errorAllowance(): number {
    return this.allowance.limit('errors');
  }

  private get maxRcpt(): number {
    return this.allowance.limit('recipients');
  }

  /** The deadline of the check waiting longest here (Infinity when none waits). */
  get firstDeadline(): number {
    return this.queue.length > 0 ? Math.min(...this.queue.map((job) => job.deadline)) : Infinity;
  }

  state(): { state: 'down' | 'blocked'; detail: string; cause: UnknownCause } | undefined {
    const now = Date.now();
    if (this.blockedUntil > now) return { state: 'blocked', detail: this.reason, cause: this.cause };
    if (this.downUntil > now) return { state: 'down', detail: this.reason, cause: this.cause };
    return undefined;
  }

  submit(
    address: string,
    deadline: number,
    log: string[],
    budgetMs: number | undefined,
    isUrgent: boolean,
    signal?: AbortSignal,
    leaveAfterMs?: number,
  ): Promise<LaneOutcome> {
    return new Promise((settle) => {
      // A job still waiting for its turn when the signal aborts leaves the queue unasked.
      const cancel = () => {
        const at = this.queue.indexOf(job);
        if (at < 0) return;
        this.queue.splice(at, 1);
        job.resolve({ kind: 'cancelled' });
      };
      let isSettled = false;
      const resolve = (outcome: LaneOutcome) => {
        if (isSettled) return;
        isSettled = true;
        if (leaveAfterMs !== undefined) this.leavers--;
        stopListening?.();
        settle(outcome);
      };
      const job: Job = {
        address,
        deadline,
        waitUntil: deadline,
        budgetMs,
        log,
        retried: false,
        leaveAfterMs,
        resolve,
      };
      if (leaveAfterMs !== undefined) this.leavers++;
      const stopListening = signal ? onAbort(signal, cancel) : undefined;
      if (isUrgent) this.queue.unshift(job);
      else this.queue.push(job);
      this.pump();
    });
  }

  /**
   * The job lost its turn to a refusal of this machine (a limit of the host): it waits for another, its
   * budget counting again from then.
   */
  private waitAgain(job: Job): Job {
    job.deadline = job.waitUntil;
    return job;
  }

  /** The job's turn has come: from now on its own budget counts. */
  private startTurn(job: Job): Job {
    if (job.budgetMs !== undefined) job.deadline = Math.min(job.deadline, Date.now() + job.budgetMs);
    return job;
  }

  /**
   * When a new connection to this host may be opened (now or later), within its limits; undefined when only
   * the end of a conversation open now can free one.
   */
  private nextConnectTime(now: number): number | undefined {
    const at = this.allowance.nextConnectTime(now);
    return at === undefined ? undefined : Math.max(at, this.nextConnectAt);
  }

  pump(): void {
    if (this.pool.closed) return;
    // A team's nodes share what they learnt of a host: asked once, before the first connection to it.
    if (this.learning === undefined && this.pool.options.learnt) {
      const loaded = this.pool.options.learnt.load(this.host);
      if (loaded instanceof Promise) {
        this.learning = loaded.then(
          (limits) => {
            if (limits) this.allowance.learn(limits);
            this.learning = null;
            this.pump();
          },
          () => {
            this.learning = null;
            this.pump();
          },
        );
      } else {
        if (loaded) this.allowance.learn(loaded);
        this.learning = null;
      }
    }
    const now = Date.now();
    const remembered = this.state();
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const job = this.queue[i];
      if (remembered) {
        this.queue.splice(i, 1);
        job.log.push(
          `SMTP: ${this.host} not contacted: ${remembered.state === 'blocked' ? 'it refused this verifier' : 'it could not be reached'} a moment ago (${remembered.detail})`,
        );
        job.resolve({ kind: 'skipped', ...remembered });
      } else if (job.deadline <= now) {
        this.queue.splice(i, 1);
        // Since the host said "too many connections", a check that runs out of time waiting is its doing.
        if (this.allowance.pauseDetail) {
          const detail = `${this.host} asked this machine to connect less often (${this.allowance.pauseDetail}), and the time allowed ran out while waiting`;
          job.log.push(`SMTP: ${detail}`);
          job.resolve({ kind: 'failure', failure: { kind: 'rate-limited', detail } });
          continue;
        }
        const detail = `the time allowed ran out while waiting for a connection to ${this.host} (at most ${this.allowance.limit('concurrency', now)} at once, ${this.pool.options.pacingMs} ms apart, ${this.allowance.limit('rate', now)} a minute)`;
        job.log.push(`SMTP: ${detail}`);
        job.resolve({ kind: 'failure', failure: { kind: 'timeout', detail } });
      }
    }
    if (this.queue.length > 0 && this.learning) return;
    // A host that named a recipient rate: nothing is asked before its minute allows.
    if (this.queue.length > 0 && this.allowance.rcptRoom(now) === 0) {
      this.wakeAt(this.allowance.nextRcptTime(now));
      this.wakeAt(Math.min(...this.queue.map((j) => j.deadline)));
      return;
    }
    while (this.queue.length > 0 && this.idle.length > 0) {
      const { session, timer } = this.idle.pop()!;
      this.pool.noteIdle(this, this.idle.length > 0);
      clearTimeout(timer);
      if (!session.alive) {
        this.ended(session);
        continue;
      }
      // Kept before the host's limits were learnt lower (a recipients a conversation named meanwhile).
      if (!this.hasRoom(session)) {
        session.quit();
        this.ended(session);
        continue;
      }
      void this.run(session, undefined, false);
    }
    if (this.leavers > 0 && this.queue.length > 0) this.leaveIfTurnIsFar(now);
    if (this.queue.length === 0) {
      this.pool.unwait(this);
      return;
    }
    if (this.needsAnotherSession()) {
      const at = this.nextConnectTime(now);
      if (at === undefined) this.allowance.waiters.add(this.wake);
      else if (now < at) this.wakeAt(at);
      else if (this.pool.takeSlot(this)) {
        this.allowance.waiters.delete(this.wake);
        this.sessions++;
        this.nextConnectAt = now + this.pool.options.pacingMs;
        this.allowance.opened(now);
        void this.openFor(this.startTurn(this.queue.shift()!));
        if (this.queue.length > 0) {
          const next = this.nextConnectTime(now);
          if (next === undefined) this.allowance.waiters.add(this.wake);
          else this.wakeAt(next);
        }
      }
    }
    // Jobs still queued must still end at their deadline.
    if (this.queue.length > 0) this.wakeAt(Math.min(...this.queue.map((j) => j.deadline)));
  }

  /**
   * The jobs that would rather leave than wait long (Job.leaveAfterMs) leave the queue, unasked, when the
   * conversations open or opening cannot take them and the host allows no new one before that long (its
   * connections of the minute spent): a team node's checks of a heavy domain then go back to the queue of
   * parts, for a node whose allowance has room now, instead of waiting here for this node's next minute.
   */
  private leaveIfTurnIsFar(now: number): void {
    const at = this.nextConnectTime(now);
    // Conversations at once are the bound (undefined): one open now ends soon and takes the next.
    if (at === undefined) return;
    const wait = at - now;
    const kept = this.capacity();
    for (let i = this.queue.length - 1; i >= kept; i--) {
      const job = this.queue[i];
      if (job.leaveAfterMs === undefined || wait <= job.leaveAfterMs) continue;
      this.queue.splice(i, 1);
      job.log.push(
        `SMTP: ${this.host} allows this machine no new conversation for ${Math.ceil(wait / 1000)} s: left for another node`,
      );
      job.resolve({ kind: 'cancelled', turnAt: at });
    }
  }

  /**
   * Recipients the conversations open or opening may still ask (each a recipient more than it asked). A
   * conversation ends at its recipients a conversation or at its refusals allowed, whichever comes first: at a
   * host that refuses a share of what it is asked (a list's unknown addresses), its refusals left divided by
   * that share, so that a second conversation opens while the first still asks, not after it ended on its
   * tenth refusal with a hundred recipients counted as room.
   */
  private capacity(): number {
    const max = this.maxRcpt;
    const errors = this.errorAllowance;
    // Opening conversations take the job they were opened for, then the rest of their room.
    let capacity = (this.sessions - this.live.size) * (this.roomOf(max, errors) - 1);
    for (const session of this.live)
      if (session.alive && session.errors < errors)
        capacity += this.roomOf(max - session.rcptCount, errors - session.errors);
    return capacity;
  }

  /** Recipients a conversation with `rcptsLeft` recipients and `errorsLeft` refusals left may still ask. */
  private roomOf(rcptsLeft: number, errorsLeft: number): number {
    // Until a few answers are in, the share refused is not known: the recipients left are the room.
    if (this.rcptsRefused === 0 || this.rcptsAnswered < ROOM_SAMPLE) return Math.max(0, rcptsLeft);
    const refusedShare = this.rcptsRefused / this.rcptsAnswered;
    return Math.max(0, Math.min(rcptsLeft, Math.ceil(errorsLeft / refusedShare)));
  }

  /**
   * Whether the queue needs a conversation more than those open or opening can give: a domain's few
   * addresses (and its catch-all probe) go through one conversation, one after the other, instead of taking
   * a second connection (and a second greeting delay, and a second global slot) for them; a host with more
   * waiting than its conversations can still ask gets a second one, paced.
   */
  private needsAnotherSession(): boolean {
    if (this.sessions === 0) return true;
    return this.queue.length > this.capacity();
  }

  private wakeAt(at: number): void {
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        this.pump();
      },
      Math.max(0, at - Date.now()),
    );
  }

  private async openFor(job: Job): Promise<void> {
    let failure: SessionFailure | undefined;
    let unreachable = 0;
    for (const ip of this.ips) {
      let opened = await SmtpSession.open(
        this.host,
        ip,
        { ...this.pool.options.session, startTls: !this.isTlsBroken },
        job.deadline,
      );
      if (!opened.ok && opened.failure.kind === 'tls-failed') {
        // Opportunistic TLS, as MTAs do it: a host whose TLS is broken is spoken to in plain text.
        this.isTlsBroken = true;
        job.log.push(...opened.transcript, 'SMTP: trying again without STARTTLS');
        opened = await SmtpSession.open(
          this.host,
          ip,
          { ...this.pool.options.session, startTls: false },
          job.deadline,
        );
      }
      this.observe(opened.ok ? 'ok' : undefined);
      if (opened.ok) {
        const allowance = this.allowance;
        opened.session.onClosed((isClean) => allowance.closed(isClean));
        if (this.pool.closed) {
          opened.session.destroy();
          return;
        }
        this.live.add(opened.session);
        return this.run(opened.session, job, true);
      }
      job.log.push(...opened.transcript);
      failure = opened.failure;
      if (failure.kind !== 'unreachable') break;
      unreachable++;
    }
    this.sessions--;
    this.pool.release();
    failure ??= { kind: 'unreachable', detail: `${this.host} has no address to connect to` };
    this.observe(CONVERSATION_OUTCOMES[failure.kind] ?? 'failed');
    if (failure.kind === 'unreachable' && unreachable === this.ips.length)
      this.remember('down', failure.detail, causeOf('unreachable', this.host));
    if (
      (failure.kind === 'rejected' || failure.kind === 'deferred') &&
      (isRateLimit(failure.reply) || failure.kind === 'rejected' || isRefusalOfUs(failure.reply))
    )
      this.refused(failure.reply, failure.stage);
    if ((failure.kind === 'rejected' || failure.kind === 'deferred') && isRateLimit(failure.reply)) {
      // "421 Too many connections from your IP": lower the limit it names, and ask again within it.
      const words = this.refusedConnection(`${failure.stage}: ${formatReply(failure.reply)}`, failure.reply);
      job.log.push(`SMTP: ${this.host} ${words}`);
      this.allowance.closed(false);
      this.queue.unshift(this.waitAgain(job));
      return this.pump();
    }
    this.allowance.closed(false);
    // A refusal of this machine (its HELO name, its sender, its IP), 5xx or 4xx: the rest of the list would
    // get the same answer, so the host is not asked again for a while.
    if (failure.kind === 'rejected' || (failure.kind === 'deferred' && isRefusalOfUs(failure.reply)))
      this.remember(
        'blocked',
        `${failure.stage}: ${formatReply(failure.reply)}`,
        refusalCause(this.host, failure.reply, failure.stage),
      );
    job.resolve({ kind: 'failure', failure });
    this.pump();
  }

  /** A conversation opened (or not): counted for the operator (ops/events.ts). */
  private observe(outcome: ConversationOutcome | undefined): void {
    if (!outcome) return;
    const sourceAddress = this.pool.options.session.sourceAddress ?? '';
    publish('smtp.conversation', { sourceAddress, host: this.host, outcome });
  }

  /** The host answered about a mailbox: one that refused this machine talks to it again (the operator's log). */
  private answered(): void {
    if (!this.isRefusing) return;
    this.isRefusing = false;
    publish('smtp.recovered', {
      sourceAddress: this.pool.options.session.sourceAddress ?? '',
      host: this.host,
    });
  }

  /** The host refused this machine (not a recipient): counted in the pool's stats, and for the operator. */
  private refused(reply: SmtpReply, stage: string): void {
    const kind = refusalKind(reply, stage);
    this.pool.noteRefusal(kind);
    if (kind === 'block' && this.pool.options.onBlockList) {
      const said = formatReply(reply);
      this.pool.options.onBlockList({
        list: blockListNamed(said, this.host),
        source: this.pool.options.session.sourceAddress ?? '',
        host: this.host,
        reply: said,
        at: new Date().toISOString(),
      });
    }
    publish('smtp.refusal', {
      sourceAddress: this.pool.options.session.sourceAddress ?? '',
      host: this.host,
      kind,
      detail: `${stage}: ${formatReply(reply)}`,
      isNew: !this.isRefusing,
    });
    this.isRefusing = true;
  }

  private remember(state: 'down' | 'blocked', detail: string, cause: UnknownCause): void {
    const now = Date.now();
    if (state === 'down') this.downUntil = now + this.pool.options.downTtlMs;
    else this.blockedUntil = now + this.pool.options.blockTtlMs;
    this.reason = detail;
    this.cause = cause;
  }

  /**
   * A new connection was refused as too many (this attempt still counts as open): for conversations at once
   * when the reply says so, or says "too many connections" while others of ours were open (Postfix gives its
   * count and rate limits the same words): then at most those others; else for the rate: leave the host
   * alone a while and connect less often after. Returns what the transcript says.
   */
  private refusedConnection(detail: string, reply: SmtpReply): string {
    const named = refusedLimit(reply);
    const others = this.allowance.open - 1;
    if ((named === 'concurrency' || named === 'connections') && others >= 1) {
      this.allowance.refuse('concurrency', others + 1, detail, { lowered: others });
      return `refused a connection while ${others} of this machine's were open; at most ${others} at a time from now on`;
    }
    this.backOff(detail);
    return 'asked this machine to connect less often; waiting before connecting again';
  }

  /** The host said this machine connects too often: leave it alone a while, and connect less often after. */
  private backOff(detail: string): void {
    const now = Date.now();
    this.allowance.refuse('rate', this.allowance.recentConnects(now), detail, {
      pauseMs: this.pool.options.rateBackoffMs,
    });
  }

  /**
   * The next recipients for a conversation: with PIPELINING, as many queued as it may still ask (sent at
   * once); else one.
   */
  private takeBatch(session: SmtpSession, first?: Job): Job[] {
    // Never more than the refusals this conversation may still have: each recipient may be one.
    const now = Date.now();
    const room = session.supportsPipelining
      ? Math.max(
          1,
          Math.min(
            this.maxRcpt - session.rcptCount,
            this.errorAllowance - session.errors,
            this.allowance.rcptRoom(now),
          ),
        )
      : 1;
    const batch = first ? [first] : [];
    if (batch.length < room) batch.push(...this.queue.splice(0, room - batch.length));
    this.allowance.asked(batch.length, now);
    return batch.map((job) => this.startTurn(job));
  }

  /** Whether a conversation may ask another recipient (else it ends and a fresh one asks). */
  private hasRoom(session: SmtpSession): boolean {
    return session.rcptCount < this.maxRcpt && session.errors < this.errorAllowance;
  }

  private async run(session: SmtpSession, first: Job | undefined, isFresh: boolean): Promise<void> {
    const batch = this.takeBatch(session, first);
    batch.forEach((job, i) =>
      job.log.push(
        ...(isFresh && i === 0
          ? session.transcript
          : [`SMTP: reusing the open connection to ${this.host}:`, ...session.transcript]),
      ),
    );
    this.pool.stats.rcpts += batch.length;
    const errorsBefore = session.errors;
    const { results, answered, slowed } = await session.rcptMany(batch, {
      afterErrors: Math.min(3, this.errorAllowance),
      slowMs: Math.max(700, 5 * session.mailFromMs),
    });
    this.rcptsAnswered += answered;
    this.rcptsRefused += session.errors - errorsBefore;
    const again: Job[] = [];
    let isBlocked = false;
    let isSessionOver = false;
    let failed = false;
    if (slowed && session.errors < this.errorAllowance) {
      // The tarpit showed after this many refusals: the next conversations stop there.
      this.allowance.refuse('errors', session.errors + 1, `slowed after ${session.errors} refusals`, {
        lowered: session.errors,
      });
    }
    let isRcptRateRefused = false;
    let isRecipientLimitLearnt = false;
    batch.forEach((job, i) => {
      const result = results[i];
      if (slowed && i >= answered) {
        // Left unanswered in the tarpit: asked again on a fresh connection (not counted as a retry).
        again.push(job);
        return;
      }
      if (!result || !result.ok) {
        failed = true;
        // A reused connection the server had meanwhile closed, or recipients of a conversation that ended
        // before their turn: ask again on a new one.
        const canRetry = !job.retried && job.deadline > Date.now();
        if (canRetry && (i >= answered || (!(isFresh && i === 0) && result?.failure.kind === 'dropped'))) {
          job.retried = true;
          again.push(job);
        } else
          job.resolve({
            kind: 'failure',
            failure: result
              ? result.failure
              : { kind: 'dropped', detail: 'the server closed the connection before answering' },
          });
        return;
      }
      const reply = result.reply;
      const kind = classifyRcpt(reply);
      // This recipient's place in the conversation (1: the first asked).
      const place = session.rcptCount - (batch.length - 1 - i);
      if (kind === 'session-limit' && refusedLimit(reply) === 'recipients' && place > 1) {
        // "452 4.5.3 Too many recipients": the server's limit a conversation (Postfix's smtpd_recipient_limit,
        // Microsoft's one), not the mailbox's answer and no reason to wait. Servers count the recipients they
        // took (RFC 5321's recipients buffer; some count every RCPT): no conversation asks more than those from
        // now on, so none is refused again, and this address is asked in the next one, opened at once.
        if (!isRecipientLimitLearnt) {
          isRecipientLimitLearnt = true;
          const takenAfter = results.slice(i + 1).filter((r) => r?.ok && r.reply.code < 300).length;
          this.allowance.limitRecipients(Math.max(1, session.accepted - takenAfter));
        }
        job.log.push(
          `SMTP: ${this.host} takes ${this.maxRcpt} recipients a conversation: asking this one again in a new one`,
        );
        isSessionOver = true;
        again.push(this.waitAgain(job));
        return;
      }
      if (kind === 'session-limit' && !job.retried) {
        job.retried = true;
        isSessionOver = true;
        const named = refusedLimit(reply);
        // "Too many errors" (or "too many recipients" to the first recipient): asked again on a fresh one.
        if (named === 'errors')
          this.allowance.refuse('errors', session.errors, `RCPT: ${formatReply(reply)}`);
        again.push(job);
        return;
      }
      if (kind === 'rate-limited' || kind === 'blocked') this.refused(reply, 'RCPT');
      else this.answered();
      if (kind === 'rate-limited' && refusedLimit(reply) === 'recipientRate') {
        // "Too many recipients from …" (Postfix's recipient rate): every one asked in the minute counts,
        // refused or not; nothing more until the minute is over, then fewer. Not the mailbox's answer: asked
        // again (until its deadline).
        if (!isRcptRateRefused) {
          isRcptRateRefused = true;
          const now = Date.now();
          const inWindow = this.allowance.recipientsInWindow(now);
          const answeredBefore = Math.max(1, inWindow - (batch.length - i));
          this.allowance.refuse('recipientRate', answeredBefore + 1, `RCPT: ${formatReply(reply)}`, {
            pauseMs: this.pool.options.connectWindowMs ?? 60_000,
          });
        }
        isSessionOver = true;
        again.push(this.waitAgain(job));
        return;
      }
      if (kind === 'rate-limited' && !job.retried) {
        job.retried = true;
        isSessionOver = true;
        this.backOff(`RCPT: ${formatReply(reply)}`);
        again.push(this.waitAgain(job));
        return;
      }
      if (kind === 'blocked') {
        isBlocked = true;
        this.remember('blocked', `RCPT: ${formatReply(reply)}`, refusalCause(this.host, reply, 'RCPT'));
      }
      job.resolve({ kind: 'reply', reply, class: kind });
    });
    this.queue.unshift(...again);
    if (failed || slowed) {
      this.ended(session);
      return this.pump();
    }
    if (isSessionOver) {
      session.quit();
      this.ended(session);
      return this.pump();
    }
    // What the answers start (the domain's catch-all probe, after the first accepted address) is queued in
    // the microtasks that follow: it goes through this same conversation, not a new connection.
    if (this.queue.length === 0) await new Promise((resolve) => setImmediate(resolve));
    // Kept open for the next address of this host, unless other hosts wait for a connection slot.
    const isKept =
      session.alive &&
      this.hasRoom(session) &&
      !isBlocked &&
      !this.pool.closed &&
      (this.queue.length > 0 || !this.pool.hasWaiters);
    if (isKept) {
      const timer = setTimeout(() => {
        const at = this.idle.findIndex((i) => i.session === session);
        if (at >= 0) this.idle.splice(at, 1);
        this.pool.noteIdle(this, this.idle.length > 0);
        session.quit();
        this.ended(session);
      }, this.idleMs());
      this.idle.push({ session, timer });
      this.pool.noteIdle(this, true);
    } else {
      session.quit();
      this.ended(session);
    }
    this.pump();
  }

  /**
   * How long an idle conversation waits for the host's next address: `idleMs`, or, once a tenth of the host's
   * connections a minute are spent (SCARCE_SHARE), a quarter of the minute (at most SCARCE_IDLE_MS). Connections are then
   * what bounds the pace, and one opened for the next addresses (a list part's, a moment later) would spend
   * one of the minute's few on what this conversation can still ask: a conversation closed on one address
   * costs a heavy domain its share of a minute's recipients. An idle conversation still gives way at once to
   * another host waiting for a slot (SmtpPool.takeSlot).
   */
  private idleMs(): number {
    const { idleMs } = this.pool.options;
    const now = Date.now();
    const perMinute = this.allowance.limit('rate', now);
    if (!Number.isFinite(perMinute) || this.allowance.recentConnects(now) < perMinute * SCARCE_SHARE)
      return idleMs;
    const windowMs = this.pool.options.connectWindowMs ?? 60_000;
    return Math.max(idleMs, Math.min(SCARCE_IDLE_MS, windowMs / 4));
  }

  /** A session is over: its slot is free. */
  private ended(session: SmtpSession): void {
    if (!this.live.delete(session)) return;
    this.sessions--;
    this.pool.release();
  }

  /** Closes one idle conversation, if any, to free its slot for another host. */
  closeOneIdle(): boolean {
    const entry = this.idle.shift();
    this.pool.noteIdle(this, this.idle.length > 0);
    if (!entry) return false;
    clearTimeout(entry.timer);
    entry.session.quit();
    if (this.live.delete(entry.session)) this.sessions--;
    return true;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const { timer } of this.idle) clearTimeout(timer);
    this.idle.length = 0;
    for (const session of this.live) session.destroy();
    this.live.clear();
    for (const job of this.queue.splice(0))
      job.resolve({ kind: 'failure', failure: { kind: 'unreachable', detail: 'the verifier is closed' } });
  }
}
