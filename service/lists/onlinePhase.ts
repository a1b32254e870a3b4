// The online phase of a list, on the service's main thread: the distinct addresses its rows left undecided
// offline (code 10) go through the service's one online verifier, grouped by domain (a domain's DNS answer and
// catch-all probe then serve the addresses after it), a bounded number at once. Temporary failures
// (greylisting, timeouts) are asked again minutes later — 5 min, then every 15 min, at most 30 min in all by
// default — while E8 shows how many rows wait and until when; Finish now ends the wait (they stay unknown).
//
// Every verdict is written to a journal in the list's folder as it comes, and the progress and the wait to the
// lists table, so a service stopped during the wait carries on at its next start: the rows already answered
// are not asked again, and the wait resumes where it was.
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OnlineLevel, OnlineVerdict, OnlineVerifier } from '../engine/online/index.js';
import type { VerifyPolicy } from '../engine/types.js';
import { sleep } from '../engine/online/cache.js';
import { UnknownCauseTally, type UnknownCause } from '../../shared/unknownCauses.js';
import type { ListOnlineState } from './store.js';
import type { ListPolicy, OnlineVerdicts } from './types.js';
import { packVerdict } from './verdicts.js';

/** The journal of a list's online verdicts (removed once the list is complete). */
export const ONLINE_JOURNAL = 'online-verdicts.jsonl';

export const DEFAULT_RETRY_DELAY_MS = 5 * 60_000;
export const DEFAULT_MAX_WAIT_MS = 30 * 60_000;
/** Retries after the first come this many times the first delay apart (5 min, then 15 min). */
const LATER_DELAY_FACTOR = 3;
/** How often the progress is written to the lists table. */
const STATE_EVERY_MS = 500;
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
  readonly concurrency: number;
  readonly retryDelayMs: number;
  readonly maxWaitMs: number;
  /** How often verdicts are sent back to the pipeline worker. */
  readonly flushMs: number;
}

export interface OnlinePhaseContext {
  readonly verifier: OnlineVerifier;
  readonly dir: string;
  /** The state kept from an earlier run of this list (a restart during the wait), if any. */
  readonly saved: ListOnlineState | null;
  /** Whether the list is still the one running (the service did not stop, the worker did not go). */
  isCurrent(): boolean;
  /** Aborted by Finish now. */
  readonly finish: AbortSignal;
  /** Aborted when the service stops. */
  readonly stopping: AbortSignal;
  send(verdicts: OnlineVerdicts, isLast: boolean): void;
  saveState(state: ListOnlineState): void;
}

interface JournalEntry {
  /** code, flags, valid email, checked, why, retryable, cause of an unknown */
  readonly c: number;
  readonly f: number;
  readonly v: string;
  readonly k: string;
  readonly w: string;
  readonly r?: 1;
  readonly u?: UnknownCause;
}

/** The verdicts journal: one JSON line per verdict, the level first; the last line of an address wins. */
class Journal {
  private readonly path: string;
  private lines: string[] = [];
  readonly entries = new Map<string, JournalEntry>();

  constructor(dir: string, level: OnlineLevel) {
    this.path = join(dir, ONLINE_JOURNAL);
    let isUsable = false;
    if (existsSync(this.path)) {
      const text = readFileSync(this.path, 'utf8').split('\n');
      try {
        isUsable = (JSON.parse(text[0] ?? '') as { level?: string }).level === level;
      } catch {
        isUsable = false;
      }
      if (isUsable)
        for (const line of text.slice(1)) {
          if (!line) continue;
          try {
            const { a, ...entry } = JSON.parse(line) as JournalEntry & { a: string };
            this.entries.set(a, entry);
          } catch {
            // A line cut short by a crash: that address is asked again.
          }
        }
    }
    if (!isUsable) writeFileSync(this.path, `${JSON.stringify({ level })}\n`, { mode: 0o600 });
  }

  add(address: string, entry: JournalEntry): void {
    this.lines.push(JSON.stringify({ a: address, ...entry }));
  }

