import type { PgMigration } from '../migrate.js';

/**
 * What verifier nodes learnt of mail hosts' limits (issue #26): per mail host (and port), the limits a refusal
 * lowered — conversations at once, connections a minute, recipients a conversation or a minute, refusals
 * before it slows down — each the level just under the refusal and until when it holds (epoch ms), in `limits`
 * (allowance.ts `LearntLimits`). A host counts per client address, but its numbers are the same for every node:
 * a node that starts talking to a host starts at the learnt pace. The row goes when its last limit expires.
 */
export const hostLimits: PgMigration = {
  version: 40,
  name: 'host-limits',
  async up(client) {
    await client.query(`
      CREATE TABLE host_limits (
        host text NOT NULL,
        port integer NOT NULL,
        limits jsonb NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (host, port)
      );
    `);
  },
};
