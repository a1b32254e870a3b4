import { readFileSync } from 'node:fs';
import { startService, UnsafeBindError, type TlsOption } from '../../service/server.js';
import { describeDatabase, TeamDatabaseError } from '../../service/pg/url.js';
import { CliError, intOption } from './errors.js';
import { onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';
import {
  databaseUrlOf,
  nodeOptionsFrom,
  type DatabaseCliOptions,
  type NodeCliOptions,
} from './teamOptions.js';
import { nodeLoggerFrom, type LogCliOptions } from './opsOptions.js';

export interface ServeOptions extends OnlineCliOptions, DatabaseCliOptions, NodeCliOptions, LogCliOptions {
  host: string;
  port: string;
  dataDir: string;
  tlsSelfSigned?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  allowPrivateCallbacks?: boolean;
  retainDays: string;
  workers: string;
  leaseSeconds?: string;
  partRows?: string;
  metrics?: boolean;
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

export async function serve(options: ServeOptions): Promise<void> {
  const port = intOption('--port', options.port, 0, 65535);
  const tls = tlsFrom(options);
  const node = nodeOptionsFrom(options);
  const online = {
    ...onlineOptionsFrom(options, 'smtp'),
    ...(node.sourceAddress ? { sourceAddress: node.sourceAddress } : {}),
    ...(node.smtpProxy ? { smtpProxy: node.smtpProxy } : {}),
  };
  const lists = {
    retainDays: intOption('--retain-days', options.retainDays, 1, 36_500),
    callback: { allowPrivateTargets: options.allowPrivateCallbacks === true },
    ...(node.concurrency !== undefined ? { onlineConcurrency: node.concurrency } : {}),
    ...(options.partRows !== undefined
      ? { partRows: intOption('--part-rows', options.partRows, 100, 1_000_000) }
      : {}),
  };
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
        ...(options.leaseSeconds !== undefined
          ? { leaseSeconds: intOption('--lease-seconds', options.leaseSeconds, 5, 3600) }
          : {}),
      }
    : undefined;
  const logger = await nodeLoggerFrom(options);
  // prom-client is loaded only by a node that serves metrics.
  const metrics = options.metrics ? new (await import('../../service/ops/metrics.js')).Metrics() : undefined;
  let running;
  try {
    running = await startService({
      logger,
      ...(metrics ? { metrics } : {}),
      dataDir: options.dataDir,
      host: options.host,
      port,
      tls,
      online,
      lists,
      ...(team ? { team } : {}),
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
  logger.info(
    `Mailsieve Email Data Service listening on ${running.url} (data: ${options.dataDir})` +
      `${url ? `; team server on ${describeDatabase(url)}${workers === 0 ? ', API only' : ''}` : ''}` +
      `${metrics ? `; metrics at ${running.url}/metrics` : ''}`,
  );
  if (tls.kind === 'self-signed')
    logger.info('Serving a self-signed certificate: clients must trust it (e.g. NODE_EXTRA_CA_CERTS).');
  const stop = () => {
    logger.info('Stopping…');
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