  flush(): void {
    if (this.lines.length === 0) return;
    appendFileSync(this.path, `${this.lines.join('\n')}\n`);
    this.lines = [];
  }
}

export function removeJournal(dir: string): void {
  rmSync(join(dir, ONLINE_JOURNAL), { force: true });
}

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/**
 * Checks the addresses online (rowCounts[i]: rows holding addresses[i]) and sends every verdict back, the last
 * batch marked; returns early, sending nothing more, when the list stops being the one running.
 */
export async function runOnlinePhase(
  addresses: readonly string[],
  rowCounts: readonly number[],
  settings: OnlinePhaseSettings,
  context: OnlinePhaseContext,
): Promise<void> {
  const { verifier } = context;
  const journal = new Journal(context.dir, settings.level);
  const saved = context.saved;

  // Grouped by domain, in the order domains first appear.
  const byDomain = new Map<string, number[]>();
  addresses.forEach((address, index) => {
    const domain = domainOf(address);
    let group = byDomain.get(domain);
    if (!group) byDomain.set(domain, (group = []));
    group.push(index);
  });
  const left = new Map<string, number>();
  for (const [domain, group] of byDomain) left.set(domain, group.length);
  const order = [...byDomain.values()].flat();

  const started = Date.now();
  let rowsChecked = 0;
  let rowsCheckedHere = 0;
  const state: { -readonly [K in keyof ListOnlineState]: ListOnlineState[K] } = {
    rows_to_check: rowCounts.reduce((sum, n) => sum + n, 0),
    rows_checked: 0,
    domains_total: byDomain.size,
    domains_done: 0,
    rate_per_s: 0,
    retry_rows: 0,
    retry_at: null,
    retry_attempt: saved?.retry_attempt ?? 0,
    waiting_since: saved?.waiting_since ?? null,
    ...(saved?.finished_early ? { finished_early: true } : {}),
  };
  byDomain.clear();
  let lastState = 0;
  // Unknown rows by cause, for E8 (`online.unknown_causes`).
  const causes = new UnknownCauseTally();
  const saveState = (force = false) => {
    const now = Date.now();
    if (!force && now - lastState < STATE_EVERY_MS) return;
    lastState = now;
    state.rows_checked = rowsChecked;
    const lines = causes.lines();
    if (lines.length > 0) state.unknown_causes = lines;
    const seconds = (now - started) / 1000;
    state.rate_per_s = seconds > 0 ? Math.round((rowsCheckedHere / seconds) * 10) / 10 : 0;
    journal.flush();
    context.saveState({ ...state });
  };

  let pending: { -readonly [K in keyof OnlineVerdicts]: OnlineVerdicts[K] } = emptyVerdicts();
  let lastFlush = Date.now();
  const flush = (isLast: boolean) => {
    if (!context.isCurrent()) return;
    journal.flush();
    const verdicts = pending;
    pending = emptyVerdicts();
    lastFlush = Date.now();
    context.send(verdicts, isLast);
  };
  const emit = (index: number, entry: JournalEntry) => {
    pending.indexes.push(index);
    pending.codes.push(entry.c);
    pending.flags.push(entry.f);
    pending.validEmails.push(entry.v);
    pending.checked.push(entry.k);
    pending.whys.push(entry.w);
    rowsChecked += rowCounts[index] ?? 0;
    if (entry.c === 5) causes.add(entry.u, rowCounts[index] ?? 0);
    if (Date.now() - lastFlush >= settings.flushMs) flush(false);
    saveState();
  };
  const domainAnswered = (index: number) => {
    const domain = domainOf(addresses[index]);
    const count = (left.get(domain) ?? 1) - 1;
    left.set(domain, count);
    if (count === 0) state.domains_done++;
  };

  const retries = settings.maxWaitMs > 0 && !state.finished_early;
  /** Addresses waiting for a retry, with their last (unknown) answer. */
  const waiting = new Map<number, JournalEntry>();
  const check = async (index: number): Promise<void> => {
    const address = addresses[index];
    let verdict: OnlineVerdict;
    try {
      verdict = await verifier.verify(address, settings.verifyPolicy, {
        level: settings.level,
        budgetMs: settings.budgetMs,
        retryWithinBudget: false,
        queueMs: TURN_WAIT_MS,
      });
    } catch {
      // Never claim more than was checked: a check that failed is unknown.
      verdict = { address, code: 5, checked: 'offline', why: 'the check failed; nothing was learnt' };
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
    };
    if (!context.isCurrent()) return;
    journal.add(address, entry);
    if (entry.r && retries) {
      waiting.set(index, entry);
      return;
    }
    waiting.delete(index);
    rowsCheckedHere += rowCounts[index] ?? 0;
    emit(index, entry);
  };
  const runLanes = async (indexes: readonly number[], isFirst: boolean) => {
    let next = 0;
    const lane = async () => {
      while (next < indexes.length && context.isCurrent()) {
        const index = indexes[next++];
        await check(index);
        if (isFirst) domainAnswered(index);
      }
    };
    const lanes = Math.max(1, Math.min(settings.concurrency, indexes.length));
    await Promise.all(Array.from({ length: lanes }, lane));
  };

  // The first pass: what the journal already holds (a restart) is not asked again.
  const toCheck: number[] = [];
  for (const index of order) {
    const known = journal.entries.get(addresses[index]);
    if (!known) {
      toCheck.push(index);
      continue;
    }
    domainAnswered(index);
    if (known.r && retries) waiting.set(index, known);
    else emit(index, known);
  }
  journal.entries.clear();
  saveState(true);
  await runLanes(toCheck, true);

  // The retries of temporary failures, minutes apart, within the longest wait.
  let resumeAt = saved?.retry_at ? Date.parse(saved.retry_at) : undefined;
  const stop = AbortSignal.any([context.finish, context.stopping]);
  while (waiting.size > 0 && retries && context.isCurrent() && !context.finish.aborted) {
    const since = state.waiting_since ? Date.parse(state.waiting_since) : Date.now();
    state.waiting_since = new Date(since).toISOString();
    const waited = Date.now() - since;
    if (waited >= settings.maxWaitMs) break;
    const delay =
      state.retry_attempt === 0 ? settings.retryDelayMs : settings.retryDelayMs * LATER_DELAY_FACTOR;
    const at = resumeAt ?? Date.now() + Math.min(delay, settings.maxWaitMs - waited);
    resumeAt = undefined;
    state.retry_rows = [...waiting.keys()].reduce((sum, index) => sum + (rowCounts[index] ?? 0), 0);
    state.retry_at = new Date(at).toISOString();
    flush(false);
    saveState(true);
    await sleep(Math.max(0, at - Date.now()), stop);
    if (!context.isCurrent() || context.finish.aborted) break;
    state.retry_attempt++;
    state.retry_rows = 0;
    state.retry_at = null;
    saveState(true);
    const again = [...waiting.keys()].sort((a, b) =>
      domainOf(addresses[a]).localeCompare(domainOf(addresses[b])),
    );
    await runLanes(again, false);
  }
  // Stopped (the service is closing): the state stays as saved, and the list carries on at the next start.
  if (!context.isCurrent()) return;
  const isFinishedEarly = context.finish.aborted || state.finished_early === true;
  for (const [index, entry] of waiting) {
    const note = isFinishedEarly
      ? 'not asked again: the wait was ended (Finish now)'
      : retries
        ? `still temporary after ${state.retry_attempt} ${state.retry_attempt === 1 ? 'retry' : 'retries'}`
        : 'not asked again (no retries)';
    emit(index, { ...entry, w: `${entry.w} — ${note}` });
  }
  waiting.clear();
  state.retry_rows = 0;
  state.retry_at = null;
  if (isFinishedEarly) state.finished_early = true;
  saveState(true);
  flush(true);
}

function emptyVerdicts() {
  return {
    indexes: [] as number[],
    codes: [] as number[],
    flags: [] as number[],
    validEmails: [] as string[],
    checked: [] as string[],
    whys: [] as string[],
  };
}
