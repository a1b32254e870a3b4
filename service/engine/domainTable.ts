// A read-only table of ASCII domains, each with a small number (its domain type), held in two typed arrays
// rather than in a Map of strings. The engine's domain lists (136,000 domains) cost each thread that verifies
// 8 MB of strings and hash tables in V8's heap and 100–200 ms of CPU to read and index; a list's run has two
// such threads (its pipeline and verify workers) beside the service. As a table made at build time
// (build/build.js writes it beside the engine's data) a thread reads 3 MB outside V8's heap in a millisecond
// or two, and a lookup costs what a Map's did (a hash of the domain, a read of a slot and of its entry).
//
// Open addressing over a blob of entries: an entry is its length (one byte), its bytes, its value (one byte);
// a slot holds an entry's offset + 1 (0: empty), at the first free slot from the domain's hash on. Beside the
// slots, one byte a slot holds a tag of its domain's hash (0: empty): a lookup compares an entry's bytes only
// when the tags agree. Nearly every lookup misses (most of a list's domains are no listed one's), and a miss
// then reads only the tags (256 KiB for the engine's table) where it read a slot and an entry at random in
// 4 MiB for each occupied slot of its probe: ~150 of the offline checks' ~1,250 ns an address (issue 38).

/** FNV-1a over a string's char codes (the table's domains and the domains looked up are ASCII). */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Whether a string is ASCII (all its char codes below 128). */
export const isAscii = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
};

/** Entries of a table: `domains` (ASCII, lower-case) all with `value` (1–255). */
export interface DomainList {
  readonly domains: readonly string[];
  readonly value: number;
}

/** The serialised form's first word ("MSDT"), then its version. */
const MAGIC = 0x5444534d;
const VERSION = 2;

/** A hash's tag, 1–255 (0 marks an empty slot): from its high bits, where the slot is from its low ones. */
const tagOf = (hash: number): number => ((hash >>> 24) % 255) + 1;
const HEADER_WORDS = 4;

export class DomainTable {
  private constructor(
    private readonly slots: Int32Array,
    private readonly tags: Uint8Array,
    private readonly blob: Uint8Array,
  ) {}

  /**
   * The table of `lists`: a domain in several keeps the value of the last, as Map#set would. Domains that are
   * not ASCII or longer than 255 characters are left out (domain lookups are of A-labels, at most 253 long).
   */
  static of(lists: readonly DomainList[]): DomainTable {
    let count = 0;
    let bytes = 0;
    for (const { domains, value } of lists) {
      if (!Number.isInteger(value) || value < 1 || value > 255)
        throw new Error(`a domain table's values are 1–255, not ${value}`);
      count += domains.length;
      for (const domain of domains) bytes += domain.length + 2;
    }
    // At most two thirds full: a miss (most lookups) ends at an empty slot within a probe or two.
    let size = 1024;
    while (size < count * 1.5) size *= 2;
    const slots = new Int32Array(size);
    const tags = new Uint8Array(size);
    const blob = new Uint8Array(bytes);
    const mask = size - 1;
    let end = 0;
    for (const { domains, value } of lists)
      for (const domain of domains) {
        if (domain.length > 255 || !isAscii(domain)) continue;
        const slot = findSlot(slots, tags, blob, mask, domain);
        const entry = slots[slot];
        if (entry !== 0) {
          blob[entry + domain.length] = value; // already there: its value is the last one's
          continue;
        }
        slots[slot] = end + 1;
        tags[slot] = tagOf(hashOf(domain));
        blob[end] = domain.length;
        for (let i = 0; i < domain.length; i++) blob[end + 1 + i] = domain.charCodeAt(i);
        blob[end + 1 + domain.length] = value;
        end += domain.length + 2;
      }
    return new DomainTable(slots, tags, blob.subarray(0, end));
  }

  /** The table written by toBytes. Throws on bytes that are not one (another version: build again). */
  static fromBytes(bytes: Uint8Array): DomainTable {
    const header = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + HEADER_WORDS * 4));
    const [magic, version, size, blobLength] = header;
    if (magic !== MAGIC || version !== VERSION || size <= 0 || (size & (size - 1)) !== 0)
      throw new Error('not a domain table of this version');
    const slotsAt = bytes.byteOffset + HEADER_WORDS * 4;
    if (bytes.byteLength !== HEADER_WORDS * 4 + size * 5 + blobLength)
      throw new Error('a domain table cut short or too long');
    // The slots copied into an aligned array of their own; the tags and the entries viewed where they are.
    const slots = new Int32Array(bytes.buffer.slice(slotsAt, slotsAt + size * 4));
    const tagsAt = HEADER_WORDS * 4 + size * 4;
    return new DomainTable(slots, bytes.subarray(tagsAt, tagsAt + size), bytes.subarray(tagsAt + size));
  }

  /** The table as bytes (fromBytes reads them), for a file. */
  toBytes(): Uint8Array {
    const tagsAt = HEADER_WORDS * 4 + this.slots.byteLength;
    const out = new Uint8Array(tagsAt + this.tags.byteLength + this.blob.byteLength);
    new Int32Array(out.buffer, 0, HEADER_WORDS).set([MAGIC, VERSION, this.slots.length, this.blob.length]);
    out.set(
      new Uint8Array(this.slots.buffer, this.slots.byteOffset, this.slots.byteLength),
      HEADER_WORDS * 4,
    );
    out.set(this.tags, tagsAt);
    out.set(this.blob, tagsAt + this.tags.byteLength);
    return out;
  }

  /** The value of `domain`, or 0 when the table does not hold it. */
  get(domain: string): number {
    const entry = this.slots[findSlot(this.slots, this.tags, this.blob, this.slots.length - 1, domain)];
    return entry === 0 ? 0 : this.blob[entry + domain.length];
  }

  /** Bytes held (the slots, their tags and the entries). */
  get byteLength(): number {
    return this.slots.byteLength + this.tags.byteLength + this.blob.byteLength;
  }
}

/** The slot holding `domain`, or the empty slot where it would go. */
function findSlot(
  slots: Int32Array,
  tags: Uint8Array,
  blob: Uint8Array,
  mask: number,
  domain: string,
): number {
  const length = domain.length;
  const hash = hashOf(domain);
  const tag = tagOf(hash);
  for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
    const slotTag = tags[slot];
    if (slotTag === 0) return slot;
    if (slotTag !== tag) continue;
    const at = slots[slot] - 1;
    if (blob[at] !== length) continue;
    let i = 0;
    while (i < length && blob[at + 1 + i] === domain.charCodeAt(i)) i++;
    if (i === length) return slot;
  }
}
