// The log of `serve` and `worker`: Fastify's own logger (pino), one line a request, a list's steps, a mail
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
function isoTime(): string {
  const now = Date.now();
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
function textDestination(out: NodeJS.WritableStream): DestinationStream {
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

export interface LoggerOptions {
  readonly format: LogFormat;
  /** Where lines go (default: standard output). */
  readonly destination?: NodeJS.WritableStream;
  readonly level?: string;
}

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
  if (options.format === 'text')
    return pino(settings, textDestination(options.destination ?? process.stdout));
  if (options.destination) return pino(settings, options.destination);
  // Lines are written in batches of 4 KiB (a write a line costs a busy node a fifth of its CPU), and at
  // least every FLUSH_MS; pino writes what is left when the process exits.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_MS).unref();
  return pino(settings, destination);
}

/** The longest a JSON line waits in the log's buffer. */
export const FLUSH_MS = 200;

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
