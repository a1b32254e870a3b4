// A node's JSON log on standard output, written by a thread of its own (service/ops/logWriter.ts): the main
// thread puts each record in a ring of shared memory, the writer thread makes the lines and writes them. A
// request's line then costs the thread that answers requests a few stores (its members, not its text): E1
// answers a request in about 15 µs of CPU, and making its line and writing it cost that thread a fifth of its
// requests/s (issue 28 allows logs and metrics 5%); the writer works on the other core.
//
// One ring for every line, so lines come out in the order they were logged: a request's members, a line pino
// made (any other line: list steps, refusals, errors), a route's name (given once, before its requests). When
// the ring is full the logging thread waits for the writer (as it waited for a synchronous write before);
// when the process exits, the writer writes what is left before the process ends. Without a writer (its
// thread failed), the logging thread makes and writes the lines itself, in batches.

/** The ring's control cells (an Int32Array over their own SharedArrayBuffer). */
export const WRITE = 0; // bytes published, ever (wraps at 2^32)
export const READ = 1; // bytes the writer is done with, ever
export const CLOSING = 2; // 1: the process is exiting, write what is left and stop
export const DONE = 3; // 1: the writer wrote everything and stopped
export const FULL = 4; // 1: the logging thread waits for room
/** Who reads the ring: NO_READER yet, the writer THREAD, or the logging thread itself (INLINE). */
export const READER = 5;
export const NO_READER = 0;
export const THREAD = 1;
export const INLINE = 2;
/** Changed (and notified) to wake the writer before its FLUSH_MS are up. */
export const SIGNAL = 6;
const CONTROL_CELLS = 7;

/** Record kinds (a record's second word). */
const PAD = 0; // the rest of the ring, to its end, is unused
const REQUEST = 1;
const TEXT = 2;
const ROUTE = 3;

/**
 * The writer wakes every FLUSH_MS (the longest a line waits in the ring), or sooner when a quarter of the ring
 * is used. Not at every line: each wake-up costs the node a system call and a switch of threads, which on
 * 2 cores cost E1 more than the lines themselves.
 */
export const FLUSH_MS = 200;
/**
 * Steps of nice the writer thread runs below the node's request thread (Linux): its lines wait in the ring
 * (up to FLUSH_MS) anyway, so it yields the core it shares with the node's clients. It needs ~1.5% of a core
 * at 50,000 lines/s, and the ring holds 1.5 s of them: at 10 below a busy thread it still gets about a tenth
 * of their core, and should the ring fill, the node waits for it (nothing is lost). `serve --metrics
 * --log-format json` against quiet, loaded one at a time (`wrk -t1 -c32`, eight alternating rounds): 95.0% of
 * quiet's requests/s at the node's priority, 96.4% at 5 below, 97.2% at 10; another eight, 92.2% at 5, 96.6%
 * at 10, 94.8% at 19.
 */
export const WRITER_STEPS_BELOW = 10;
/** A request id longer than this is cut (Fastify's own are `req-` and a base-36 counter). */
const MAX_ID_BYTES = 64;
/** Request records are published to the writer this many at once. */
const RECORDS_A_PUBLISH = 16;

export interface RingBuffers {
  readonly control: SharedArrayBuffer;
  readonly data: SharedArrayBuffer;
}

/** A ring's memory: `bytes` of records (a power of two, a multiple of 8). */
export function ringBuffers(bytes = 1 << 22): RingBuffers {
  if (bytes & (bytes - 1) || bytes < 16384) throw new Error(`a log ring is a power of two bytes, ≥ 16384`);
  return {
    control: new SharedArrayBuffer(CONTROL_CELLS * 4),
    data: new SharedArrayBuffer(bytes),
  };
}

class Views {
  readonly control: Int32Array;
  readonly bytes: Uint8Array;
  readonly words: Uint32Array;
  readonly doubles: Float64Array;
  readonly size: number;
  constructor({ control, data }: RingBuffers) {
    this.control = new Int32Array(control);
    this.bytes = new Uint8Array(data);
    this.words = new Uint32Array(data);
    this.doubles = new Float64Array(data);
    this.size = data.byteLength;
  }
}

