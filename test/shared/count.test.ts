import { describe, expect, it } from 'vitest';
import { formatCount } from '../../shared/count.js';

describe('formatCount', () => {
  it('groups a whole number as toLocaleString("en-US") does', () => {
    const values = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000];
    for (let digits = 1; digits <= 16; digits++) values.push(10 ** digits - 1, 10 ** (digits - 1) + 7);
    values.push(Number.MAX_SAFE_INTEGER, 1_234_567, 12_345_678, 123_456_789);
    for (const value of [...values, ...values.map((v) => -v).filter((v) => v !== 0)])
      expect(formatCount(value), String(value)).toBe(value.toLocaleString('en-US'));
    expect(formatCount(1_000_000)).toBe('1,000,000');
    expect(formatCount(-1234)).toBe('-1,234');
  });

  it('leaves any other number to ICU', () => {
    for (const value of [1.5, 1234.5678, 2 ** 53, 1e21, Number.NaN, Number.POSITIVE_INFINITY, -0.25])
      expect(formatCount(value), String(value)).toBe(value.toLocaleString('en-US'));
  });
});
