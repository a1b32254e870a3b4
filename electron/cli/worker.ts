// `mailsieve worker --database URL`: a verifier node of a team server (docs/team-server.md). It takes list work
// from the queue in PostgreSQL and checks addresses online from its own source address, with its own HELO name
// and sender; it serves no API (with --http-port: its health, readiness and metrics). Stopped by Ctrl+C or
// SIGTERM: its work in flight goes back to the queue.
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
import type { OpsServer } from '../../service/ops/routes.js';

export interface WorkerOptions
  extends OnlineCliOptions,
    DatabaseCliOptions,
    NodeCliOptions,
    WorkCliOptions,
    SelfCheckCliOptions,
    LogCliOptions {
  dataDir: string;
  allowPrivateCallbacks?: boolean;
  allowPrivateMx?: boolean;
  httpPort?: string;
  httpHost: string;
}

export async function worker(options: WorkerOptions): Promise<void> {
  const url = databaseUrlOf(options);
  if (!url)
    throw new CliError(
      "A worker takes its work from a team server's database: give --database postgres://… (or set MAILSIEVE_DATABASE_URL).",
    );
  const { checks, ...online } = onlineOptionsFrom(options, 'smtp');
  const node = nodeOptionsFrom(options);
  const work = workOptionsFrom(options);
  const dnsbl = dnsblFrom(options);
  const lists = {
    // This node delivers the callbacks of the lists it finishes: it checks their targets itself, as `serve` does.
    callback: {
      allowPrivateTargets: options.allowPrivateCallbacks === true,
      ...(online.dnsServers ? { dnsServers: online.dnsServers } : {}),
    },
    ...(node.concurrency !== undefined ? { onlineConcurrency: node.concurrency } : {}),
    ...work.lists,
  };
  const httpPort =
    options.httpPort !== undefined ? intOption('--http-port', options.httpPort, 0, 65535) : undefined;
  const logger = await nodeLoggerFrom(options);
  // The team server's modules (pg, pg-boss) are loaded by the commands that use them, not by every command.
  const { startWorkerNode } = await import('../../service/pg/workerNode.js');
  // A worker's metrics are always on its --http-port (it has no API to keep them off).
  const metrics =
    httpPort !== undefined ? new (await import('../../service/ops/metrics.js')).Metrics() : undefined;
  let running;
  try {
    running = await startWorkerNode({
      ...(metrics ? { metrics } : {}),
      url,
      dataDir: options.dataDir,
      online: {
        ...online,
        ...(node.sourceAddress ? { sourceAddress: node.sourceAddress } : {}),
        ...(node.smtpProxy ? { smtpProxy: node.smtpProxy } : {}),
        // A worker checks its clients' lists: no mail host at this machine's or its network's addresses,
        // unless allowed (an office's own server, a test's mail world on loopback).
        allowPrivateMx: options.allowPrivateMx === true,
      },
      ...(checks ? { ceiling: checks } : {}),
      lists,
      ...(work.leaseSeconds !== undefined ? { leaseSeconds: work.leaseSeconds } : {}),
      ...(work.heartbeatSeconds !== undefined ? { heartbeatSeconds: work.heartbeatSeconds } : {}),
      ...(dnsbl ? { dnsbl } : {}),
      onSelfCheck: selfCheckLogger(logger),
    });
  } catch (error) {
    if (error instanceof TeamDatabaseError) throw new CliError(error.message);
    throw error;
  }
  const http: OpsServer | undefined =
    httpPort !== undefined
      ? await startOpsPort(
          {
            host: options.httpHost,
            port: httpPort,
            readiness: running.readiness,
            ...(metrics ? { metrics } : {}),
            logger,
          },
          '--http-port',
          '--http-host',
          () => running.close(),
        )
      : undefined;
  logger.info(
    `Mailsieve worker taking list work from ${describeDatabase(url)}` +
      `${node.sourceAddress ? `, leaving from ${node.sourceAddress}` : ''} (data: ${options.dataDir})` +
      `${http ? `; health, readiness and metrics at ${http.url} (no key)` : ''}`,
  );
  const selfCheck = running.selfCheck.state;
  if (selfCheck.status === 'not-run') logger.info(`Self-check: not run: ${selfCheck.reason}.`);
  const stop = () => {
    logger.info('Stopping: work in flight goes back to the queue…');
    Promise.all([http?.close(), running.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