const align8 = (n: number) => (n + 7) & ~7;
const encoder = new TextEncoder();

/** The logging thread's end of a ring: records in, and the writer told when to wake. */
export class RingWriter {
  private readonly views: Views;
  /** Where the next record goes (bytes written, ever; wraps at 2^32); published to WRITE in batches. */
  private position = 0;
  /** Records written and not yet published. */
  private unpublished = 0;
  /** READ as last seen: the room there is at least until there. */
  private read = 0;
  /** Bytes published since the writer was last woken. */
  private unsignalled = 0;
  private routes = 0;

  /**
   * `onFull`: the ring has no room, for `waitedMs` so far; called before each wait for the writer (an inline
   * reader reads it then).
   */
  constructor(
    buffers: RingBuffers,
    private readonly onFull: (waitedMs: number) => void = () => undefined,
  ) {
    this.views = new Views(buffers);
  }

  /** A route's number, for its requests' records (its `,"route":…` member is given to the writer once). */
  route(name: string): number {
    const index = this.routes++;
    const member = routeMember(name);
    const p = this.reserve(16 + member.length);
    const { words, bytes } = this.views;
    words[(p >> 2) + 1] = ROUTE;
    words[(p >> 2) + 2] = index;
    words[(p >> 2) + 3] = member.length;
    bytes.set(member, p + 16);
    this.written(p, 16 + member.length);
    return index;
  }

  /** A request's line: its members (`time`: milliseconds since 1970; `keyId` null: no key). */
  request(
    route: number,
    reqId: string,
    status: number,
    ms: number,
    keyId: number | null,
    time: number,
  ): void {
    const length = reqId.length <= MAX_ID_BYTES ? reqId.length : MAX_ID_BYTES;
    const p = this.reserve(44 + length * 3);
    const { words, doubles, bytes } = this.views;
    const w = p >> 2;
    const d = p >> 3;
    words[w + 1] = REQUEST;
    doubles[d + 1] = time;
    doubles[d + 2] = ms;
    words[w + 6] = status;
    words[w + 7] = route;
    doubles[d + 4] = keyId === null ? Number.NaN : keyId;
    let idBytes = 0;
    for (let i = 0; i < length; i++) {
      const code = reqId.charCodeAt(i);
      if (code >= 0x80) {
        idBytes = encoder.encodeInto(
          reqId.slice(0, length),
          bytes.subarray(p + 44, p + 44 + length * 3),
        ).written;
        break;
      }
      bytes[p + 44 + i] = code;
      idBytes++;
    }
    words[w + 10] = idBytes;
    this.written(p, 44 + idBytes);
    if (++this.unpublished >= RECORDS_A_PUBLISH) this.publish();
  }

  /** A line made elsewhere (pino's), with its newline; published at once. A line of over a twelfth of the ring's bytes is cut. */
  text(line: string): void {
    const most = ((this.views.size >> 2) / 3) | 0;
    const cut = line.length > most ? `${line.slice(0, most - 1)}\n` : line;
    const p = this.reserve(12 + cut.length * 3);
    const { words, bytes } = this.views;
    const written = encoder.encodeInto(cut, bytes.subarray(p + 12, p + 12 + cut.length * 3)).written;
    words[(p >> 2) + 1] = TEXT;
    words[(p >> 2) + 2] = written;
    this.written(p, 12 + written);
    this.publish();
  }

  /**
   * Makes the records written so far readable by the writer: every RECORDS_A_PUBLISH requests, at each other
   * line, and every FLUSH_MS by the log's owner (a store the reader sees costs a fence: not at every request).
   */
  publish(): void {
    const { control, size } = this.views;
    if (this.unpublished === 0 && Atomics.load(control, WRITE) === this.position) return;
    this.unpublished = 0;
    const published = Atomics.exchange(control, WRITE, this.position);
    if ((this.unsignalled += (this.position - published) >>> 0) >= size >> 2) this.wake();
  }

