// The packed verdict of a list row (a Uint16 per row), shared by the verify workers that pack it and the
// pipeline worker that writes and counts it. No engine import here: the pipeline worker does not load it.
import { DOMAIN_TYPES, type DomainType } from '../../shared/api/verification.js';

/** Statuses of list rows: the legacy vocabulary, with `corrected` (DESIGN.md "Decisions"). */
export const LIST_ROW_STATUSES = [
  'valid',
  'invalid',
  'risky',
  'unverifiable',
  'unknown',
  'corrected',
] as const;
export type ListRowStatus = (typeof LIST_ROW_STATUSES)[number];
export const STATUS_INDEX = new Map<string, number>(LIST_ROW_STATUSES.map((s, i) => [s, i]));

// Packed flags of a row (Uint16).
export const FLAG_STATUS_MASK = 0b111; // bits 0-2: index in LIST_ROW_STATUSES
export const FLAG_DOMAIN_SHIFT = 3; // bits 3-6: 1 + index in DOMAIN_TYPES, 0 for none
export const FLAG_DOMAIN_MASK = 0b1111 << FLAG_DOMAIN_SHIFT;
export const FLAG_ROLE = 1 << 7;
/** The row has an address to compare for duplicates (its email field is not empty). */
export const FLAG_HAS_KEY = 1 << 8;

export function statusOfFlags(flags: number): ListRowStatus {
  return LIST_ROW_STATUSES[flags & FLAG_STATUS_MASK];
}

/** The domain type packed in a row's flags (undefined: none). */
export function domainTypeOfFlags(flags: number): DomainType | undefined {
  const index = (flags & FLAG_DOMAIN_MASK) >> FLAG_DOMAIN_SHIFT;
  return index === 0 ? undefined : DOMAIN_TYPES[index - 1];
}
