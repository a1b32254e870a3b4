// The online phase of one part of a list, on the main thread of the node that took the part: the distinct
// addresses its rows left undecided offline (code 10) go through the node's online verifier, grouped by domain
// (a domain's DNS answer and catch-all probe then serve the addresses after it), as many at once as the node's
// lanes allow. Temporary failures (greylisting, timeouts) are asked again minutes later — 5 min, then every
// 15 min, at most 30 min in all by default — and meanwhile the part waits in the queue, not in a process:
// its job ends, and a job for it is queued for the time of the retry. E8 shows how many rows wait and until
// when; Finish now ends the wait (those rows stay unknown).
//
// Every verdict goes to the list's journal as it comes (the backend's), so a part asked again — a retry, a part
// whose node was stopped or killed, the next slice of a long part — asks only what has no answer yet. On a team
// server a heavy domain's part may be cut between jobs, each asking its own range of the part's checks at once
// on the node that took it; the job that ends the last range writes the part (DomainShare.take, cutPart).
import type { OnlineLevel, OnlineVerdict, OnlineVerifier } from '../../engine/online/index.js';
import type { VerifyPolicy } from '../../engine/types.js';
import type { JournalEntry, ListBackend, PartWork } from '../backend/port.js';
import type { ListPolicy, OnlineVerdicts, PartOnlineState } from '../types.js';
import { packVerdict } from '../verdicts.js';
import { UnknownCauseTally } from '../../../shared/unknownCauses.js';
import TinyQueue from 'tinyqueue';
import { formatCount } from '../../../shared/count.js';

export const DEFAULT_RETRY_DELAY_MS = 5 * 60_000;
export const DEFAULT_MAX_WAIT_MS = 30 * 60_000;
/** Retries after the first come this many times the first delay apart (5 min, then 15 min). */
const LATER_DELAY_FACTOR = 3;
/** How often the progress and the journal are saved. */
const SAVE_EVERY_MS = 500;
/**
 * How long an address may wait for its turn at a busy mail host (its own budget counts from its turn): a
 * domain holding much of a list is asked at the pace its server allows, not all at once against the clock.
 */
const TURN_WAIT_MS = 10 * 60_000;

export interface OnlinePhaseSettings {
  readonly level: OnlineLevel;
  readonly policy: ListPolicy;
  readonly verifyPolicy: VerifyPolicy;
  readonly budgetMs: number;
  readonly retryDelayMs: number;
  readonly maxWaitMs: number;
  /**
   * How long one job of a part checks before it saves its answers and hands the rest of the part to a job of
   * its own: a part's job stays well within its lease, whatever the mail servers do.
   */
  readonly sliceMs: number;
}

/** A part's checks, offered to the node's lanes one at a time, in the part's order. */
export interface LaneFeed {
  /** The domain of the next check, or undefined when the part has nothing more to start now. */
  next(): string | undefined;
  /** Starts the next check; settles when it is done. */
  take(): Promise<void>;
}

interface Feeding {
  readonly feed: LaneFeed;
  /** The domain of its next check, while it waits in the queue. */
  domain: string;
  readonly seq: number;
  /** Whether it waits in the queue now. */
  isQueued: boolean;
  running: number;
  /** A check of the part failed (its journal could not be saved): no more of its checks start. */
  isFailed: boolean;
  done(): void;
  fail(error: unknown): void;
}

const nextDomainFirst = (a: Feeding, b: Feeding) =>
  a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : a.seq - b.seq;

/**
 * The checks a node runs at once, shared by every part it works on. A freed lane goes to the part whose next
 * check's domain comes first (by name; the part that came first among equals), and every part walks its
 * domains in that same order: the parts of a list that run at once then ask each domain at about the same
 * time, so its addresses from every part share the mail server's conversation (one connection and one
 * greeting for the domain, as when the list was checked in one piece) instead of each part opening its own a
 * while later. The queue holds parts, not checks: a handful of entries, whatever the lanes.
 */
export class Lanes {
  private free: number;
  private seq = 0;
  private readonly queue = new TinyQueue<Feeding>([], nextDomainFirst);
  private isDrainScheduled = false;

  constructor(readonly size: number) {
    this.free = size;
  }

