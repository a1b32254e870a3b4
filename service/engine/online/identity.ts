// The verifier's identity, as mail servers judge it before any mailbox: the HELO name and the envelope
// sender. Checked twice before a list: on this machine (a HELO name that is not fully-qualified, a sender
// whose domain has no MX or address record, flagged before any probe is sent), then in a real conversation
// with a mail server of the probe domain — EHLO with the HELO name, MAIL FROM the sender, RCPT TO its
// postmaster (RFC 5321 §4.5.1 requires that mailbox), RSET, QUIT — which says in words which step was
// refused and what to set. See docs/online-checks.md.
import type { CauseOption } from '../../../shared/unknownCauses.js';
import { heloNameProblem, senderDomainProblem } from '../../../shared/verifierIdentity.js';
import { classifyRcpt, refusalCause } from './classify.js';
import type { MailRouting } from './dns.js';
import { formatReply, SmtpSession, type SessionConfig } from './smtp.js';

export interface IdentityProblem {
  /** What is wrong and what to do, in words (no CLI flag: each front end names its own setting). */
  readonly text: string;
  readonly option: CauseOption;
}

export interface IdentityCheck {
  /** The mail server took the HELO name, the sender and its postmaster, and nothing was flagged. */
  readonly ok: boolean;
  readonly detail: string;
  readonly heloName: string;
  readonly mailFrom: string;
  /** The step the mail server refused, when it did. */
  readonly refusedAt?: 'HELO' | 'MAIL FROM' | 'RCPT';
  /** Flags raised on this machine, then the server's refusal: each with the setting that changes it. */
  readonly problems: readonly IdentityProblem[];
  /** The conversation, as explain shows one. */
  readonly transcript: readonly string[];
}

/**
 * What this machine can tell before any probe: the HELO name, and whether the sender's domain has an MX or
 * address record (`senderRouting`: its mail routing as the verifier's DNS sees it; undefined when DNS did not
 * answer, which is not the sender's fault).
 */
export function identityFlags(
  heloName: string,
  mailFrom: string,
  senderRouting: MailRouting | undefined,
): IdentityProblem[] {
  const problems: IdentityProblem[] = [];
  const helo = heloNameProblem(heloName);
  if (helo)
    problems.push({
      text: `the HELO name '${heloName}' will be refused by many mail servers: ${helo}. Set a fully-qualified name whose DNS points at this machine's address`,
      option: 'helo_name',
    });
  const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1);
  const sender = senderDomainProblem(mailFrom);
  if (sender)
    problems.push({
      text: `the sender ${mailFrom} will be refused by many mail servers: ${sender}. Set a sender address of a domain you own`,
      option: 'mail_from',
    });
  else if (
    senderRouting &&
    (senderRouting.kind === 'nxdomain' ||
      senderRouting.kind === 'no-mail' ||
      senderRouting.kind === 'null-mx')
  )
    problems.push({
      text: `the sender's domain ${domain} has no MX or address record in DNS: servers that check the sender refuse it. Set a sender address of a domain you own`,
      option: 'mail_from',
    });
  return problems;
}

export type IdentityConversation =
  /** The server could not be reached or greeted us with a refusal: port 25 is the problem, not the identity. */
  | { readonly reached: false; readonly detail: string; readonly transcript: readonly string[] }
  | {
      readonly reached: true;
      /** The greeting line. */
      readonly greeting: string;
      readonly refusedAt?: 'HELO' | 'MAIL FROM' | 'RCPT';
      readonly problem?: IdentityProblem;
      /** What the postmaster RCPT answered, in words. */
      readonly note: string;
      readonly transcript: readonly string[];
    };

