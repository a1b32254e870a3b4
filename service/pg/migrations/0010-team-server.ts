import type { PgMigration } from '../migrate.js';

/**
 * The team server's schema: keys and their settings, usage against quotas and the shared rate limit, lists with
 * their runs, stored input (in 1 MiB chunks), parts and results, the journal of online verdicts, and what
 * verifier nodes share of mail domains. Times are ISO 8601 UTC text, as the single-node store keeps them, so
 * both answer alike.
 */
export const teamServer: PgMigration = {
  version: 10,
  name: 'team-server',
  async up(client) {
    await client.query(`
      CREATE TABLE keys (
        id bigserial PRIMARY KEY,
        key_hash text NOT NULL UNIQUE,
        key_hint text NOT NULL,
        label text NOT NULL DEFAULT '',
        mode text NOT NULL CHECK (mode IN ('safe_to_send', 'email_validation')),
        services jsonb NOT NULL,
        legacy_accept_all boolean NOT NULL DEFAULT false,
        rate_limit integer NOT NULL,
        created_at text NOT NULL,
        revoked_at text,
        checks text NOT NULL DEFAULT 'offline' CHECK (checks IN ('offline', 'dns', 'smtp')),
        fields jsonb,
        alternate_max integer NOT NULL DEFAULT 1,
        bulk_limit integer NOT NULL DEFAULT 5000,
        -- Billable queries allowed per period (NULL: no quota), and the period: day, month or total.
        quota bigint CHECK (quota >= 0),
        quota_period text NOT NULL DEFAULT 'total' CHECK (quota_period IN ('day', 'month', 'total')),
        is_trial boolean NOT NULL DEFAULT false,
        -- The imported hard bounces (each node's reference data) answer code 520, within this many days.
        known_bouncers boolean NOT NULL DEFAULT false,
        bounce_max_age_days integer NOT NULL DEFAULT 365 CHECK (bounce_max_age_days BETWEEN 1 AND 36500)
      );
      CREATE TABLE key_list_entries (
        key_id bigint NOT NULL REFERENCES keys (id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('allow', 'suppress')),
        entry text NOT NULL,
        PRIMARY KEY (key_id, kind, entry)
      );
      -- Every change to keys moves this counter: API nodes drop their cache of keys when it moves.
      CREATE TABLE key_changes (id integer PRIMARY KEY CHECK (id = 1), version bigint NOT NULL);
      INSERT INTO key_changes (id, version) VALUES (1, 0);

      -- Billable queries of a key per period ('2026-11-26' for a day, '2026-11' for a month, 'total').
      CREATE TABLE key_usage (
        key_id bigint NOT NULL REFERENCES keys (id) ON DELETE CASCADE,
        period text NOT NULL,
        used bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
        PRIMARY KEY (key_id, period)
      );
      -- Calls per key and second, for the rate limit all API nodes share (old seconds are swept).
      CREATE UNLOGGED TABLE key_rate (
        key_id bigint NOT NULL,
        second bigint NOT NULL,
        calls integer NOT NULL,
        PRIMARY KEY (key_id, second)
      );

      CREATE TABLE lists (
        id bigserial PRIMARY KEY,
        key_id bigint NOT NULL REFERENCES keys (id) ON DELETE CASCADE,
        name text NOT NULL,
        input_file text NOT NULL,
        options jsonb NOT NULL,
        status text NOT NULL DEFAULT 'Pending'
          CHECK (status IN ('Pending', 'Processed', 'Processing', 'Results', 'Cancelled', 'Invalid', 'Error')),
        service_status text NOT NULL DEFAULT 'Pending'
          CHECK (service_status IN ('Pending', 'Processing', 'Completed', 'Cancelled', 'Error')),
        reason text,
        size_bytes bigint NOT NULL,
        records integer NOT NULL DEFAULT 0,
        input_count integer NOT NULL DEFAULT 0,
        completed_count integer NOT NULL DEFAULT 0,
        reporting jsonb,
        results_file text,
        attempts integer NOT NULL DEFAULT 0,
        created_at text NOT NULL,
        updated_at text NOT NULL,
        finished_at text,
        services jsonb NOT NULL DEFAULT '["email_validation"]',
        services_explicit boolean NOT NULL DEFAULT true,
        service_state jsonb NOT NULL DEFAULT '{}',
        purchase jsonb,
        checks text,
        online jsonb,
        run integer NOT NULL DEFAULT 1,
        plan text,
        reserved bigint NOT NULL DEFAULT 0,
        parts_done integer NOT NULL DEFAULT 0
      );
      CREATE INDEX lists_by_key ON lists (key_id, id);
      CREATE INDEX lists_finished ON lists (finished_at) WHERE finished_at IS NOT NULL;

      -- A list's stored bytes in 1 MiB chunks: its input, the text of a zip input, its zip results, its explain CSV.
      CREATE TABLE list_blobs (
        list_id bigint NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('input', 'text', 'results.zip', 'explain')),
        seq integer NOT NULL,
        bytes bytea NOT NULL,
        PRIMARY KEY (list_id, kind, seq)
      );

      CREATE TABLE list_parts (
        list_id bigint NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
        run integer NOT NULL,
        part integer NOT NULL,
        rows integer NOT NULL,
        completed integer NOT NULL DEFAULT 0,
        online jsonb,
        is_done boolean NOT NULL DEFAULT false,
        -- The part's rows as pass 1 left them (PartRows, encoded), for whichever node writes the part.
        plan_rows bytea NOT NULL,
        output bytea,
        explain text,
        report jsonb,
        identity jsonb,
        PRIMARY KEY (list_id, run, part)
      );

      CREATE TABLE list_verdicts (
        list_id bigint NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
        level text NOT NULL,
        address text NOT NULL,
        entry jsonb NOT NULL,
        PRIMARY KEY (list_id, level, address)
      );

      -- What verifier nodes learn of a mail domain and share: its MX answer, whether it accepts any address.
      -- A node about to ask claims the domain first, so one asks for the whole cluster; a claim expires.
      CREATE TABLE domain_knowledge (
        kind text NOT NULL CHECK (kind IN ('mx', 'catchall')),
        domain text NOT NULL,
        value jsonb,
        expires_at timestamptz,
        claimed_by text,
        claimed_until timestamptz,
        PRIMARY KEY (kind, domain)
      );
    `);
  },
};
