// A real PostgreSQL cluster for tests and benchmarks: initdb in a temporary folder, the server on a free
// loopback port, its socket in that folder, trust authentication (only loopback and the folder can reach it).
// Debian's postgresql (installed by .ci/run like chromium) provides the binaries; PostgreSQL refuses to run as
// root, so under root (CI, these machines) the cluster runs as the `postgres` user the package creates.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';

export interface PostgresCluster {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` of a fresh database of its own. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (fast shutdown), as a crash or an upgrade would; `start()` brings it back on the same port. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its folder. */
  close(): Promise<void>;
}

/** The folder of PostgreSQL's server programs: MAILSIEVE_PG_BIN, else the newest Debian version, else PATH. */
export function postgresBinDir(): string | undefined {
  const given = process.env.MAILSIEVE_PG_BIN;
  if (given) return given;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(join(debian, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb'))) return dir;
  return undefined;
}

export const NO_POSTGRES_MESSAGE =
  'PostgreSQL server programs were not found (initdb, postgres): install them (on Debian: apt-get install postgresql) ' +
  'or set MAILSIEVE_PG_BIN to their folder.';

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function userIds(name: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Starts a fresh cluster. */
export async function startPostgres(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(NO_POSTGRES_MESSAGE);
  const dir = mkdtempSync(join(tmpdir(), 'mailsieve-pg-'));
  const data = join(dir, 'data');
  const asUser = isRoot() ? userIds('postgres') : undefined;
  if (asUser) {
    chmodSync(dir, 0o700);
    chownSync(dir, asUser.uid, asUser.gid);
  }
  const runOptions = asUser ? { uid: asUser.uid, gid: asUser.gid } : {};
  execFileSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
    { stdio: 'pipe', ...runOptions },
  );
  const port = await freePort();
  let server: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  async function start(): Promise<void> {
    const child = spawn(
      join(bin!, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
        '-c',
        'shared_buffers=128MB',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], ...runOptions },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += chunk.toString();
    });
    exited = new Promise((resolve) => child.once('exit', () => resolve()));
    server = child;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`PostgreSQL did not start on port ${port}: ${stderr.trim().slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async function stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null) return;
    // SIGINT: fast shutdown (clients disconnected, clean stop); SIGQUIT: immediate (as a crash).
    child.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    await exited;
  }

  let databases = 0;
  await start();
  return {
    port,
    async createDatabase(name) {
      const database = name ?? `mailsieve_${++databases}`;
      const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${database.replaceAll('"', '')}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${database}`;
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
