// What a mail server's answer to RCPT TO says about the mailbox. The rule that matters most: a rejection
// is "mailbox does not exist" (code 400) only when the server says exactly that. Big providers answer a
// prober they distrust with 5xx replies about the prober (its IP, its reputation, a blocklist, a policy);
// verifiers that read every 5xx as "no such user" call live Outlook and Yahoo mailboxes invalid. Those
// replies, and any 5xx we cannot read, are "unknown" here. A refusal of the verifier — its HELO name, its
// sender, its IP, its rate — is never retried as if it were temporary, whatever its code: only greylisting and
// other temporary failures are. See docs/online-checks.md.
import type { RefusalKind } from '../../ops/events.js';
import { causeOf, type UnknownCause } from '../../../shared/unknownCauses.js';
import type { SmtpReply } from './smtp.js';
import { replyText } from './smtp.js';

export type RcptClass =
  /** 250/251: the server takes mail for the address. */
  | 'accepted'
  /** The server says the mailbox does not exist (code 400). */
  | 'no-mailbox'
  /** Over quota (code 410). */
  | 'mailbox-full'
  /** The server does not take mail for the recipient's domain: relaying denied (code 420). */
  | 'domain-rejected'
  /** The server calls the address itself malformed (code 510). */
  | 'address-rejected'
  /**
   * A refusal aimed at us, 4xx or 5xx — HELO name, sender, blocklist, reputation, policy: says nothing of the
   * mailbox, and asking again soon will not change it.
   */
  | 'blocked'
  /** "Too many connections" or a rate limit on this machine: back off before connecting again. */
  | 'rate-limited'
  /** 4xx: greylisting, a busy server: try again later. */
  | 'transient'
  /** Too many recipients, or too many errors, in this conversation: ask again in a new one. */
  | 'session-limit'
  /** Any other answer: nothing can be concluded. */
  | 'ambiguous';

// A refusal of the recipient's domain by this server.
const DOMAIN_REJECTED =
  /relay(ing)? (access )?(is )?(denied|not (permitted|allowed))|unable to relay|(we )?do(es)? not relay|not permitted to relay|relay not permitted|not a local domain|domain (is )?not (served|hosted|handled|accepted|local|ours)|do(es)? not (accept|handle|receive) mail for|not our domain|no such domain|domain (not found|unknown)|unknown domain|recipient domain (not|is not|rejected)/;

// A refusal aimed at the sender: its address, its IP, its reputation, the volume of its mail. These
// appear on 4xx and 5xx alike, and never mean the mailbox is missing.
const ABOUT_US =
  /block(ed|list|ing)?\b|black ?list|spamhaus|barracuda|spamcop|\bs?rbl\b|dnsbl|reputation|banned|\bspam\b|abuse|client host|your (ip|host|server|network|address)|\bip address\b|sending ip|\[(\d{1,3}\.){3}\d{1,3}\]|sender (address )?(rejected|denied|blocked|verify)|too many invalid|unusual|suspicious|unauthenticated|not authori[sz]ed to send|access denied|policy|\b(sc|dy|ou|rp|as)-?\d{3}\b|\[(bl|ts|tss)\d+\]|\bptr\b|reverse dns|\brdns\b|\b(helo|ehlo)\b/;

// This machine connects (or sends) too often for the server. Gmail's 421 4.7.28 ("unusual rate"), Yahoo's
// 421 4.7.0 ("temporarily deferred due to unexpected volume"), Microsoft's 451 4.7.500 ("server busy") too.
const RATE =
  /too many (connections|concurrent|sessions|messages|recipients from)|connection rate|rate ?limit|rate of connections|connecting too (often|fast)|unusual rate|unexpected volume|server busy|recipient (address )?rate|too (often|fast|quickly)/;

// Which of the host's limits a refusal names (see refusedLimit).
const CONCURRENCY_WORDS = /concurren|simultaneous|parallel connections|too many (open |concurrent )?sessions/;
const RATE_WORDS =
  /connection rate|rate ?limit|rate of connections|connecting too (often|fast)|too (often|fast|quickly)|unusual rate|unexpected volume|server busy|per (second|minute|hour)|throttl/;
const RECIPIENT_RATE_WORDS = /too many recipients from|recipient (address )?rate/;
const RATE_CODES = new Set(['4.7.28', '4.7.500']);

// The HELO name or the envelope sender this machine gave.
const OUR_IDENTITY = /\b(helo|ehlo)\b|\bsender\b|mail from/;

// Greylisting says what it is; its replies may also name a "policy" or an IP, which do not make it a block.
const GREYLISTING = /gr[ae]y ?list/;

