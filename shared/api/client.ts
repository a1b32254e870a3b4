// The REST client of the Email Data Service: one method per endpoint E1–E10, for the provider's service and
// our embedded one alike. Pure TypeScript over fetch and web streams, so it runs in Node and in a browser.
//
// - Results are values: `{ok: true, value, status}` or `{ok: false, error}`; nothing here throws for a failed
//   call. Bodies are parsed with the zod schemas of this folder, tolerantly (unknown members and codes kept).
// - The key goes where the spec puts it: query parameter `api_key` on E1–E6, header `api_key` on E7–E10.
//   It never appears in an error message, a retry notice or an error body handed back (see `redact`).
// - 429, 502 and 503 are retried with exponential backoff and full jitter, honouring Retry-After; network
//   errors are retried for GETs only. Each attempt has its own timeout.
import type { z } from 'zod';
import { recordErrorSchema, type RecordError } from './errors.js';
import { isLoopbackUrl } from './loopback.js';
import {
  alternateEmailResponseSchema,
  emailAppendResponseSchema,
  postalAppendResponseSchema,
  type AlternateEmailResponse,
  type EmailAppendQuery,
  type EmailAppendResponse,
  type PostalAppendResponse,
} from './identity.js';
import { intelligenceResponseSchema, type IntelligenceResponse } from './intelligence.js';
import {
  identityBulkResponseSchema,
  intelligenceBulkResponseSchema,
  PERSON_QUERY_KEYS,
  type BulkRecord,
  type IdentityBulkElement,
  type IntelligenceBulkElement,
  type PersonQuery,
} from './bulk.js';
import {
  isFinalListStatus,
  listFileExtension,
  listResourceSchema,
  purchaseRequestSchema,
  submitListAcceptedSchema,
  submitListParamsSchema,
  submitListQueryPairs,
  type ListResource,
  type PurchaseRequest,
  type SubmitListAccepted,
  type SubmitListParams,
} from './list.js';
import { LIST_POLL_MIN_INTERVAL_MS } from './limits.js';
import { keyInfoSchema, type KeyInfo } from './listServices.js';
import {
  explainedVerifyResponseSchema,
  verifyResponseSchema,
  type ExplainedVerifyResponse,
  type VerifyResponse,
} from './verification.js';

// ---------------------------------------------------------------------------------------------------------
// Public types

export type ApiErrorKind =
  /** The service answered with a status other than 2xx. */
  | 'http'
  /** No answer: connection refused or reset, DNS failure, TLS failure, a body cut short. */
  | 'network'
  /** No answer (or, for uploads, no progress) within the timeout. */
  | 'timeout'
  /** A 2xx answer whose body is not what the spec describes. */
  | 'invalid-response'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** Refused before sending: the arguments break a rule of the spec (for example a list name's extension). */
  | 'invalid-request';

export interface ApiError {
  readonly kind: ApiErrorKind;
  /** HTTP status, for `http` and `invalid-response`. */
  readonly status?: number;
  /** One line for a person; never contains the API key. */
  readonly message: string;
  /** The response body as text (at most 64 KiB, key redacted), when there was one. */
  readonly body?: string;
  /** The per-record error object, when the error body is one (E2, E3, E5 data errors). */
  readonly recordError?: RecordError;
  /** What the service's Retry-After asked for, when it did. */
  readonly retryAfterMs?: number;
}

export type ApiResult<T> =
  | { readonly ok: true; readonly value: T; readonly status: number }
  | { readonly ok: false; readonly error: ApiError };

/** Waits `ms`; rejects when `signal` aborts. Injectable so tests run without real time. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryInfo {
  /** Which retry is about to happen: 1 for the first. */
  readonly attempt: number;
  readonly delayMs: number;
  /** Why: `HTTP 429`, `HTTP 503`, or the network error's words (key redacted). */
  readonly reason: string;
  readonly status?: number;
}

export interface ClientOptions {
  /** The service's base address, e.g. `https://api.example.com` or `http://127.0.0.1:41234`. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch?: typeof fetch;
  /** Per attempt; for uploads, the longest time without progress. Default 30 s. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt. Default 3. */
  readonly retries?: number;
  readonly userAgent?: string;
  readonly onRetry?: (info: RetryInfo) => void;
  readonly sleep?: Sleep;
  /** Clock for Retry-After HTTP dates. Default `Date.now`. */
  readonly now?: () => number;
  /** Source of jitter in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
  /** Backoff cap before jitter: min(backoffMaxMs, backoffBaseMs × 2^retry). Defaults 500 ms and 30 s. */
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** A Retry-After longer than this is not waited for: the call gives up with the error. Default 2 min. */
  readonly maxRetryAfterMs?: number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout for this call. */
  readonly timeoutMs?: number;
  /** Overrides the client's retry count for this call (`pollList` uses 0). */
  readonly retries?: number;
}

