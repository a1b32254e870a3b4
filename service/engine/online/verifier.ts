// createOnlineVerifier: the offline verdict, then — for an address the offline checks leave at "syntax
// OK" (10) — the domain's mail routing in DNS (20, 310, 325) and the mailbox on its mail server (50, 45,
// 400, 410, 420, 510), within a time budget. Anything that could not be checked ends as unknown (5) with
// the reason; an address is never called invalid on an answer that does not say so. One verifier holds the
// DNS and catch-all caches and the per-host connection limits for everything it checks: the whole service,
// or one list. See docs/online-checks.md.
import { randomInt } from 'node:crypto';
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { checkSyntax } from '../syntax.js';
import { CODE } from '../codes.js';
import { verifyOffline } from '../verify.js';
import type { Verdict, VerifyPolicy } from '../types.js';
import type { DomainType } from '../../../shared/api/verification.js';
import { describeStatusCode } from '../../../shared/api/codes.js';
import { evidenceTime } from '../../../shared/outcomes.js';
import { sleep, TtlCache, withDeadline, type SharedKnowledge } from './cache.js';
import {
  DnsClient,
  formatServer,
  MailResolver,
  systemDnsServers,
  type DnsServer,
  type MailRouting,
  type MxHost,
} from './dns.js';
import type { ChecksLevel, OnlineLevel } from './levels.js';
import { causeOf, type UnknownCause } from '../../../shared/unknownCauses.js';
import { hidePrivateAddresses, isPrivateAddress } from './privateAddress.js';
import { isRefusalOfUs, refusalCause, type BlockListMet, type RefusalKind } from './classify.js';
import { SmtpPool, type PacingHost } from './pool.js';
import { hostAllowance, releaseAllowance, type LearntLimits } from './allowance.js';
import {
  describeProxy,
  replyText,
  type SessionFailure,
  type SmtpReply,
  type SocksProxySettings,
} from './smtp.js';
import {
  identityConversation,
  identityFlags,
  sentence,
  type IdentityCheck,
  type IdentityProblem,
} from './identity.js';

export const ONLINE_CODE = {
  unknown: 5,
  domainOk: 20,
  catchAll: 45,
  mailboxOk: 50,
  noDomain: 310,
  noMail: 325,
  noMailbox: 400,
  mailboxFull: 410,
  domainRejected: 420,
  addressRejected: 510,
} as const;

export interface OnlineOptions {
  /** Told when a mail server refuses a check for a block list (the service keeps it for `mailsieve doctor`). */
  readonly onBlockList?: (met: BlockListMet) => void;
  /** DNS servers to ask (default: the system's). */
  readonly dnsServers?: readonly DnsServer[];
  /** Time for one DNS server to answer one query (default 1.5 s). */
  readonly dnsAttemptTimeoutMs?: number;
  /** Time for one DNS query over every server and retry (default 4 s). */
  readonly dnsQueryTimeoutMs?: number;
  /** Least time a DNS answer is kept, whatever its TTL (default 300 s): a list resolves a domain once. */
  readonly dnsMinTtlS?: number;
  /** How long a failed DNS lookup is remembered (default 30 s). */
  readonly dnsFailureTtlS?: number;
  /** The mail servers' port (default 25; tests use another). */
  readonly smtpPort?: number;
  /** The name given in EHLO (default: this machine's host name when it has a dot, else `localhost`). */
  readonly heloName?: string;
  /** The envelope sender of the probes (default `postmaster@<helo name>`). */
  readonly mailFrom?: string;
  /** Conversations open at once with one mail host (default 2). */
  readonly smtpConcurrency?: number;
  /** Conversations open at once in all (default 50). */
  readonly smtpMaxSessions?: number;
  /** Least time between two new connections to one mail host (default 250 ms). */
  readonly smtpPacingMs?: number;
  /**
   * Recipients asked in one conversation before it is closed (default 100: RFC 5321 §4.5.3.1.8 has servers
   * take at least that many); refused ones end it sooner (smtpMaxErrorsPerSession).
   */
  readonly smtpMaxRcptPerSession?: number;
  /**
   * Refused recipients after which a conversation ends and the next recipients go through a fresh one
   * (default 10: Postfix slows every reply after 10 errors in a session and disconnects after 20).
   */
  readonly smtpMaxErrorsPerSession?: number;
  /** New connections to one mail host within any minute (default 30). */
  readonly smtpMaxConnectsPerMinute?: number;
  /** How long a host that said "too many connections" (a rate) is left alone (default 60 s). */
  readonly smtpRateBackoffMs?: number;
  /**
   * After a refusal lowers one of a host's limits, how long until it has climbed back to the refused level
   * (default 90 s): a host that refused once is back at full pace after this, one that refuses again at the
   * same level waits twice as long before it is tried there again.
   */
  readonly smtpRecoverMs?: number;
  /** The window of the per-minute limits (default 60 s; tests shorten it). */
  readonly smtpWindowMs?: number;
  /** How long an idle conversation is kept for the next address (default 2 s). */
  readonly smtpIdleMs?: number;
  /** How long connecting may take before the next address or MX is tried (default 5 s). */
  readonly smtpConnectTimeoutMs?: number;
  /** First wait before asking again after a temporary refusal (greylisting), doubled each time (default 5 s). */
  readonly greylistDelayMs?: number;
  /** How long a host that could not be reached is skipped (default 60 s). */
  readonly hostDownTtlMs?: number;
  /** How long a host that refused this verifier by policy is skipped (default 10 min). */
  readonly hostBlockedTtlMs?: number;
  /** How long a domain's catch-all answer is kept (default 6 h). */
  readonly catchAllTtlMs?: number;
  /** Least time a catch-all probe is given, whatever the budget of the check that started it (default 5 s). */
  readonly catchAllProbeBudgetMs?: number;
  /** The domain whose mail servers the preflight tries (default gmail.com). */
  readonly probeDomain?: string;
  /** Reach the mail servers through a SOCKS5 proxy (the preflight too). */
  readonly smtpProxy?: SocksProxySettings | undefined;
  /**
   * The local address DNS queries and SMTP connections leave from (a verifier node's `--source-address`):
   * mail servers count connections and errors per source address.
   */
  readonly sourceAddress?: string | undefined;
  /**
   * What the verifier nodes of a team server share: a domain's MX answer and catch-all verdict, asked for by
   * one node for all of them (one probe per domain for the whole cluster).
   */
  readonly shared?: SharedKnowledge | undefined;
  /**
   * Whether mailbox checks may connect to mail hosts at loopback, private or link-local addresses (default
   * true: the desktop and a loopback `serve`, an office's own server). A service that listens off loopback,
   * and a team worker, refuse them unless started with `--allow-private-mx`: a client's domain could name any
   * host of this machine's network as its MX.
   */
  readonly allowPrivateMx?: boolean;
}

