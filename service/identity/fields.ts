// The fields a key may be enabled for (`keys create --fields`) and a request may ask for (E5/E6 `fields`).
//
// A key's fields are the spec's intelligence fields plus `month_last_open`, the one EAM member the spec makes
// a separate permission (Authentication rule 4: "EAM including `month_last_open`"). `null` means every field,
// including fields a later version adds.
import {
  FINANCIAL_SEGMENT_MISSPELLING,
  INTELLIGENCE_FIELDS,
  type IntelligenceField,
} from '../../shared/api/intelligence.js';

export const MONTH_LAST_OPEN = 'month_last_open';

/** What `--fields` and a key's `fields` name: intelligence fields and `month_last_open`. */
export const KEY_FIELDS = [...INTELLIGENCE_FIELDS, MONTH_LAST_OPEN] as const;
export type KeyField = (typeof KEY_FIELDS)[number];

/** Names a request's `fields` parameter may also use: the result sections. */
export const SECTION_FIELDS = ['eam', 'postal_address'] as const;
export type SectionField = (typeof SECTION_FIELDS)[number];
export type RequestField = KeyField | SectionField;

const KEY_FIELD_SET: ReadonlySet<string> = new Set(KEY_FIELDS);
const REQUEST_FIELD_SET: ReadonlySet<string> = new Set([...KEY_FIELDS, ...SECTION_FIELDS]);

export function isKeyField(name: string): name is KeyField {
  return KEY_FIELD_SET.has(name);
}

export function isIntelligenceField(name: string): name is IntelligenceField {
  return name !== MONTH_LAST_OPEN && KEY_FIELD_SET.has(name);
}

/** The spec's sample response misspells `financial_segment`; a request may use either spelling. */
export function canonicalFieldName(word: string): string {
  const name = word.trim().toLowerCase();
  return name === FINANCIAL_SEGMENT_MISSPELLING ? 'financial_segment' : name;
}

/**
 * Parses `--fields`: comma-separated key field names, or `all` (every field: `null`).
 * Returns the names, or the first word that is not a field.
 */
export function parseKeyFieldList(
  text: string,
): { ok: true; fields: KeyField[] | null } | { ok: false; unknown: string } {
  const fields = new Set<KeyField>();
  for (const word of text.split(',')) {
    const name = canonicalFieldName(word);
    if (name === '') continue;
    if (name === 'all') return { ok: true, fields: null };
    if (!isKeyField(name)) return { ok: false, unknown: word.trim() };
    fields.add(name);
  }
  return { ok: true, fields: [...fields] };
}

/** Parses a request's `fields`: key fields and the section names `eam`, `postal_address`. */
export function parseRequestFieldList(
  text: string,
): { ok: true; fields: Set<RequestField> } | { ok: false; unknown: string } {
  const fields = new Set<RequestField>();
  for (const word of text.split(',')) {
    const name = canonicalFieldName(word);
    if (name === '') continue;
    if (!REQUEST_FIELD_SET.has(name)) return { ok: false, unknown: word.trim() };
    fields.add(name as RequestField);
  }
  return { ok: true, fields };
}