export interface VerifyOptions extends CallOptions {
  /** E1's `timeout` parameter, seconds (default 10 at the service, at most 30). */
  readonly timeout?: number;
}

export interface IntelligenceQuery extends PersonQuery {
  /** Limits the returned fields; default all available. */
  readonly fields?: readonly string[];
}

/** A list file to upload. `size` (bytes) is needed for a stream to send Content-Length and show a total. */
export interface ListUpload {
  readonly name: string;
  /**
   * The file: a stream, read once (so an upload of it is never sent again); a Blob or a string; or a function
   * that opens the file afresh, called for each attempt, so that a refused upload is sent again from its start.
   */
  readonly body: ReadableStream<Uint8Array> | Blob | string | (() => ReadableStream<Uint8Array>);
  readonly size?: number;
}

export interface SubmitListOptions extends CallOptions {
  /** `multipart` (default; part `file`, recommended for large files and required for .zip) or `text`. */
  readonly mode?: 'multipart' | 'text';
  /** Called as file bytes are pulled into the request. `totalBytes` is the file's size when known. */
  readonly onProgress?: (sentBytes: number, totalBytes: number | undefined) => void;
}

export interface SubmitListResult extends SubmitListAccepted {
  /** The `Location` header: the list's status URL. */
  readonly location?: string;
}

export interface ListResults {
  /** The results file. The caller must read it to the end or cancel it. */
  readonly body: ReadableStream<Uint8Array>;
  /** From Content-Disposition, reduced to a bare file name (no folders, no control characters). */
  readonly fileName?: string;
  readonly contentType?: string;
  readonly contentLength?: number;
}

export interface Client {
  /** The base URL (never the key). */
  readonly baseUrl: string;
  /** E1 `GET /v5/ev`. */
  verify(email: string, options?: VerifyOptions): Promise<ApiResult<VerifyResponse>>;
  /** E1 with `explain=1`: the answer and what was asked and answered on the way (a Mailsieve extension). */
  verifyExplained(email: string, options?: VerifyOptions): Promise<ApiResult<ExplainedVerifyResponse>>;
  /** E2 `GET /ae`. */
  alternateEmail(
    email: string,
    options?: CallOptions,
  ): Promise<ApiResult<AlternateEmailResponse | RecordError>>;
  /** E3 `GET /v5/eppend`, postal to email. */
  emailAppend(
    query: EmailAppendQuery,
    options?: CallOptions,
  ): Promise<ApiResult<EmailAppendResponse | RecordError>>;
  /** E3 `GET /v5/eppend`, email to postal. */
  postalAppend(email: string, options?: CallOptions): Promise<ApiResult<PostalAppendResponse | RecordError>>;
  /** E4 `POST /v5/eppend/bulk`: up to 1,250 records. */
  identityBulk(
    records: readonly BulkRecord[],
    options?: CallOptions,
  ): Promise<ApiResult<IdentityBulkElement[]>>;
  /** E5 `GET /v5/td`. */
  intelligence(
    query: IntelligenceQuery,
    options?: CallOptions,
  ): Promise<ApiResult<IntelligenceResponse | RecordError>>;
  /** E6 `POST /v5/ei/bulk`: up to 5,000 records. */
  intelligenceBulk(
    records: readonly BulkRecord[],
    options?: CallOptions,
  ): Promise<ApiResult<IntelligenceBulkElement[]>>;
  /** E7 `POST /v5/list`. */
  submitList(
    upload: ListUpload,
    params?: SubmitListParams,
    options?: SubmitListOptions,
  ): Promise<ApiResult<SubmitListResult>>;
  /** E8 `GET /v5/list/{id}`. Poll no faster than every 5 s: see `pollList`. */
  listStatus(listId: number, options?: CallOptions): Promise<ApiResult<ListResource>>;
  /** E9 `POST /v5/list/{id}/purchase`. The spec does not show the answer: JSON, text, or null when empty. */
  purchase(listId: number, body?: PurchaseRequest, options?: CallOptions): Promise<ApiResult<unknown>>;
  /** E10 `GET /v5/list/{id}/results`. */
  results(listId: number, options?: CallOptions): Promise<ApiResult<ListResults>>;
  /**
   * `GET /v5/key`, a Mailsieve extension (key in the `api_key` header): the key's services and fields.
   * The provider answers 404 (its keys are described by its dashboard).
   */
  keyInfo(options?: CallOptions): Promise<ApiResult<KeyInfo>>;
}

// ---------------------------------------------------------------------------------------------------------
// Helpers (exported for tests and for callers)

const REDACTED = '[redacted]';