  /**
   * Runs a part's checks in the node's lanes; settles when the feed has nothing more and its checks are done,
   * or fails with the first check that fails (the part's job then fails, and is taken again).
   */
  feed(feed: LaneFeed): Promise<void> {
    return new Promise((done, fail) => {
      const feeding: Feeding = {
        feed,
        domain: '',
        seq: this.seq++,
        isQueued: false,
        running: 0,
        isFailed: false,
        done,
        fail,
      };
      if (!this.enqueue(feeding)) return done();
      // Even free lanes are handed out in order: the parts that start in the same turn of the event loop (a
      // list's parts, gathered) go by domain, not by which part came first.
      if (!this.isDrainScheduled) {
        this.isDrainScheduled = true;
        setImmediate(() => {
          this.isDrainScheduled = false;
          this.drain();
        });
      }
    });
  }

  /** Queues a part at its next check's domain; false when it has none. */
  private enqueue(feeding: Feeding): boolean {
    const domain = feeding.isFailed ? undefined : feeding.feed.next();
    if (domain === undefined) return false;
    feeding.domain = domain;
    feeding.isQueued = true;
    this.queue.push(feeding);
    return true;
  }

  private drain(): void {
    while (this.free > 0 && this.queue.length > 0) {
      const feeding = this.queue.pop()!;
      feeding.isQueued = false;
      // Its next check may have gone meanwhile (the part's slice ended, the node stops, a check failed).
      if (feeding.isFailed || feeding.feed.next() === undefined) {
        if (feeding.running === 0) feeding.done();
        continue;
      }
      this.free--;
      feeding.running++;
      const ended = () => {
        this.free++;
        feeding.running--;
        if (!feeding.isQueued && !this.enqueue(feeding) && feeding.running === 0) feeding.done();
        this.drain();
      };
      feeding.feed.take().then(ended, (error: unknown) => {
        feeding.isFailed = true;
        feeding.fail(error);
        ended();
      });
      this.enqueue(feeding);
    }
  }
}

/**
 * Checks of one domain a team node may hold waiting before it hands a part of that domain back to the queue.
 * A node's pace at a mail server is its own source address's allowance: a node that already has this many of
 * a domain's checks to ask gains nothing from more of them, while another node, idle, would ask them at its
 * own pace. Below it the next part is taken while the ones of the part before are asked, so the node never
 * waits for work: a part of a team's SMTP list (100 rows, lists/parts.ts), enough for the host's two
 * conversations at once while the next part is taken. With a hold of 20 a node took about 100 rows every 4–5 s
 * (a part handed back keeps the domain's parts away for DOMAIN_SHARE_YIELD_MS), one conversation at a time,
 * and spent its first minute's 30 connections over 35 s, a spacing its second minute replays (issue 38). No
 * more than a part: a node holding two would leave a list of a few parts to fewer nodes. Of a part that would
 * take its hold over this, a node takes only what tops it up (the rest goes at once to a job of its own, for a
 * node with room): at a list's end the last part splits between the nodes instead of going whole to one.
 */
export const DOMAIN_SHARE_ROWS = 100;
/**
 * A part is of a heavy domain when this many of its checks (and half of them or more) are at one domain:
 * below it a part is not worth handing back.
 */
export const HEAVY_DOMAIN_ROWS = 20;
/**
 * After a node hands a part of a domain back, it leaves that domain's parts to the other nodes this long (longer
 * than their part workers take to ask the queue again): the part goes to a node with room, not back to the
 * fastest asker.
 */
export const DOMAIN_SHARE_YIELD_MS = 3_000;
/**
 * A team node's check of a heavy domain leaves the mail host's queue, unasked, when the host allows this node
 * no new conversation for longer than this (its connections of the minute spent): the part goes back to the
 * queue of parts for a node whose own allowance has room now, rather than wait for this node's next minute
 * while the others sit idle.
 */
export const FAR_TURN_MS = 8_000;
/**
 * After its checks left a far turn, the node leaves the domain's parts to the others until this long before
 * its turn: then it takes them again, so that they are queued at the host when its turn comes.
 */
export const TURN_LEAD_MS = 5_000;

/**
 * The checks a team node holds, by domain, not yet answered: the parts of a list dominated by one domain are
 * taken by the nodes that have room for them, rather than all by the first node to ask the queue (service/pg/
 * listBackend.ts). Lists of many domains never meet it: no part of theirs is mostly one domain.
 */
export class DomainShare {
  private readonly pending = new Map<string, number>();
  /** Domains whose parts this node handed back, until when it leaves them to the others. */
  private readonly yielding = new Map<string, number>();