  /** Room for a record of at most `bytes` at the write position: its byte offset. */
  private reserve(bytes: number): number {
    const { control, size, words } = this.views;
    const length = align8(bytes);
    let fullSince = 0;
    for (;;) {
      const p = this.position & (size - 1);
      // A record never wraps: the end of the ring is padded when the record does not fit there.
      const pad = p + length > size ? size - p : 0;
      if (((this.position - this.read) >>> 0) + pad + length <= size) {
        if (pad === 0) return p;
        words[p >> 2] = pad;
        words[(p >> 2) + 1] = PAD;
        this.position = (this.position + pad) | 0;
        continue;
      }
      const read = Atomics.load(control, READ);
      if (read !== this.read) {
        this.read = read;
        continue;
      }
      // Full: the writer is told to read, and given a moment to.
      this.publish();
      Atomics.store(control, FULL, 1);
      this.wake();
      if (fullSince === 0) fullSince = Date.now();
      this.onFull(Date.now() - fullSince);
      if (Atomics.load(control, READ) === read) Atomics.wait(control, READ, read, 10);
    }
  }

  private written(p: number, bytes: number): void {
    const length = align8(bytes);
    this.views.words[p >> 2] = length;
    this.position = (this.position + length) | 0;
  }

  /** Wakes the writer. */
  wake(): void {
    this.unsignalled = 0;
    const control = this.views.control;
    Atomics.add(control, SIGNAL, 1);
    Atomics.notify(control, SIGNAL);
  }
}

/** The writer's end of a ring: the lines of the records published, in order, as UTF-8. */
export class RingReader {
  private readonly views: Views;
  private readonly lines = new LineBuilder();
  /** Each route's `,"route":…` member, by number. */
  private readonly routes: Uint8Array[] = [];

  constructor(buffers: RingBuffers) {
    this.views = new Views(buffers);
  }

  /**
   * The lines of every record published and not yet read (empty when none; valid until the next call), and the
   * ring's room back.
   */
  take(): Uint8Array {
    const { control, size, words, doubles, bytes } = this.views;
    const lines = this.lines;
    lines.clear();
    const end = Atomics.load(control, WRITE);
    let read = Atomics.load(control, READ);
    while (read !== end) {
      const p = read & (size - 1);
      const w = p >> 2;
      const length = words[w];
      const kind = words[w + 1];
      if (kind === REQUEST) {
        const d = p >> 3;
        const keyId = doubles[d + 4];
        lines.request(
          doubles[d + 1],
          bytes,
          p + 44,
          words[w + 10],
          this.routes[words[w + 7]] ?? EMPTY,
          words[w + 6],
          doubles[d + 2],
          Number.isNaN(keyId) ? null : keyId,
        );
      } else if (kind === TEXT) {
        lines.copy(bytes, p + 12, words[w + 2]);
      } else if (kind === ROUTE) {
        this.routes[words[w + 2]] = bytes.slice(p + 16, p + 16 + words[w + 3]);
      }
      read = (read + length) | 0;
    }
    Atomics.store(control, READ, read);
    if (Atomics.load(control, FULL) === 1) {
      Atomics.store(control, FULL, 0);
      Atomics.notify(control, READ);
    }
    return lines.bytes;
  }
}

const EMPTY = new Uint8Array(0);
const LINE_END_TEXT = ',"msg":"request"}\n';
const LINE_END = encoder.encode(LINE_END_TEXT);
const KEY_ID = encoder.encode(',"keyId":');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The most key ids whose line ends a LineBuilder keeps; the lines of other keys are written member by member. */
const TAILS_KEPT = 4096;

/** A number as JSON writes it. */
const jsonNumber = (n: number) => (Number.isFinite(n) ? String(n) : 'null');

