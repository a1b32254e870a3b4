// Counting addresses for the `Duplicate` column without a million strings in memory: an open-addressing hash
// table keyed by the 64-bit hash of each address, with a count saturating at 2.
//
// Its capacity is fixed when it is made, from the most addresses the list can hold, so a slot never moves:
// the pipeline keeps each row's slot (4 bytes a row) and reads its count back in pass 2 without hashing or
// probing again. Keys sit interleaved (two Uint32 words a slot) so that a probe touches one cache line.
// ~18 bytes per slot at a load of at most one half, against ~100 bytes per address for a Set of strings.

/** The slot of a row without an address. */
export const NO_SLOT = 0xffffffff;

export class DuplicateTable {
  private readonly keys: Uint32Array;
  private readonly counts: Uint8Array;
  private readonly mask: number;
  private size = 0;

  /** A table for at most `maxEntries` distinct addresses. */
  constructor(maxEntries: number) {
    let capacity = 1024;
    while (capacity < maxEntries * 2) capacity *= 2;
    this.keys = new Uint32Array(capacity * 2);
    this.counts = new Uint8Array(capacity);
    this.mask = capacity - 1;
  }

  /**
   * Counts one occurrence of the address with hash (h1, h2) and answers its slot; (0, 0) is not an address
   * and gets NO_SLOT. Throws when more than `maxEntries` distinct addresses were added.
   */
  add(h1: number, h2: number): number {
    if (h1 === 0 && h2 === 0) return NO_SLOT;
    const { keys, counts, mask } = this;
    let i = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
    for (;;) {
      const count = counts[i];
      if (count === 0) {
        if ((this.size + 1) * 2 > mask + 1) throw new RangeError('duplicate table full');
        keys[2 * i] = h1;
        keys[2 * i + 1] = h2;
        counts[i] = 1;
        this.size++;
        return i;
      }
      if (keys[2 * i] === h1 && keys[2 * i + 1] === h2) {
        if (count === 1) counts[i] = 2;
        return i;
      }
      i = (i + 1) & mask;
    }
  }

  /** Whether the address in `slot` was added more than once. */
  isDuplicate(slot: number): boolean {
    return slot !== NO_SLOT && this.counts[slot] > 1;
  }
}