const refusalWords = (
  heloName: string,
  mailFrom: string,
  host: string,
  reply: Parameters<typeof refusalCause>[1],
  stage: string,
): { refusedAt: 'HELO' | 'MAIL FROM' | 'RCPT'; problem: IdentityProblem } => {
  const cause = refusalCause(host, reply, stage);
  const said = formatReply(reply);
  if (cause.kind === 'helo-refused')
    return {
      refusedAt: 'HELO',
      problem: {
        text: `the mail server refused the HELO name '${heloName}' (${said}): set a fully-qualified name whose DNS points at this machine's address`,
        option: 'helo_name',
      },
    };
  if (cause.kind === 'sender-refused')
    return {
      refusedAt: 'MAIL FROM',
      problem: {
        text: `the mail server refused the sender ${mailFrom} (${said}): set a sender address of a domain you own, with an MX or address record`,
        option: 'mail_from',
      },
    };
  return {
    refusedAt: 'RCPT',
    problem: {
      text: `the mail server refused this machine (${said}): its address may be on a block list or lack reverse DNS; mailbox checks from here would come back unknown`,
      option: 'smtp_proxy',
    },
  };
};

/** EHLO, MAIL FROM, RCPT TO postmaster@`domain`, RSET and QUIT with `host` at `ip`, within `timeoutMs`. */
export async function identityConversation(
  host: string,
  ip: string,
  domain: string,
  config: Omit<SessionConfig, 'startTls'>,
  timeoutMs: number,
  /** Told when the connection is over (the host's allowance: it counts until the server has closed it). */
  connection?: { closed(isClean: boolean): void },
): Promise<IdentityConversation> {
  const deadline = Date.now() + timeoutMs;
  const opened = await SmtpSession.open(host, ip, { ...config, startTls: true }, deadline);
  if (opened.ok) opened.session.onClosed((isClean) => connection?.closed(isClean));
  else connection?.closed(false);
  if (!opened.ok) {
    const { failure, transcript } = opened;
    const greeting = transcript.find((line) => line.startsWith('S: 220'));
    if (
      (failure.kind === 'rejected' || failure.kind === 'deferred') &&
      failure.stage !== 'greeting' &&
      greeting
    ) {
      const refused = refusalWords(config.heloName, config.mailFrom, host, failure.reply, failure.stage);
      return { reached: true, greeting: greeting.slice(3), ...refused, note: '', transcript };
    }
    const detail =
      'reply' in failure ? `connected, but the greeting was ${formatReply(failure.reply)}` : failure.detail;
    return { reached: false, detail, transcript };
  }
  const session = opened.session;
  const log = [...session.transcript];
  const greeting = (log.find((line) => line.startsWith('S: 220')) ?? 'S: 220').slice(3);
  try {
    const answer = await session.rcpt(`postmaster@${domain}`, deadline, log);
    if (!answer.ok)
      return {
        reached: true,
        greeting,
        note: `the server did not answer RCPT TO its postmaster (${'detail' in answer.failure ? answer.failure.detail : 'refused'})`,
        transcript: log,
      };
    const kind = classifyRcpt(answer.reply);
    const said = formatReply(answer.reply);
    await session.reset(deadline, log);
    if (kind === 'accepted')
      return { reached: true, greeting, note: `postmaster@${domain} was accepted`, transcript: log };
    if (kind === 'blocked' || kind === 'rate-limited' || (kind === 'ambiguous' && answer.reply.code >= 500)) {
      const refused = refusalWords(config.heloName, config.mailFrom, host, answer.reply, 'RCPT');
      return { reached: true, greeting, ...refused, note: said, transcript: log };
    }
    // Greylisted, or a server that has no postmaster: neither refused this machine.
    return {
      reached: true,
      greeting,
      note: `postmaster@${domain} answered ${said}, which does not refuse this machine`,
      transcript: log,
    };
  } finally {
    log.push('C: QUIT');
    session.quit();
  }
}

/** A problem's text as a sentence: capitalised, with its full stop. */
export function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** The problems in words, each with its setting as a front end names it ("(set --helo-name)"). */
export function describeProblems(
  problems: readonly IdentityProblem[],
  words: Readonly<Record<CauseOption, string>>,
): string {
  return problems.map((problem) => sentence(`${problem.text} (${words[problem.option]})`)).join(' ');
}
