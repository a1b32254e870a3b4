// A node of a team server: what every API node and verifier node opens on the shared PostgreSQL — the pool
// (its schema migrated once, under a lock), the list backend and its pg-boss queue, the keys, usage and
// quotas, and the domain knowledge verifier nodes share. See docs/team-server.md.
import { join } from 'node:path';
import type { KeyRecord } from '../store/keys.js';
import { databaseProblem, openPostgres, type PgPool } from './db.js';
import { TeamDatabaseError } from './url.js';
import { getPgKeyById, PgKeyRegistry } from './keys.js';
import { PgSharedKnowledge } from './knowledge.js';
import { PgListBackend } from './listBackend.js';
import { sweepPgLists } from './retention.js';
import { addUsage, PgUsageMeter } from './usage.js';
import { RETENTION_SWEEP_MS } from '../lists/backend/retention.js';
import { NodeRegistration, type NodeIdentity } from './nodes.js';
import { queueJobs } from './status.js';
import { PG_MIGRATIONS } from './migrations/index.js';
import type { Readiness } from '../ops/readiness.js';
import type { NodeGauges, QueueJobCount } from '../ops/metrics.js';
import { holdWorkFolder } from './workFolder.js';

export interface TeamOptions {
  /** This node's data folder: reference data for E2–E6 and the services of lists, temporary files. */
  readonly dataDir: string;
  /** How long list work is leased to a node before another takes it (default 180 s). */
  readonly leaseSeconds?: number;
  /** How often expired leases are looked for (default 5 s). */
  readonly maintenanceSeconds?: number;
  /** How often an idle node asks the queue for work (default 1 s). */
  readonly pollingSeconds?: number;
  /** Connections this node keeps to PostgreSQL (default 20). */
  readonly connections?: number;
  /**
   * Days a completed list is kept (service/pg/retention.ts). API nodes (`serve --retain-days`, default 30) sweep;
   * a node without it (a worker) leaves deleting to them.
   */
  readonly retainDays?: number;
  /** How often the node renews its row in `nodes` (default 10 s); its lease is three of them. */
  readonly heartbeatSeconds?: number;
}

export interface TeamNode {
  readonly pool: PgPool;
  readonly lists: PgListBackend;
  readonly keys: PgKeyRegistry;
  readonly usage: PgUsageMeter;
  readonly knowledge: PgSharedKnowledge;
  keyById(id: number): Promise<KeyRecord | undefined>;
  /** Writes this node's row in `nodes` and keeps it alive until close (`mailsieve status` lists it). */
  register(identity: NodeIdentity): Promise<NodeRegistration>;
  /** Registers what this node needs to be ready: PostgreSQL answers, its schema is this version's, the queue runs. */
  registerReadiness(readiness: Readiness): void;
  /** The lists by status and the queue's jobs by kind and state, read from PostgreSQL (metrics). */
  readonly gauges: NodeGauges;
  close(): Promise<void>;
}

