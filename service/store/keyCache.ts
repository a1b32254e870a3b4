// The keys a node has found valid, by the key as a client gives it (the request path's key lookups:
// service/store/keys.ts, service/pg/keys.ts), found without hashing the key's text. A Map by the text hashes
// all of it on every request, for the key arrives as a new string each time: ~1,000 instructions of an E1
// request's ~90,000 under callgrind. Here a number made of the key's length and its last three characters
// (random in a key made here) finds a chain, and the keys of the chain are compared whole. Only keys found
// valid are kept, so a chain holds one key but for a rare coincidence; a key a client makes up to share a
// valid key's chain is compared with that key, and looked up as any unknown key is.

interface Entry<V> {
  readonly key: string;
  value: V;
  readonly next: Entry<V> | undefined;
}

/** A small integer of the key's length and last three characters (a Map hashes it in a few instructions). */
function fingerprint(key: string): number {
  const length = key.length;
  if (length < 3) return length;
  return (
    (key.charCodeAt(length - 1) ^
      (key.charCodeAt(length - 2) << 6) ^
      (key.charCodeAt(length - 3) << 12) ^
      ((length & 0xff) << 20)) &
    0x3fffffff
  );
}

export class KeyCache<V> {
  private readonly chains = new Map<number, Entry<V>>();

  get(key: string): V | undefined {
    for (let entry = this.chains.get(fingerprint(key)); entry !== undefined; entry = entry.next)
      if (entry.key === key) return entry.value;
    return undefined;
  }

  has(key: string): boolean {
    for (let entry = this.chains.get(fingerprint(key)); entry !== undefined; entry = entry.next)
      if (entry.key === key) return true;
    return false;
  }

  set(key: string, value: V): void {
    const at = fingerprint(key);
    const first = this.chains.get(at);
    for (let entry = first; entry !== undefined; entry = entry.next)
      if (entry.key === key) {
        entry.value = value;
        return;
      }
    this.chains.set(at, { key, value, next: first });
  }

  clear(): void {
    this.chains.clear();
  }
}
