// What `mailsieve status` reads of a team server, in one consistent look at its database: the nodes alive (their
// lease holds), the queue of list work by kind and state (pg-boss's own table), the lists in flight per key,
// and each source address's last hour (conversations, refusals by kind, unknown answers by cause).
import type { Queryable } from './db.js';
import { QUEUES } from './listBackend.js';

export const QUEUE_KINDS = ['plan', 'part', 'finish'] as const;
export const QUEUE_STATES = ['waiting', 'active', 'retry'] as const;
export type QueueKind = (typeof QUEUE_KINDS)[number];
export type QueueState = (typeof QUEUE_STATES)[number];

export interface NodeStatus {
  readonly id: string;
  readonly role: string;
  readonly source_address: string | null;
  readonly helo_name: string | null;
  readonly host_name: string;
  readonly pid: number;
  readonly version: string;
  readonly started_at: string;
  readonly last_seen: string;
  readonly parts_in_hand: number;
  /** The node's check of its own address, when it ran one (service/engine/online/addressCheck.ts). */
  readonly self_check: unknown;
}

export interface KeyLists {
  readonly key_id: number;
  readonly label: string;
  readonly lists: number;
  readonly records: number;
  readonly completed: number;
}

export interface SourceHour {
  /** '' when nodes leave from the address the system chooses. */
  readonly source_address: string;
  readonly conversations: number;
  readonly refusals: Record<string, number>;
  readonly unknown: Record<string, number>;
}

export interface TeamStatus {
  readonly checked_at: string;
  readonly nodes: readonly NodeStatus[];
  readonly queue: Record<QueueKind, Record<QueueState, number>>;
  readonly lists_in_flight: readonly KeyLists[];
  readonly last_hour: readonly SourceHour[];
}

const PGBOSS_STATE: Record<string, QueueState> = { created: 'waiting', active: 'active', retry: 'retry' };

/** Jobs of list work by kind and state, from pg-boss's table (zeros before any node started the queue). */
export async function queueJobs(db: Queryable): Promise<Record<QueueKind, Record<QueueState, number>>> {
  const queue = Object.fromEntries(
    QUEUE_KINDS.map((kind) => [kind, { waiting: 0, active: 0, retry: 0 }]),
  ) as Record<QueueKind, Record<QueueState, number>>;
  const { rows: exists } = await db.query<{ job: string | null }>(
    `SELECT to_regclass('pgboss.job')::text AS job`,
  );
  if (!exists[0]?.job) return queue;
  const kindOf = new Map<string, QueueKind>(QUEUE_KINDS.map((kind) => [QUEUES[kind], kind]));
  const { rows } = await db.query<{ name: string; state: string; count: number }>(
    `SELECT name, state::text AS state, count(*)::int AS count FROM pgboss.job
      WHERE name = ANY($1) AND state IN ('created', 'active', 'retry') GROUP BY name, state`,
    [[...kindOf.keys()]],
  );
  for (const row of rows) {
    const kind = kindOf.get(row.name);
    const state = PGBOSS_STATE[row.state];
    if (kind && state) queue[kind][state] += row.count;
  }
  return queue;
}

export async function readTeamStatus(db: Queryable): Promise<TeamStatus> {
  const { rows: now } = await db.query<{ now: Date }>('SELECT now() AS now');
  const { rows: nodes } = await db.query<NodeStatus & { started_at: Date; last_seen: Date }>(
    `SELECT id, role, source_address, helo_name, host_name, pid, version, started_at, last_seen, parts_in_hand,
            self_check
       FROM nodes WHERE lease_until > now() ORDER BY role, source_address NULLS FIRST, started_at`,
  );
  const { rows: lists } = await db.query<KeyLists>(
    `SELECT l.key_id::float8 AS key_id, coalesce(k.label, '') AS label, count(*)::float8 AS lists,
            coalesce(sum(l.records), 0)::float8 AS records,
            -- A list's rows done: its own count, or (while its parts run) what its parts say they have done.
            coalesce(sum(greatest(l.completed_count, (SELECT coalesce(sum(p.completed), 0) FROM list_parts p
                                                       WHERE p.list_id = l.id AND p.run = l.run))), 0)::float8
              AS completed
       FROM lists l LEFT JOIN keys k ON k.id = l.key_id
      WHERE l.status IN ('Pending', 'Processing')
      GROUP BY l.key_id, k.label ORDER BY l.key_id`,
  );
  const { rows: activity } = await db.query<{
    source_address: string;
    kind: string;
    name: string;
    count: number;
  }>(
    `SELECT source_address, kind, name, sum(count)::float8 AS count FROM source_activity
      WHERE minute >= date_trunc('minute', now()) - interval '59 minutes'
      GROUP BY source_address, kind, name ORDER BY source_address, kind, name`,
  );
  const sources = new Map<string, SourceHour>();
  // Every live node's address has its line, even with nothing done yet.
  for (const node of nodes)
    if (node.role !== 'api')
      sources.set(node.source_address ?? '', {
        source_address: node.source_address ?? '',
        conversations: 0,
        refusals: {},
        unknown: {},
      });
  for (const row of activity) {
    let hour = sources.get(row.source_address);
    if (!hour) {
      hour = { source_address: row.source_address, conversations: 0, refusals: {}, unknown: {} };
      sources.set(row.source_address, hour);
    }
    if (row.kind === 'conversation') (hour as { conversations: number }).conversations += row.count;
    else if (row.kind === 'refusal') hour.refusals[row.name] = row.count;
    else if (row.kind === 'unknown') hour.unknown[row.name] = row.count;
  }
  return {
    checked_at: now[0].now.toISOString(),
    nodes: nodes.map((node) => ({
      ...node,
      started_at: node.started_at.toISOString(),
      last_seen: node.last_seen.toISOString(),
    })),
    queue: await queueJobs(db),
    lists_in_flight: lists,
    last_hour: [...sources.values()].sort((a, b) => (a.source_address < b.source_address ? -1 : 1)),
  };
}