export interface OnlineVerifyOptions {
  readonly level: OnlineLevel;
  /** Time the whole check may take, in ms. */
  readonly budgetMs: number;
  /** Record what was asked and answered (DNS answers, the SMTP conversation). */
  readonly explain?: boolean;
  /**
   * Ask again within the budget after a temporary refusal (greylisting), 5 s, 10 s, … (default true). A list
   * that retries its temporary failures itself, minutes later, turns this off: the verdict then comes at once,
   * unknown and `retryable`.
   */
  readonly retryWithinBudget?: boolean;
  /**
   * How long the check may wait for its turn at a busy mail host, on top of `budgetMs` (default 0): a list's
   * addresses of one domain wait for the conversations the host's limits allow, and each one's `budgetMs`
   * counts from its turn, not from when it was queued.
   */
  readonly queueMs?: number;
  /**
   * Stops waiting for a turn at a busy mail host when it aborts (a list's job of a part, ending its slice): the
   * verdict is then `cancelled`, nothing having been asked of the mailbox. A conversation under way finishes.
   */
  readonly signal?: AbortSignal;
  /**
   * Stops waiting when the mail host allows this machine no new conversation for longer than this (ms), and
   * none open can take the check (its connections of the minute spent): the verdict is then `cancelled`, with
   * `turnAt`. A team node's check of a heavy domain, which another node, with room in its own allowance, may
   * ask now.
   */
  readonly leaveIfTurnAfterMs?: number;
}

/**
 * What decided a verdict checked online (issue 37: the evidence of every verdict, kept with a list's explain
 * rows): the host that answered and its reply, where the check went out from, and when.
 */
export interface VerdictEvidence {
  /** The mail host whose reply decided (SMTP), or the domain asked (DNS); '' when no host answered. */
  readonly host: string;
  /**
   * The deciding reply: an SMTP reply as code, enhanced code and text ("550 5.1.1 User unknown"), or the DNS
   * answer ("NXDOMAIN", "null MX", "no MX and no address", "MX mx1.example.com"); '' when none came (a
   * timeout, a host that could not be reached: the why says so).
   */
  readonly reply: string;
  /**
   * Where the check went out from: the `--source-address` ("192.0.2.7"), "socks5 proxy HOST:PORT" (never its
   * user or password; SMTP only: DNS does not go through the proxy), or "default route" (the machine's own
   * choice of address).
   */
  readonly source: string;
  /** When the deciding answer came (ISO 8601, to the second; a DNS answer may be a cached one). */
  readonly checkedAt: string;
}

export interface OnlineVerdict extends Verdict {
  /** How far the check went: offline (decided without the network), dns, or smtp. */
  readonly checked: ChecksLevel;
  /** What decided it, for a verdict checked online (dns or smtp); none for one decided offline. */
  readonly evidence?: VerdictEvidence;
  /** Why the answer is unknown (code 5), in words. */
  readonly reason?: string;
  /** What was checked and what answered, in one line ("mx1.example.com: 550 5.1.1 User unknown"). */
  readonly why?: string;
  /** An unknown that a later try may settle: greylisting and other temporary refusals, timeouts. */
  readonly retryable?: boolean;
  /** Why an unknown (code 5) is unknown, machine-readable (grouped for a list: shared/unknownCauses.ts). */
  readonly cause?: UnknownCause;
  /** The check stopped before its turn came (OnlineVerifyOptions.signal): no answer; ask it again later. */
  readonly cancelled?: boolean;
  /** For a check that left a far turn (OnlineVerifyOptions.leaveIfTurnAfterMs): when the turn was (epoch ms). */
  readonly turnAt?: number;
  /** What was asked and answered, when requested. Never holds anything secret. */
  readonly explain?: readonly string[];
}

export interface PreflightCheck {
  readonly ok: boolean;
  readonly detail: string;
}

export interface Preflight {
  readonly dns: PreflightCheck & { readonly servers: readonly string[] };
  readonly smtp: PreflightCheck & { readonly port: number };
  /** Whether mail servers take this machine's HELO name and sender (identity.ts). */
  readonly identity: IdentityCheck;
  readonly checkedAt: string;
}

export interface OnlineStats {
  readonly dnsQueries: number;
  readonly smtpSessions: number;
  readonly smtpRcpts: number;
  readonly catchAllProbes: number;
  readonly peakSmtpSessions: number;
  /** Refusals of this verifier by mail servers, by the limit they name. */
  readonly smtpRefusals: Readonly<Record<RefusalKind, number>>;
  /** Checks that answered unknown (5), by cause (a row waiting for a retry counts at each try). */
  readonly unknownAnswers: Readonly<Partial<Record<UnknownCause['kind'], number>>>;
}

