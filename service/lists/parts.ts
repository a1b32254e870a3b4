// A list is cut into parts: runs of rows that are each a unit of work (their online checks, then their part
// of the results) and of storage (each part's results bytes are kept on their own; E10 streams the head, then
// the parts in order). The cut is made once the list is planned (pass 1, pipeline/plan.ts): every PART_ROWS
// rows, or sooner once a part holds PART_BYTES of input, so that a part's bytes always fit in memory.
//
// What a part needs of pass 1 travels as PartRows: each row's place in the part's bytes, its offline verdict,
// whether it is a duplicate, its `Valid Email` and, for online checks, its address. The single-node service
// hands PartRows over in memory; the team server stores them encoded (encodePartRows) with the part, so any
// node can write any part. Both then write the part with the same code (partWriter.ts).

/** Rows in a part (the last part may hold fewer). */
export const PART_ROWS = 10_000;
/**
 * A team server's list with SMTP checks is cut into at least SPREAD_PARTS parts (of at least SPREAD_MIN_ROWS
 * rows): a node's pace at a mail server is its own source address's allowance, so a list dominated by one
 * domain goes as fast as the nodes that share it, and they can share only parts.
 */
export const SPREAD_PARTS = 32;
export const SPREAD_MIN_ROWS = 100;

/** Rows per part of a list of `records` rows: `partRows` when given, else as `spreadParts` asks, else PART_ROWS. */
export function rowsPerPart(records: number, partRows?: number, spreadParts?: number): number {
  if (partRows !== undefined) return partRows;
  if (spreadParts === undefined) return PART_ROWS;
  return Math.min(PART_ROWS, Math.max(SPREAD_MIN_ROWS, Math.ceil(records / spreadParts)));
}

/** Input bytes after which a part ends early (a row is at most 1 MiB, so a part stays under 9 MiB). */
export const PART_BYTES = 8 * 1024 * 1024;

/** A part's rows. Offsets are relative to the part's first byte (PartBounds.byteStart). */
export interface PartRows {
  readonly count: number;
  readonly start: Uint32Array;
  readonly length: Uint32Array;
  readonly codes: Uint16Array;
  readonly flags: Uint16Array;
  /** 1 for a row whose address appears elsewhere in the list. */
  readonly dup: Uint8Array;
  /** By row of the part: the `Valid Email` of valid and corrected rows. */
  readonly validEmails: ReadonlyMap<number, string>;
  /** By row of the part, for a list with online checks: the address of a row left undecided offline (code 10). */
  readonly undecided: ReadonlyMap<number, string>;
}

/** The distinct addresses a part checks online, in order of first appearance, and the rows holding each. */
export interface PartAddresses {
  readonly addresses: string[];
  readonly rowCounts: number[];
  readonly rowsOf: number[][];
}

/**
 * The addresses of a part's rows of code 10 (undecided offline), each once. Rows of code 10 without an
 * address (none in practice) are complete as they are.
 */
export function partAddresses(rows: PartRows): PartAddresses {
  const addresses: string[] = [];
  const rowsOf: number[][] = [];
  const indexOf = new Map<string, number>();
  for (let i = 0; i < rows.count; i++) {
    if (rows.codes[i] !== 10) continue;
    const address = rows.undecided.get(i);
    if (address === undefined) continue;
    let index = indexOf.get(address);
    if (index === undefined) {
      index = addresses.length;
      indexOf.set(address, index);
      addresses.push(address);
      rowsOf.push([]);
    }
    rowsOf[index].push(i);
  }
  return { addresses, rowCounts: rowsOf.map((r) => r.length), rowsOf };
}

/** Rows of a part complete before any online check (every row but those waiting for one). */
export function offlineCompleted(rows: PartRows, addresses: PartAddresses): number {
  let waiting = 0;
  for (const count of addresses.rowCounts) waiting += count;
  return rows.count - waiting;
}

// The encoding of PartRows: a little-endian header of counts, the typed arrays (each aligned to its element
// size), then the strings as one UTF-8 JSON array [row, text, …] for each map. Versioned by its first word.
const ENCODING_VERSION = 1;

export function encodePartRows(rows: PartRows): Buffer {
  const strings = Buffer.from(
    JSON.stringify([[...rows.validEmails].flat(), [...rows.undecided].flat()]),
    'utf8',
  );
  const n = rows.count;
  const fixed = 12 + n * 4 * 2 + n * 2 * 2 + n;
  const out = Buffer.alloc(fixed + strings.length);
  out.writeUInt32LE(ENCODING_VERSION, 0);
  out.writeUInt32LE(n, 4);
  out.writeUInt32LE(strings.length, 8);
  let at = 12;
  const put = (array: Uint32Array | Uint16Array | Uint8Array) => {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    out.set(bytes, at);
    at += bytes.length;
  };
  put(rows.start.subarray(0, n));
  put(rows.length.subarray(0, n));
  put(rows.codes.subarray(0, n));
  put(rows.flags.subarray(0, n));
  put(rows.dup.subarray(0, n));
  out.set(strings, at);
  return out;
}

export function decodePartRows(encoded: Uint8Array): PartRows {
  const view = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  const version = view.readUInt32LE(0);
  if (version !== ENCODING_VERSION)
    throw new Error(`a part was planned by another version of Mailsieve (encoding ${version})`);
  const n = view.readUInt32LE(4);
  const stringBytes = view.readUInt32LE(8);
  let at = 12;
  // Copied out (the typed arrays must be aligned, and the buffer may be a slice of a pool).
  const take = <T>(bytes: number, make: (buffer: ArrayBuffer) => T): T => {
    const copy = new ArrayBuffer(bytes);
    new Uint8Array(copy).set(view.subarray(at, at + bytes));
    at += bytes;
    return make(copy);
  };
  const start = take(n * 4, (b) => new Uint32Array(b));
  const length = take(n * 4, (b) => new Uint32Array(b));
  const codes = take(n * 2, (b) => new Uint16Array(b));
  const flags = take(n * 2, (b) => new Uint16Array(b));
  const dup = take(n, (b) => new Uint8Array(b));
  const [valid, undecided] = JSON.parse(view.toString('utf8', at, at + stringBytes)) as [
    (number | string)[],
    (number | string)[],
  ];
  const pairs = (flat: (number | string)[]) => {
    const map = new Map<number, string>();
    for (let i = 0; i < flat.length; i += 2) map.set(flat[i] as number, flat[i + 1] as string);
    return map;
  };
  return {
    count: n,
    start,
    length,
    codes,
    flags,
    dup,
    validEmails: pairs(valid),
    undecided: pairs(undecided),
  };
}
