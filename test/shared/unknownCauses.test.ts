// Unknown rows by cause: counted per cause (kind and host), largest first, the tail summed into one line, and
// said with the setting in the words of each front end.
import { describe, expect, it } from 'vitest';
import {
  APP_OPTION_WORDS,
  causeOf,
  CLI_OPTION_WORDS,
  formatCauseLine,
  UnknownCauseTally,
} from '../../shared/unknownCauses.js';

describe('UnknownCauseTally', () => {
  it('counts rows by cause, largest first, in one line each with the setting to change', () => {
    const tally = new UnknownCauseTally();
    tally.add(causeOf('no-answer', 'mx.example.net'), 30);
    tally.add(causeOf('helo-refused', 'mx.acme-mail.com'), 400);
    tally.add(causeOf('no-answer', 'mx.example.net'), 7);
    tally.add(causeOf('helo-refused', 'mx.acme-mail.com'), 12);
    tally.add(undefined, 2);
    const lines = tally.lines();
    expect(lines.map((line) => formatCauseLine(line, CLI_OPTION_WORDS))).toEqual([
      "412 unknown: mx.acme-mail.com refused this machine's HELO name — set --helo-name",
      '37 unknown: no answer from mx.example.net',
      '2 unknown: other reasons (see the explanation of each row)',
    ]);
    expect(formatCauseLine(lines[0], APP_OPTION_WORDS)).toBe(
      "412 unknown: mx.acme-mail.com refused this machine's HELO name — set the HELO name under Connection → Checks",
    );
    expect(lines[0].cause).toEqual({ kind: 'helo-refused', host: 'mx.acme-mail.com', option: 'helo_name' });
  });

  it('sums the smallest causes into one line past the most it shows', () => {
    const tally = new UnknownCauseTally();
    for (let i = 1; i <= 10; i++) tally.add(causeOf('unreachable', `mx${i}.example.net`), i);
    const lines = tally.lines(4);
    expect(lines.map((line) => [line.count, line.text])).toEqual([
      [10, 'mx10.example.net could not be reached'],
      [9, 'mx9.example.net could not be reached'],
      [8, 'mx8.example.net could not be reached'],
      [28, 'other reasons (see the explanation of each row)'],
    ]);
  });
});
