// `mailsieve worker --database URL`: a verifier node of a team server (docs/team-server.md). It takes list work
// from the queue in PostgreSQL and checks addresses online from its own source address, with its own HELO name
// and sender; it serves no HTTP. Stopped by Ctrl+C or SIGTERM: its work in flight goes back to the queue.
import { describeDatabase, TeamDatabaseError } from '../../service/pg/url.js';
import { CliError, intOption } from './errors.js';
import { onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';
import {
  databaseUrlOf,
  nodeOptionsFrom,
  type DatabaseCliOptions,
  type NodeCliOptions,
} from './teamOptions.js';

export interface WorkerOptions extends OnlineCliOptions, DatabaseCliOptions, NodeCliOptions {
  dataDir: string;
  parts?: string;
  partRows?: string;
  leaseSeconds?: string;
  retryDelay?: string;
  maxWait?: string;
  allowPrivateCallbacks?: boolean;
  allowPrivateMx?: boolean;
}

export async function worker(options: WorkerOptions): Promise<void> {
  const url = databaseUrlOf(options);
  if (!url)
    throw new CliError(
      "A worker takes its work from a team server's database: give --database postgres://… (or set MAILSIEVE_DATABASE_URL).",
    );
  const { checks, ...online } = onlineOptionsFrom(options, 'smtp');
  const node = nodeOptionsFrom(options);
  const lists = {
    // This node delivers the callbacks of the lists it finishes: it checks their targets itself, as `serve` does.
    callback: {
      allowPrivateTargets: options.allowPrivateCallbacks === true,
      ...(online.dnsServers ? { dnsServers: online.dnsServers } : {}),
    },
    ...(node.concurrency !== undefined ? { onlineConcurrency: node.concurrency } : {}),
    ...(options.parts !== undefined ? { parts: intOption('--parts', options.parts, 1, 64) } : {}),
    ...(options.partRows !== undefined
      ? { partRows: intOption('--part-rows', options.partRows, 100, 1_000_000) }
      : {}),
    ...(options.retryDelay !== undefined
      ? { retryDelayMs: intOption('--retry-delay', options.retryDelay, 1, 24 * 3600) * 1000 }
      : {}),
    ...(options.maxWait !== undefined
      ? { maxWaitMs: intOption('--max-wait', options.maxWait, 0, 7 * 24 * 3600) * 1000 }
      : {}),
  };
  // The team server's modules (pg, pg-boss) are loaded by the commands that use them, not by every command.
  const { startWorkerNode } = await import('../../service/pg/workerNode.js');
  let running;
  try {
    running = await startWorkerNode({
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
      ...(options.leaseSeconds !== undefined
        ? { leaseSeconds: intOption('--lease-seconds', options.leaseSeconds, 5, 3600) }
        : {}),
    });
  } catch (error) {
    if (error instanceof TeamDatabaseError) throw new CliError(error.message);
    throw error;
  }
  process.stdout.write(
    `Mailsieve worker taking list work from ${describeDatabase(url)}` +
      `${node.sourceAddress ? `, leaving from ${node.sourceAddress}` : ''} (data: ${options.dataDir})\n`,
  );
  const stop = () => {
    process.stdout.write('Stopping: work in flight goes back to the queue…\n');
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