  constructor(
    readonly limit = DOMAIN_SHARE_ROWS,
    readonly yieldMs = DOMAIN_SHARE_YIELD_MS,
    readonly heavyRows = Math.min(limit, HEAVY_DOMAIN_ROWS),
  ) {}

  /** Checks of `domain` held here and not answered yet. */
  held(domain: string): number {
    return this.pending.get(domain) ?? 0;
  }

  /** The domain most of a part's checks are at, when it is heavy: `heavyRows` checks or more, half the part or more. */
  heavy(domains: readonly string[]): string | undefined {
    return this.top(domains).heavy;
  }

  /**
   * This node's turn at `domain`'s mail host is far (its connections of the minute spent): its parts are left
   * to the other nodes until `until`.
   */
  pause(domain: string, until: number): void {
    this.yielding.set(domain, Math.max(this.yielding.get(domain) ?? 0, until));
  }

  private top(domains: readonly string[]): { counts: Map<string, number>; heavy: string | undefined } {
    const counts = new Map<string, number>();
    let top = '';
    let topCount = 0;
    for (const domain of domains) {
      const count = (counts.get(domain) ?? 0) + 1;
      counts.set(domain, count);
      if (count > topCount) {
        top = domain;
        topCount = count;
      }
    }
    const isHeavy = topCount >= this.heavyRows && topCount * 2 >= domains.length;
    return { counts, heavy: isHeavy ? top : undefined };
  }

  /**
   * Takes a part's checks (their domains), or the first of them: how many, 0 (taking nothing) when most of
   * them are at one domain of which this node already holds `limit` checks or more (or nearly: less room than
   * `heavyRows`), or whose parts it leaves to the others a while. With `mayCut`, a node takes no more of such a
   * domain than tops its hold up to `limit`, and the rest of the part goes at once to a job of its own, for the
   * next node with room (cutPart, issue 38): at the end of a list the last part then splits between the nodes
   * as they have room, a conversation's worth or so each, instead of going whole to the first node that asks
   * while the others run dry. A rest of fewer than `heavyRows` checks is not cut off.
   */
  take(domains: readonly string[], mayCut = false): number {
    const { counts, heavy: top } = this.top(domains);
    let taken = domains.length;
    if (top !== undefined) {
      const now = Date.now();
      const room = this.limit - this.held(top);
      if (room < (mayCut ? this.heavyRows : 1)) {
        this.pause(top, now + this.yieldMs);
        return 0;
      }
      if ((this.yielding.get(top) ?? 0) > now) return 0;
      this.yielding.delete(top);
      if (mayCut && (counts.get(top) ?? 0) - room >= this.heavyRows) {
        let seen = 0;
        taken = domains.findIndex((domain) => domain === top && ++seen > room);
      }
    }
    if (taken === domains.length)
      for (const [domain, count] of counts) this.pending.set(domain, this.held(domain) + count);
    else for (let i = 0; i < taken; i++) this.pending.set(domains[i], this.held(domains[i]) + 1);
    return taken;
  }

  /** A check of `domain` taken here is answered (or given up). */
  done(domain: string, count = 1): void {
    const left = this.held(domain) - count;
    if (left > 0) this.pending.set(domain, left);
    else this.pending.delete(domain);
  }
}

export interface OnlinePhaseContext {
  readonly verifier: OnlineVerifier;
  readonly lanes: Lanes;
  readonly backend: ListBackend;
  readonly listId: number;
  readonly run: number;
  readonly part: number;
  /** Aborted when the node stops: no new check starts, the part is asked for again. */
  readonly stopping: AbortSignal;
  /** On a team node: a part mostly of a domain this node has enough of is handed back (DomainShare). */
  readonly share?: DomainShare | undefined;
  /**
   * Where this job's range of the part's checks starts (their position in the part's domain order), when the
   * part's checks were cut between jobs (ListBackend.cutPart): it runs to the next cut.
   */
  readonly from?: number | undefined;
}

