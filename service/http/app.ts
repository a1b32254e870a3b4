import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { ServiceDb } from '../store/db.js';
import { getKeyById, KeyRegistry } from '../store/keys.js';
import { SqliteUsageMeter } from '../store/usage.js';
import type { TeamNode } from '../pg/team.js';
import { recordBlockList } from '../store/blockLists.js';
import { HttpError, sendError } from './errors.js';
import type { AuthContext, KeyLookup } from './auth.js';
import { AuthFailureLimit } from './authFailures.js';
import { queryEncodingProblem } from './params.js';
import { parseQuery } from './query.js';
import { answerUnmatched } from './routes.js';
import { DEFAULT_REQUEST_TIMEOUTS, setRequestTimeouts, type RequestTimeouts } from './bodies.js';
import { coalesceWrites, releaseWrites } from './coalesce.js';
import { registerEv } from './routes/ev.js';
import { registerStatus } from './routes/status.js';
import { registerKeyInfo } from './routes/key.js';
import { registerLists } from './routes/list.js';
import { registerIdentityRoutes } from './routes/identity.js';
import { ListProcessor, type ListServiceOptions } from '../lists/node/processor.js';
import { LocalListBackend } from '../lists/backend/localBackend.js';
import type { ListBackend } from '../lists/backend/port.js';
import { SERVICE_DB_FILE } from '../store/db.js';
import { join } from 'node:path';
import { BounceLookup } from '../identity/bounces.js';
import { knownBouncersFor } from '../identity/bounces.list.js';
import type { Logger } from 'pino';
import { Readiness } from '../ops/readiness.js';
import type { Metrics } from '../ops/metrics.js';
import { registerOpsRoutes } from '../ops/routes.js';
import { OBSERVED_SERVER, observeRequests } from '../ops/requests.js';
import { registerOpenApi } from './openapi.js';
import {
  createOnlineVerifier,
  type ChecksLevel,
  type OnlineOptions,
  type OnlineVerifier,
} from '../engine/online/index.js';

/** Online checks of a service run: the verifier's settings and the highest level any key gets. */
export interface OnlineServiceOptions extends OnlineOptions {
  /** The ceiling of every key's checks level (`serve --checks`; default smtp: as far as each key allows). */
  readonly checks?: ChecksLevel;
  /**
   * The ceiling is being decided (the embedded service's Automatic preflight): until this settles, lists
   * wait and single checks run at `checks`; then the level it gives is the ceiling.
   */
  readonly checksDecided?: Promise<ChecksLevel>;
}

export interface ServiceOptions {
  readonly db: ServiceDb;
  /** Extra Fastify options, e.g. `https` for TLS. */
  readonly fastify?: Partial<FastifyServerOptions> & {
    https?: { key: string | Buffer; cert: string | Buffer };
  };
  readonly online?: OnlineServiceOptions;
  /** Where lists are kept (E7–E10, under `<dataDir>/lists/`); without it the list endpoints are not served. */
  readonly dataDir?: string;
  readonly lists?: ListServiceOptions;
  /**
   * A team server's node (docs/team-server.md): keys, usage and lists in PostgreSQL instead of `db`, and whether
   * this node also works on lists (default true; `--workers 0` serves the API only). Reference data (E2–E6)
   * stays in this node's `db`.
   */
  readonly team?: TeamNode;
  readonly listWorkers?: boolean;
  /** The node's log (`serve`): one line a request, never its URL or key. Without it, nothing is logged. */
  readonly logger?: Logger;
  /** Prometheus metrics (`serve --metrics`): `GET /metrics`, and every request counted. */
  readonly metrics?: Metrics;
  /** Where the node's readiness checks are registered (`GET /readyz`); default: one of its own. */
  readonly readiness?: Readiness;
  /** How long a client may take to send a request (service/http/bodies.ts); default 30 s, E7 60 s idle. */
  readonly timeouts?: Partial<RequestTimeouts>;
}

export interface Service {
  readonly app: FastifyInstance;
  readonly keys: KeyLookup;
  /** DNS/SMTP checks, shared by every request of this service (caches, per-host limits). */
  readonly online: OnlineVerifier;
  /** The list work of this node (E7–E10): `start()` once listening; it stops when the app closes. */
  readonly lists?: ListProcessor;
  readonly listBackend?: ListBackend;
  /** The node's readiness checks (`GET /readyz`): other parts of the node register theirs here. */
  readonly readiness: Readiness;
}