/** The queue states counted (pg-boss's names): waiting is pg-boss's `created`. */
/** Opens this node's side of a team server. Throws TeamDatabaseError in words when PostgreSQL cannot be used. */
export async function openTeamNode(url: string, options: TeamOptions): Promise<TeamNode> {
  let pool: PgPool;
  try {
    pool = await openPostgres(url, {
      ...(options.connections !== undefined ? { max: options.connections } : {}),
    });
  } catch (error) {
    throw new TeamDatabaseError(databaseProblem(url, error));
  }
  // A folder of this node's own: other nodes may share the data folder (service/pg/workFolder.ts).
  const work = holdWorkFolder(join(options.dataDir, 'lists', 'work'));
  const workRoot = work.path;
  const closing = new AbortController();
  const usage = new PgUsageMeter(pool);
  const lists = new PgListBackend(pool, url, {
    workRoot,
    ...(options.leaseSeconds !== undefined ? { leaseSeconds: options.leaseSeconds } : {}),
    ...(options.maintenanceSeconds !== undefined ? { maintenanceSeconds: options.maintenanceSeconds } : {}),
    ...(options.pollingSeconds !== undefined ? { pollingSeconds: options.pollingSeconds } : {}),
    // A list's records, reserved when it was accepted, go back when it fails; its count is settled when it completes.
    // Both in the period the list was charged in, whenever it ends.
    onRefund: async (db, keyId, records, period) => {
      const key = await getPgKeyById(db, keyId);
      await addUsage(db, keyId, key?.quota ?? null, -records, period ?? undefined);
    },
    onComplete: async (db, keyId, extra, period) => {
      const key = await getPgKeyById(db, keyId);
      await addUsage(db, keyId, key?.quota ?? null, extra, period ?? undefined);
    },
  });
  try {
    await lists.start();
  } catch (error) {
    await pool.end().catch(() => undefined);
    work.release();
    throw new TeamDatabaseError(databaseProblem(url, error));
  }
  const retainDays = options.retainDays;
  const sweep = (days: number) =>
    void sweepPgLists(pool, days).catch((error: Error) =>
      console.error(`Could not delete old lists: ${error.message}`),
    );
  let retention: NodeJS.Timeout | undefined;
  let registration: NodeRegistration | undefined;
  if (retainDays !== undefined) {
    sweep(retainDays);
    retention = setInterval(() => sweep(retainDays), RETENTION_SWEEP_MS);
    retention.unref();
  }
  return {
    pool,
    lists,
    keys: new PgKeyRegistry(pool),
    usage,
    knowledge: new PgSharedKnowledge(pool, closing.signal),
    keyById: (id) => getPgKeyById(pool, id),
    async register(identity) {
      const made = new NodeRegistration(pool, identity, options.heartbeatSeconds);
      await made.start();
      registration = made;
      return made;
    },
    registerReadiness(readiness) {
      const latest = Math.max(...PG_MIGRATIONS.map((migration) => migration.version));
      let schema: number | undefined;
      readiness.register('postgres', async () => {
        try {
          const { rows } = await pool.query<{ version: number }>(
            'SELECT version FROM mailsieve_schema WHERE id = 1',
          );
          schema = rows[0]?.version;
          return undefined;
        } catch (error) {
          schema = undefined;
          // Anyone may ask /readyz: the URL's user, host, port and database are for the node's log.
          return { detail: databaseProblem(undefined, error), logged: databaseProblem(url, error) };
        }
      });
      // Read by the 'postgres' check, which runs at the same time: asked again here when it has not answered.
      readiness.register('schema', async () => {
        let found = schema;
        try {
          found ??= await pool
            .query<{ version: number }>('SELECT version FROM mailsieve_schema WHERE id = 1')
            .then(({ rows }) => rows[0]?.version);
        } catch (error) {
          return { detail: 'not read: PostgreSQL cannot be used', logged: databaseProblem(url, error) };
        }
        if (found === latest) return undefined;
        return found === undefined
          ? 'the database has no Mailsieve schema'
          : `the database's schema is version ${found}; this node's is ${latest}`;
      });
      readiness.register('queue', () =>
        lists.isRunning ? undefined : 'the list queue (pg-boss) is not started',
      );
    },
    gauges: {
      async listsByStatus() {
        const { rows } = await pool.query<{ status: string; n: number }>(
          'SELECT status, count(*)::int AS n FROM lists GROUP BY status',
        );
        return rows.map((row) => ({ status: row.status, count: row.n }));
      },
      async queueJobs() {
        // The same count `mailsieve status` shows.
        const queue = await queueJobs(pool);
        return Object.entries(queue).flatMap(([kind, states]) =>
          Object.entries(states).map(([state, count]) => ({
            kind: kind as QueueJobCount['kind'],
            state: state as QueueJobCount['state'],
            count,
          })),
        );
      },
    },
    async close() {
      clearInterval(retention);
      await registration?.close();
      closing.abort();
      await usage.close().catch(() => undefined);
      await lists.close();
      await pool.end().catch(() => undefined);
      work.release();
    },
  };
}
