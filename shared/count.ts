// A count for people, as every part of Mailsieve writes it (the app, the CLI, the service's messages).

/**
 * `1,234,567`: a count with its thousands grouped by commas, as `toLocaleString('en-US')` writes it. A whole
 * number is grouped here: the first `toLocaleString` of a Node process sets up ICU's number formats (12–35
 * ms of the main thread, measured in `mailsieve clean`'s first progress line, while the list's workers need
 * both cores). Any other number (a fraction, a number too large to be exact) is left to ICU.
 */
export function formatCount(value: number): string {
  if (!Number.isSafeInteger(value)) return value.toLocaleString('en-US');
  const digits = String(value < 0 ? -value : value);
  let grouped = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let at = grouped.length; at < digits.length; at += 3) grouped += `,${digits.slice(at, at + 3)}`;
  return value < 0 ? `-${grouped}` : grouped;
}
