// Counting addresses for the `Duplicate` column without a million strings in memory: an open-addressing hash
// table keyed by the 64-bit hash of each address, with a count saturating at 2.
//
// Its capacity is fixed when it is made, from the most addresses the list can hold, so a slot never moves.
// A slot is three Uint32 words side by side, so that a probe touches one cache line: the two hash words and
// its state (empty, met once, met again). Met once, the state is the row that holds the address (addRow), so
// that the pipeline marks each row's `Duplicate` as its address is counted in pass 1: the row met first once
// a second comes, then every later one. Pass 2 then reads one byte a row in order, where it read each row's
// count back from a slot somewhere in the table (a cache miss a row, on pass 2's one busy thread: issue 38).
// 12 bytes per slot at a load of at most one half, against ~100 bytes per address for a Set of strings.
//
// HashSet64 is the same table for a stream whose length is not known ahead (the exports' Remove duplicates,
// electron/core/exports/shape.ts): it doubles as it fills, since no one keeps its slots. SharedHashSet64 is a
// set of a known size in shared memory, built once and read by several threads (the known bouncers of a
// list, service/identity/bounces.ts).

/** The slot of a row without an address. */
export const NO_SLOT = 0xffffffff;

/** Where the probe for (h1, h2) starts in a table of `mask + 1` slots. */
const firstSlot = (h1: number, h2: number, mask: number): number => (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;

/** A slot's state: empty, met again (a duplicate), or met once (holding the row + 1, or ONCE without a row). */
const EMPTY = 0;
const AGAIN = 0xffffffff;
const ONCE = 0xfffffffe;

export class DuplicateTable {
  /** Per slot: h1, h2, state. */
  private readonly words: Uint32Array;
  private readonly mask: number;
  private size = 0;

  /** A table for at most `maxEntries` distinct addresses. */
  constructor(maxEntries: number) {
    let capacity = 1024;
    while (capacity < maxEntries * 2) capacity *= 2;
    this.words = new Uint32Array(capacity * 3);
    this.mask = capacity - 1;
  }

  /**
   * Counts one occurrence of the address with hash (h1, h2) and answers its slot; (0, 0) is not an address
   * and gets NO_SLOT. Throws when more than `maxEntries` distinct addresses were added.
   */
  add(h1: number, h2: number): number {
    if (h1 === 0 && h2 === 0) return NO_SLOT;
    const slot = this.find(h1, h2);
    const state = this.words[3 * slot + 2];
    this.words[3 * slot + 2] = state === EMPTY ? ONCE : AGAIN;
    return slot;
  }

  /**
   * add() for the address of row `row` of a list (rows below 0xfffffffe), marking `duplicates` as it goes:
   * the row, and the row met first, once the address is met a second time.
   */
  addRow(h1: number, h2: number, row: number, duplicates: Uint8Array): void {
    if (h1 === 0 && h2 === 0) return;
    const at = 3 * this.find(h1, h2) + 2;
    const state = this.words[at];
    if (state === EMPTY) {
      this.words[at] = row + 1;
      return;
    }
    if (state !== AGAIN) {
      if (state !== ONCE) duplicates[state - 1] = 1;
      this.words[at] = AGAIN;
    }
    duplicates[row] = 1;
  }

  /** The slot of (h1, h2): where it is, or the empty one where it is put (and counted). */
  private find(h1: number, h2: number): number {
    const { words, mask } = this;
    let i = firstSlot(h1, h2, mask);
    for (;;) {
      const at = 3 * i;
      if (words[at + 2] === EMPTY) {
        if ((this.size + 1) * 2 > mask + 1) throw new RangeError('duplicate table full');
        words[at] = h1;
        words[at + 1] = h2;
        this.size++;
        return i;
      }
      if (words[at] === h1 && words[at + 1] === h2) return i;
      i = (i + 1) & mask;
    }
  }

  /** Whether the address in `slot` was added more than once. */
  isDuplicate(slot: number): boolean {
    return slot !== NO_SLOT && this.words[3 * slot + 2] === AGAIN;
  }
}

// The steps of the two hashes, written once for every form of the text (a string, its bytes, lower-cased as
// it goes): the pipeline's `Duplicate` and the exporter's dedupe must hash an address alike.
const FIRST_SEED = 0x811c9dc5;
const secondSeed = (length: number): number => 0x9747b28c ^ length;
/** FNV-1a. */
const firstStep = (h: number, c: number): number => Math.imul(h ^ c, 0x01000193);
/** A multiply-xorshift. */
function secondStep(h: number, c: number): number {
  const mixed = Math.imul(h ^ c, 0x5bd1e995);
  return mixed ^ (mixed >>> 13);
}
/** An ASCII character code in lower case, or -1 for one that is not ASCII. */
const asciiLower = (c: number): number => (c >= 0x80 ? -1 : c >= 0x41 && c <= 0x5a ? c | 0x20 : c);

/**
 * Two independent 32-bit hashes of a string (FNV-1a and a multiply-xorshift), written to `out[at]` and
 * `out[at + 1]`. 64 bits make a false "duplicate" between two different addresses of a 1,000,000-row list
 * about a one-in-thirty-million chance. (0, 0) is reserved for "no address".
 */
export function hashInto(text: string, out: Uint32Array, at: number): void {
  runningH1 = FIRST_SEED;
  runningH2 = secondSeed(text.length);
  stepText(text);
  finishHash(runningH1, runningH2, out, at);
}

/** The running hashes of the steps below (module state: a thread has one hash under way at a time). */
let runningH1 = 0;
let runningH2 = 0;

/** Steps the running hashes over the characters of `text`. */
function stepText(text: string): void {
  let h1 = runningH1;
  let h2 = runningH2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = firstStep(h1, c);
    h2 = secondStep(h2, c);
  }
  runningH1 = h1;
  runningH2 = h2;
}

