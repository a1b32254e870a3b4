// The log of `serve` and `worker`: pino (Fastify's logger), one line a request, a list's steps, a mail
// server refusing this machine or talking to it again, in JSON (for a log shipper; written by a thread of its own,
// logRing.ts) or text (for a person at a terminal; formatted and written by the node itself). A key never appears: requests are logged by
// their route and key id, never their URL, headers or query, and pino redacts any `api_key` that an error
// might carry. See docs/operations.md "Logs".
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { pino, type DestinationStream, type Logger } from 'pino';
import { workerScriptUrl } from '../workerUrl.js';
import { subscribe } from './events.js';
import {
  CLOSING,
  DONE,
  FLUSH_MS,
  INLINE,
  jsonRequestLine,
  NO_READER,
  READER,
  RingReader,
  RingWriter,
  routeMember,
  ringBuffers,
} from './logRing.js';
import { writeAll } from '../fdWrite.js';

export type LogFormat = 'json' | 'text';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

/** Text on a terminal, JSON otherwise (a service manager, a container, a pipe). */
export function defaultLogFormat(isTerminal = process.stdout.isTTY === true): LogFormat {
  return isTerminal ? 'text' : 'json';
}

/**
 * Wherever a key could sit in what is logged: replaced, never printed. Exact paths (a wildcard makes pino's
 * redaction walk every record, on every request).
 */
export const REDACTED_PATHS = [
  'api_key',
  'key',
  'headers.api_key',
  'query.api_key',
  'req.headers.api_key',
  'req.query.api_key',
  'req.url',
  'url',
  'err.url',
];

/**
 * pino's `"time"` member, in ISO 8601: the string of the current millisecond is reused (a busy node logs many
 * lines a millisecond; formatting a date for each costs more than the rest of its line).
 */
function isoTime(now = Date.now()): string {
  if (now !== lastTimeMs) {
    lastTimeMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}
let lastTimeMs = 0;
let lastTime = '';

const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Members of a record that text mode prints first and in this order, before the others. */
const TEXT_ORDER = ['reqId', 'route', 'status', 'ms', 'keyId', 'listId', 'event'];
const NOT_PRINTED = new Set(['level', 'time', 'msg']);

function textValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[\s"=]/.test(text) ? JSON.stringify(text) : text;
}

/** One JSON record as a line of text: `time LEVEL message key=value …`. */
export function textLine(record: Record<string, unknown>): string {
  const time = typeof record.time === 'string' ? record.time : new Date().toISOString();
  const level =
    typeof record.level === 'number'
      ? (LEVELS[record.level] ?? String(record.level))
      : (typeof record.level === 'string' ? record.level : 'info').toUpperCase();
  const keys = [
    ...TEXT_ORDER.filter((key) => key in record),
    ...Object.keys(record).filter((key) => !TEXT_ORDER.includes(key) && !NOT_PRINTED.has(key)),
  ];
  const fields = keys.map((key) => `${key}=${textValue(record[key])}`).join(' ');
  return `${time} ${level.padEnd(5)} ${typeof record.msg === 'string' ? record.msg : ''}${fields ? ` ${fields}` : ''}\n`;
}

/** A pino destination that writes each record as text to `out`. */
function textDestination(out: { write(line: string): unknown }): DestinationStream {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      out.write(textLine(record));
    },
  };
}

/**
 * Standard output as a node's JSON log: pino's lines and the members of request lines go into a ring of shared
 * memory, and a thread of its own (logWriter.ts) makes the lines and writes them, in the order they were
 * logged, at least every FLUSH_MS (service/ops/logRing.ts says why). Should that thread not start or stop, this
 * one makes and writes them, in batches. What is left when the process exits is written before it ends.
 */