/** Headers larger than this are refused with 431; generous enough for any parameter we accept. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * An idle keep-alive connection is closed after this long without a request: Fastify's default, longer than the
 * 60 s for which load balancers keep an idle connection to a node (nginx's upstream `keepalive_timeout`, AWS's
 * ALB), so that a node never closes one as its balancer sends a request on it.
 */
const KEEP_ALIVE_MS = 72_000;

/**
 * Answers a connection's malformed or late request, then closes it: destroyed, not ended, since a client that
 * keeps its side open would otherwise hold the half-closed connection for good.
 */
function writeRawError(socket: Socket, status: number, message: string): void {
  // An answer the connection holds to the turn's end (coalesce.ts) goes first: destroyed, it would be lost.
  releaseWrites(socket);
  const body = JSON.stringify({ error_code: status, error_msg: message });
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.destroy();
}

const noRouteSchemas = () => () => {
  throw new Error('route schemas are not used: requests are checked with zod (shared/api)');
};

/** Builds the Email Data Service (not yet listening). */
export function buildService(options: ServiceOptions): Service {
  const logger = options.logger;
  const { https, ...fastifyOptions } = options.fastify ?? {};
  const timeouts: RequestTimeouts = { ...DEFAULT_REQUEST_TIMEOUTS, ...options.timeouts };
  const server = {
    maxHeaderSize: MAX_HEADER_BYTES,
    // A request's headers arrive within the request timeout, or 408 (clientErrorHandler below); Node looks at
    // its connections every `connectionsCheckingInterval`. Its `requestTimeout`, one total for the whole
    // request on every route, stays off: bodies are timed by their routes (service/http/bodies.ts).
    headersTimeout: timeouts.requestMs,
    requestTimeout: 0,
    connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.round(timeouts.requestMs / 4))),
    // Its responses count and log themselves when they end (service/ops/requests.ts).
    ...OBSERVED_SERVER,
  };
  const app = Fastify({
    // The node's logger (pino) is not handed to Fastify: with a logger, Fastify puts listeners on every response
    // (a fifth of E1's requests/s), and its request lines would print URLs, which carry E1–E6's key. Each request
    // is logged once, when its answer ends (service/ops/requests.ts), by its route and key id; an error answered
    // 500 is logged by the error handler below.
    logger: false,
    // `/v5/ev/` is `/v5/ev`: a trailing slash gets the endpoint's answer.
    // Queries are parsed by service/http/query.ts: fast-querystring's results for less of E1's time.
    routerOptions: { maxParamLength: 200, ignoreTrailingSlash: true, querystringParser: parseQuery },
    bodyLimit: 1024 * 1024,
    keepAliveTimeout: KEEP_ALIVE_MS,
    ...(https ? { https: { ...https, ...server } } : { http: server }),
    clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
      if (!socket.writable) return void socket.destroy();
      if (error.code === 'HPE_HEADER_OVERFLOW')
        writeRawError(socket, 431, `Request headers or URL too large (at most ${MAX_HEADER_BYTES} bytes).`);
      else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') writeRawError(socket, 408, 'Request timed out.');
      else writeRawError(socket, 400, 'Malformed HTTP request.');
    },
    frameworkErrors(error: Error, _request: unknown, reply: FastifyReply) {
      sendError(reply, 400, `Malformed request: ${error.message}`);
    },
    // Requests are checked with zod (shared/api), never with route JSON schemas: without these, Fastify
    // would load its JSON-schema compilers (ajv and fast-json-stringify) at every start, 30 ms of it.
    schemaController: {
      compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas },
    },
    ...fastifyOptions,
  } as unknown as FastifyServerOptions);

  setRequestTimeouts(app, timeouts);
  // The answers of one turn are written together at its end: a client on this machine is woken once for them.
  coalesceWrites(app.server);

  const team = options.team;
  const localUsage = team ? undefined : new SqliteUsageMeter(options.db);
  const usage = team ? team.usage : localUsage!;
  const auth: AuthContext = {
    keys: team ? team.keys : new KeyRegistry(options.db),
    usage,
    // A team server's unknown keys cost a query each: failed authentications are limited per address.
    ...(team ? { failures: new AuthFailureLimit() } : {}),
  };
  app.addHook('onClose', () => usage.close());

  app.decorateRequest('keyId', null);
  const metrics = options.metrics;
  // The instance's first hook: a request whose query is not UTF-8 percent-encoding is answered 400 there, and
  // its route never runs (it is counted and logged: observeRequests notes its arrival first).
  observeRequests(app, { logger, metrics }, (request, reply, done) => {
    const problem = queryEncodingProblem(request.url);
    if (problem) sendError(reply, 400, problem);
    else done();
  });
  const readiness = options.readiness ?? new Readiness();
  readiness.register('store', () => {
    if (!options.db.open) return 'the service database is closed';
    options.db.prepare('SELECT 1').get();
    return undefined;
  });
  team?.registerReadiness(readiness);
  if (metrics)
    metrics.setGauges(
      team?.gauges ?? {
        listsByStatus: () =>
          Promise.resolve(
            options.db
              .prepare<[], { status: string; count: number }>(
                'SELECT status, count(*) AS count FROM lists GROUP BY status',
              )
              .all(),
          ),
      },
    );
  registerOpsRoutes(app, { readiness, ...(metrics ? { metrics } : {}), ...(logger ? { logger } : {}) });
  registerOpenApi(app);

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    if (error instanceof HttpError) return sendError(reply, error.status, error.message);
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendError(reply, status, error.message);
    logger?.error(
      { err: error, reqId: request.id, route: request.routeOptions.url ?? 'unmatched' },
      'request failed',
    );
    return sendError(reply, 500, 'Internal server error. The request was not processed; try again.');
  });

  answerUnmatched(app);

  const { checks: ceiling = 'smtp', checksDecided, ...onlineOptions } = options.online ?? {};
  const online: { verifier: OnlineVerifier; ceiling: ChecksLevel } = {
    // A team server's nodes learn a domain's MX answer and catch-all verdict once for all of them.
    // The block lists its checks meet are kept in this node's store, for `mailsieve doctor` on this machine.
    verifier: createOnlineVerifier({
      onBlockList: (met) => recordBlockList(options.db, met),
      ...onlineOptions,
      ...(team ? { shared: team.knowledge } : {}),
    }),
    ceiling,
  };
  const decided = checksDecided?.then(
    (level) => void (online.ceiling = level),
    () => undefined,
  );
  app.addHook('onClose', () => online.verifier.close());
  const identity = registerIdentityRoutes(app, auth, options.db, {
    nativeBinding: options.lists?.nativeBinding,
  });
  registerEv(app, auth, online, identity, new BounceLookup(options.db));
  registerStatus(app, auth, online);
  registerKeyInfo(app, auth);
  let lists: ListProcessor | undefined;
  let listBackend: ListBackend | undefined;
  if (options.dataDir !== undefined) {
    const dataDir = options.dataDir;
    const db = options.db;
    const backend: ListBackend =
      team?.lists ??
      new LocalListBackend(db, dataDir, {
        ...(options.lists?.retainDays !== undefined ? { retainDays: options.lists.retainDays } : {}),
        // A list's records, reserved when it was accepted, go back when it fails; its count is settled at the end.
        // Both in the period it was charged in, whenever it ends.
        onRefund: (list, records) =>
          localUsage?.adjust(
            list.keyId,
            getKeyById(db, list.keyId)?.quota ?? null,
            -records,
            list.chargedPeriod ?? undefined,
          ),
        onComplete: (list, records) =>
          localUsage?.adjust(
            list.keyId,
            getKeyById(db, list.keyId)?.quota ?? null,
            records - list.reserved,
            list.chargedPeriod ?? undefined,
          ),
      });
    const processor = new ListProcessor(
      backend,
      {
        keyById: team ? (id) => team.keyById(id) : (id) => Promise.resolve(getKeyById(db, id)),
        serviceDbPath: join(dataDir, SERVICE_DB_FILE),
        knownBouncers: (key) => knownBouncersFor(db, key, options.lists?.nativeBinding),
      },
      { ...options.lists, ...(decided ? { ready: decided } : {}) },
      online,
    );
    // Both stop together: the backend first stops taking work, then the work in flight is abandoned.
    app.addHook('onClose', () => Promise.all([backend.close(), processor.close()]).then(() => undefined));
    registerLists(app, auth, { backend, dataDir, processor, usage });
    if (options.listWorkers !== false) lists = processor;
    listBackend = backend;
  }
  return {
    app,
    keys: auth.keys,
    online: online.verifier,
    ...(lists ? { lists } : {}),
    ...(listBackend ? { listBackend } : {}),
    readiness,
  };
}