/** Replaces every form of `secret` in `text` (raw and URL-encoded), and any `api_key=` query value. */
export function redact(text: string, secret: string): string {
  let out = text;
  if (secret !== '') {
    const forms = new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ k: secret }).toString().slice(2),
    ]);
    for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(REDACTED);
  }
  return out.replace(/(api_key=)[^&\s"'<>]*/gi, `$1${REDACTED}`);
}

/** Retry-After in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The file name of a Content-Disposition header (`filename*` preferred, then quoted, then bare). */
export function parseContentDisposition(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const extended = /(?:^|;)\s*filename\*\s*=\s*([^']*)'[^']*'([^;]*)/i.exec(header);
  if (extended) {
    const charset = (extended[1] ?? '').trim().toLowerCase();
    const encoded = (extended[2] ?? '').trim();
    try {
      const decoded =
        charset === 'utf-8' || charset === ''
          ? decodeURIComponent(encoded)
          : encoded.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      if (decoded !== '') return decoded;
    } catch {
      // A malformed escape: fall back to the plain parameter below.
    }
  }
  const quoted = /(?:^|;)\s*filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted) return (quoted[1] ?? '').replace(/\\(.)/g, '$1') || undefined;
  // The spec's example is unquoted (`filename=<list name>-<list_id>-Service.<extension>`) and a list name
  // may hold spaces, so a bare value runs to the next `;`.
  const bare = /(?:^|;)\s*filename\s*=\s*([^;]*)/i.exec(header);
  const value = bare?.[1]?.trim();
  return value ? value : undefined;
}

/** A name safe to join to a folder: the last path segment, without control characters; undefined if none. */
export function safeFileName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed here
  const base = (name.split(/[/\\]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return base === '' || base === '.' || base === '..' ? undefined : base;
}

export { isLoopbackUrl } from './loopback.js';

export const defaultSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

// ---------------------------------------------------------------------------------------------------------
// Internals

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRIES = 3;
const ERROR_BODY_LIMIT = 64 * 1024;
const STRING_CHUNK = 64 * 1024;

/** Which failures a call may retry. */
interface RetryPolicy {
  readonly statuses: ReadonlySet<number>;
  readonly network: boolean;
}
const RETRY_IDEMPOTENT: RetryPolicy = { statuses: new Set([429, 502, 503]), network: true };
const RETRY_READ_POST: RetryPolicy = { statuses: new Set([429, 502, 503]), network: false };
// A purchase or a list submission changes state at the service. 429 and 503 say the request was refused
// before any work; a 502 or a dropped connection may come after the work was done, so those are not retried.
const RETRY_STATEFUL_POST: RetryPolicy = { statuses: new Set([429, 503]), network: false };
const NO_RETRY: RetryPolicy = { statuses: new Set(), network: false };

/** Whether the service refused a request before doing any of its work (429, 503): it may be sent again as it is. */
export function isRefusedBeforeWork(error: ApiError): boolean {
  return (
    error.kind === 'http' && error.status !== undefined && RETRY_STATEFUL_POST.statuses.has(error.status)
  );
}

type StreamingInit = RequestInit & { duplex?: 'half' };

interface Attempt {
  readonly signal: AbortSignal;
  /** Restarts the timeout (progress seen). */
  touch(): void;
  /** Stops the timeout; the caller's signal stays linked (a streamed body may still be read). */
  stopTimer(): void;
  /** Stops the timeout and unlinks the caller's signal. */
  done(): void;
  readonly isTimedOut: () => boolean;
}

function startAttempt(timeoutMs: number, callerSignal: AbortSignal | undefined): Attempt {
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('timeout'));
    }, timeoutMs);
  };
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  arm();
  const stopTimer = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return {
    signal: controller.signal,
    touch: () => {
      if (timer !== undefined) arm();
    },
    stopTimer,
    done: () => {
      stopTimer();
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
    isTimedOut: () => timedOut,
  };
}

/** The words of an error and its causes (undici puts the useful part in `cause`). */
function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      parts.push(
        typeof code === 'string' && !current.message.includes(code)
          ? `${current.message} (${code})`
          : current.message,
      );
      current = current.cause;
    } else {
      if (typeof current === 'string') parts.push(current);
      break;
    }
  }
  return [...new Set(parts.filter((part) => part !== ''))].join(': ') || 'unknown error';
}

async function readTextLimited(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    text += decoder.decode(value, { stream: true });
    if (size >= limit) {
      await reader.cancel().catch(() => undefined);
      return text.slice(0, limit);
    }
  }
  return text + decoder.decode();
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to release.
  }
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

function contentTypeFor(name: string): string {
  switch (listFileExtension(name)) {
    case '.zip':
      return 'application/zip';
    case '.csv':
      return 'text/csv';
    default:
      return 'text/plain';
  }
}

