// The operator's endpoints of a node, with no key: `GET /healthz` (the process answers), `GET /readyz` (every
// readiness check passes: 200, else 503 with what is wrong, in words that name no address; the node's log
// is told more), `GET /metrics` (Prometheus) when the node has metrics. On an API node they sit beside the API,
// /metrics unless it has a port of its own (`serve --metrics-port`, startOpsServer); a worker serves them
// alone on its `--http-port` (startOpsServer). See docs/operations.md.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { answerUnmatched, registerRoute } from '../http/routes.js';
import type { Metrics } from './metrics.js';
import { OBSERVED_SERVER, observeRequests } from './requests.js';
import { publicReport, type Readiness, type ReadinessReport } from './readiness.js';

export interface OpsRoutesOptions {
  readonly readiness: Readiness;
  readonly metrics?: Metrics;
  /** The node's log: told why a check fails (once, until it passes again). */
  readonly logger?: Logger;
}

const json = 'application/json; charset=utf-8';

const watchers = new WeakMap<Readiness, (report: ReadinessReport) => void>();

/**
 * Tells the log of each check that begins to fail (or fails otherwise), with what only the log may say, and of
 * each that passes again: a balancer asks every few seconds, the log hears of changes. One watcher a node's
 * readiness, however many ports answer /readyz (the API's and `--metrics-port`).
 */
function changesOf(readiness: Readiness, logger: Logger | undefined): (report: ReadinessReport) => void {
  const found = watchers.get(readiness);
  if (found) return found;
  const failing = new Map<string, string>();
  const watch = (report: ReadinessReport) => {
    for (const check of report.checks) {
      const said = failing.get(check.name);
      if (check.ok) {
        if (said !== undefined) logger?.info({ check: check.name }, 'ready again');
        failing.delete(check.name);
        continue;
      }
      const why = check.logged ?? check.detail ?? 'failed';
      if (said !== why) logger?.warn({ check: check.name, detail: why }, 'not ready');
      failing.set(check.name, why);
    }
  };
  watchers.set(readiness, watch);
  return watch;
}

/**
 * The endpoints on `app`. /metrics is served where the node's metrics are: beside the API unless they have a
 * port of their own (`isOpsServer`: that port's server).
 */
export function registerOpsRoutes(
  app: FastifyInstance,
  options: OpsRoutesOptions,
  isOpsServer = false,
): void {
  registerRoute(app, 'GET', '/healthz', (_request, reply) =>
    reply.type(json).header('cache-control', 'no-store').send('{"status":"ok"}'),
  );
  const noteChanges = changesOf(options.readiness, options.logger);
  registerRoute(app, 'GET', '/readyz', async (_request, reply) => {
    const report = await options.readiness.run();
    noteChanges(report);
    return reply
      .code(report.ready ? 200 : 503)
      .type(json)
      .header('cache-control', 'no-store')
      .send(publicReport(report));
  });
  const metrics = options.metrics;
  if (metrics && (isOpsServer || !metrics.hasPortOfItsOwn))
    registerRoute(app, 'GET', '/metrics', async (_request, reply) => {
      const text = await metrics.text();
      return reply.type(metrics.contentType).header('cache-control', 'no-store').send(text);
    });
}

export interface OpsServerOptions extends OpsRoutesOptions {
  readonly host: string;
  readonly port: number;
}

export interface OpsServer {
  readonly app: FastifyInstance;
  /** `http://host:port`, with the bound port. */
  readonly url: string;
  close(): Promise<void>;
}

/** pino's Logger as Fastify's logger type (the same object; their typings differ in generics only). */
const asFastifyLogger = (logger: Logger): FastifyBaseLogger => logger;

/** A worker's own HTTP server, or an API node's for its metrics: the operator's endpoints and nothing else. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: asFastifyLogger(options.logger) } : { logger: false }),
    logController: new LogController({ disableRequestLogging: true }),
    http: OBSERVED_SERVER,
  });
  observeRequests(app, { metrics: options.metrics });
  registerOpsRoutes(app, options, true);
  answerUnmatched(app);
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { app, url: `http://${host}:${port}`, close: () => app.close() };
}
