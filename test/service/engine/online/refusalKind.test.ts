// Refusals of the verifier as real mail servers word them, and the limit each names, as `status` counts them
// per source address: connections at once, connection or message rate, a block list, or the verifier's policy.
import { describe, expect, it } from 'vitest';
import { refusalKind, type RefusalKind } from '../../../../service/engine/online/classify.js';

function reply(text: string) {
  const enhanced = /^\d{3}[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(text)?.[1];
  return { code: Number(text.slice(0, 3)), lines: [text], ...(enhanced ? { enhanced } : {}) };
}

const cases: [string, string, RefusalKind][] = [
  ['421 4.7.0 mx.example.net Error: too many connections from 203.0.113.10', 'greeting', 'concurrency'],
  ['421 Too many concurrent SMTP connections; please try again later.', 'greeting', 'concurrency'],
  ['421 4.7.0 Error: too much mail from 203.0.113.10: connection rate limit exceeded', 'greeting', 'rate'],
  ['450 4.7.1 Client host rejected: you are connecting too fast', 'RCPT', 'rate'],
  [
    '554 5.7.1 Service unavailable; Client host [203.0.113.10] blocked using zen.spamhaus.org',
    'RCPT',
    'block',
  ],
  [
    "550 5.7.1 Unfortunately, messages from [203.0.113.10] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3140).",
    'RCPT',
    'block',
  ],
  ['550 5.7.1 <verify@example.com>: Sender address rejected: Access denied', 'MAIL FROM', 'policy'],
  ['504 5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname', 'EHLO', 'policy'],
  ['550 5.7.1 Message rejected due to local policy', 'RCPT', 'policy'],
];

describe('refusalKind', () => {
  it.each(cases)('%s (at %s) → %s', (text, stage, kind) => {
    expect(refusalKind(reply(text), stage)).toBe(kind);
  });
});