export type PartOnlineOutcome =
  /** Every address has its final verdict (or stays unknown, the wait being over). */
  | {
      readonly kind: 'done';
      readonly verdicts: OnlineVerdicts;
      /** The part's unknown rows by cause (kind), for the node's metrics. */
      readonly unknown: readonly { readonly cause: string; readonly count: number }[];
    }
  /**
   * The part is asked for again at `at` (a retry), or at once (the rest of a slice, a stop); `from`: its range
   * from there only (its checks were cut between jobs).
   */
  | { readonly kind: 'later'; readonly at?: Date; readonly from?: number }
  /** Nothing was asked: this node holds enough of the part's main domain; another node may take the part. */
  | { readonly kind: 'handed-back'; readonly from?: number }
  /** This job's range of the part is answered; the job of another range, still asking, writes the part. */
  | { readonly kind: 'elsewhere' };

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** Checks a part's addresses online (rowCounts[i]: rows holding addresses[i]), as far as this job can. */
export async function runPartOnline(
  addresses: readonly string[],
  rowCounts: readonly number[],
  work: PartWork,
  settings: OnlinePhaseSettings,
  context: OnlinePhaseContext,
): Promise<PartOnlineOutcome> {
  const { backend, verifier, listId } = context;
  const known = await backend.journal(listId, settings.level, addresses);

  // Grouped by domain, the domains by name: the order every part of every list walks (see Lanes).
  const domains = addresses.map(domainOf);
  const byDomain = new Map<string, number[]>();
  domains.forEach((domain, index) => {
    let group = byDomain.get(domain);
    if (!group) byDomain.set(domain, (group = []));
    group.push(index);
  });
  const order = [...byDomain.keys()]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap((domain) => byDomain.get(domain)!);
  // The part's checks cut between jobs: this job asks those of its range of that order only, the range's own
  // job the others (ListBackend.cutPart), so no check is asked twice.
  const from = context.from ?? 0;
  const cuts = work.cuts ?? [];
  const to = cuts.reduce((end, cut) => (cut > from && cut < end ? cut : end), order.length);
  let isRanged = from > 0 || cuts.length > 0;
  const left = new Map<string, number>();
  for (const [domain, group] of byDomain) left.set(domain, group.length);

  const final = new Map<number, JournalEntry>();
  /** Addresses whose last answer was temporary, with that answer. */
  const waiting = new Map<number, JournalEntry>();
  const toCheck: number[] = [];
  const saved = work.online;
  const state: { -readonly [K in keyof PartOnlineState]: PartOnlineState[K] } = {
    rows_to_check: rowCounts.reduce((sum, n) => sum + n, 0),
    rows_checked: 0,
    domains_total: byDomain.size,
    domains_done: 0,
    retry_rows: 0,
    retry_at: null,
    retry_attempt: saved?.retry_attempt ?? 0,
  };
  // Unknown rows by cause, for E8 (`online.unknown_causes`): those with their final answer.
  const causes = new UnknownCauseTally();
  const countFinal = (index: number, entry: JournalEntry) => {
    state.rows_checked += rowCounts[index] ?? 0;
    if (entry.c === 5) causes.add(entry.u, rowCounts[index] ?? 0);
  };
  const answered = (index: number) => {
    const domain = domains[index];
    const count = (left.get(domain) ?? 1) - 1;
    left.set(domain, count);
    if (count === 0) state.domains_done++;
  };
  const retries = settings.maxWaitMs > 0 && !work.isFinishedEarly;
  /** Each address's position in `order`. */
  const positions = new Int32Array(order.length);
  order.forEach((index, position) => {
    positions[index] = position;
    const entry = known.get(addresses[index]);
    if (!entry) {
      if (position >= from && position < to) toCheck.push(index);
      return;
    }
    answered(index);
    if (entry.r && (retries || work.isFinishedEarly)) waiting.set(index, entry);
    else {
      final.set(index, entry);
      countFinal(index, entry);
    }
  });
  const completedOffline = work.bounds.rowCount - state.rows_to_check;
  const save = () => {
    const lines = causes.lines(Number.MAX_SAFE_INTEGER);
    // While rows are left, the host whose allowance they wait on, if one holds many of them.
    const pace = state.rows_checked < state.rows_to_check ? verifier.pacing?.() : undefined;
    return backend.partOnline(
      listId,
      context.run,
      context.part,
      {
        ...state,
        ...(lines.length > 0 ? { unknown_causes: lines } : {}),
        ...(pace
          ? {
              paced_by: {
                ...pace,
                words: `${pace.host} ${pace.allowance}: ${formatCount(pace.waiting)} ${pace.waiting === 1 ? 'address waits' : 'addresses wait'} for it`,
              },
            }
          : {}),
      },
      completedOffline + state.rows_checked,
    );
  };

  const waitedSince = work.waitingSince ? Date.parse(work.waitingSince) : undefined;
  const isWaitOver = waitedSince !== undefined && Date.now() - waitedSince >= settings.maxWaitMs;

  // What this job asks: the addresses never asked, else (its time come) those waiting for a retry.
  let batch: number[] = toCheck;
  // (A retry asks the whole part's waiting checks, once every range is closed.)
  if (batch.length === 0 && !isRanged && waiting.size > 0 && retries && !isWaitOver) {
    const at = saved?.retry_at ? Date.parse(saved.retry_at) : 0;
    if (at > Date.now()) return { kind: 'later', at: new Date(at) };
    state.retry_attempt++;
    batch = order.filter((index) => waiting.has(index));
  }

  // Taken (or handed back) at once, with no wait between the look and the taking: a node's part workers that
  // took parts of one domain together see each other's.
  const share = context.share;
  const batchDomains = share && batch.length > 0 ? batch.map((index) => domains[index]) : undefined;
  const isFirstPass = batch === toCheck;
  const again = from > 0 ? { from } : {};
  if (share && batchDomains) {
    // A first pass may be cut where the backend can hand its rest on at once (the team server's).
    const cutPart = backend.cutPart?.bind(backend);
    const took = share.take(batchDomains, isFirstPass && cutPart !== undefined);
    if (took === 0) return { kind: 'handed-back', ...again };
    if (took < batch.length && cutPart) {
      // The rest of the part goes at once to a job of its own, for a node with room now.
      const release = () => {
        for (let i = 0; i < took; i++) share.done(batchDomains[i]);
      };
      let isCut: boolean;
      try {
        isCut = await cutPart(listId, context.run, context.part, from, positions[batch[took]]);
      } catch (error) {
        release();
        throw error;
      }
      // (The part was written meanwhile: nothing is left to ask.)
      if (!isCut) {
        release();
        return { kind: 'elsewhere' };
      }
      batch = batch.slice(0, took);
      isRanged = true;
    }
  }
  // Its checks of a heavy domain do not wait for a far turn at its mail host: other nodes may ask them now.
  const heavy = share && batchDomains ? share.heavy(batchDomains) : undefined;
  if (batch.length > 0) {
    const deadline = Date.now() + settings.sliceMs;
    // At the slice's end, checks still waiting for their turn at a busy host stop waiting (unanswered, they
    // are asked by the part's next job): the job ends well within its lease.
    const sliceEnd = new AbortController();
    const timer = setTimeout(() => sliceEnd.abort(), settings.sliceMs);
    const onStop = () => sliceEnd.abort();
    context.stopping.addEventListener('abort', onStop, { once: true });
    let journal: [string, JournalEntry][] = [];
    let lastSave = Date.now();
    let saving: Promise<void> = Promise.resolve();
    const flush = async () => {
      const entries = journal;
      journal = [];
      lastSave = Date.now();
      // One save at a time, in order: the journal first, then the progress it counts.
      saving = saving.then(async () => {
        if (entries.length > 0) await backend.addToJournal(listId, settings.level, entries);
        await save();
      });
      await saving;
    };
    const check = async (index: number): Promise<void> => {
      const address = addresses[index];
      let verdict: OnlineVerdict;
      try {
        verdict = await verifier.verify(address, settings.verifyPolicy, {
          level: settings.level,
          budgetMs: settings.budgetMs,
          retryWithinBudget: false,
          queueMs: TURN_WAIT_MS,
          signal: sliceEnd.signal,
          ...(heavy !== undefined && domains[index] === heavy ? { leaveIfTurnAfterMs: FAR_TURN_MS } : {}),
        });
      } catch {
        // Never claim more than was checked: a check that failed is unknown.
        verdict = { address, code: 5, checked: 'offline', why: 'the check failed; nothing was learnt' };
      }
      share?.done(domains[index]);
      if (verdict.cancelled) {
        unasked.push(index);
        if (verdict.turnAt !== undefined) {
          // This node's turn at the domain's host is far: the rest of the part goes back to the queue at once,
          // for the other nodes, and this node takes the domain's parts again shortly before its turn.
          share?.pause(domains[index], verdict.turnAt - TURN_LEAD_MS);
          sliceEnd.abort();
        }
        return;
      }
      const packed = packVerdict(verdict, settings.policy);
      const entry: JournalEntry = {
        c: packed.code,
        f: packed.flags,
        v: packed.validEmail,
        k: verdict.checked,
        w: verdict.why ?? verdict.reason ?? '',
        ...(verdict.retryable ? { r: 1 as const } : {}),
        ...(verdict.cause && packed.code === 5 ? { u: verdict.cause } : {}),
        ...(verdict.evidence
          ? {
              e: [
                verdict.evidence.host,
                verdict.evidence.reply,
                verdict.evidence.source,
                verdict.evidence.checkedAt,
              ] as const,
            }
          : {}),
      };
      journal.push([address, entry]);
      if (isFirstPass) answered(index);
      if (entry.r && retries) waiting.set(index, entry);
      else {
        waiting.delete(index);
        final.set(index, entry);
        countFinal(index, entry);
      }
      if (Date.now() - lastSave >= SAVE_EVERY_MS) await flush();
    };
    let next = 0;
    const unasked: number[] = [];
    // The node's Lanes bound what runs at once across its parts, and choose which part's check goes next.
    try {
      await context.lanes.feed({
        next: () =>
          next < batch.length &&
          !context.stopping.aborted &&
          !sliceEnd.signal.aborted &&
          Date.now() < deadline
            ? domains[batch[next]]
            : undefined,
        take: () => check(batch[next++]),
      });
    } finally {
      clearTimeout(timer);
      context.stopping.removeEventListener('abort', onStop);
      // What this job did not start is no longer held here.
      if (share) for (let i = next; i < batch.length; i++) share.done(domains[batch[i]]);
    }
    await flush();
    // The rest of this part (a slice that ran out, or a stop): asked for again at once.
    if (next < batch.length || unasked.length > 0) return { kind: 'later', ...again };
  }

  if (isRanged) {
    // This job's range is answered. The job that closes the part's last open range, and no other, goes on
    // with the whole part (its retries, or its results): the part is written once.
    const isLast = backend.closeRange
      ? await backend.closeRange(listId, context.run, context.part, from)
      : true;
    if (!isLast) return { kind: 'elsewhere' };
    return runPartOnline(addresses, rowCounts, { ...work, cuts: [], openRanges: [] }, settings, {
      ...context,
      from: undefined,
    });
  }

  // Temporary failures wait for their retry, within the list's longest wait.
  if (waiting.size > 0 && retries && !isWaitOver) {
    const since = Date.parse(await backend.beginWait(listId));
    const waited = Date.now() - since;
    if (waited < settings.maxWaitMs) {
      const delay =
        state.retry_attempt === 0 ? settings.retryDelayMs : settings.retryDelayMs * LATER_DELAY_FACTOR;
      const at = Date.now() + Math.min(delay, settings.maxWaitMs - waited);
      state.retry_rows = [...waiting.keys()].reduce((sum, index) => sum + (rowCounts[index] ?? 0), 0);
      state.retry_at = new Date(at).toISOString();
      await save();
      return { kind: 'later', at: new Date(at) };
    }
  }

  // Done: the answers of every address, those still temporary unknown with the reason they stay so.
  const verdicts: { -readonly [K in keyof OnlineVerdicts]: OnlineVerdicts[K] } = {
    indexes: [],
    codes: [],
    flags: [],
    validEmails: [],
    checked: [],
    whys: [],
    hosts: [],
    replies: [],
    sources: [],
    checkedAts: [],
  };
  const emit = (index: number, entry: JournalEntry) => {
    verdicts.indexes.push(index);
    verdicts.codes.push(entry.c);
    verdicts.flags.push(entry.f);
    verdicts.validEmails.push(entry.v);
    verdicts.checked.push(entry.k);
    verdicts.whys.push(entry.w);
    verdicts.hosts.push(entry.e?.[0] ?? '');
    verdicts.replies.push(entry.e?.[1] ?? '');
    verdicts.sources.push(entry.e?.[2] ?? '');
    verdicts.checkedAts.push(entry.e?.[3] ?? '');
  };
  for (const [index, entry] of final) emit(index, entry);
  for (const [index, entry] of waiting) {
    const note = work.isFinishedEarly
      ? 'not asked again: the wait was ended (Finish now)'
      : settings.maxWaitMs > 0
        ? `still temporary after ${state.retry_attempt} ${state.retry_attempt === 1 ? 'retry' : 'retries'}`
        : 'not asked again (no retries)';
    const noted = { ...entry, w: `${entry.w} — ${note}` };
    emit(index, noted);
    countFinal(index, noted);
  }
  state.retry_rows = 0;
  state.retry_at = null;
  await save();
  const unknown = causes
    .lines(Number.MAX_SAFE_INTEGER)
    .map((line) => ({ cause: line.cause.kind, count: line.count }));
  return { kind: 'done', verdicts, unknown };
}