/**
 * Request lines made as UTF-8 in one growing buffer: `{"level":"info","time":…,"reqId":…,"route":…,"status":…,
 * "ms":…,"keyId":…,"msg":"request"}`, the line pino writes for `logger.info({ reqId, route, status, ms, keyId },
 * 'request')` (`ms` to the hundredth). Made from bytes, not strings: the ring's records are bytes, and making
 * and joining strings to encode them again cost the writer thread five times as much (CPU the node's other
 * core spends for the E1 load it serves). A line is three pieces made once and copied (its start up to the
 * request id, made for each millisecond; its route and status; its key id and end: the lines of a busy node's
 * millisecond share them), the request id and the time it took: 120 ns a line (`RingReader.take` of records 50 to
 * a millisecond, the id and the line written), where a copy of each constant piece and each number written
 * digit by digit took 205 ns.
 */
export class LineBuilder {
  private buffer = new Uint8Array(1 << 16);
  private length = 0;
  /** `{"level":"info","time":…,"reqId":` of the millisecond `headMs`. */
  private head = EMPTY;
  private headMs = Number.NaN;
  /** `,"route":…,"status":…,"ms":` of the route `middleRoute` and status `middleStatus`. */
  private middle: Uint8Array = EMPTY;
  private middleRoute: Uint8Array | undefined;
  private middleStatus = Number.NaN;
  /** Every middle made, by route member and status (a node has a few routes, each a few statuses). */
  private readonly middles = new Map<Uint8Array, Map<number, Uint8Array>>();
  /**
   * `,"keyId":…,"msg":"request"}\n` of the key id `tailKeyId` (null: no key, no member); undefined: a key
   * whose tail is not kept, written member by member.
   */
  private tail: Uint8Array | undefined = LINE_END;
  private tailKeyId: number | null = null;
  /** Tails made, by key id: the first TAILS_KEPT keys' (a team server's keys may be many, its busy ones few). */
  private readonly tails = new Map<number, Uint8Array>();

  clear(): void {
    this.length = 0;
  }

  /** The lines made since clear(). */
  get bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** A request's line (`time`: ms since 1970; its id: `idLength` UTF-8 bytes of `source` at `idStart`). */
  request(
    time: number,
    source: Uint8Array,
    idStart: number,
    idLength: number,
    routeMember: Uint8Array,
    status: number,
    ms: number,
    keyId: number | null,
  ): void {
    const millisecond = Math.floor(time);
    if (millisecond !== this.headMs) {
      this.headMs = millisecond;
      this.head = encoder.encode(`{"level":"info","time":"${new Date(millisecond).toISOString()}","reqId":`);
    }
    // The last line's middle and tail, else those made for an earlier line: lines of several routes, statuses
    // and keys interleave (a team server's clients), and making the pieces again for each line cost 1,000 ns a
    // line. Kept, 145 ns (two statuses and eight keys in turn); past TAILS_KEPT keys, 250 ns.
    if (routeMember !== this.middleRoute || status !== this.middleStatus) {
      this.middleRoute = routeMember;
      this.middleStatus = status;
      this.middle = this.middleOf(routeMember, status);
    }
    if (keyId !== this.tailKeyId) {
      this.tailKeyId = keyId;
      this.tail = keyId === null ? LINE_END : this.tailOf(keyId);
    }
    this.room(
      this.head.length + idLength * 6 + 2 + this.middle.length + 32 + KEY_ID.length + 32 + LINE_END.length,
    );
    this.put(this.head);
    this.string(source, idStart, idLength);
    this.put(this.middle);
    const hundredths = Math.round(ms * 100);
    if (hundredths >= 0 && hundredths <= Number.MAX_SAFE_INTEGER) {
      const whole = Math.floor(hundredths / 100);
      const part = hundredths - whole * 100;
      this.number(whole);
      if (part !== 0) {
        const buffer = this.buffer;
        buffer[this.length++] = 0x2e; // .
        buffer[this.length++] = 0x30 + Math.floor(part / 10);
        if (part % 10 !== 0) buffer[this.length++] = 0x30 + (part % 10);
      }
    } else this.number(hundredths / 100);
    if (this.tail) this.put(this.tail);
    else {
      this.put(KEY_ID);
      this.number(keyId!);
      this.put(LINE_END);
    }
  }

