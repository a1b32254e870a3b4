// The operator's endpoints of a node, with no key: `GET /healthz` (the process answers), `GET /readyz` (every
// readiness check passes: 200, else 503 with what is wrong), `GET /metrics` (Prometheus) when the node has
// metrics. On an API node they sit beside the API; a worker serves them alone on its `--http-port`
// (startOpsServer). See docs/operations.md.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { answerUnmatched, registerRoute } from '../http/routes.js';
import type { Metrics } from './metrics.js';
import { OBSERVED_SERVER, observeRequests } from './requests.js';
import type { Readiness } from './readiness.js';

export interface OpsRoutesOptions {
  readonly readiness: Readiness;
  readonly metrics?: Metrics;
}

const json = 'application/json; charset=utf-8';

export function registerOpsRoutes(app: FastifyInstance, options: OpsRoutesOptions): void {
  registerRoute(app, 'GET', '/healthz', (_request, reply) =>
    reply.type(json).header('cache-control', 'no-store').send('{"status":"ok"}'),
  );
  registerRoute(app, 'GET', '/readyz', async (_request, reply) => {
    const report = await options.readiness.run();
    return reply
      .code(report.ready ? 200 : 503)
      .type(json)
      .header('cache-control', 'no-store')
      .send(JSON.stringify(report));
  });
  const metrics = options.metrics;
  if (metrics)
    registerRoute(app, 'GET', '/metrics', async (_request, reply) => {
      const text = await metrics.text();
      return reply.type(metrics.contentType).header('cache-control', 'no-store').send(text);
    });
}

export interface OpsServerOptions extends OpsRoutesOptions {
  readonly host: string;
  readonly port: number;
  readonly logger?: Logger;
}

export interface OpsServer {
  readonly app: FastifyInstance;
  /** `http://host:port`, with the bound port. */
  readonly url: string;
  close(): Promise<void>;
}

/** pino's Logger as Fastify's logger type (the same object; their typings differ in generics only). */
const asFastifyLogger = (logger: Logger): FastifyBaseLogger => logger;

/** A worker's own HTTP server: the operator's endpoints and nothing else. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: asFastifyLogger(options.logger) } : { logger: false }),
    logController: new LogController({ disableRequestLogging: true }),
    http: OBSERVED_SERVER,
  });
  observeRequests(app, { metrics: options.metrics });
  registerOpsRoutes(app, options);
  answerUnmatched(app);
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { app, url: `http://${host}:${port}`, close: () => app.close() };
}