// The server says the mailbox is not there.
const NO_MAILBOX =
  /user unknown|unknown user|no such (user|mailbox|recipient|account|person|address)|(mailbox|user|recipient|account|address|e-?mail account)( name)? (does not exist|doesn't exist|not found|unknown|is disabled|has been disabled|is not valid|invalid)|invalid (mailbox|recipient|user|address)|not a valid (mailbox|recipient|user)|recipient (address )?(not found|unknown)|user not found|recipientnotfound|no mailbox|mailbox not found|doesn't have an? .*account|is not a known user|unrouteable address|undeliverable address/;

const MAILBOX_FULL =
  /mailbox (is )?full|over ?quota|quota (exceeded|full)|exceeded (storage|quota)|insufficient (system )?storage for (the )?(user|recipient|mailbox)/;

const SESSION_LIMIT = /too many recipients(?! from)|recipient limit|too many errors/;

/** Enhanced codes that name a missing or disabled mailbox: X.1.1 bad mailbox, X.1.10 null MX/recipient not found (Microsoft uses 5.1.10), X.1.6 moved, X.2.1 disabled. */
const NO_MAILBOX_ENHANCED = new Set(['5.1.1', '5.1.10', '5.1.6', '5.2.1']);

export function classifyRcpt(reply: SmtpReply): RcptClass {
  const { code } = reply;
  if (code === 250 || code === 251) return 'accepted';
  if (code < 400) return 'ambiguous';
  const text = replyText(reply).toLowerCase();
  const enhanced = reply.enhanced;
  if (SESSION_LIMIT.test(text) || enhanced === '4.5.3' || enhanced === '5.5.3') return 'session-limit';
  if (code < 500 && GREYLISTING.test(text)) return 'transient';
  if (RATE.test(text) || RATE_CODES.has(enhanced ?? '')) return 'rate-limited';
  // About our HELO name or our sender ("Sender address rejected: Domain not found" names no recipient domain).
  if (OUR_IDENTITY.test(text) || /^[45]\.1\.[78]$/.test(enhanced ?? '')) return 'blocked';
  // Mailbox full: X.2.2, or 552 without an enhanced code that says otherwise, or the words.
  if (enhanced === '5.2.2' || enhanced === '4.2.2') return 'mailbox-full';
  if (MAILBOX_FULL.test(text) && !ABOUT_US.test(text)) return 'mailbox-full';
  if (code === 552 && (enhanced === undefined || enhanced.startsWith('5.2.'))) return 'mailbox-full';
  if (DOMAIN_REJECTED.test(text) || enhanced === '5.1.2' || enhanced === '4.1.2')
    return code >= 500 ? 'domain-rejected' : 'transient';
  if (ABOUT_US.test(text)) return 'blocked';
  if (code < 500) return 'transient';
  if (enhanced !== undefined && NO_MAILBOX_ENHANCED.has(enhanced)) return 'no-mailbox';
  if (enhanced === undefined || enhanced.startsWith('5.1.') || enhanced === '5.0.0' || enhanced === '5.5.1')
    if (NO_MAILBOX.test(text)) return 'no-mailbox';
  if (enhanced === '5.1.3') return 'address-rejected';
  if (enhanced?.startsWith('5.7.')) return 'blocked';
  return 'ambiguous';
}

/** Whether a refusal at the greeting, EHLO or MAIL FROM is of this machine (not a busy server's 4xx). */
export function isRefusalOfUs(reply: SmtpReply): boolean {
  if (reply.code >= 500) return true;
  const text = replyText(reply).toLowerCase();
  if (GREYLISTING.test(text)) return false;
  return (
    RATE.test(text) ||
    OUR_IDENTITY.test(text) ||
    ABOUT_US.test(text) ||
    /^4\.1\.[78]$/.test(reply.enhanced ?? '')
  );
}

/**
 * Which of the host's limits a refusal names, from its words and enhanced code: `concurrency` (conversations at
 * once), `rate` (new connections a minute), `recipientRate` (recipients a minute: Postfix's "450 4.7.1 Error:
 * too many recipients from …"), `recipients` (a conversation's), `errors` ("too many errors"); `connections`
 * when it says "too many connections" without saying which: Postfix answers its connection count and its
 * connection rate limits with the same words (`421 4.7.0 … Error: too many connections from …`), so the caller
 * reads it by what it had open (concurrency when other conversations were open, else rate). Undefined: not a
 * limit.
 */
export function refusedLimit(
  reply: SmtpReply,
): 'concurrency' | 'rate' | 'recipientRate' | 'recipients' | 'errors' | 'connections' | undefined {
  const text = replyText(reply).toLowerCase();
  if (/too many errors/.test(text)) return 'errors';
  if (RECIPIENT_RATE_WORDS.test(text)) return 'recipientRate';
  if (
    /too many recipients|recipient limit/.test(text) ||
    reply.enhanced === '4.5.3' ||
    reply.enhanced === '5.5.3'
  )
    return 'recipients';
  if (CONCURRENCY_WORDS.test(text)) return 'concurrency';
  if (RATE_WORDS.test(text) || RATE_CODES.has(reply.enhanced ?? '')) return 'rate';
  if (/too many connections/.test(text)) return 'connections';
  if (RATE.test(text)) return 'rate';
  return undefined;
}

/** Whether a reply says this machine connects too often. */
export const isRateLimit = (reply: SmtpReply): boolean =>
  RATE.test(replyText(reply).toLowerCase()) || RATE_CODES.has(reply.enhanced ?? '');

/**
 * The cause of a refusal of this verifier by `host`: its HELO name, its sender, its rate, or a block (list,
 * reputation, policy). `stage` is where it came (EHLO, HELO, MAIL FROM, RCPT, greeting).
 */
export function refusalCause(host: string, reply: SmtpReply, stage: string): UnknownCause {
  const text = replyText(reply).toLowerCase();
  const enhanced = reply.enhanced ?? '';
  if (stage === 'EHLO' || stage === 'HELO' || /\b(helo|ehlo)\b/.test(text))
    return causeOf('helo-refused', host);
  if (stage === 'MAIL FROM' || /\bsender\b|mail from/.test(text) || /^[45]\.1\.[78]$/.test(enhanced))
    return causeOf('sender-refused', host);
  if (RATE.test(text)) return causeOf('rate-limited', host);
  return causeOf('blocked', host);
}

export type { RefusalKind };

/** The kinds of refusal of this verifier a mail server gives, as `status` and the metrics count them. */
export const REFUSAL_KINDS = [
  'concurrency',
  'rate',
  'policy',
  'block',
] as const satisfies readonly RefusalKind[];

const CONCURRENCY = /too many (connections|concurrent|sessions)|concurrent connections/;
// Words of a refusal that names a block list or this machine's reputation (not only a policy).
const BLOCK_LIST =
  /block(ed|list|ing)?\b|block list|black ?list|spamhaus|barracuda|spamcop|\bs?rbl\b|dnsbl|reputation|banned|listed|\[(bl|ts|tss)\d+\]/;

/** A block list a mail server named when it refused this machine's check (recorded for `mailsieve doctor`). */
export interface BlockListMet {
  /** The list's zone or name ("zen.spamhaus.org", "Spamhaus"), or the server's own list ("… own block list"). */
  readonly list: string;
  /** The source address the check went out from ('' the system's). */
  readonly source: string;
  readonly host: string;
  /** The server's reply, as it said it. */
  readonly reply: string;
  /** When (ISO 8601). */
  readonly at: string;
}

/** Zones named in a refusal: "blocked using zen.spamhaus.org", "listed in bl.spamcop.net", "… at b.barracudacentral.org". */
const NAMED_ZONE =
  /\b(?:blocked|listed|rejected|found)\s+(?:using|in|on|by|at)\s+([a-z0-9-]+(?:\.[a-z0-9-]+)+)/i;
const KNOWN_LISTS: readonly (readonly [RegExp, string])[] = [
  [/spamhaus/i, 'Spamhaus'],
  [/spamcop/i, 'SpamCop'],
  [/barracuda/i, 'Barracuda'],
  [/sorbs/i, 'SORBS'],
  [/uceprotect/i, 'UCEPROTECT'],
];

/**
 * The block list a refusal names: the zone it says it used, else a well-known list it names, else the
 * server's own (Microsoft's "S3140" and the like name no public list).
 */
export function blockListNamed(text: string, host: string): string {
  const zone = NAMED_ZONE.exec(text)?.[1];
  if (zone) return zone.toLowerCase().replace(/\.$/, '');
  for (const [words, name] of KNOWN_LISTS) if (words.test(text)) return name;
  return `${host}'s own block list`;
}

/**
 * Which limit a refusal of this verifier names: connections at once (`concurrency`), how often it connects or
 * sends (`rate`), a block list or the address's reputation (`block`), or anything else about it — its HELO
 * name, its sender, a policy (`policy`).
 */
export function refusalKind(reply: SmtpReply, stage: string): RefusalKind {
  const text = replyText(reply).toLowerCase();
  if (CONCURRENCY.test(text)) return 'concurrency';
  if (RATE.test(text)) return 'rate';
  const cause = refusalCause('', reply, stage).kind;
  if (cause !== 'helo-refused' && cause !== 'sender-refused' && BLOCK_LIST.test(text)) return 'block';
  return 'policy';
}