/** Steps the running hashes over `text` lower-cased; false at the first character that is not ASCII. */
function stepAsciiLower(text: string): boolean {
  let h1 = runningH1;
  let h2 = runningH2;
  for (let i = 0; i < text.length; i++) {
    const c = asciiLower(text.charCodeAt(i));
    if (c < 0) return false;
    h1 = firstStep(h1, c);
    h2 = secondStep(h2, c);
  }
  runningH1 = h1;
  runningH2 = h2;
  return true;
}

/**
 * hashInto of `text.toLowerCase()` when `text` is ASCII, without making the lower-case string. Answers false,
 * writing nothing, at the first character that is not ASCII (whose lower case is Unicode's to say).
 */
export function hashAsciiLowerTextInto(text: string, out: Uint32Array, at: number): boolean {
  runningH1 = FIRST_SEED;
  runningH2 = secondSeed(text.length);
  if (!stepAsciiLower(text)) return false;
  finishHash(runningH1, runningH2, out, at);
  return true;
}

/**
 * hashInto of `${local}@${domain}` lower-cased when both are ASCII, without making either string (the
 * known bouncers' lookup of every row of a list: service/identity/bounces.ts). False, writing nothing, when
 * either is not ASCII.
 */
export function hashAsciiLowerAddressInto(
  local: string,
  domain: string,
  out: Uint32Array,
  at: number,
): boolean {
  runningH1 = FIRST_SEED;
  runningH2 = secondSeed(local.length + 1 + domain.length);
  if (!stepAsciiLower(local)) return false;
  runningH1 = firstStep(runningH1, 0x40);
  runningH2 = secondStep(runningH2, 0x40);
  if (!stepAsciiLower(domain)) return false;
  finishHash(runningH1, runningH2, out, at);
  return true;
}

/**
 * hashInto of the lower-case text of `bytes[start, end)` when those bytes are ASCII (and so their own
 * characters), without making a string. Answers false, writing nothing, at the first byte that is not ASCII.
 */
export function hashAsciiLowerInto(
  bytes: Uint8Array,
  start: number,
  end: number,
  out: Uint32Array,
  at: number,
): boolean {
  let h1 = FIRST_SEED;
  let h2 = secondSeed(end - start);
  for (let i = start; i < end; i++) {
    const c = asciiLower(bytes[i]);
    if (c < 0) return false;
    h1 = firstStep(h1, c);
    h2 = secondStep(h2, c);
  }
  finishHash(h1, h2, out, at);
  return true;
}

/**
 * hashInto's two hashes of a tuple: the characters of `text`, then the byte ranges `bytes[bounds[2k],
 * bounds[2k + 1])` for k < `ranges`, each behind its length (so that no two tuples run together alike),
 * then `tag`. Two tuples of the same key hold the same text, bytes and tag (the Results counter's tallies,
 * electron/core/jobs/counts.ts).
 */
