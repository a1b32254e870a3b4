// String helpers of the engine's per-address code: the strings it keeps beyond one address (its memos of
// domains), and searches it makes in every address.

/**
 * The characters of `s` in a string of their own. V8 makes a substring of 13 characters or more a view of the
 * string it was cut from, which keeps that string alive: a domain is cut from an address, itself cut from the
 * whole text of a list's verify batch (verifyWorker.ts splits it), so each domain a memo keeps would keep a
 * batch's text (up to 128 KiB) in memory: the correction memo's keys held ~20 MB of each list worker's heap at
 * the end of the 1,000,000-row clean's pass 1, its peak (docs/lists.md, issue 38). Joined to a character, `s`
 * is copied when the join is read (flattened), and the slice is taken from that copy.
 */
export const ownCopy = (s: string): string => ` ${s}`.slice(1);

/**
 * `s.lastIndexOf(char)` for the character of code unit `code`, searched backwards from `from`: a loop, which
 * V8 compiles into the caller. String#lastIndexOf is a call into C++ (about 25 ns before it looks at a
 * character, where this loop finds a domain's last dot in a few), and the offline checks ask it several times
 * an address (docs/lists.md, issue 38).
 */
export function lastIndexOfCode(s: string, code: number, from = s.length - 1): number {
  // (As String#lastIndexOf, a negative `from` still looks at the first character.)
  for (let i = from < 0 ? 0 : Math.min(from, s.length - 1); i >= 0; i--)
    if (s.charCodeAt(i) === code) return i;
  return -1;
}
