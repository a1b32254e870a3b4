// Connections to mail servers, shared by every check of a service (and so by every row of a list), so a
// list never floods one server: per MX host at most `perHostConcurrency` conversations at once, new
// connections to it at least `pacingMs` apart, each conversation reused for up to `maxRcptPerSession`
// recipients, and at most `maxSessions` conversations open in all. A host that refuses connections, or
// refuses us by policy, is remembered as such for a while, so the rest of a list does not knock again.
import { classifyRcpt, type RcptClass } from './classify.js';
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
}

export type LaneOutcome =
  | { readonly kind: 'reply'; readonly reply: SmtpReply; readonly class: RcptClass }
  | { readonly kind: 'failure'; readonly failure: SessionFailure }
  /** The host is remembered as unreachable or refusing us; not contacted again. */
  | { readonly kind: 'skipped'; readonly state: 'down' | 'blocked'; readonly detail: string };

interface Job {
  readonly address: string;
  readonly deadline: number;
  readonly log: string[];
  retried: boolean;
  resolve(outcome: LaneOutcome): void;
}

export interface PoolStats {
  /** SMTP connections opened. */
  sessions: number;
  /** RCPT TO commands sent. */
  rcpts: number;
  /** Most conversations open at once. */
  peakSessions: number;
}

export class SmtpPool {
  readonly stats: PoolStats = { sessions: 0, rcpts: 0, peakSessions: 0 };
  private readonly lanes = new Map<string, Lane>();
  private open = 0;
  private readonly waiting = new Set<Lane>();
  /** Lanes holding an idle conversation (a list makes thousands of lanes; only these can give a slot way). */
  private readonly idleLanes = new Set<Lane>();
  private isClosed = false;

  constructor(readonly options: PoolOptions) {}

  /** Asks `host` (at one of `ips`) about one recipient, queued behind the host's other work. */
  rcpt(
    host: string,
    ips: readonly string[],
    address: string,
    deadline: number,
    log: string[],
  ): Promise<LaneOutcome> {
    if (this.isClosed)
      return Promise.resolve({
        kind: 'failure',
        failure: { kind: 'unreachable', detail: 'the verifier is closed' },
      });
    let lane = this.lanes.get(host);
    if (!lane) {
      lane = new Lane(host, this);
      this.lanes.set(host, lane);
    }
    lane.ips = ips;
    return lane.submit(address, deadline, log);
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
    for (const lane of this.lanes.values()) lane.close();
    this.lanes.clear();
    this.waiting.clear();
    this.idleLanes.clear();
  }
}

class Lane {
  ips: readonly string[] = [];
  private readonly queue: Job[] = [];
  private readonly idle: { session: SmtpSession; timer: NodeJS.Timeout }[] = [];
  private sessions = 0;
  private nextConnectAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private downUntil = 0;
  private blockedUntil = 0;
  private reason = '';
  private isTlsBroken = false;
  private readonly live = new Set<SmtpSession>();

  constructor(
    readonly host: string,
    private readonly pool: SmtpPool,
  ) {}

  /** The deadline of the check waiting longest here (Infinity when none waits). */
  get firstDeadline(): number {
    return this.queue.length > 0 ? Math.min(...this.queue.map((job) => job.deadline)) : Infinity;
  }

  state(): { state: 'down' | 'blocked'; detail: string } | undefined {
    const now = Date.now();
    if (this.blockedUntil > now) return { state: 'blocked', detail: this.reason };
    if (this.downUntil > now) return { state: 'down', detail: this.reason };
    return undefined;
  }

  submit(address: string, deadline: number, log: string[]): Promise<LaneOutcome> {
    return new Promise((resolve) => {
      this.queue.push({ address, deadline, log, retried: false, resolve });
      this.pump();
    });
  }