class ThreadedLog implements DestinationStream {
  private readonly buffers = ringBuffers();
  private readonly control = new Int32Array(this.buffers.control);
  readonly ring = new RingWriter(this.buffers, (waitedMs) => {
    // Full: the writer is behind (it writes at the pace of standard output), starting, or gone.
    if (this.reader || (waitedMs >= WRITER_START_MS && this.takeOver(false))) this.readInline();
  });
  /** Reads the ring on this thread, once it is its reader (INLINE). */
  private reader: RingReader | undefined;
  /** Standard output took the lines (false once it is closed: EPIPE). */
  private writable = true;
  /** After exit: lines are written at once. */
  private closed = false;
  /** `Date.now() - performance.now()`, brought up to date every FLUSH_MS: a request's time without a clock read. */
  clockOffset = Date.now() - performance.now();

  constructor(private readonly fd = 1) {
    const worker = new Worker(workerScriptUrl(import.meta.url, 'logWriter'), {
      workerData: { buffers: this.buffers, fd },
      // None of the node's own options (`--input-type` stops a worker from starting).
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const stopped = () => {
      // The writer thread stopped, and never runs again: this thread reads the ring from now on.
      if (!this.reader && !this.closed && this.takeOver(true)) this.readInline();
    };
    worker.once('error', stopped);
    worker.once('exit', stopped);
    setInterval(() => {
      this.clockOffset = Date.now() - performance.now();
      this.ring.publish();
      if (this.reader) this.readInline();
    }, FLUSH_MS).unref();
    process.once('exit', () => this.close());
  }

  write(line: string): void {
    if (this.closed) this.put(line);
    else this.ring.text(line);
  }

  /**
   * Makes this thread the ring's reader, if the writer thread has not started (it then stands aside when it
   * does) or has stopped, or `force`: the writer is known to be gone. Whether it is now. A writer that runs
   * but is slow (standard output blocks) keeps the ring: two readers would write lines twice.
   */
  private takeOver(force: boolean): boolean {
    const control = this.control;
    const unread = Atomics.compareExchange(control, READER, NO_READER, INLINE) === NO_READER;
    if (!unread && !force && Atomics.load(control, DONE) !== 1) return false;
    Atomics.store(control, READER, INLINE);
    this.reader = new RingReader(this.buffers);
    return true;
  }

  private readInline(): void {
    this.ring.publish();
    const lines = this.reader!.take();
    if (lines.length > 0) this.put(lines);
  }

  private put(lines: string | Uint8Array): void {
    if (!this.writable) return;
    try {
      writeAll(this.fd, lines);
    } catch {
      // Standard output is closed (EPIPE): the lines cannot go anywhere.
      this.writable = false;
    }
  }

  /** The process exits: what the ring holds is written (by the writer thread, or here). */
  private close(): void {
    if (this.reader || this.takeOver(false)) this.readInline();
    else {
      const control = this.control;
      this.ring.publish();
      Atomics.store(control, CLOSING, 1);
      this.ring.wake();
      // A writer blocked on a full pipe for this long loses what it holds; the process does not wait longer.
      Atomics.wait(control, DONE, 0, EXIT_WAIT_MS);
    }
    this.closed = true;
  }
}

/** A full ring whose writer thread has not started for this long is read by the logging thread itself. */
const WRITER_START_MS = 2000;
/** How long an exiting node waits for its log's writer thread to write what is left. */
const EXIT_WAIT_MS = 5000;

export interface LoggerOptions {
  readonly format: LogFormat;
  /** Where lines go (default: standard output). */
  readonly destination?: NodeJS.WritableStream;
  readonly level?: string;
}

/** Where a logger made by createLogger writes, and in which format: its request lines are written there. */
const outputs = new WeakMap<
  Logger,
  {
    readonly format: LogFormat;
    write(line: string): void;
    readonly threaded?: ThreadedLog;
    /** Whether the logger logs at info (pino's isLevelEnabled looks the level up at every call). */
    readonly info: { enabled: boolean };
  }
>();

export function createLogger(options: LoggerOptions): Logger {
  const settings = {
    level: options.level ?? 'info',
    base: undefined,
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Fastify's default request serializer prints the URL (and so E1–E6's key): only what identifies it.
    serializers: {
      req: (request: { id?: string; method?: string; routeOptions?: { url?: string } }) => ({
        id: request.id,
        method: request.method,
        route: request.routeOptions?.url,
      }),
      err: pino.stdSerializers.err,
    },
  };
  const text = options.format === 'text';
  const threaded = options.destination ? undefined : new ThreadedLog();
  const out: { write(line: string): void } = options.destination ?? threaded!;
  const logger = pino(settings, text ? textDestination(out) : out);
  const info = { enabled: logger.isLevelEnabled('info') };
  logger.on('level-change', () => (info.enabled = logger.isLevelEnabled('info')));
  outputs.set(logger, {
    format: options.format,
    write: (line) => out.write(line),
    ...(threaded && !text ? { threaded } : {}),
    info,
  });
  return logger;
}

/** Writes the line of an answered request of one route (`now`: `performance.now()` as it was answered). */
export type RequestLine = (
  reqId: string,
  status: number,
  ms: number,
  keyId: number | null,
  now: number,
) => void;

/**
 * The request lines of `route` (its requests are logged when their answers end, service/ops/requests.ts):
 * `{"level":"info","time":…,"reqId":…,"route":…,"status":…,"ms":…,"keyId":…,"msg":"request"}`, the line pino
 * writes for `logger.info({ reqId, route, status, ms, keyId }, 'request')`, made here without pino: its
 * serialisation of the object costs 0.8 µs a line, and E1 answers a request in about 15 µs of CPU (issue 28
 * allows logs and metrics 5% of it). On standard output a request only puts its members in the log's ring,
 * and the log's writer thread makes its line (logRing.ts). Nothing in a line can hold a key: the route is the
 * endpoint's pattern, the request id Fastify's counter, the key id a number. A logger not made by createLogger gets pino's line.
 */
export function requestLineFor(logger: Logger, route: string): RequestLine {
  const output = outputs.get(logger);
  if (!output)
    return (reqId, status, ms, keyId) =>
      logger.info({ reqId, route, status, ms: round(ms), keyId: keyId ?? undefined }, 'request');
  if (output.format === 'text')
    return (reqId, status, ms, keyId) => {
      if (output.info.enabled)
        output.write(
          textLine({
            time: new Date().toISOString(),
            level: 'info',
            msg: 'request',
            reqId,
            route,
            status,
            ms: round(ms),
            ...(keyId === null ? {} : { keyId }),
          }),
        );
    };
  const threaded = output.threaded;
  if (threaded) {
    const ring = threaded.ring;
    const index = ring.route(route);
    const info = output.info;
    return (reqId, status, ms, keyId, now) => {
      if (info.enabled) ring.request(index, reqId, status, ms, keyId, threaded.clockOffset + now);
    };
  }
  const member = routeMember(route);
  return (reqId, status, ms, keyId) => {
    if (output.info.enabled) output.write(jsonRequestLine(Date.now(), reqId, member, status, ms, keyId));
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * Logs what a node does beyond requests: a list's steps (accepted, planned, part done, finished, failed, with
 * its id and its key's id) and a mail server refusing this machine or talking to it again. Gives the
 * unsubscribe.
 */
export function logNodeEvents(log: Logger): () => void {
  const stops = [
    subscribe('list', (event) => {
      const { event: step, ...fields } = event;
      (step === 'failed' ? log.warn : log.info).call(log, { event: step, ...fields }, `list ${step}`);
    }),
    subscribe(
      'smtp.refusal',
      ({ sourceAddress, host, kind, detail, isNew }) =>
        isNew &&
        log.warn(
          { event: 'host refusing', host, kind, sourceAddress: sourceAddress || undefined, reply: detail },
          `${host} refused this machine (${kind})`,
        ),
    ),
    subscribe('smtp.recovered', ({ sourceAddress, host }) =>
      log.info(
        { event: 'host recovered', host, sourceAddress: sourceAddress || undefined },
        `${host} talks to this machine again`,
      ),
    ),
  ];
  return () => stops.forEach((stop) => stop());
}