export function hashTupleInto(
  text: string,
  bytes: Uint8Array,
  bounds: Int32Array,
  ranges: number,
  tag: number,
  out: Uint32Array,
  at: number,
): void {
  runningH1 = FIRST_SEED;
  runningH2 = secondSeed(text.length);
  stepText(text);
  let h1 = runningH1;
  let h2 = runningH2;
  for (let k = 0; k < ranges; k++) {
    const start = bounds[2 * k];
    const end = bounds[2 * k + 1];
    h1 = firstStep(h1, end - start);
    h2 = secondStep(h2, end - start);
    for (let i = start; i < end; i++) {
      h1 = firstStep(h1, bytes[i]);
      h2 = secondStep(h2, bytes[i]);
    }
  }
  finishHash(firstStep(h1, tag), secondStep(h2, tag), out, at);
}

function finishHash(h1: number, h2: number, out: Uint32Array, at: number): void {
  h1 ^= h1 >>> 16;
  h1 = Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h2 = Math.imul(h2 ^ (h2 >>> 15), 0xc2b2ae35);
  h2 ^= h2 >>> 16;
  out[at] = h1 >>> 0;
  out[at + 1] = (h1 === 0 && h2 === 0 ? 1 : h2) >>> 0;
}

/**
 * A set of 64-bit hashes (see hashInto) that grows as it fills. Made for `expected` hashes, it has room for
 * them from the start: growing by doubling copies the set each time and leaves the old tables as garbage until
 * the thread's next full collection (for 1,000,000 addresses, ten copies and ~18 MB of old tables).
 */
export class HashSet64 {
  private keys: Uint32Array;
  private used: Uint8Array;
  private mask: number;
  private size = 0;

  constructor(expected = 0) {
    let capacity = 2048;
    while (capacity < expected * 2) capacity *= 2;
    this.keys = new Uint32Array(capacity * 2);
    this.used = new Uint8Array(capacity);
    this.mask = capacity - 1;
  }

  /** Adds (h1, h2); answers whether it was in the set already. */
  add(h1: number, h2: number): boolean {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const { keys, used, mask } = this;
    let i = firstSlot(h1, h2, mask);
    for (;;) {
      if (used[i] === 0) {
        keys[2 * i] = h1;
        keys[2 * i + 1] = h2;
        used[i] = 1;
        this.size++;
        return false;
      }
      if (keys[2 * i] === h1 && keys[2 * i + 1] === h2) return true;
      i = (i + 1) & mask;
    }
  }

  private grow(): void {
    const { keys, used } = this;
    const capacity = used.length * 2;
    this.keys = new Uint32Array(capacity * 2);
    this.used = new Uint8Array(capacity);
    this.mask = capacity - 1;
    this.size = 0;
    for (let i = 0; i < used.length; i++) if (used[i] === 1) this.add(keys[2 * i], keys[2 * i + 1]);
  }
}

/**
 * A set of 64-bit hashes (see hashInto) in a SharedArrayBuffer: made for a known number of entries, filled by
 * one thread, then read by any thread that is given its buffer (structured clone shares it, copies nothing).
 * An empty slot holds (0, 0), which hashInto never gives. 8 bytes a slot at a load of at most one half.
 */
export class SharedHashSet64 {
  private readonly keys: Uint32Array;
  private readonly mask: number;
  /** Hashes added through this instance (the one that fills the set). */
  private added = 0;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.keys = new Uint32Array(buffer);
    this.mask = this.keys.length / 2 - 1;
  }

  /** An empty set with room for `maxEntries` hashes. */
  static create(maxEntries: number): SharedHashSet64 {
    let capacity = 16;
    while (capacity < maxEntries * 2) capacity *= 2;
    return new SharedHashSet64(new SharedArrayBuffer(capacity * 8));
  }

  /** Adds (h1, h2), not (0, 0). Throws when the set holds its `maxEntries` already. */
  add(h1: number, h2: number): void {
    const { keys, mask } = this;
    let i = firstSlot(h1, h2, mask);
    for (;;) {
      if (keys[2 * i] === h1 && keys[2 * i + 1] === h2) return;
      if (keys[2 * i] === 0 && keys[2 * i + 1] === 0) {
        if ((this.added + 1) * 2 > mask + 1) throw new RangeError('hash set full');
        keys[2 * i] = h1;
        keys[2 * i + 1] = h2;
        this.added++;
        return;
      }
      i = (i + 1) & mask;
    }
  }

  /** The distinct hashes added through this instance. */
  get size(): number {
    return this.added;
  }

  has(h1: number, h2: number): boolean {
    const { keys, mask } = this;
    let i = firstSlot(h1, h2, mask);
    for (;;) {
      const k1 = keys[2 * i];
      const k2 = keys[2 * i + 1];
      if (k1 === h1 && k2 === h2) return true;
      if (k1 === 0 && k2 === 0) return false;
      i = (i + 1) & mask;
    }
  }
}
