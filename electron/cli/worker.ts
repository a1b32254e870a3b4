// `mailsieve worker --database URL`: a verifier node of a team server (docs/team-server.md). It takes list work
// from the queue in PostgreSQL and checks addresses online from its own source address, with its own HELO name
// and sender; it serves no HTTP. Stopped by Ctrl+C or SIGTERM: its work in flight goes back to the queue.
import { describeDatabase, TeamDatabaseError } from '../../service/pg/url.js';
import { CliError } from './errors.js';
import { onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';
import { dnsblFrom, logSelfCheck, type SelfCheckCliOptions } from './selfCheck.js';
import {
  databaseUrlOf,
  nodeOptionsFrom,
  workOptionsFrom,
  type DatabaseCliOptions,
  type NodeCliOptions,
  type WorkCliOptions,
} from './teamOptions.js';

export interface WorkerOptions
  extends OnlineCliOptions, DatabaseCliOptions, NodeCliOptions, WorkCliOptions, SelfCheckCliOptions {
  dataDir: string;
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
      ...(work.leaseSeconds !== undefined ? { leaseSeconds: work.leaseSeconds } : {}),
      ...(work.heartbeatSeconds !== undefined ? { heartbeatSeconds: work.heartbeatSeconds } : {}),
      ...(dnsbl ? { dnsbl } : {}),
      onSelfCheck: logSelfCheck,
    });
  } catch (error) {
    if (error instanceof TeamDatabaseError) throw new CliError(error.message);
    throw error;
  }
  process.stdout.write(
    `Mailsieve worker taking list work from ${describeDatabase(url)}` +
      `${node.sourceAddress ? `, leaving from ${node.sourceAddress}` : ''} (data: ${options.dataDir})\n`,
  );
  const selfCheck = running.selfCheck.state;
  if (selfCheck.status === 'not-run') process.stdout.write(`Self-check: not run: ${selfCheck.reason}.\n`);
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
