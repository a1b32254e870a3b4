// Why online checks left rows unknown (code 5), machine-readable, and grouped for a list: "412 unknown:
// mx.acme-mail.com refused this machine's HELO name — set --helo-name". Each online verdict of code 5 carries
// one cause (kind, the mail host or DNS server concerned, the setting that would change it) beside its `why`;
// a list counts its unknown rows by cause, largest first (E8's `online.unknown_causes`), and each front end
// says the setting in its own words (a CLI flag, a field of the app's Connection screen). Pure: no I/O.
import { z } from 'zod';
import { formatCount } from './count.js';

export const UNKNOWN_CAUSE_KINDS = [
  /** The mail server refused the HELO/EHLO name this machine gave. */
  'helo-refused',
  /** The mail server refused the envelope sender (MAIL FROM), or its domain. */
  'sender-refused',
  /** A block list, reputation or policy refusal of this machine (5.7.x and the like). */
  'blocked',
  /** The server limits how often this machine may connect ("too many connections"), past the back-off. */
  'rate-limited',
  /** Still deferred (greylisting, a busy server) when the retries ended. */
  'deferred',
  /** No answer in the time allowed. */
  'no-answer',
  /** The mail server could not be reached (refused or unreachable: port 25 blocked?). */
  'unreachable',
  /** An answer that does not say whether the mailbox exists. */
  'ambiguous',
  /** DNS did not answer. */
  'dns',
  /**
   * The mail host is at a loopback, private or link-local address, which a service reachable from other
   * machines does not connect to unless its operator allows it (`--allow-private-mx`).
   */
  'private-address',
  /** Anything else (the verifier was stopping, a check failed). */
  'other',
] as const;
export type UnknownCauseKind = (typeof UNKNOWN_CAUSE_KINDS)[number];

/** The setting that would change the answer (as the CLI's flags name them, with underscores). */
export const CAUSE_OPTIONS = ['helo_name', 'mail_from', 'smtp_proxy', 'dns_servers'] as const;
export type CauseOption = (typeof CAUSE_OPTIONS)[number];

export const unknownCauseSchema = z.object({
  kind: z.enum(UNKNOWN_CAUSE_KINDS),
  /** The mail host (or DNS server) concerned, when one is. */
  host: z.string().optional(),
  option: z.enum(CAUSE_OPTIONS).optional(),
});
export type UnknownCause = z.infer<typeof unknownCauseSchema>;

/** One line of a list's unknown rows by cause (E8 `online.unknown_causes`). */
export const unknownCauseCountSchema = z.object({
  count: z.number().int().nonnegative(),
  cause: unknownCauseSchema,
  /** The cause in words, without the setting ("mx.example.net refused this machine's HELO name"). */
  text: z.string(),
});
export type UnknownCauseCount = z.infer<typeof unknownCauseCountSchema>;

const OPTION_OF: Partial<Record<UnknownCauseKind, CauseOption>> = {
  'helo-refused': 'helo_name',
  'sender-refused': 'mail_from',
  dns: 'dns_servers',
};

/** A cause with the setting that goes with its kind. */
export function causeOf(kind: UnknownCauseKind, host?: string): UnknownCause {
  const option = OPTION_OF[kind];
  return { kind, ...(host ? { host } : {}), ...(option ? { option } : {}) };
}

/** The cause in words, without the setting. */
export function describeCause(cause: UnknownCause): string {
  const host = cause.host ?? 'the mail server';
  switch (cause.kind) {
    case 'helo-refused':
      return `${host} refused this machine's HELO name`;
    case 'sender-refused':
      return `${host} refused the sender address (MAIL FROM)`;
    case 'blocked':
      return `${host} refused this machine (block list, reputation or policy)`;
    case 'rate-limited':
      return `${host} limits how often this machine may connect`;
    case 'deferred':
      return `${host} still deferred them (greylisting or busy) when the retries ended`;
    case 'no-answer':
      return `no answer from ${host}`;
    case 'unreachable':
      return `${host} could not be reached`;
    case 'ambiguous':
      return `${host} gave answers that do not say whether the mailbox exists`;
    case 'dns':
      return cause.host ? `DNS did not answer (${cause.host})` : 'DNS did not answer';
    case 'private-address':
      return `${host} is at a private address (this machine or a private network), which this service does not connect to`;
    case 'other':
      return 'other reasons (see the explanation of each row)';
  }
}

/** The CLI's words for a setting. */
export const CLI_OPTION_WORDS: Record<CauseOption, string> = {
  helo_name: 'set --helo-name',
  mail_from: 'set --mail-from',
  smtp_proxy: 'use --smtp-proxy',
  dns_servers: 'set --dns-servers',
};

/** The app's words for a setting (its Connection screen). */
export const APP_OPTION_WORDS: Record<CauseOption, string> = {
  helo_name: 'set the HELO name under Connection → Checks',
  mail_from: 'set the sender address under Connection → Checks',
  smtp_proxy: 'set a SOCKS5 proxy under Connection → Checks',
  dns_servers: 'set the DNS servers under Connection → Checks',
};

/** "412 unknown: mx.example.net refused this machine's HELO name — set --helo-name". */
export function formatCauseLine(line: UnknownCauseCount, words: Record<CauseOption, string>): string {
  const option = line.cause.option ? ` — ${words[line.cause.option]}` : '';
  return `${formatCount(line.count)} unknown: ${line.text}${option}`;
}

const keyOf = (cause: UnknownCause) => `${cause.kind}\u0000${cause.host ?? ''}`;

/** Counts of unknown rows by cause, as a list adds them up. */
export class UnknownCauseTally {
  private readonly counts = new Map<string, { cause: UnknownCause; count: number }>();

  /** NOTE: mutates the tally. */
  add(cause: UnknownCause | undefined, rows: number): void {
    if (rows <= 0) return;
    const counted = cause ?? causeOf('other');
    const key = keyOf(counted);
    const entry = this.counts.get(key);
    if (entry) entry.count += rows;
    else this.counts.set(key, { cause: counted, count: rows });
  }

  /**
   * The lines, largest first; past `max` lines the smallest are summed into one "other reasons" line, so a
   * list of a thousand dead domains says so in a few lines.
   */
  lines(max = 8): UnknownCauseCount[] {
    const sorted = [...this.counts.values()].sort(
      (a, b) => b.count - a.count || keyOf(a.cause).localeCompare(keyOf(b.cause)),
    );
    const kept = sorted.length > max ? sorted.slice(0, max - 1) : sorted;
    const rest = sorted.length > max ? sorted.slice(max - 1) : [];
    const lines = kept.map(({ cause, count }) => ({ count, cause, text: describeCause(cause) }));
    if (rest.length > 0) {
      const cause = causeOf('other');
      lines.push({ count: rest.reduce((sum, e) => sum + e.count, 0), cause, text: describeCause(cause) });
    }
    return lines;
  }
}
