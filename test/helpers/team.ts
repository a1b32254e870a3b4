// A team server for tests, as a team runs one: its own PostgreSQL cluster (test/helpers/postgres.ts), API nodes
// (`mailsieve serve --database … --workers 0`) and verifier nodes (`mailsieve worker --database …`), each a
// process of the built CLI with its own data folder, workers leaving from their own loopback addresses.
import type { ChildProcess } from 'node:child_process';
import { CLI, runCli, startCli } from './cli.js';
import { startPostgres, type PostgresCluster } from './postgres.js';
import { tempDir } from './service.js';

export interface TeamProcess {
  readonly child: ChildProcess;
  /** The API node's base URL (an API node), or '' (a worker). */
  readonly url: string;
  readonly dataDir: string;
  /** Stops it as SIGTERM does (work in flight goes back to the queue). */
  stop(): Promise<void>;
  /** Kills it outright (SIGKILL): no chance to tidy up. */
  kill(): Promise<void>;
  /** What it printed last (stdout and stderr, up to 64 KiB), to tell why a test failed. */
  output(): string;
}

export interface TeamCluster {
  readonly pg: PostgresCluster;
  readonly database: string;
  /** An API node; `args` are more options of `serve` (e.g. `--workers 1`). */
  api(args?: readonly string[]): Promise<TeamProcess>;
  /** A verifier node leaving from `sourceAddress`; `args` are more options of `worker`. */
  worker(sourceAddress: string, args?: readonly string[]): Promise<TeamProcess>;
  /** A key made with `mailsieve keys create --database`; `args` are its options. */
  key(args?: readonly string[]): Promise<string>;
  close(): Promise<void>;
}

export async function startTeam(): Promise<TeamCluster> {
  const pg = await startPostgres();
  const database = await pg.createDatabase('team');
  const processes: TeamProcess[] = [];
  const dirs: { remove(): void }[] = [];

  async function start(args: string[], ready: RegExp): Promise<TeamProcess> {
    // A node gets a data folder of its own unless `args` name one (nodes sharing a folder).
    const given = args.indexOf('--data-dir');
    let dataDir = args[given + 1] ?? '';
    if (given < 0) {
      const dir = tempDir('mailsieve-team-');
      dirs.push(dir);
      dataDir = dir.path;
    }
    const started = await startCli(given < 0 ? [...args, '--data-dir', dataDir] : args, ready);
    const exited = new Promise<void>((resolve) => {
      if (started.child.exitCode !== null || started.child.signalCode !== null) resolve();
      else started.child.once('exit', () => resolve());
    });
    const node: TeamProcess = {
      child: started.child,
      url: started.match[1] ?? '',
      dataDir,
      async stop() {
        if (started.child.exitCode === null && started.child.signalCode === null)
          started.child.kill('SIGTERM');
        await exited;
      },
      async kill() {
        if (started.child.exitCode === null && started.child.signalCode === null)
          started.child.kill('SIGKILL');
        await exited;
      },
      output: () => started.output(),
    };
    processes.push(node);
    return node;
  }

  return {
    pg,
    database,
    api: (args = []) =>
      start(
        ['serve', '--database', database, '--port', '0', '--workers', '0', ...args],
        /listening on (https?:\/\/\S+)/,
      ),
    worker: (sourceAddress, args = []) =>
      start(
        [
          'worker',
          '--database',
          database,
          '--source-address',
          sourceAddress,
          // A worker checks its own address in DNS at start: a test's stays on loopback (a DNS server of the
          // test's own, or a port where nothing answers at once), never the machine's resolver.
          ...(args.includes('--dns-servers') ? [] : ['--dns-servers', '127.0.0.1:9']),
          ...args,
        ],
        /Mailsieve worker taking list work/,
      ),
    async key(args = []) {
      const made = await runCli(['keys', 'create', '--database', database, '--rate-limit', '0', ...args]);
      if (made.code !== 0) throw new Error(`keys create failed: ${made.stderr}`);
      return made.stdout.trim();
    },
    async close() {
      await Promise.all(processes.map((node) => node.kill()));
      await pg.close();
      for (const dir of dirs) dir.remove();
    },
  };
}

export { CLI };

/**
 * A verifier node's options for a loopback mail world (test/helpers/smtpServer.ts's farm): its DNS server and
 * port, the node's HELO name and the sender every test verifier uses.
 */
export function mailFarmArgs(
  dns: { readonly address: string },
  farm: { readonly port: number },
  heloName = 'verifier.mailsieve.test',
): string[] {
  return [
    '--dns-servers',
    dns.address,
    '--smtp-port',
    String(farm.port),
    '--helo-name',
    heloName,
    '--mail-from',
    'probe@mailsieve.test',
  ];
}
