// The engine's string helpers (service/engine/strings.ts): lastIndexOfCode answers what String#lastIndexOf
// answers for one character, from any position, and standardise (which now finds the last @ itself) still
// lower-cases exactly the domain.
import { describe, expect, test } from 'vitest';
import { lastIndexOfCode } from '../../../service/engine/strings.js';
import { standardise } from '../../../service/engine/syntax.js';

describe('lastIndexOfCode', () => {
  test('answers as String#lastIndexOf for one character, from every position', () => {
    const texts = [
      '',
      '.',
      '@',
      'a',
      '.a.',
      'jane@example.com',
      'a.b.c.d',
      '..',
      'x@y@z',
      'ünï.cödé',
      '😀.😀',
    ];
    for (const text of texts)
      for (const char of ['.', '@', 'a'])
        for (let from = -3; from <= text.length + 3; from++)
          expect(lastIndexOfCode(text, char.charCodeAt(0), from), `${text} ${char} ${from}`).toBe(
            text.lastIndexOf(char, from),
          );
    expect(lastIndexOfCode('a.b.c', 46)).toBe(3);
    expect(lastIndexOfCode('abc', 46)).toBe(-1);
  });
});

describe('standardise', () => {
  test('lower-cases the domain after the last @ and nothing else', () => {
    const cases: [string, string][] = [
      ['Jane.Doe@Example.COM', 'Jane.Doe@example.com'],
      ['jane@example.com', 'jane@example.com'],
      ['"A@B"@EXAMPLE.com', '"A@B"@example.com'],
      ['mailto:Jane@EXAMPLE.com', 'Jane@example.com'],
      ['MAILTO:jane@example.com', 'jane@example.com'],
      ['Jane@Bücher.DE', 'Jane@bücher.de'],
      ['Jane@ÉCOLE.fr', 'Jane@école.fr'],
      ['no at sign HERE', 'no at sign HERE'],
      ['Jane@', 'Jane@'],
      ['@EXAMPLE.COM', '@example.com'],
    ];
    for (const [input, expected] of cases) expect(standardise(input), input).toBe(expected);
    // The answer is the input itself when nothing changes (no copy of the address).
    const unchanged = 'Jane.Doe@example.com';
    expect(standardise(unchanged)).toBe(unchanged);
  });
});
