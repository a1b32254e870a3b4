import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { startService, UnsafeBindError, type TlsOption } from '../../service/server.js';
import { describeDatabase, TeamDatabaseError } from '../../service/pg/url.js';
import { CliError, intOption } from './errors.js';
import { onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';
import { dnsblFrom, selfCheckLogger, type SelfCheckCliOptions } from './selfCheck.js';
import {
  databaseUrlOf,
  nodeOptionsFrom,
  workOptionsFrom,
  type DatabaseCliOptions,
  type NodeCliOptions,
  type WorkCliOptions,
} from './teamOptions.js';
import { nodeLoggerFrom, startOpsPort, type LogCliOptions } from './opsOptions.js';

export interface ServeOptions
  extends
    OnlineCliOptions,
    DatabaseCliOptions,
    NodeCliOptions,
    WorkCliOptions,
    SelfCheckCliOptions,
    LogCliOptions {
  host: string;
  port: string;
  dataDir: string;
  tlsSelfSigned?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  allowPrivateCallbacks?: boolean;
  allowPrivateMx?: boolean;
  trustProxy?: string;
  retainDays: string;
  workers: string;
  metrics?: boolean;
  requestTimeout: string;
  uploadIdleTimeout: string;
  metricsPort?: string;
  metricsHost: string;
}

function tlsFrom(options: ServeOptions): TlsOption {
  if (options.tlsSelfSigned && (options.tlsCert || options.tlsKey))
    throw new CliError('Give either --tls-self-signed or --tls-cert with --tls-key, not both.');
  if (options.tlsSelfSigned) return { kind: 'self-signed' };
  if (!options.tlsCert !== !options.tlsKey) throw new CliError('--tls-cert and --tls-key go together.');
  if (options.tlsCert && options.tlsKey) {
    const read = (file: string, what: string) => {
      try {
        return readFileSync(file);
      } catch {
        throw new CliError(`Cannot read the TLS ${what} file ${file}.`);
      }
    };
    return { kind: 'files', cert: read(options.tlsCert, 'certificate'), key: read(options.tlsKey, 'key') };
  }
  return { kind: 'none' };
}

/** `--trust-proxy`: the load balancers' addresses (IPs or CIDRs, comma-separated), checked. */
function trustProxyOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [ip, bits, extra] = entry.split('/');
    const family = isIP(ip ?? '');
    const isPrefix = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !isPrefix || extra !== undefined)
      throw new CliError(
        `--trust-proxy takes IP addresses or CIDRs separated by commas; '${entry}' is not one.`,
      );
  }
  return entries.length > 0 ? entries.join(',') : undefined;
}

export async function serve(options: ServeOptions): Promise<void> {
  const port = intOption('--port', options.port, 0, 65535);
  const tls = tlsFrom(options);
  const node = nodeOptionsFrom(options);
  const work = workOptionsFrom(options);
  const dnsbl = dnsblFrom(options);
  const online = {
    ...onlineOptionsFrom(options, 'smtp'),
    ...(node.sourceAddress ? { sourceAddress: node.sourceAddress } : {}),
    ...(node.smtpProxy ? { smtpProxy: node.smtpProxy } : {}),
    // Off loopback, or with --database or --trust-proxy, mail hosts at private addresses are refused unless
    // allowed (service/server.ts).
    ...(options.allowPrivateMx ? { allowPrivateMx: true } : {}),
  };
  const lists = {
    retainDays: intOption('--retain-days', options.retainDays, 1, 36_500),
    callback: {
      allowPrivateTargets: options.allowPrivateCallbacks === true,
      ...(online.dnsServers ? { dnsServers: online.dnsServers } : {}),
    },
    ...(node.concurrency !== undefined ? { onlineConcurrency: node.concurrency } : {}),
    // The in-process verifier node of `serve --database` works as `worker` does, with the same options.
    ...work.lists,
  };
  const timeouts = {
    requestMs: intOption('--request-timeout', options.requestTimeout, 1, 3600) * 1000,
    uploadIdleMs: intOption('--upload-idle-timeout', options.uploadIdleTimeout, 1, 3600) * 1000,
  };
  const trustProxy = trustProxyOf(options.trustProxy);
  const url = databaseUrlOf(options);
  const workers = intOption('--workers', options.workers, 0, 1);
  if (!url && workers !== 1)
    throw new CliError(
      '--workers is for a team server (with --database): a single service always works on its lists.',
    );
  const team = url
    ? {
        url,
        workers: workers === 1,
        retainDays: lists.retainDays,
        ...(work.leaseSeconds !== undefined ? { leaseSeconds: work.leaseSeconds } : {}),
        ...(work.heartbeatSeconds !== undefined ? { heartbeatSeconds: work.heartbeatSeconds } : {}),
      }
    : undefined;
  const metricsPort =
    options.metricsPort !== undefined
      ? intOption('--metrics-port', options.metricsPort, 0, 65535)
      : undefined;
  const logger = await nodeLoggerFrom(options);
  // prom-client is loaded only by a node that serves metrics: beside the API, or on a port of their own.
  const hasPortOfItsOwn = metricsPort !== undefined;
  const metrics =
    options.metrics || hasPortOfItsOwn
      ? new (await import('../../service/ops/metrics.js')).Metrics(undefined, { hasPortOfItsOwn })
      : undefined;
  let running;
  try {
    running = await startService({
      logger,
      ...(metrics ? { metrics } : {}),
      dataDir: options.dataDir,
      host: options.host,
      port,
      tls,
      ...(trustProxy ? { trustProxy } : {}),
      online,
      lists,
      timeouts,
      ...(team ? { team, selfCheck: { ...(dnsbl ? { dnsbl } : {}), onCheck: selfCheckLogger(logger) } } : {}),
    });
  } catch (error) {
    if (error instanceof UnsafeBindError) throw new CliError(error.message);
    if (error instanceof TeamDatabaseError) throw new CliError(error.message);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(`Port ${port} on ${options.host} is already in use.`);
    if (code === 'EADDRNOTAVAIL')
      throw new CliError(`Cannot bind to ${options.host}: no such local address.`);
    throw error;
  }
  const service = running;
  const ops =
    metricsPort !== undefined
      ? await startOpsPort(
          {
            host: options.metricsHost,
            port: metricsPort,
            readiness: service.readiness,
            ...(metrics ? { metrics } : {}),
            logger,
          },
          '--metrics-port',
          '--metrics-host',
          () => service.close(),
        )
      : undefined;
  logger.info(
    `Mailsieve Email Data Service listening on ${running.url} (data: ${options.dataDir})` +
      `${url ? `; team server on ${describeDatabase(url)}${workers === 0 ? ', API only' : ''}` : ''}` +
      `${metrics ? `; metrics at ${ops?.url ?? running.url}/metrics` : ''}`,
  );
  if (tls.kind === 'self-signed')
    logger.info('Serving a self-signed certificate: clients must trust it (e.g. NODE_EXTRA_CA_CERTS).');
  const stop = () => {
    logger.info('Stopping…');
    Promise.all([ops?.close(), running.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
