import { describe, expect, it } from 'vitest';
import { formatBytes, formatBytesOf } from '../../shared/bytes.js';

describe('formatBytes', () => {
  it('writes bytes below a KB, then units of 1,024 with one decimal below 10 (none when it is 0)', () => {
    const cases: [number, string][] = [
      [0, '0 bytes'],
      [1, '1 byte'],
      [512, '512 bytes'],
      [1023, '1,023 bytes'],
      [1024, '1 KB'],
      [1536, '1.5 KB'],
      [10 * 1024, '10 KB'],
      [1024 ** 2, '1 MB'],
      [2 * 1024 ** 2, '2 MB'],
      [12.34 * 1024 ** 2, '12 MB'],
      [84_157_000, '80 MB'],
      [5 * 1024 ** 3, '5 GB'],
      [3 * 1024 ** 4, '3 TB'],
      [2.04 * 1024, '2 KB'],
      [2.06 * 1024, '2.1 KB'],
      [2000 * 1024 ** 4, '2,000 TB'],
    ];
    for (const [bytes, words] of cases) expect(formatBytes(bytes), String(bytes)).toBe(words);
  });

  it('never writes 10.0 or 1,024 of a unit: a value that rounds up is written whole, or in the next unit', () => {
    expect(formatBytes(9.97 * 1024)).toBe('10 KB');
    expect(formatBytes(1048575)).toBe('1 MB');
    expect(formatBytes(1023.97 * 1024 ** 2)).toBe('1 GB');
    expect(formatBytes(1023.6 * 1024 ** 2)).toBe('1 GB');
    expect(formatBytes(1023.4 * 1024 ** 2)).toBe('1,023 MB');
  });
});

describe('formatBytesOf', () => {
  it('writes progress in the unit of the total, with one decimal', () => {
    expect(formatBytesOf(21_286_912, 84_157_000)).toBe('20.3 of 80.3 MB');
    expect(formatBytesOf(0, 500)).toBe('0.0 of 0.5 KB');
    expect(formatBytesOf(84_157_000, 84_157_000)).toBe('80.3 of 80.3 MB');
    expect(formatBytesOf(1024 ** 3, 2 * 1024 ** 3)).toBe('1.0 of 2.0 GB');
  });
});
