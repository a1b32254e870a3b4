// The kinds of column a list may have (the spec's header synonyms name them: shared/columns.ts). Apart from
// columns.ts so the renderer can list them without bundling the CSV reader.

export const COLUMN_KINDS = [
  'email',
  'first_name',
  'last_name',
  'full_name',
  'street',
  'street2',
  'city',
  'state',
  'zip',
  'country',
  'md5',
  'sha1',
] as const;
export type ColumnKind = (typeof COLUMN_KINDS)[number];
