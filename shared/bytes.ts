// A size for people, as every part of Mailsieve writes it (the app, the CLI, the service's messages): units
// of 1,024 bytes named KB, MB, GB and TB, as the app has always shown them. One rule, so that a file reads as
// the same size in the app, in `mailsieve`'s progress and in the service's refusals (they read KB/MB, KiB/MiB
// and MB of 1,000,000 bytes before, for the same file).
import { formatCount } from './count.js';

const UNITS = ['KB', 'MB', 'GB', 'TB'] as const;

/** The unit a size is written in: its index in UNITS (-1: bytes) and its value in that unit. */
function unitOf(bytes: number): { readonly unit: number; readonly value: number } {
  if (bytes < 1024) return { unit: -1, value: bytes };
  let unit = 0;
  let value = bytes / 1024;
  // (A value that rounds to 1,024 of a unit is written as 1 of the next.)
  while (unit < UNITS.length - 1 && value >= 1023.5) {
    value /= 1024;
    unit++;
  }
  return { unit, value };
}

/** One decimal below 10 of a unit (none when it is 0), whole above (grouped as counts are: 2,000 TB). */
function digits(value: number): string {
  if (value >= 9.95) return formatCount(Math.round(value));
  const fixed = value.toFixed(1);
  return fixed.endsWith('.0') ? fixed.slice(0, -2) : fixed;
}

/** `512 bytes`, `1 byte`, `1.5 KB`, `2 MB`, `80 MB`. */
export function formatBytes(bytes: number): string {
  const { unit, value } = unitOf(bytes);
  if (unit < 0) return `${formatCount(bytes)} ${bytes === 1 ? 'byte' : 'bytes'}`;
  return `${digits(value)} ${UNITS[unit]}`;
}

/** `20.3 of 80.3 MB`: progress through `total` bytes, both in the total's unit with one decimal. */
export function formatBytesOf(done: number, total: number): string {
  const { unit } = unitOf(Math.max(total, 1024));
  const scale = 1024 ** (unit + 1);
  return `${(done / scale).toFixed(1)} of ${(total / scale).toFixed(1)} ${UNITS[unit]}`;
}