  /** The route's middle for `status` (`routeMember`: the one array of its route, as RingReader and log.ts keep). */
  private middleOf(routeMember: Uint8Array, status: number): Uint8Array {
    let byStatus = this.middles.get(routeMember);
    if (!byStatus) this.middles.set(routeMember, (byStatus = new Map<number, Uint8Array>()));
    let middle = byStatus.get(status);
    if (!middle) {
      const statusMember = encoder.encode(`,"status":${jsonNumber(status)},"ms":`);
      middle = new Uint8Array(routeMember.length + statusMember.length);
      middle.set(routeMember);
      middle.set(statusMember, routeMember.length);
      byStatus.set(status, middle);
    }
    return middle;
  }

  /** The key's tail; undefined when it has none and TAILS_KEPT are kept (made and dropped, one costs 1 µs). */
  private tailOf(keyId: number): Uint8Array | undefined {
    let tail = this.tails.get(keyId);
    if (!tail && this.tails.size < TAILS_KEPT) {
      tail = encoder.encode(`,"keyId":${jsonNumber(keyId)}${LINE_END_TEXT}`);
      this.tails.set(keyId, tail);
    }
    return tail;
  }

  /** `length` bytes of `source` at `start`, as they are (a line, with its newline). */
  copy(source: Uint8Array, start: number, length: number): void {
    this.room(length);
    this.buffer.set(source.subarray(start, start + length), this.length);
    this.length += length;
  }

  /** A JSON string of UTF-8 bytes: quoted; escaped when it holds a quote, a backslash or a control character. */
  private string(source: Uint8Array, start: number, length: number): void {
    const buffer = this.buffer;
    const from = this.length;
    buffer[this.length++] = QUOTE;
    for (let i = start; i < start + length; i++) {
      const byte = source[i];
      if (byte < 0x20 || byte === QUOTE || byte === BACKSLASH) {
        this.length = from;
        const escaped = encoder.encode(JSON.stringify(decoder.decode(source.slice(start, start + length))));
        this.put(escaped);
        return;
      }
      buffer[this.length++] = byte;
    }
    buffer[this.length++] = QUOTE;
  }

  /** A number as JSON writes it. */
  private number(n: number): void {
    const buffer = this.buffer;
    if (Number.isSafeInteger(n) && n >= 0) {
      if (n < 10) {
        buffer[this.length++] = 0x30 + n;
        return;
      }
      let digits = 0;
      for (let rest = n; rest > 0; rest = Math.floor(rest / 10)) digits++;
      let at = this.length + digits;
      this.length = at;
      for (let rest = n; rest > 0; rest = Math.floor(rest / 10)) buffer[--at] = 0x30 + (rest % 10);
      return;
    }
    const text = jsonNumber(n);
    for (let i = 0; i < text.length; i++) buffer[this.length++] = text.charCodeAt(i);
  }

  private put(bytes: Uint8Array): void {
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** Room for `bytes` more. */
  private room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }
}

const decoder = new TextDecoder();

/** A request line's `,"route":…` member, as UTF-8. */
export const routeMember = (route: string): Uint8Array => encoder.encode(`,"route":${JSON.stringify(route)}`);

/** A request's JSON line, as a string (LineBuilder's line, for a destination that takes strings). */
export function jsonRequestLine(
  time: number,
  reqId: string,
  route: Uint8Array,
  status: number,
  ms: number,
  keyId: number | null,
): string {
  const id = encoder.encode(reqId);
  oneLine.clear();
  oneLine.request(time, id, 0, id.length, route, status, ms, keyId);
  return decoder.decode(oneLine.bytes);
}
/** jsonRequestLine's builder, reused (each holds a 64 KiB buffer). */
const oneLine = new LineBuilder();
