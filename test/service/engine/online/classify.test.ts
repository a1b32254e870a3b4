// RCPT replies as real mail servers word them, and what each says about the mailbox. The replies that
// refuse the prober (blocklists, reputation, sender policy) must never read as "mailbox does not exist".
import { describe, expect, it } from 'vitest';
import { classifyRcpt, refusedLimit, type RcptClass } from '../../../../service/engine/online/classify.js';

function reply(text: string) {
  const lines = text.split('\n');
  const enhanced = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(lines[0])?.[1];
  return { code: Number(text.slice(0, 3)), lines, ...(enhanced ? { enhanced } : {}) };
}

const cases: [string, RcptClass][] = [
  ['250 2.1.5 OK', 'accepted'],
  ['251 User not local; will forward', 'accepted'],
  [
    "550-5.1.1 The email account that you tried to reach does not exist. Please try\n550 5.1.1 double-checking the recipient's email address for typos. https://support.google.com/mail/?p=NoSuchUser",
    'no-mailbox',
  ],
  [
    '550 5.1.1 <x@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
    'no-mailbox',
  ],
  ['550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup', 'no-mailbox'],
  [
    "554 delivery error: dd This user doesn't have a yahoo.com account (x@yahoo.com) [0] - mta1.mail.yahoo.com",
    'no-mailbox',
  ],
  ['550 <x@example.com>... User unknown', 'no-mailbox'],
  ['552 5.2.2 Mailbox full', 'mailbox-full'],
  ['452 4.2.2 The email account that you tried to reach is over quota', 'mailbox-full'],
  ['552 Requested mail action aborted: exceeded storage allocation', 'mailbox-full'],
  ['554 5.7.1 <x@example.com>: Relay access denied', 'domain-rejected'],
  ['550 5.7.1 Unable to relay', 'domain-rejected'],
  ['553 5.1.3 Bad recipient address syntax', 'address-rejected'],
  [
    "550 5.7.1 Unfortunately, messages from [192.0.2.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3140).",
    'blocked',
  ],
  [
    "550 SC-001 (BAY004-MC1F1) Unfortunately, messages from 192.0.2.1 weren't sent. Please contact your Internet service provider.",
    'blocked',
  ],
  [
    "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.1, because the ip is in Spamhaus's list",
    'blocked',
  ],
  ['550 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org', 'blocked'],
  ['550 5.4.1 Recipient address rejected: Access denied. AS(201806281)', 'blocked'],
  ['550 5.7.606 Access denied, banned sending IP [192.0.2.1]', 'blocked'],
  [
    // Yahoo's "slow down": a rate, asked again later at a lower pace (issue #26).
    '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
    'rate-limited',
  ],
  ['450 4.7.1 Error: too many recipients from 127.0.0.1', 'rate-limited'],
  ['451 4.7.1 Greylisted, please try again later', 'transient'],
  ['450 4.2.0 <x@example.com>: Recipient address rejected: Greylisted', 'transient'],
  ['452 4.5.3 Too many recipients', 'session-limit'],
  ['421 4.7.0 mx.example.com Error: too many errors', 'session-limit'],
  ['504 5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname', 'blocked'],
  ['450 4.7.1 <localhost>: Helo command rejected: Host not found', 'blocked'],
  ['450 4.1.8 <check@example.org>: Sender address rejected: Domain not found', 'blocked'],
  ['450 4.7.1 Client host rejected: cannot find your hostname, [192.0.2.1]', 'blocked'],
  ['421 4.7.0 mx.example.com Error: too many connections from 192.0.2.1', 'rate-limited'],
  ['451 4.7.1 Please try again later (greylisting policy)', 'transient'],
  ['451 4.3.0 Temporary lookup failure', 'transient'],
  ['550 Requested action not taken: mailbox unavailable', 'ambiguous'],
  ['550 Rejected', 'ambiguous'],
  ['252 Cannot VRFY user, but will accept message', 'ambiguous'],
];

describe('classifyRcpt', () => {
  it.each(cases)('%s → %s', (text, expected) => {
    expect(classifyRcpt(reply(text))).toBe(expected);
  });
});

// Which of a host's limits a refusal names (issue #26): each lowers only its own.
const limits: [string, ReturnType<typeof refusedLimit>][] = [
  // Postfix words its connection count and connection rate limits alike: the caller reads it by what was open.
  ['421 4.7.0 mx.example.com Error: too many connections from 192.0.2.1', 'connections'],
  [
    '421 4.7.0 Too many concurrent SMTP connections from this IP address; please try again later',
    'concurrency',
  ],
  ['421 4.7.0 Connection rate limit exceeded, try again later', 'rate'],
  [
    '421 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address',
    'rate',
  ],
  [
    '451 4.7.500 Server busy. Please try again later from [192.0.2.1]. (AS730) [BN8NAM11FT065.eop-nam11.prod.protection.outlook.com]',
    'rate',
  ],
  [
    '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
    'rate',
  ],
  ['450 4.7.1 Error: too many recipients from 127.0.0.1', 'recipientRate'],
  ['452 4.5.3 Error: too many recipients', 'recipients'],
  ['421 4.7.0 mx.example.com Error: too many errors', 'errors'],
  ['550 5.1.1 <nobody@example.com>: Recipient address rejected: User unknown', undefined],
];

describe('refusedLimit', () => {
  it.each(limits)('%s → %s', (text, expected) => {
    expect(refusedLimit(reply(text))).toBe(expected);
  });
});