  pump(): void {
    if (this.pool.closed) return;
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
        const detail = `the time allowed ran out while waiting for a connection to ${this.host} (at most ${this.pool.options.perHostConcurrency} at once, ${this.pool.options.pacingMs} ms apart)`;
        job.log.push(`SMTP: ${detail}`);
        job.resolve({ kind: 'failure', failure: { kind: 'timeout', detail } });
      }
    }
    while (this.queue.length > 0 && this.idle.length > 0) {
      const { session, timer } = this.idle.pop()!;
      this.pool.noteIdle(this, this.idle.length > 0);
      clearTimeout(timer);
      if (!session.alive) {
        this.ended(session);
        continue;
      }
      void this.run(session, undefined, false);
    }
    if (this.queue.length === 0) {
      this.pool.unwait(this);
      return;
    }
    if (this.sessions < this.pool.options.perHostConcurrency && this.needsAnotherSession()) {
      if (now < this.nextConnectAt) this.wakeAt(this.nextConnectAt);
      else if (this.pool.takeSlot(this)) {
        this.sessions++;
        this.nextConnectAt = now + this.pool.options.pacingMs;
        void this.openFor(this.queue.shift()!);
        if (this.queue.length > 0) this.wakeAt(this.nextConnectAt);
      }
    }
    // Jobs still queued must still end at their deadline.
    if (this.queue.length > 0) this.wakeAt(Math.min(...this.queue.map((j) => j.deadline)));
  }

  /**
   * Whether the queue needs a conversation more than those open or opening can give: a domain's few
   * addresses (and its catch-all probe) go through one conversation, one after the other, instead of taking
   * a second connection (and a second greeting delay, and a second global slot) for them; a host with more
   * waiting than its conversations can still ask gets a second one, paced.
   */
  private needsAnotherSession(): boolean {
    if (this.sessions === 0) return true;
    const max = this.pool.options.maxRcptPerSession;
    // Opening conversations take the job they were opened for, then up to max - 1 more.
    let capacity = (this.sessions - this.live.size) * (max - 1);
    for (const session of this.live) if (session.alive) capacity += Math.max(0, max - session.rcptCount);
    return this.queue.length > capacity;
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
      if (opened.ok) {
        if (this.pool.closed) {
          opened.session.destroy();
          break;
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
    if (failure.kind === 'unreachable' && unreachable === this.ips.length)
      this.remember('down', failure.detail);
    if (failure.kind === 'rejected')
      this.remember('blocked', `${failure.stage}: ${formatReply(failure.reply)}`);
    job.resolve({ kind: 'failure', failure });
    this.pump();
  }

  private remember(state: 'down' | 'blocked', detail: string): void {
    const now = Date.now();
    if (state === 'down') this.downUntil = now + this.pool.options.downTtlMs;
    else this.blockedUntil = now + this.pool.options.blockTtlMs;
    this.reason = detail;
  }

  /**
   * The next recipients for a conversation: with PIPELINING, as many queued as it may still ask (sent at
   * once); else one.
   */
  private takeBatch(session: SmtpSession, first?: Job): Job[] {
    const room = session.supportsPipelining
      ? Math.max(1, this.pool.options.maxRcptPerSession - session.rcptCount)
      : 1;
    const batch = first ? [first] : [];
    if (batch.length < room) batch.push(...this.queue.splice(0, room - batch.length));
    return batch;
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
    const { results, answered } = await session.rcptMany(batch);
    const again: Job[] = [];
    let isBlocked = false;
    let isTooMany = false;
    let failed = false;
    batch.forEach((job, i) => {
      const result = results[i];
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
      if (kind === 'too-many-recipients' && !job.retried) {
        job.retried = true;
        isTooMany = true;
        again.push(job);
        return;
      }
      if (kind === 'blocked') {
        isBlocked = true;
        this.remember('blocked', `RCPT: ${formatReply(reply)}`);
      }
      job.resolve({ kind: 'reply', reply, class: kind });
    });
    this.queue.unshift(...again);
    if (failed) {
      this.ended(session);
      return this.pump();
    }
    if (isTooMany) {
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
      session.rcptCount < this.pool.options.maxRcptPerSession &&
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
      }, this.pool.options.idleMs);
      this.idle.push({ session, timer });
      this.pool.noteIdle(this, true);
    } else {
      session.quit();
      this.ended(session);
    }
    this.pump();
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
