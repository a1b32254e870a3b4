// The log of `serve` and `worker`: pino (Fastify's logger), one line a request, a list's steps, a mail
// server refusing this machine or talking to it again, in JSON (for a log shipper) or text (for a person at a
// terminal; formatted in this process, no transport thread). A key never appears: requests are logged by
// their route and key id, never their URL, headers or query, and pino redacts any `api_key` that an error
// might carry. See docs/operations.md "Logs".
import { pino, type DestinationStream, type Logger } from 'pino';
import { subscribe } from './events.js';

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
 * requests a millisecond; formatting a date for each costs it more than the rest of its line).
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

/** The longest a JSON line waits in the log's buffer. */
export const FLUSH_MS = 200;
/** A batch of JSON lines is written once it holds this many characters, or this many request lines. */
const BATCH_CHARS = 4096;
const BATCH_REQUESTS = 32;

/**
 * Standard output in batches of 4 KiB, and at least every FLUSH_MS: a write a line costs a busy node a fifth of
 * its CPU. The lines of a batch are joined when it is written (sonic-boom's own `minLength` appends each line
 * to one growing string and measures that string's bytes again at every line). Written synchronously, like
 * pino's default destination; what is left goes out when the process exits.
 */
class LineBatch implements DestinationStream {
  private lines: string[] = [];
  private chars = 0;
  private readonly out = pino.destination({ dest: 1, sync: true });
  /**
   * Request lines not yet made: their members, in arrival order, made into lines when the batch is written (a
   * request pays a few array stores; the lines are made together, before any later line of pino's).
   */
  private readonly requests = {
    routes: [] as string[],
    ids: [] as string[],
    statuses: [] as number[],
    ms: [] as number[],
    keyIds: [] as (number | null)[],
    times: [] as number[],
  };

  constructor() {
    setInterval(() => this.flush(), FLUSH_MS).unref();
    process.once('exit', () => this.flush());
  }

  write(line: string): void {
    if (this.requests.ids.length > 0) this.makeRequestLines();
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= BATCH_CHARS) this.flush();
  }

  /** Adds the line of a request (`routeMember`: its `,"route":…` member, made once per route). */
  request(routeMember: string, reqId: string, status: number, ms: number, keyId: number | null): void {
    const requests = this.requests;
    requests.routes.push(routeMember);
    requests.ids.push(reqId);
    requests.statuses.push(status);
    requests.ms.push(ms);
    requests.keyIds.push(keyId);
    requests.times.push(Date.now());
    if (requests.ids.length >= BATCH_REQUESTS) this.flush();
  }

  private makeRequestLines(): void {
    const { routes, ids, statuses, ms, keyIds, times } = this.requests;
    for (let i = 0; i < ids.length; i++) {
      const line = jsonRequestLine(times[i], ids[i], routes[i], statuses[i], ms[i], keyIds[i]);
      this.lines.push(line);
      this.chars += line.length;
    }
    for (const members of [routes, ids, statuses, ms, keyIds, times]) members.length = 0;
  }

  flush(): void {
    if (this.requests.ids.length > 0) this.makeRequestLines();
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.out.write(text);
  }
}

export interface LoggerOptions {
  readonly format: LogFormat;
  /** Where lines go (default: standard output). */
  readonly destination?: NodeJS.WritableStream;
  readonly level?: string;
}

/** Where a logger made by createLogger writes, and in which format: its request lines are written there. */
const outputs = new WeakMap<
  Logger,
  { readonly format: LogFormat; write(line: string): void; readonly batch?: LineBatch }
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
  const batch = options.destination ? undefined : new LineBatch();
  const out: { write(line: string): void } = options.destination ?? batch!;
  const logger = pino(settings, text ? textDestination(out) : out);
  outputs.set(logger, {
    format: options.format,
    write: (line) => out.write(line),
    ...(batch && !text ? { batch } : {}),
  });
  return logger;
}

/** Writes the line of an answered request of one route. */
export type RequestLine = (reqId: string, status: number, ms: number, keyId: number | null) => void;

/**
 * The request lines of `route` (its requests are logged by its route's hook, service/ops/requests.ts):
 * `{"level":"info","time":…,"reqId":…,"route":…,"status":…,"ms":…,"keyId":…,"msg":"request"}`, the line pino
 * writes for `logger.info({ reqId, route, status, ms, keyId }, 'request')`, made here without pino: its
 * serialisation of the object costs 0.8 µs a line, and E1 answers a request in about 15 µs of CPU (issue 28
 * allows logs and metrics 5% of it). On standard output a request only notes its members, and the batch makes
 * the lines when it is written. Nothing in a line can hold a key: the route is the endpoint's pattern, the
 * request id Fastify's counter, the key id a number. A logger not made by createLogger gets pino's line.
 */
export function requestLineFor(logger: Logger, route: string): RequestLine {
  const output = outputs.get(logger);
  if (!output)
    return (reqId, status, ms, keyId) =>
      logger.info({ reqId, route, status, ms: round(ms), keyId: keyId ?? undefined }, 'request');
  if (output.format === 'text')
    return (reqId, status, ms, keyId) => {
      if (logger.isLevelEnabled('info'))
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
  const routeMember = `,"route":${JSON.stringify(route)}`;
  const batch = output.batch;
  if (batch)
    return (reqId, status, ms, keyId) => {
      if (logger.isLevelEnabled('info')) batch.request(routeMember, reqId, status, ms, keyId);
    };
  return (reqId, status, ms, keyId) => {
    if (logger.isLevelEnabled('info'))
      output.write(jsonRequestLine(Date.now(), reqId, routeMember, status, ms, keyId));
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/** A request's JSON line (`routeMember`: its `,"route":…` member, made once per route). */
function jsonRequestLine(
  time: number,
  reqId: string,
  routeMember: string,
  status: number,
  ms: number,
  keyId: number | null,
): string {
  return `{"level":"info"${isoTime(time)},"reqId":${JSON.stringify(reqId)}${routeMember},"status":${status},"ms":${round(ms)}${keyId === null ? '' : `,"keyId":${keyId}`},"msg":"request"}\n`;
}

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
