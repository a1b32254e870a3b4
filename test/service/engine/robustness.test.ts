// Property-style checks over random input: the engine never throws, gives only codes of the spec's table,
// and offers only corrections that pass on their own. The generator is seeded, so a failure repeats.
import { expect, test } from 'vitest';
import { standardise, verifyOffline, type VerifyPolicy } from '../../../service/engine/index.js';
import { STATUS_CODES } from '../../../shared/api/codes.js';

const KNOWN_CODES = new Set(STATUS_CODES.map((info) => info.code));
const POLICY: VerifyPolicy = {
  corrections: true,
  allow: new Set(['allowed.com', 'jane@example.com']),
  suppress: new Set(['suppressed.com']),
};

/** mulberry32: a small seeded generator. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Pieces that reach every branch: separators, specials, white space, controls, non-ASCII letters, a lone
// surrogate, an emoji pair, full-width forms, and fragments of real and misspelt domains.
const PIECES = [
  ...'abcxyzJANE0189.-_+@@..',
  ...' \t\r\n\u00a0\u3000',
  ...'(),:;<>[]\\"\'`!?#$%&*/=^{|}~',
  '\u0000',
  '\u007f',
  '\u0085',
  '\u200b',
  '\u202e',
  '\ufeff',
  '\ud800',
  '\udc00',
  '😀',
  'é',
  'ü',
  '用户',
  'ｇ',
  '．',
  '。',
  'mailto:',
  'xn--',
  'xn--p1ai',
  'gmail',
  'gmial',
  '.com',
  '.con',
  '.co.uk',
  'mailinator.com',
  'allowed.com',
  'suppressed.com',
  'abuse',
  'info',
];

function randomInput(next: () => number): string {
  const length = Math.floor(next() * 24);
  let s = '';
  for (let i = 0; i < length; i++) s += PIECES[Math.floor(next() * PIECES.length)];
  if (next() < 0.1) s = s.repeat(20); // long inputs too
  return s;
}

function mutate(next: () => number, address: string): string {
  const at = Math.floor(next() * (address.length + 1));
  const piece = PIECES[Math.floor(next() * PIECES.length)];
  return next() < 0.5
    ? address.slice(0, at) + piece + address.slice(at)
    : address.slice(0, at) + address.slice(at + 1);
}

test('random input: never throws, known codes only, corrections pass, same answer twice', () => {
  const next = random(20240429);
  const seeds = ['jane.doe@gmail.com', 'info@example.co.uk', 'x@münchen.de', 'jane@example.com', 'a@b.io'];
  for (let i = 0; i < 20_000; i++) {
    const input = i % 2 === 0 ? randomInput(next) : mutate(next, seeds[i % seeds.length]);
    const verdict = verifyOffline(input, POLICY);
    expect(KNOWN_CODES.has(verdict.code), `code ${verdict.code} for ${JSON.stringify(input)}`).toBe(true);
    expect(verdict.address).toBe(standardise(input));
    expect(verifyOffline(input, POLICY)).toEqual(verdict);
    for (const correction of verdict.corrections ?? []) {
      expect(correction).not.toBe(verdict.address);
      expect([10, 55], `correction ${correction} of ${JSON.stringify(input)}`).toContain(
        verifyOffline(correction, { ...POLICY, corrections: false }).code,
      );
    }
  }
});

test('very long input is judged without trouble', () => {
  expect(verifyOffline(`${'a'.repeat(1_000_000)}@example.com`, POLICY).code).toBe(130);
  expect(verifyOffline(' '.repeat(1_000_000), POLICY).code).toBe(100);
  expect(verifyOffline(`jane@${'a.'.repeat(500_000)}com`, POLICY).code).toBe(130);
  expect(verifyOffline(`${'.'.repeat(100_000)}@${' '.repeat(100_000)}x`, POLICY).code).toBe(215);
});
