// Strings the engine keeps beyond one address (its memos of domains).

/**
 * The characters of `s` in a string of their own. V8 makes a substring of 13 characters or more a view of the
 * string it was cut from, which keeps that string alive: a domain is cut from an address, itself cut from the
 * whole text of a list's verify batch (verifyWorker.ts splits it), so each domain a memo keeps would keep a
 * batch's text (up to 128 KiB) in memory: the correction memo's keys held ~20 MB of each list worker's heap at
 * the end of the 1,000,000-row clean's pass 1, its peak (docs/lists.md, issue 38). Joined to a character, `s`
 * is copied when the join is read (flattened), and the slice is taken from that copy.
 */
export const ownCopy = (s: string): string => ` ${s}`.slice(1);
