// Words and numbers for people.

import { formatBytes } from '../shared/bytes.js';
import { formatCount } from '../shared/count.js';

export { formatBytes, formatCount };

/** `1 row`, `2 rows`, `1,000 rows`: a count with its noun, singular or plural. */
export function countOf(value: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(value)} ${value === 1 ? singular : plural}`;
}

export function formatPercent(part: number, whole: number): string {
  if (whole === 0) return '0%';
  const share = (part / whole) * 100;
  return `${share < 1 && share > 0 ? share.toFixed(1) : Math.round(share)}%`;
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * One date format everywhere: the system locale's numeric date (the order its date fields use, as the History
 * filters' date inputs show it) and time, e.g. `11/23/2026, 03:04 PM` (en-US) or `23/11/2026, 15:04` (en-GB).
 */
const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
});
export function formatDate(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function describeDelimiterName(delimiter: string): string {
  switch (delimiter) {
    case ',':
      return 'Comma';
    case ';':
      return 'Semicolon';
    case '\t':
      return 'Tab';
    case '|':
      return 'Pipe';
    case ' ':
      return 'Space';
    default:
      return `“${delimiter}”`;
  }
}

export const JOB_STATUS_LABELS: Readonly<Record<string, string>> = {
  queued: 'Queued',
  uploading: 'Uploading',
  processing: 'Processing',
  downloading: 'Downloading results',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
  'awaiting-purchase': 'Awaiting purchase',
};

/** 1 → `1st`, 2 → `2nd`, … */
export function formatOrdinal(n: number): string {
  const tens = n % 100;
  const suffix =
    tens >= 11 && tens <= 13 ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

/** The list statuses of results (legacy vocabulary), in the order the Results screen shows them. */
export const STATUS_ORDER = ['valid', 'corrected', 'unknown', 'unverifiable', 'risky', 'invalid'] as const;

// Status names and meanings: shared/vocabulary.ts (one table for every screen and command).

/** Keys of a report's `statuses` member, by list status. */
export const REPORT_KEY_OF_STATUS: Readonly<Record<(typeof STATUS_ORDER)[number], string>> = {
  valid: 'Valid',
  corrected: 'Corrected',
  unknown: 'Unknown',
  unverifiable: 'Unverifiable',
  risky: 'Risky',
  invalid: 'Invalid',
};
