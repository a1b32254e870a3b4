// Email activity metrics (`eam`) and E1's `engagement_score`, computed from imported activity events at the
// moment of the request. The formulas are documented in docs/identity.md ("Activity metrics"); tests pin them.
import { EAM_UNKNOWN_ADDRESS, type Eam } from '../../shared/api/intelligence.js';

export const DAY_SECONDS = 86_400;
/** "Within the last month" of `longevity`. */
export const MONTH_DAYS = 30;
/** The 6-month window of `velocity` and of the engagement score. */
export const HALF_YEAR_DAYS = 183;
/** The 12-month windows of `popularity`, `month_last_open` and `longevity`. */
export const YEAR_DAYS = 365;

/** What the activity of one address comes to, as one aggregate query reads it (store.ts). */
export interface ActivitySummary {
  /** Events at or before now, of any kind; 0 when the address has none. */
  readonly events: number;
  /** Unix seconds of the first event. */
  readonly firstAt: number | null;
  /** Events in the last 6 months. */
  readonly recentEvents: number;
  /** Distinct sources in the last 12 months. */
  readonly recentSources: number;
  /** Unix seconds of the last open or click (a click implies the message was opened). */
  readonly lastOpenAt: number | null;
  /** Opens in the last 6 months. */
  readonly recentOpens: number;
  /** Clicks in the last 6 months. */
  readonly recentClicks: number;
}

/** 0 for none; then one step per doubling: 1 → 1, 2–3 → 2, 4–7 → 3, … 512 or more → 10. */
export function doublingScale(count: number): number {
  if (count <= 0) return 0;
  return Math.min(10, Math.floor(Math.log2(count)) + 1);
}

/** `YYYY-MM-DD` of recent days: a bulk answer dates thousands of events from a few hundred days. */
const datesOfDays = new Map<number, string>();

function utcDate(seconds: number): string {
  const day = Math.floor(seconds / DAY_SECONDS);
  let date = datesOfDays.get(day);
  if (date === undefined) {
    date = new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10);
    if (datesOfDays.size >= 4096) datesOfDays.clear();
    datesOfDays.set(day, date);
  }
  return date;
}

/**
 * The `eam` object of an address. An address with no activity is unknown: the spec's defaults
 * (`date_first_seen` `now`, every score 0, no `month_last_open`).
 */
export function eamFrom(summary: ActivitySummary | undefined, nowS: number, withMonthLastOpen: boolean): Eam {
  if (!summary || summary.events === 0 || summary.firstAt === null) return { ...EAM_UNKNOWN_ADDRESS };
  const ageDays = (nowS - summary.firstAt) / DAY_SECONDS;
  const eam: Eam = {
    date_first_seen: utcDate(summary.firstAt),
    longevity: ageDays <= MONTH_DAYS ? 1 : ageDays <= YEAR_DAYS ? 2 : 3,
    velocity: doublingScale(summary.recentEvents),
    popularity: Math.min(10, summary.recentSources),
  };
  if (
    withMonthLastOpen &&
    summary.lastOpenAt !== null &&
    summary.lastOpenAt >= nowS - YEAR_DAYS * DAY_SECONDS
  )
    eam.month_last_open = utcDate(summary.lastOpenAt).slice(0, 7);
  return eam;
}

/**
 * E1's `engagement_score`, 0–10: the mean of how often the address engages (opens + 2 × clicks in the last
 * 6 months, on the doubling scale) and how recently (last open or click: 30 days 10, 90 days 7, 6 months 4,
 * 12 months 2, else 0). Undefined for an address with no activity at all: nothing is known.
 */
export function engagementScoreFrom(summary: ActivitySummary | undefined, nowS: number): number | undefined {
  if (!summary || summary.events === 0) return undefined;
  const frequency = doublingScale(summary.recentOpens + 2 * summary.recentClicks);
  let recency = 0;
  if (summary.lastOpenAt !== null) {
    const days = (nowS - summary.lastOpenAt) / DAY_SECONDS;
    recency = days <= 30 ? 10 : days <= 90 ? 7 : days <= HALF_YEAR_DAYS ? 4 : days <= YEAR_DAYS ? 2 : 0;
  }
  return Math.round((frequency + recency) / 2);
}