function randomBoundary(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return `----MailsieveBoundary${[...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/** A file name in a multipart header, escaped as the HTML standard's form encoding does. */
function quoteFileName(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

type Piece = Uint8Array | (() => ReadableStream<Uint8Array>);

/** A request body, and how to release the source it reads while it is still held by fetch. */
interface SourcedStream {
  readonly stream: ReadableStream<Uint8Array>;
  /** Cancels the source being read (a file is closed); the body then ends. Harmless once it has ended. */
  stop(): Promise<void>;
}

/**
 * One stream out of fixed byte pieces and a file source, pulled on demand: nothing is buffered beyond the
 * chunk in flight, so a 100 MB file never sits in memory. `onFileChunk` sees the file's bytes only.
 */
function concatStreams(pieces: readonly Piece[], onFileChunk: (bytes: number) => void): SourcedStream {
  let index = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const stop = async (reason?: unknown) => {
    index = pieces.length;
    const current = reader;
    reader = undefined;
    await current?.cancel(reason).catch(() => undefined);
  };
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (index >= pieces.length) {
          controller.close();
          return;
        }
        const piece = pieces[index];
        if (piece instanceof Uint8Array) {
          index++;
          if (piece.byteLength > 0) {
            controller.enqueue(piece);
            return;
          }
          continue;
        }
        reader ??= piece().getReader();
        const current = reader;
        const { done, value } = await current.read();
        if (done) {
          if (reader === current) {
            reader = undefined;
            index++;
          }
          continue;
        }
        if (value.byteLength === 0) continue;
        onFileChunk(value.byteLength);
        controller.enqueue(value);
        return;
      }
    },
    cancel: stop,
  });
  return { stream, stop: () => stop() };
}

/** Serves a string in slices so progress moves in steps; the slices share the encoded buffer. */
function stringStream(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.subarray(offset, offset + STRING_CHUNK));
      offset += STRING_CHUNK;
    },
  });
}

/** Blob.stream()'s element type differs between the DOM and Node typings; both yield Uint8Array chunks. */
function blobStream(blob: Blob): ReadableStream<Uint8Array> {
  return blob.stream() as ReadableStream<Uint8Array>;
}

type Reader<T> = (response: Response, attempt: Attempt) => Promise<ApiResult<T>>;

interface RequestSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly query?: readonly (readonly [string, string])[];
  readonly auth: 'query' | 'header';
  readonly headers?: Readonly<Record<string, string>>;
  /** Builds the body of one attempt. */
  readonly body?: () => NonNullable<RequestInit['body']>;
  readonly retry: RetryPolicy;
  readonly stream?: boolean;
  /** For uploads: the timeout restarts on progress, so it bounds a stall, not the whole transfer. */
  readonly onAttempt?: (attempt: Attempt) => void;
}

// ---------------------------------------------------------------------------------------------------------
// The client

export function createClient(options: ClientOptions): Client {
  let parsedBase: URL;
  try {
    parsedBase = new URL(options.baseUrl);
  } catch {
    throw new TypeError('The service base URL is not a URL');
  }
  if (parsedBase.protocol !== 'http:' && parsedBase.protocol !== 'https:') {
    throw new TypeError('The service base URL must be http or https');
  }
  const base = `${parsedBase.origin}${parsedBase.pathname.replace(/\/+$/, '')}`;
  const apiKey = options.apiKey;
  const fetchImpl: typeof fetch = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const defaultRetries = options.retries ?? DEFAULT_RETRIES;
  const backoffBaseMs = options.backoffBaseMs ?? 500;
  const backoffMaxMs = options.backoffMaxMs ?? 30_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 120_000;
  const clean = (text: string) => redact(text, apiKey);

  const fail = <T>(error: ApiError): ApiResult<T> => ({
    ok: false,
    error: {
      ...error,
      message: clean(error.message),
      ...(error.body !== undefined ? { body: clean(error.body) } : {}),
    },
  });

  async function httpError<T>(
    spec: RequestSpec,
    response: Response,
    retryAfterMs: number | undefined,
    note = '',
  ) {
    let body: string | undefined;
    try {
      body = await readTextLimited(response, ERROR_BODY_LIMIT);
    } catch {
      body = undefined;
    }
    let detail = '';
    let record: RecordError | undefined;
    if (body) {
      try {
        const json: unknown = JSON.parse(body);
        const parsed = recordErrorSchema.safeParse(json);
        if (parsed.success) {
          record = parsed.data;
          detail = parsed.data.error_msg;
        } else if (
          typeof json === 'object' &&
          json !== null &&
          typeof (json as { message?: unknown }).message === 'string'
        ) {
          detail = (json as { message: string }).message;
        }
      } catch {
        detail = body.split(/\r?\n/, 1)[0] ?? '';
      }
    }
    if (detail.length > 200) detail = `${detail.slice(0, 200)}…`;
    return fail<T>({
      kind: 'http',
      status: response.status,
      message: `${spec.method} ${spec.path}: HTTP ${response.status}${detail ? ` ${detail}` : ''}${note}`,
      ...(body ? { body } : {}),
      ...(record ? { recordError: record } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }

  async function request<T>(spec: RequestSpec, call: CallOptions, read: Reader<T>): Promise<ApiResult<T>> {
    const query = [...(spec.query ?? [])];
    if (spec.auth === 'query') query.push(['api_key', apiKey]);
    const search = query
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&');
    const url = `${base}${spec.path}${search ? `?${search}` : ''}`;
    const headers: Record<string, string> = { ...spec.headers };
    if (spec.auth === 'header') headers['api_key'] = apiKey;
    if (options.userAgent !== undefined) headers['User-Agent'] = options.userAgent;
    const retries = Math.max(0, call.retries ?? defaultRetries);
    const timeoutMs = call.timeoutMs ?? defaultTimeoutMs;
    const aborted = (): ApiResult<T> =>
      fail({ kind: 'aborted', message: `${spec.method} ${spec.path}: cancelled` });

    for (let attemptNo = 0; ; attemptNo++) {
      if (call.signal?.aborted) return aborted();
      const canRetry = attemptNo < retries;
      const wait = async (delayMs: number, reason: string, status?: number): Promise<boolean> => {
        options.onRetry?.({
          attempt: attemptNo + 1,
          delayMs,
          reason: clean(reason),
          ...(status ? { status } : {}),
        });
        try {
          await sleep(delayMs, call.signal);
          return true;
        } catch {
          return false;
        }
      };
      const backoff = () => Math.floor(random() * Math.min(backoffMaxMs, backoffBaseMs * 2 ** attemptNo));

      const attempt = startAttempt(timeoutMs, call.signal);
      spec.onAttempt?.(attempt);
      let keepLinked = false;
      /** The answer when the caller aborted or this attempt timed out, rather than the network failing. */
      const interruption = (): ApiResult<T> | undefined => {
        if (call.signal?.aborted) return aborted();
        if (attempt.isTimedOut())
          return fail({
            kind: 'timeout',
            message: `${spec.method} ${spec.path}: no answer within ${timeoutMs} ms`,
          });
        return undefined;
      };
      try {
        const init: StreamingInit = { method: spec.method, headers, signal: attempt.signal };
        if (spec.body) {
          init.body = spec.body();
          // Needed by fetch for a stream body; harmless for the others.
          init.duplex = 'half';
        }
        let response: Response;
        try {
          response = await fetchImpl(url, init);
        } catch (error) {
          const stopped = interruption();
          if (stopped) return stopped;
          const words = describeError(error);
          if (spec.retry.network && canRetry) {
            attempt.done();
            if (await wait(backoff(), words)) continue;
            return aborted();
          }
          return fail({ kind: 'network', message: `${spec.method} ${spec.path}: ${words}` });
        }

        if (!response.ok) {
          const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), now());
          if (spec.retry.statuses.has(response.status) && canRetry) {
            if (retryAfterMs === undefined || retryAfterMs <= maxRetryAfterMs) {
              await discard(response);
              attempt.done();
              if (await wait(retryAfterMs ?? backoff(), `HTTP ${response.status}`, response.status)) continue;
              return aborted();
            }
            return await httpError(
              spec,
              response,
              retryAfterMs,
              ` (asked to retry after ${Math.ceil(retryAfterMs / 1000)} s)`,
            );
          }
          const note = attemptNo > 0 ? ` (after ${attemptNo} ${attemptNo === 1 ? 'retry' : 'retries'})` : '';
          return await httpError(spec, response, retryAfterMs, note);
        }

        const result = await read(response, attempt);
        keepLinked = spec.stream === true && result.ok;
        return result;
      } catch (error) {
        // Reading the body failed: the connection dropped, or a timer or the caller aborted mid-body.
        const stopped = interruption();
        if (stopped) return stopped;
        return fail({ kind: 'network', message: `${spec.method} ${spec.path}: ${describeError(error)}` });
      } finally {
        if (keepLinked) attempt.stopTimer();
        else attempt.done();
      }
    }
  }

  /** Reads a JSON body with a schema (absent or unparseable: `invalid-response`). */
  const json =
    <S extends z.ZodType>(spec: RequestSpec, schema: S): Reader<z.infer<S>> =>
    async (response) => {
      const text = await response.text();
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        return fail({
          kind: 'invalid-response',
          status: response.status,
          message: `${spec.method} ${spec.path}: the answer is not JSON`,
          body: text.slice(0, ERROR_BODY_LIMIT),
        });
      }
      const parsed = schema.safeParse(data);
      if (!parsed.success) {
        const issues = parsed.error.issues
          .slice(0, 3)
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
          .join('; ');
        return fail({
          kind: 'invalid-response',
          status: response.status,
          message: `${spec.method} ${spec.path}: unexpected answer (${issues})`,
          body: text.slice(0, ERROR_BODY_LIMIT),
        });
      }
      return { ok: true, value: parsed.data, status: response.status };
    };

  const getJson = <S extends z.ZodType>(
    path: string,
    query: readonly (readonly [string, string])[],
    auth: 'query' | 'header',
    schema: S,
    call: CallOptions,
  ) => {
    const spec: RequestSpec = {
      method: 'GET',
      path,
      query,
      auth,
      headers: { Accept: 'application/json' },
      retry: RETRY_IDEMPOTENT,
    };
    return request(spec, call, json(spec, schema));
  };

  const postJson = <T>(
    path: string,
    auth: 'query' | 'header',
    payload: unknown,
    retry: RetryPolicy,
    read: (spec: RequestSpec) => Reader<T>,
    call: CallOptions,
  ) => {
    const text = payload === undefined ? undefined : JSON.stringify(payload);
    const spec: RequestSpec = {
      method: 'POST',
      path,
      auth,
      headers:
        text === undefined
          ? { Accept: 'application/json' }
          : { Accept: 'application/json', 'Content-Type': 'application/json' },
      ...(text === undefined ? {} : { body: () => text }),
      retry,
    };
    return request(spec, call, read(spec));
  };

  const personPairs = (query: PersonQuery): [string, string][] =>
    PERSON_QUERY_KEYS.flatMap((key) => {
      const value = query[key];
      return value === undefined ? [] : [[key, value] as [string, string]];
    });

  const listPath = (listId: number, suffix = '') => `/v5/list/${encodeURIComponent(String(listId))}${suffix}`;

  const invalidRequest = <T>(method: string, path: string, why: string): ApiResult<T> =>
    fail({ kind: 'invalid-request', message: `${method} ${path}: ${why}` });

  return {
    baseUrl: base,

    verify(email, { timeout, ...call } = {}) {
      const query: [string, string][] = [['email', email]];
      if (timeout !== undefined) query.push(['timeout', String(timeout)]);
      // The service may take `timeout` seconds to answer: give it that plus a margin before aborting.
      const timeoutMs = call.timeoutMs ?? Math.max(defaultTimeoutMs, (timeout ?? 10) * 1000 + 5_000);
      return getJson('/v5/ev', query, 'query', verifyResponseSchema, { ...call, timeoutMs });
    },

    verifyExplained(email, { timeout, ...call } = {}) {
      const query: [string, string][] = [
        ['email', email],
        ['explain', '1'],
      ];
      if (timeout !== undefined) query.push(['timeout', String(timeout)]);
      const timeoutMs = call.timeoutMs ?? Math.max(defaultTimeoutMs, (timeout ?? 10) * 1000 + 5_000);
      return getJson('/v5/ev', query, 'query', explainedVerifyResponseSchema, { ...call, timeoutMs });
    },

    alternateEmail(email, call = {}) {
      return getJson('/ae', [['email', email]], 'query', alternateEmailResponseOrError, call);
    },

    emailAppend(query, call = {}) {
      const pairs: [string, string][] = [];
      for (const key of ['first', 'last', 'street', 'city', 'state', 'zip'] as const) {
        const value = query[key];
        if (value !== undefined) pairs.push([key, value]);
      }
      return getJson('/v5/eppend', pairs, 'query', emailAppendResponseOrError, call);
    },

    postalAppend(email, call = {}) {
      return getJson('/v5/eppend', [['email', email]], 'query', postalAppendResponseOrError, call);
    },

    identityBulk(records, call = {}) {
      return postJson(
        '/v5/eppend/bulk',
        'query',
        records,
        RETRY_READ_POST,
        (spec) => json(spec, identityBulkResponseSchema),
        call,
      );
    },

    intelligence(query, call = {}) {
      const pairs = personPairs(query);
      if (query.fields !== undefined) pairs.push(['fields', query.fields.join(',')]);
      return getJson('/v5/td', pairs, 'query', intelligenceResponseOrError, call);
    },

    intelligenceBulk(records, call = {}) {
      return postJson(
        '/v5/ei/bulk',
        'query',
        records,
        RETRY_READ_POST,
        (spec) => json(spec, intelligenceBulkResponseSchema),
        call,
      );
    },

    async submitList(upload, params = {}, { mode = 'multipart', onProgress, ...call } = {}) {
      const path = '/v5/list';
      const effective = { ...params, name: params.name ?? upload.name };
      const checked = submitListParamsSchema.safeParse(effective);
      if (!checked.success) {
        return invalidRequest(
          'POST',
          path,
          checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '),
        );
      }
      if (mode === 'text' && listFileExtension(checked.data.name ?? upload.name) === '.zip') {
        return invalidRequest('POST', path, 'a .zip file is sent as multipart/form-data, not as text/csv');
      }
      const source = upload.body;
      const fileSize =
        typeof source === 'string' ? byteLength(source) : source instanceof Blob ? source.size : upload.size;
      const openFile = (): ReadableStream<Uint8Array> =>
        typeof source === 'string'
          ? stringStream(source)
          : source instanceof Blob
            ? blobStream(source)
            : typeof source === 'function'
              ? source()
              : source;

      let attempt: Attempt | undefined;
      let sent = 0;
      const onFileChunk = (bytes: number) => {
        sent += bytes;
        attempt?.touch();
        onProgress?.(sent, fileSize);
      };

      let contentType: string;
      let head = new Uint8Array(0);
      let tail = new Uint8Array(0);
      if (mode === 'multipart') {
        const boundary = randomBoundary();
        const encoder = new TextEncoder();
        head = encoder.encode(
          `--${boundary}\r\n` +
            `Content-Disposition: form-data; name="file"; filename="${quoteFileName(upload.name)}"\r\n` +
            `Content-Type: ${contentTypeFor(upload.name)}\r\n\r\n`,
        );
        tail = encoder.encode(`\r\n--${boundary}--\r\n`);
        contentType = `multipart/form-data; boundary=${boundary}`;
      } else {
        contentType = 'text/csv';
      }
      const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': contentType };
      // Browsers ignore Content-Length (a forbidden header); Node's fetch sends it instead of chunked encoding,
      // which lets the service refuse an oversized file before reading it.
      if (fileSize !== undefined)
        headers['Content-Length'] = String(head.byteLength + fileSize + tail.byteLength);

      // A ReadableStream can be read once: after a first attempt it is consumed (wholly or in part), and a
      // retry would send a truncated or empty file as if it were the list. Besides, the service may already
      // have accepted the list. So a stream upload is never retried; a Blob, a string or a file opened per
      // attempt starts again from its first byte, and is retried only where the service refused before doing
      // any work (429, 503).
      const isReplayable =
        typeof source === 'string' || source instanceof Blob || typeof source === 'function';
      // The body being sent. fetch does not cancel a body it stopped sending when the answer came first (a
      // refusal before the body): its file is closed here, before another attempt opens it again and after
      // the last.
      let sending: SourcedStream | undefined;
      const spec: RequestSpec = {
        method: 'POST',
        path,
        query: submitListQueryPairs(checked.data),
        auth: 'header',
        headers,
        body: () => {
          sent = 0;
          void sending?.stop();
          sending = concatStreams([head, openFile, tail], onFileChunk);
          return sending.stream;
        },
        retry: isReplayable ? RETRY_STATEFUL_POST : NO_RETRY,
        onAttempt: (current) => {
          attempt = current;
        },
      };
      const read: Reader<SubmitListResult> = async (response, current) => {
        const parsed = await json(spec, submitListAcceptedSchema)(response, current);
        if (!parsed.ok) return parsed;
        const location = response.headers.get('location');
        return {
          ok: true,
          status: parsed.status,
          value: location ? { ...parsed.value, location } : parsed.value,
        };
      };
      const result = await request(spec, call, read);
      await sending?.stop();
      return result;
    },

    listStatus(listId, call = {}) {
      return getJson(listPath(listId), [], 'header', listResourceSchema, call);
    },

    keyInfo(call = {}) {
      return getJson('/v5/key', [], 'header', keyInfoSchema, call);
    },

    purchase(listId, body, call = {}) {
      const path = listPath(listId, '/purchase');
      if (body !== undefined) {
        const checked = purchaseRequestSchema.safeParse(body);
        if (!checked.success)
          return Promise.resolve(
            invalidRequest('POST', path, checked.error.issues[0]?.message ?? 'invalid body'),
          );
      }
      return postJson(
        path,
        'header',
        body,
        RETRY_STATEFUL_POST,
        () => async (response) => {
          const text = await response.text();
          let value: unknown = null;
          if (text !== '') {
            try {
              value = JSON.parse(text);
            } catch {
              value = text;
            }
          }
          return { ok: true, value, status: response.status };
        },
        call,
      );
    },

    results(listId, call = {}) {
      const spec: RequestSpec = {
        method: 'GET',
        path: listPath(listId, '/results'),
        auth: 'header',
        retry: RETRY_IDEMPOTENT,
        stream: true,
      };
      return request<ListResults>(spec, call, (response) => {
        const length = response.headers.get('content-length');
        const fileName = safeFileName(parseContentDisposition(response.headers.get('content-disposition')));
        const contentType = response.headers.get('content-type');
        const body =
          (response.body as ReadableStream<Uint8Array> | null) ??
          new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
        const value: ListResults = {
          body,
          ...(fileName !== undefined ? { fileName } : {}),
          ...(contentType !== null ? { contentType } : {}),
          ...(length !== null && /^\d+$/.test(length) ? { contentLength: Number(length) } : {}),
        };
        return Promise.resolve({ ok: true, value, status: response.status });
      });
    },
  };
}

// E2, E3 and E5 answer a data error with the per-record error object (the spec does not say whether with
// status 200 or 400); on 200 it is a value, told apart with `isRecordError`.
const alternateEmailResponseOrError = recordErrorSchema.or(alternateEmailResponseSchema);
const emailAppendResponseOrError = recordErrorSchema.or(emailAppendResponseSchema);
const postalAppendResponseOrError = recordErrorSchema.or(postalAppendResponseSchema);
const intelligenceResponseOrError = recordErrorSchema.or(intelligenceResponseSchema);

// ---------------------------------------------------------------------------------------------------------
// Polling

export interface PollListOptions {
  /**
   * Time between the starts of two status requests. At least 5 s for a remote service (the spec's rule; a
   * smaller value is raised to it); our embedded service on loopback may be polled faster (at least 25 ms).
   * Default 5 s.
   */
  readonly intervalMs?: number;
  readonly onUpdate?: (list: ListResource) => void;
  /**
   * Whether polling stops at this document. Default: a final status (Results, Cancelled, Invalid, Error).
   * A report-only list also stops when it awaits purchase (`isAwaitingPurchase`).
   */
  readonly isDone?: (list: ListResource) => boolean;
  readonly signal?: AbortSignal;
  /** Consecutive transient failures (network, timeout, 429, 5xx) tolerated before giving up. Default 5. */
  readonly maxConsecutiveErrors?: number;
  readonly sleep?: Sleep;
  readonly now?: () => number;
}

/**
 * The least interval `pollList` uses for the loopback service: a status answer costs it well under a
 * millisecond, and a job learns sooner that its list is complete.
 */
export const LOCAL_POLL_MIN_INTERVAL_MS = 25;

/** The interval `pollList` will use for a base URL, given the one asked for. */
export function effectivePollInterval(
  baseUrl: string,
  intervalMs: number = LIST_POLL_MIN_INTERVAL_MS,
): number {
  const floor = isLoopbackUrl(baseUrl) ? LOCAL_POLL_MIN_INTERVAL_MS : LIST_POLL_MIN_INTERVAL_MS;
  return Math.max(intervalMs, floor);
}

function isTransient(error: ApiError): boolean {
  if (error.kind === 'network' || error.kind === 'timeout') return true;
  return error.kind === 'http' && error.status !== undefined && (error.status === 429 || error.status >= 500);
}

/**
 * Polls E8 until the list reaches a final status (Results, Cancelled, Invalid, Error), and answers with the
 * last status document. Never starts two requests closer than the interval (a Retry-After stretches it),
 * and makes each request without the client's own retries, since those would poll faster than allowed.
 */
export async function pollList(
  client: Pick<Client, 'baseUrl' | 'listStatus'>,
  listId: number,
  options: PollListOptions = {},
): Promise<ApiResult<ListResource>> {
  const interval = effectivePollInterval(client.baseUrl, options.intervalMs);
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const maxErrors = options.maxConsecutiveErrors ?? 5;
  let failures = 0;
  for (;;) {
    const started = now();
    const result = await client.listStatus(listId, {
      retries: 0,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let waitMs = interval;
    if (result.ok) {
      failures = 0;
      options.onUpdate?.(result.value);
      if ((options.isDone ?? ((list) => isFinalListStatus(list.status)))(result.value)) return result;
    } else {
      if (!isTransient(result.error)) return result;
      failures++;
      if (failures >= maxErrors) return result;
      waitMs = Math.max(interval, result.error.retryAfterMs ?? 0);
    }
    const remaining = started + waitMs - now();
    if (remaining > 0) {
      try {
        await sleep(remaining, options.signal);
      } catch {
        return { ok: false, error: { kind: 'aborted', message: `Polling list ${listId}: cancelled` } };
      }
    }
    if (options.signal?.aborted) {
      return { ok: false, error: { kind: 'aborted', message: `Polling list ${listId}: cancelled` } };
    }
  }
}