export interface OnlineVerifier {
  /** Verifies one address: offline first, then as far online as `level` allows, within `budgetMs`. */
  verify(input: string, policy: VerifyPolicy, options: OnlineVerifyOptions): Promise<OnlineVerdict>;
  /**
   * Whether DNS answers and whether mail servers can be reached (cached for 30 s). `smtp: false` stops after
   * DNS (the SMTP check then says it was not tried); such an answer is not cached.
   */
  preflight(options?: { fresh?: boolean; smtp?: boolean }): Promise<Preflight>;
  readonly stats: OnlineStats;
  /**
   * The mail host whose allowance most checks wait on, when one holds many of them (a list's progress says
   * so): "mx.bigcorp.com", "allows this computer 2 connections at a time and about 30 a minute", 240.
   */
  pacing?(): PacingHost | undefined;
  readonly settings: {
    readonly dnsServers: readonly string[];
    readonly smtpPort: number;
    readonly heloName: string;
    readonly mailFrom: string;
    /** The SOCKS5 proxy as `socks5://HOST:PORT` (never its user or password). */
    readonly smtpProxy?: string;
  };
  /** Ends every connection and lookup in flight; checks still running end as unknown. */
  close(): Promise<void>;
}

const PARKING_DOMAINS: ReadonlySet<string> = new Set(
  readFileSync(new URL('./data/parking.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().toLowerCase())
    .filter(Boolean),
);

/** `parked`: the domain's mail goes to a parking service (by its MX host), or to `localhost`. */
export function isParkedRouting(routing: MailRouting): boolean {
  if (routing.kind !== 'mx') return false;
  return routing.hosts.some((host) => {
    if (host.name === 'localhost' || host.name.startsWith('localhost.')) return true;
    for (let name = host.name; ;) {
      if (PARKING_DOMAINS.has(name)) return true;
      const dot = name.indexOf('.');
      if (dot < 0) return false;
      name = name.slice(dot + 1);
    }
  });
}

function defaultHeloName(): string {
  const name = hostname().toLowerCase();
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(name) ? name : 'localhost';
}

/** A local part no one has: what a catch-all probe asks for. Looks like a person's, not like a probe. */
function randomLocalPart(): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  let local = '';
  for (let i = 0; i < 10; i++) local += letters[randomInt(letters.length)];
  return `${local}${randomInt(1000, 10000)}`;
}

/** A log nobody reads: what is pushed is dropped at once. */
class DiscardedLog extends Array<string> {
  override push(): number {
    return 0;
  }
}

/** The answer that decided a mailbox check: the host, its reply in words, and when it came (ms). */
interface Answer {
  readonly host: string;
  readonly reply: string;
  readonly at: number;
}

type MailboxOutcome =
  | { kind: 'accepted'; host: string; answer: Answer }
  /** The check stopped waiting for its turn (its signal aborted, or the turn was far): nothing was asked. */
  | { kind: 'cancelled'; turnAt?: number }
  | { kind: 'rejected'; code: number; reason: string; answer: Answer }
  | {
      kind: 'unknown';
      reason: string;
      cause: UnknownCause;
      wasRefused5xx?: boolean;
      retryable?: boolean;
      /** The reply that left it unknown (a refusal of this verifier, an ambiguous or temporary answer). */
      answer?: Answer;
    };

/** An SMTP reply as evidence: code, enhanced code and text on one line ("550 5.1.1 User unknown"). */
function replyEvidence(reply: SmtpReply): string {
  const text = replyText(reply);
  return [String(reply.code), reply.enhanced ?? '', text].filter((part) => part !== '').join(' ');
}

interface CatchAllAnswer {
  readonly isCatchAll: boolean | undefined;
  /** An inconclusive probe that a later try may settle (greylisted, timed out). */
  readonly retryable?: boolean;
  readonly cause?: UnknownCause;
  readonly summary: string;
  readonly log: readonly string[];
}

const failureWords = (failure: SessionFailure): string =>
  'detail' in failure ? failure.detail : `${failure.stage} answered ${failure.reply.lines.join(' ')}`;

export function createOnlineVerifier(options: OnlineOptions = {}): OnlineVerifier {
  const servers = options.dnsServers ?? systemDnsServers();
  const client = new DnsClient({
    servers,
    ...(options.dnsAttemptTimeoutMs !== undefined ? { attemptTimeoutMs: options.dnsAttemptTimeoutMs } : {}),
    ...(options.dnsQueryTimeoutMs !== undefined ? { queryTimeoutMs: options.dnsQueryTimeoutMs } : {}),
    ...(options.sourceAddress ? { sourceAddress: options.sourceAddress } : {}),
  });
  const resolver = new MailResolver(client, {
    ...(options.dnsMinTtlS !== undefined ? { minTtlS: options.dnsMinTtlS } : {}),
    ...(options.dnsFailureTtlS !== undefined ? { failureTtlS: options.dnsFailureTtlS } : {}),
    ...(options.shared ? { shared: options.shared } : {}),
  });
  const heloName = options.heloName ?? defaultHeloName();
  const proxy = options.smtpProxy;
  const mailFrom = options.mailFrom ?? `postmaster@${heloName}`;
  const smtpPort = options.smtpPort ?? 25;
  const allowPrivateMx = options.allowPrivateMx ?? true;
  const shared = options.shared;
  const pool = new SmtpPool({
    session: {
      port: smtpPort,
      heloName,
      mailFrom,
      connectTimeoutMs: options.smtpConnectTimeoutMs ?? 5000,
      ...(proxy ? { proxy } : {}),
      ...(options.sourceAddress ? { sourceAddress: options.sourceAddress } : {}),
    },
    perHostConcurrency: options.smtpConcurrency ?? 2,
    maxSessions: options.smtpMaxSessions ?? 50,
    pacingMs: options.smtpPacingMs ?? 250,
    maxRcptPerSession: options.smtpMaxRcptPerSession ?? 100,
    maxErrorsPerSession: options.smtpMaxErrorsPerSession ?? 10,
    maxConnectsPerMinute: options.smtpMaxConnectsPerMinute ?? 30,
    rateBackoffMs: options.smtpRateBackoffMs ?? 60_000,
    ...(options.smtpRecoverMs !== undefined ? { recoverMs: options.smtpRecoverMs } : {}),
    ...(options.smtpWindowMs !== undefined ? { connectWindowMs: options.smtpWindowMs } : {}),
    ...(shared?.loadLimits && shared.saveLimits
      ? {
          learnt: {
            load: (host: string) => shared.loadLimits!(host, smtpPort),
            save: (host: string, limits: LearntLimits) => shared.saveLimits!(host, smtpPort, limits),
          },
        }
      : {}),
    ...(options.onBlockList ? { onBlockList: options.onBlockList } : {}),
    idleMs: options.smtpIdleMs ?? 2000,
    downTtlMs: options.hostDownTtlMs ?? 60_000,
    blockTtlMs: options.hostBlockedTtlMs ?? 600_000,
  });
  const greylistDelayMs = options.greylistDelayMs ?? 5000;
  // Where checks go out from, as each verdict's evidence says it (never a proxy's user or password).
  const dnsSource = options.sourceAddress || 'default route';
  const smtpSource = proxy
    ? `socks5 proxy ${proxy.host.includes(':') ? `[${proxy.host}]` : proxy.host}:${proxy.port}`
    : dnsSource;
  const catchAll = new TtlCache<CatchAllAnswer>(200_000);
  const catchAllTtlMs = options.catchAllTtlMs ?? 6 * 3_600_000;
  const probeBudgetMs = options.catchAllProbeBudgetMs ?? 5000;
  let catchAllProbes = 0;
  const unknownAnswers: Partial<Record<UnknownCause['kind'], number>> = {};
  // The catch-all probe asks for the same made-up address of a domain each time (for a day), so that a retry
  // of a greylisted probe is the same (client, sender, recipient) triple the server has seen before.
  const probeAddresses = new TtlCache<string>(200_000);
  let closed = false;
  const closing = new AbortController();

  /**
   * Asks the domain's mail hosts, in preference order, about one recipient, retrying temporary refusals.
   * With `turnBudgetMs`, `deadline` bounds the wait for a turn at a busy host and each conversation has
   * `turnBudgetMs` from its turn.
   */
  async function askMailbox(
    rcpt: string,
    hosts: readonly MxHost[],
    deadline: number,
    log: string[],
    retryWithinBudget = true,
    turnBudgetMs?: number,
    /** Ask before the host's queue (the catch-all probe: every accepted address waits for it). */
    isUrgent = false,
    signal?: AbortSignal,
    leaveAfterMs?: number,
  ): Promise<MailboxOutcome> {
    let delay = greylistDelayMs;
    for (;;) {
      let temporary: { text: string; cause: UnknownCause; answer: Answer } | undefined;
      const failures: string[] = [];
      let failureCause: UnknownCause | undefined;
      let privateHosts = 0;
      for (const host of hosts) {
        if (Date.now() >= deadline) break;
        let ips = host.addresses;
        if (!ips) {
          const found = await resolver.hostAddresses(host.name, deadline);
          if (!found.ok) {
            log.push(`DNS: mail host ${host.name}: ${found.reason}`);
            failures.push(`${host.name}: ${found.reason}`);
            failureCause ??= causeOf('dns', host.name);
            continue;
          }
          ips = found.addresses;
          log.push(`DNS: ${host.name} → ${ips.join(', ')}`);
        }
        // The addresses the conversation may connect to, and no other (the pool connects to these IPs).
        if (!allowPrivateMx) {
          const refused = ips.filter(isPrivateAddress);
          if (refused.length > 0) {
            ips = ips.filter((ip) => !isPrivateAddress(ip));
            // The addresses are not named: a client would learn what this network's names resolve to.
            const why = `${host.name} is at a private address (this machine or a private network): not connected to`;
            log.push(`SMTP: ${why}`);
            if (ips.length === 0) {
              failures.push(why);
              failureCause ??= causeOf('private-address', host.name);
              privateHosts++;
              continue;
            }
          }
        }
        const outcome = await pool.rcpt(
          host.name,
          ips,
          rcpt,
          deadline,
          log,
          turnBudgetMs,
          isUrgent,
          signal,
          leaveAfterMs,
        );
        if (outcome.kind === 'cancelled') return outcome;
        if (outcome.kind === 'skipped') {
          if (outcome.state === 'blocked')
            return {
              kind: 'unknown',
              reason: `${host.name} refuses this verifier (${outcome.detail}); that says nothing of the mailbox`,
              cause: outcome.cause,
            };
          failures.push(`${host.name} could not be reached (${outcome.detail})`);
          failureCause ??= outcome.cause;
          continue;
        }
        if (outcome.kind === 'failure') {
          const { failure } = outcome;
          if (failure.kind === 'rejected' || (failure.kind === 'deferred' && isRefusalOfUs(failure.reply)))
            return {
              kind: 'unknown',
              reason: `${host.name} refused this verifier at ${failure.stage} (${failure.reply.lines.join(' ')}); that says nothing of the mailbox`,
              cause: refusalCause(host.name, failure.reply, failure.stage),
              answer: answerOf(host.name, failure.reply),
            };
          if (failure.kind === 'deferred') {
            temporary = {
              text: `${host.name} deferred at ${failure.stage}: ${failure.reply.lines.join(' ')}`,
              cause: causeOf('deferred', host.name),
              answer: answerOf(host.name, failure.reply),
            };
            continue;
          }
          if (failure.kind === 'rate-limited')
            return {
              kind: 'unknown',
              reason: failure.detail,
              cause: causeOf('rate-limited', host.name),
              answer: { host: host.name, reply: '', at: Date.now() },
            };
          if (failure.kind === 'timeout' && Date.now() >= deadline)
            return {
              kind: 'unknown',
              reason: `no answer from ${host.name} in the time allowed (${failure.detail})`,
              cause: causeOf('no-answer', host.name),
              retryable: true,
            };
          failures.push(`${host.name}: ${failureWords(failure)}`);
          failureCause ??= causeOf(failure.kind === 'unreachable' ? 'unreachable' : 'no-answer', host.name);
          continue;
        }
        const text = `${host.name} answered ${outcome.reply.lines.join(' ')}`;
        const answer = answerOf(host.name, outcome.reply);
        switch (outcome.class) {
          case 'accepted':
            return { kind: 'accepted', host: host.name, answer };
          case 'no-mailbox':
            return { kind: 'rejected', code: ONLINE_CODE.noMailbox, reason: text, answer };
          case 'mailbox-full':
            return { kind: 'rejected', code: ONLINE_CODE.mailboxFull, reason: text, answer };
          case 'domain-rejected':
            return { kind: 'rejected', code: ONLINE_CODE.domainRejected, reason: text, answer };
          case 'address-rejected':
            return { kind: 'rejected', code: ONLINE_CODE.addressRejected, reason: text, answer };
          case 'blocked':
          case 'rate-limited':
            // A refusal of this verifier (its HELO name, sender, IP, rate), 4xx or 5xx: not retried.
            return {
              kind: 'unknown',
              reason: `${text}: a refusal of this verifier, not of the mailbox`,
              cause: refusalCause(host.name, outcome.reply, 'RCPT'),
              wasRefused5xx: outcome.reply.code >= 500,
              answer,
            };
          case 'ambiguous':
            return {
              kind: 'unknown',
              reason: `${text}: an answer that does not say whether the mailbox exists`,
              cause: causeOf('ambiguous', host.name),
              wasRefused5xx: outcome.reply.code >= 500,
              answer,
            };
          case 'transient':
          case 'session-limit':
            temporary = { text, cause: causeOf('deferred', host.name), answer };
            continue;
        }
      }
      if (temporary === undefined && privateHosts === hosts.length)
        return {
          kind: 'unknown',
          reason: `${failures.join('; ')} (this service checks mailboxes at public addresses only)`,
          cause: causeOf('private-address', hosts[0]?.name),
        };
      if (temporary === undefined)
        return {
          kind: 'unknown',
          reason: failures.length > 0 ? failures.join('; ') : 'no mail server answered in the time allowed',
          cause: failureCause ?? causeOf('no-answer', hosts[0]?.name),
          // Hosts that could not be reached or timed out may answer later; none of them refused us.
          retryable: true,
        };
      // Greylisting (RFC 6647) and other temporary refusals: ask again later, while the budget lasts.
      if (!retryWithinBudget)
        return {
          kind: 'unknown',
          reason: `${temporary.text} — a temporary refusal (greylisting?)`,
          cause: temporary.cause,
          retryable: true,
          answer: temporary.answer,
        };
      if (Date.now() + delay >= deadline || closed)
        return {
          kind: 'unknown',
          reason: `${temporary.text} — a temporary refusal (greylisting?), and no time is left to ask again`,
          cause: temporary.cause,
          retryable: true,
          answer: temporary.answer,
        };
      log.push(`SMTP: temporary refusal (${replyTextOf(temporary.text)}); asking again in ${delay} ms`);
      await sleep(delay, closing.signal);
      delay *= 2;
    }
  }

  function answerOf(host: string, reply: SmtpReply): Answer {
    return { host, reply: replyEvidence(reply), at: Date.now() };
  }

  function replyTextOf(text: string): string {
    return text.length > 160 ? `${text.slice(0, 160)}…` : text;
  }

  /** Whether the domain accepts any address: one probe per domain, cached, shared by concurrent checks. */
  async function isCatchAll(
    domain: string,
    hosts: readonly MxHost[],
    deadline: number,
    log: string[],
    retryWithinBudget: boolean,
    turnBudgetMs?: number,
  ): Promise<CatchAllAnswer> {
    const probeDomain = async (): Promise<CatchAllAnswer> => {
      catchAllProbes++;
      const probeLog: string[] = [];
      let probe = probeAddresses.peek(domain);
      if (probe === undefined) {
        probe = `${randomLocalPart()}@${domain}`;
        probeAddresses.set(domain, probe, 24 * 3_600_000);
      }
      probeLog.push(`Catch-all probe: asking for ${probe}, an address no one has`);
      const outcome = await askMailbox(
        probe,
        hosts,
        Math.max(deadline, Date.now() + probeBudgetMs),
        probeLog,
        retryWithinBudget,
        turnBudgetMs,
        true,
      );
      // (The probe is shared by every check of the domain: it is never cancelled.)
      if (outcome.kind === 'cancelled') throw new Error('a catch-all probe was cancelled');
      if (outcome.kind === 'accepted')
        return {
          isCatchAll: true,
          summary: `the domain accepts any address (a random one was accepted)`,
          log: probeLog,
        };
      if (outcome.kind === 'rejected' || outcome.wasRefused5xx)
        return {
          isCatchAll: false,
          summary: `the domain refuses unknown addresses (a random one was refused)`,
          log: probeLog,
        };
      return {
        isCatchAll: undefined,
        summary: `the catch-all probe was inconclusive: ${outcome.reason}`,
        log: probeLog,
        cause: outcome.cause,
        ...(outcome.retryable ? { retryable: true } : {}),
      };
    };
    // A probe deferred for a list's later retry is not kept: the retry asks again.
    const ttlOf = (answer: CatchAllAnswer) =>
      answer.isCatchAll === undefined
        ? answer.retryable && !retryWithinBudget
          ? 0
          : (options.dnsFailureTtlS ?? 30) * 1000
        : catchAllTtlMs;
    const shared = options.shared;
    const { value, cached } = catchAll.getOrLoad(
      domain,
      shared ? () => shared.load('catchall', domain, probeDomain, ttlOf) : probeDomain,
      ttlOf,
    );
    const answer = await withDeadline(value, deadline, () => ({
      isCatchAll: undefined,
      summary: 'the catch-all probe did not finish in the time allowed',
      log: [],
      cause: causeOf('no-answer', hosts[0]?.name),
    }));
    if (cached) log.push(`Catch-all (cached for ${domain}): ${answer.summary}`);
    else log.push(...answer.log, `Catch-all: ${answer.summary}`);
    return answer;
  }

  async function verify(
    input: string,
    policy: VerifyPolicy,
    verifyOptions: OnlineVerifyOptions,
  ): Promise<OnlineVerdict> {
    const started = Date.now();
    const queueMs = Math.max(0, verifyOptions.queueMs ?? 0);
    // DNS has the budget; the mailbox may also wait `queueMs` for its turn at a busy host.
    const deadline = started + Math.max(0, verifyOptions.budgetMs);
    const mailboxDeadline = deadline + queueMs;
    // The transcript is kept only when asked for: a list checks hundreds of thousands of addresses.
    const log: string[] = verifyOptions.explain ? [] : new DiscardedLog();
    const offline = verifyOffline(input, policy);
    const finish = (verdict: Omit<OnlineVerdict, 'explain'>): OnlineVerdict => {
      if (verdict.code === ONLINE_CODE.unknown && verdict.cause && !verdict.cancelled)
        unknownAnswers[verdict.cause.kind] = (unknownAnswers[verdict.cause.kind] ?? 0) + 1;
      if (!verifyOptions.explain) return verdict;
      // A service that refuses private mail hosts faces clients: its explanation names no private address a
      // client's domain led to (an MX's glue or lookup, the domain's own address). Its reasons name none
      // either: it connects to public addresses only, and says a host is private without its addresses.
      return { ...verdict, explain: allowPrivateMx ? log : log.map(hidePrivateAddresses) };
    };
    const syntax = offline.code === CODE.syntaxOk ? checkSyntax(offline.address) : undefined;
    if (!syntax?.ok) {
      log.push(
        `Decided offline: ${offline.code} ${describeStatusCode(offline.code)}; neither DNS nor a mail server was asked`,
      );
      return finish({
        ...offline,
        checked: 'offline',
        why: `decided offline: ${describeStatusCode(offline.code)}`,
      });
    }
    const retryWithinBudget = verifyOptions.retryWithinBudget ?? true;
    // The evidence of a verdict checked online: DNS answers went out from the source address, mailbox
    // checks from it or through the proxy.
    const dnsEvidence = (reply: string): VerdictEvidence => ({
      host: syntax.asciiDomain,
      reply,
      source: dnsSource,
      checkedAt: evidenceTime(Date.now()),
    });
    const smtpEvidence = (answer: Answer): VerdictEvidence => ({
      host: answer.host,
      reply: answer.reply,
      source: smtpSource,
      checkedAt: evidenceTime(answer.at),
    });
    const unknown = (
      reason: string,
      checked: ChecksLevel,
      cause: UnknownCause,
      domainType?: DomainType,
      retryable = false,
      evidence?: VerdictEvidence,
    ): OnlineVerdict => {
      log.push(`Result: unknown (5) — ${reason}`);
      const { domainType: _offlineType, ...rest } = offline;
      const type = domainType ?? offline.domainType;
      return finish({
        ...rest,
        ...(type ? { domainType: type } : {}),
        code: ONLINE_CODE.unknown,
        checked,
        reason,
        why: reason,
        cause,
        ...(retryable ? { retryable: true } : {}),
        ...(evidence ? { evidence } : {}),
      });
    };
    if (closed) return unknown('the verifier is shutting down', 'offline', causeOf('other'));
    const { routing, notes } = await resolver.mailRouting(syntax.asciiDomain, deadline);
    log.push(...notes);
    switch (routing.kind) {
      case 'unknown':
        return unknown(routing.reason, 'dns', causeOf('dns'), undefined, false, dnsEvidence(''));
      case 'nxdomain':
        return finish({
          ...offline,
          code: ONLINE_CODE.noDomain,
          checked: 'dns',
          why: `DNS: ${syntax.asciiDomain} does not exist (NXDOMAIN)`,
          evidence: dnsEvidence('NXDOMAIN'),
        });
      case 'null-mx':
        return finish({
          ...offline,
          code: ONLINE_CODE.noMail,
          checked: 'dns',
          why: `DNS: ${syntax.asciiDomain} has a null MX (MX 0 .): the domain takes no mail`,
          evidence: dnsEvidence('null MX'),
        });
      case 'no-mail':
        return finish({
          ...offline,
          code: ONLINE_CODE.noMail,
          checked: 'dns',
          why: `DNS: ${syntax.asciiDomain} has no MX and no address: the domain takes no mail`,
          evidence: dnsEvidence('no MX and no address'),
        });
      case 'mx':
      case 'implicit':
        break;
    }
    // `biz`: a domain with mail servers of its own that no list of ours names; `parked` by its MX hosts.
    const domainType: DomainType = offline.domainType ?? (isParkedRouting(routing) ? 'parked' : 'biz');
    // A domain that receives mail is not "corrected" to a provider's spelling (the address has no syntax
    // error here: code 10 offline): it is someone's real domain.
    const { corrections: spelling, ...offlineUncorrected } = offline;
    if (spelling) log.push(`${syntax.asciiDomain} receives mail: no spelling correction is offered`);
    const found = { ...offlineUncorrected, domainType };
    const mailHosts =
      routing.kind === 'implicit'
        ? `no MX; mail goes to the domain's own address`
        : `MX ${routing.hosts.map((host) => host.name).join(', ')}`;
    if (verifyOptions.level === 'dns')
      return finish({
        ...found,
        code: ONLINE_CODE.domainOk,
        checked: 'dns',
        why: `DNS: ${syntax.asciiDomain} ${mailHosts}; the mailbox was not asked`,
        evidence: dnsEvidence(
          routing.kind === 'implicit'
            ? 'no MX; the domain has an address'
            : `MX ${routing.hosts.map((host) => host.name).join(' ')}`,
        ),
      });

    const rcpt = `${syntax.local}@${syntax.asciiDomain}`;
    const mailbox = await askMailbox(
      rcpt,
      routing.hosts,
      mailboxDeadline,
      log,
      retryWithinBudget,
      queueMs > 0 ? verifyOptions.budgetMs : undefined,
      false,
      verifyOptions.signal,
      verifyOptions.leaveIfTurnAfterMs,
    );
    if (mailbox.kind === 'cancelled')
      return {
        ...unknown(
          'the check stopped before its turn at the mail server came',
          'smtp',
          causeOf('other'),
          domainType,
          true,
        ),
        cancelled: true,
        ...(mailbox.turnAt !== undefined ? { turnAt: mailbox.turnAt } : {}),
      };
    if (mailbox.kind === 'rejected')
      return finish({
        ...found,
        code: mailbox.code,
        checked: 'smtp',
        why: mailbox.reason.replace(' answered ', ': '),
        evidence: smtpEvidence(mailbox.answer),
      });
    if (mailbox.kind === 'unknown')
      return unknown(
        mailbox.reason,
        'smtp',
        mailbox.cause,
        domainType,
        mailbox.retryable === true,
        // No reply came (hosts unreachable, silent): the host tried, and when it was given up.
        smtpEvidence(mailbox.answer ?? { host: mailbox.cause.host ?? '', reply: '', at: Date.now() }),
      );
    const probe = await isCatchAll(
      syntax.asciiDomain,
      routing.hosts,
      queueMs > 0 ? Math.max(deadline, Date.now() + queueMs) : deadline,
      log,
      retryWithinBudget,
      queueMs > 0 ? Math.min(verifyOptions.budgetMs, probeBudgetMs) : undefined,
    );
    // The mailbox's own reply decides 50 and 45 (the catch-all probe says how far to trust it: the why).
    if (probe.isCatchAll === undefined)
      return unknown(
        `the mailbox was accepted, but ${probe.summary}`,
        'smtp',
        probe.cause ?? causeOf('other'),
        domainType,
        probe.retryable === true || probe.summary.includes('did not finish'),
        smtpEvidence(mailbox.answer),
      );
    return finish({
      ...found,
      code: probe.isCatchAll ? ONLINE_CODE.catchAll : ONLINE_CODE.mailboxOk,
      checked: 'smtp',
      why: `${mailbox.host}: the mailbox was accepted; ${probe.summary}`,
      evidence: smtpEvidence(mailbox.answer),
    });
  }

  let preflightCache: { at: number; value: Promise<Preflight> } | undefined;

  async function runPreflight(trySmtp = true): Promise<Preflight> {
    const serverList = client.servers.map(formatServer);
    const asked = serverList.join(', ') || 'none';
    const probeDomain = options.probeDomain ?? 'gmail.com';
    const smtpNotTried = (why: string) => ({ ok: false, port: smtpPort, detail: `Not tried: ${why}` });
    let flags: IdentityProblem[] = identityFlags(heloName, mailFrom, undefined);
    const identityOf = (
      found: { detail: string; refusedAt?: IdentityCheck['refusedAt']; problem?: IdentityProblem },
      transcript: readonly string[] = [],
    ): IdentityCheck => {
      // The server's refusal first; a flag of the same setting says nothing more.
      const problems = found.problem
        ? [found.problem, ...flags.filter((flag) => flag.option !== found.problem?.option)]
        : flags;
      const isTried = !found.detail.startsWith('Not tried');
      return {
        ok: isTried && problems.length === 0,
        detail: [
          ...problems.map((problem) => sentence(problem.text)),
          ...(found.problem ? [] : [found.detail]),
        ].join(' '),
        heloName,
        mailFrom,
        ...(found.refusedAt ? { refusedAt: found.refusedAt } : {}),
        problems,
        transcript,
      };
    };
    const done = (dns: PreflightCheck, smtp: PreflightCheck, identity?: IdentityCheck): Preflight => ({
      dns: { ...dns, servers: serverList },
      smtp: { ...smtp, port: smtpPort },
      identity: identity ?? identityOf({ detail: `Not tried: ${smtp.detail.replace(/^Not tried: /, '')}` }),
      checkedAt: new Date().toISOString(),
    });
    const unknownNote = 'DNS and SMTP checks will end as unknown (5).';
    const mx = await client.query(probeDomain, 'MX');
    if (!mx.ok)
      return done(
        { ok: false, detail: `DNS does not answer (asked ${asked}): ${mx.reason}. ${unknownNote}` },
        smtpNotTried('DNS does not answer, so no mail server can be found.'),
      );
    if (mx.rcode === 'NXDOMAIN') {
      const tld = probeDomain.slice(probeDomain.lastIndexOf('.') + 1);
      const root = await client.query(`${tld}.`, 'SOA');
      const isolated = !root.ok || root.rcode === 'NXDOMAIN';
      return done(
        {
          ok: false,
          detail: isolated
            ? `${mx.server} answers, but says even the top-level domain .${tld} does not exist: it cannot see the internet (no network?). ${unknownNote}`
            : `${mx.server} says ${probeDomain} does not exist; choose another probe domain.`,
        },
        smtpNotTried('no mail server of the probe domain was found.'),
      );
    }
    const records = mx.answers.flatMap((a) =>
      a.type === 'MX' && a.data.exchange !== '.' && a.data.exchange !== '' ? [a.data] : [],
    );
    records.sort((a, b) => (a.preference ?? 0) - (b.preference ?? 0));
    const host = records[0]?.exchange.toLowerCase().replace(/\.$/, '');
    const dns = { ok: true, detail: `DNS answers (${mx.server}): ${probeDomain} MX ${host ?? '(none)'}` };
    if (!host) return done(dns, smtpNotTried(`${probeDomain} has no MX record to try.`));
    if (!trySmtp) return done(dns, smtpNotTried('only DNS was asked about.'));
    // Before any probe: does the sender's domain have an MX or address record? (Servers check it.)
    const senderDomain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1).toLowerCase();
    if (senderDomain.includes('.')) {
      const sender = await resolver.mailRouting(senderDomain, Date.now() + 3000);
      flags = identityFlags(
        heloName,
        mailFrom,
        sender.routing.kind === 'unknown' ? undefined : sender.routing,
      );
    }
    const addresses = await resolver.hostAddresses(host, Date.now() + 4000);
    if (!addresses.ok)
      return done(dns, smtpNotTried(`the address of ${host} was not found (${addresses.reason}).`));
    const ip = addresses.addresses[0];
    // The conversation counts against the host's allowance like any other (a list of the probe domain follows).
    const allowance = hostAllowance(host, smtpPort, pool.sourceKey, pool.allowanceOptions);
    if (!(await allowance.take(Date.now() + 6000))) {
      releaseAllowance(host, smtpPort, pool.sourceKey, allowance);
      return done(
        dns,
        smtpNotTried(
          `${host} already has as many conversations with this machine as it allows (${allowance.describe()}); not asked again now.`,
        ),
      );
    }
    const talk = await identityConversation(
      host,
      ip,
      probeDomain,
      {
        port: smtpPort,
        heloName,
        mailFrom,
        connectTimeoutMs: 3000,
        ...(proxy ? { proxy } : {}),
        ...(options.sourceAddress ? { sourceAddress: options.sourceAddress } : {}),
      },
      6000,
      allowance,
    ).finally(() => releaseAllowance(host, smtpPort, pool.sourceKey, allowance));
    const via = proxy ? ` through ${describeProxy(proxy)}` : '';
    if (talk.reached)
      return done(
        dns,
        { ok: true, detail: `Port ${smtpPort} reachable${via}: ${host} [${ip}] greeted "${talk.greeting}"` },
        identityOf(
          {
            detail: `${host} took the HELO name '${heloName}' and the sender ${mailFrom} (${talk.note}).`,
            ...(talk.refusedAt ? { refusedAt: talk.refusedAt } : {}),
            ...(talk.problem ? { problem: talk.problem } : {}),
          },
          talk.transcript,
        ),
      );
    return done(dns, {
      ok: false,
      detail: proxy
        ? `Cannot talk to port ${smtpPort} of ${host} [${ip}]${via}: ${talk.detail}. SMTP checks will end as unknown (5) until the proxy works.`
        : `Cannot talk to port ${smtpPort} of ${host} [${ip}]: ${talk.detail}. Outbound port 25 is often blocked by ` +
          `internet providers and clouds; SMTP checks will end as unknown (5) (use --checks dns to stop at DNS, or a SOCKS5 proxy).`,
    });
  }

  return {
    verify,
    async preflight({ fresh = false, smtp = true } = {}) {
      if (!smtp) return runPreflight(false);
      const now = Date.now();
      if (fresh || !preflightCache || now - preflightCache.at > 30_000)
        preflightCache = { at: now, value: runPreflight() };
      return preflightCache.value;
    },
    pacing: () => pool.pacing(),
    get stats(): OnlineStats {
      return {
        dnsQueries: client.stats.queries,
        smtpSessions: pool.stats.sessions,
        smtpRcpts: pool.stats.rcpts,
        catchAllProbes,
        peakSmtpSessions: pool.stats.peakSessions,
        smtpRefusals: { ...pool.stats.refusals },
        unknownAnswers: { ...unknownAnswers },
      };
    },
    settings: {
      dnsServers: servers.map(formatServer),
      smtpPort,
      heloName,
      mailFrom,
      ...(proxy ? { smtpProxy: describeProxy(proxy) } : {}),
    },
    close() {
      closed = true;
      closing.abort();
      pool.close();
      client.close();
      resolver.clear();
      catchAll.clear();
      return Promise.resolve();
    },
  };
}
