// File names that are only file names, and fit: E7's `name` (a file name, at most 255 bytes, or 422), the
// service's results names and the CLI's output names, shortened (the extension kept) before any work starts
// rather than failing at the end with ENAMETOOLONG.

/** The longest file name most file systems take, in bytes (UTF-8). */
export const MAX_FILE_NAME_BYTES = 255;

/**
 * Room kept for what outputs add to a list's stem: `-<list id>-Validation` (ids up to 15 digits) or an
 * export's `-<kind>`, with room to spare.
 */
export const OUTPUT_SUFFIX_BYTES = 32;

const encoder = new TextEncoder();
const bytesOf = (text: string) => encoder.encode(text).length;

/** Why `name` is not a plain file name, in words; undefined when it is one. */
export function fileNameProblem(name: string): string | undefined {
  if (name.includes('/') || name.includes('\\')) return 'The name must be a file name, without / or \\';
  if (name.includes('..')) return 'The name may not contain ..';
  // eslint-disable-next-line no-control-regex -- control characters are what is refused here
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'The name may not contain control characters';
  const bytes = bytesOf(name);
  if (bytes > MAX_FILE_NAME_BYTES)
    return `The name may have at most ${MAX_FILE_NAME_BYTES} bytes; it has ${bytes}`;
  return undefined;
}

/** `text` cut to at most `maxBytes` of UTF-8, at a whole character (code point). */
export function fitBytes(text: string, maxBytes: number): string {
  if (bytesOf(text) <= maxBytes) return text;
  let out = '';
  let used = 0;
  for (const char of text) {
    const size = bytesOf(char);
    if (used + size > maxBytes) break;
    out += char;
    used += size;
  }
  return out;
}

/**
 * `name` shortened to at most `maxBytes` (UTF-8) by cutting its stem; its extension (up to 16 characters)
 * is kept. Names that fit are returned as they are.
 */
export function shortenFileName(name: string, maxBytes: number = MAX_FILE_NAME_BYTES): string {
  if (bytesOf(name) <= maxBytes) return name;
  const match = /^(.+?)(\.[^.]{1,16})?$/.exec(name);
  const extension = match?.[2] ?? '';
  const stem = fitBytes((match?.[1] ?? name).trimEnd(), Math.max(1, maxBytes - bytesOf(extension)));
  return `${stem.trimEnd() || 'list'}${extension}`;
}

/** A list or input file name short enough that every output named after it fits (see OUTPUT_SUFFIX_BYTES). */
export function outputNameFor(name: string): string {
  return shortenFileName(name, MAX_FILE_NAME_BYTES - OUTPUT_SUFFIX_BYTES);
}

/**
 * Why `name` cannot be read as a list, in words: a spreadsheet other than .xlsx is to be saved as .xlsx or
 * CSV first; anything else is to be a .csv, .txt, .xlsx or .zip file.
 */
export function notAListFile(name: string): string {
  if (/\.(xlsm|xls|ods|numbers)$/i.test(name))
    return `“${name}” is a spreadsheet Mailsieve cannot read: save it as .xlsx or CSV (in Excel: File › Save As › CSV UTF-8) and choose that file.`;
  return `“${name}” is not a list file: choose a .csv, .txt, .xlsx or .zip file.`;
}
