import type { PgMigration } from '../migrate.js';

/**
 * What `mailsieve status` reads besides the lists and the queue: the nodes alive (each node writes its row at
 * start and renews its lease with a heartbeat; a node whose lease ran out is gone), and each source address's
 * recent activity, counted per minute by the nodes that leave from it (conversations, refusals of the
 * verifier by kind, unknown answers by cause). The activity is unlogged: it is an hour's statistics, cheap to
 * write and not worth a crash's replay.
 */
export const nodeStatus: PgMigration = {
  version: 20,
  name: 'node-status',
  async up(client) {
    await client.query(`
      CREATE TABLE nodes (
        id text PRIMARY KEY,
        role text NOT NULL CHECK (role IN ('api', 'worker', 'api+worker')),
        -- NULL: the node leaves from the address the system chooses.
        source_address text,
        helo_name text,
        host_name text NOT NULL,
        pid integer NOT NULL,
        version text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        last_seen timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz NOT NULL,
        parts_in_hand integer NOT NULL DEFAULT 0,
        -- The node's check of its own address (PTR, forward-confirmed, HELO name, block lists), when it ran.
        self_check jsonb
      );
      CREATE INDEX nodes_by_lease ON nodes (lease_until);

      CREATE UNLOGGED TABLE source_activity (
        -- '' when the nodes leave from the address the system chooses.
        source_address text NOT NULL,
        minute timestamptz NOT NULL,
        kind text NOT NULL CHECK (kind IN ('conversation', 'refusal', 'unknown')),
        -- The refusal's kind (concurrency, rate, policy, block) or the unknown answer's cause; '' for conversations.
        name text NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (source_address, minute, kind, name)
      );
    `);
  },
};
