// The nodes of a team server, as `mailsieve status` shows them: each node (API, verifier, or both in one
// process) writes its row when it starts and renews it with a heartbeat (every `heartbeatSeconds`, default
// 10 s), its lease running three heartbeats; a node that stops deletes its row, and a node that died simply
// lets its lease run out (status shows only nodes whose lease holds: the database's clock decides, not the
// nodes'). Each heartbeat also writes what the node's verifier did since the last one, per minute and source
// address (conversations, refusals by kind, unknown answers by cause): one statement, however busy the node.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { OnlineStats, OnlineVerifier } from '../engine/online/index.js';
import type { AddressCheck } from '../engine/online/addressCheck.js';
import {
  AddressSelfCheck,
  startNodeSelfCheck,
  type NodeSelfCheckSettings,
} from '../engine/online/selfCheck.js';
import { mailsieveVersion } from '../version.js';
import type { PgPool, Queryable } from './db.js';

export type NodeRole = 'api' | 'worker' | 'api+worker';

export interface NodeIdentity {
  readonly role: NodeRole;
  /** The address its DNS and SMTP leave from; undefined: the system's choice. */
  readonly sourceAddress?: string | undefined;
  readonly heloName?: string | undefined;
}

/** What a node's heartbeat reads from the node (set once the node's parts are in place). */
export interface NodeGauges {
  /** Parts of lists this node is working on now. */
  partsInHand?(): number;
  /** The node's verifier's counts since it started. */
  activity?(): Pick<OnlineStats, 'smtpSessions' | 'smtpRefusals' | 'unknownAnswers'>;
}

export const DEFAULT_HEARTBEAT_SECONDS = 10;
/** A node's lease runs this many heartbeats: one or two late heartbeats do not make it look dead. */
export const LEASE_HEARTBEATS = 3;

type Counts = Map<string, number>;

/** `kind\tname` → count, of what the verifier did since it started. */
function countsOf(activity: ReturnType<NonNullable<NodeGauges['activity']>>): Counts {
  const counts: Counts = new Map([[`conversation\t`, activity.smtpSessions]]);
  for (const [kind, n] of Object.entries(activity.smtpRefusals)) counts.set(`refusal\t${kind}`, n);
  for (const [cause, n] of Object.entries(activity.unknownAnswers)) counts.set(`unknown\t${cause}`, n ?? 0);
  return counts;
}

export class NodeRegistration {
  readonly id = randomUUID();
  private gauges: NodeGauges = {};
  private selfCheck: unknown = null;
  private flushed: Counts = new Map();
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  private isClosed = false;

  constructor(
    private readonly pool: PgPool,
    private readonly identity: NodeIdentity,
    private readonly heartbeatSeconds = DEFAULT_HEARTBEAT_SECONDS,
  ) {}

  /** Writes the node's row, then renews it every heartbeat. */
  async start(): Promise<void> {
    // Rows of nodes long gone (their lease ran out an hour ago) are swept by whichever node starts.
    await this.pool.query(`DELETE FROM nodes WHERE lease_until < now() - interval '1 hour'`);
    await this.beat();
    this.timer = setInterval(() => void this.beatInTurn(), this.heartbeatSeconds * 1000);
    this.timer.unref();
  }

  /** What the heartbeat reads from the node: its parts in hand, its verifier's counts. */
  watch(gauges: NodeGauges): void {
    this.gauges = { ...this.gauges, ...gauges };
    // What the verifier did before it was watched is not this node's activity to report (a fresh verifier has 0).
    if (gauges.activity) this.flushed = countsOf(gauges.activity());
  }

  /** The node's check of its own address, shown by `status` (written with the next heartbeat, or at once). */
  setSelfCheck(check: unknown): Promise<void> {
    this.selfCheck = check;
    return this.beatInTurn();
  }

  private beatInTurn(): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    // One heartbeat at a time; a failed one (PostgreSQL restarting) is simply the next one's to make.
    this.beating = this.beating.then(() => this.beat().catch(() => undefined));
    return this.beating;
  }

  private async beat(): Promise<void> {
    const { role, sourceAddress, heloName } = this.identity;
    const leaseSeconds = this.heartbeatSeconds * LEASE_HEARTBEATS;
    await this.pool.query(
      `INSERT INTO nodes (id, role, source_address, helo_name, host_name, pid, version, lease_until,
                          parts_in_hand, self_check)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8), $9, $10)
       ON CONFLICT (id) DO UPDATE SET last_seen = now(), lease_until = EXCLUDED.lease_until,
         parts_in_hand = EXCLUDED.parts_in_hand, self_check = EXCLUDED.self_check`,
      [
        this.id,
        role,
        sourceAddress ?? null,
        heloName ?? null,
        hostname(),
        process.pid,
        mailsieveVersion(),
        leaseSeconds,
        this.gauges.partsInHand?.() ?? 0,
        this.selfCheck === null ? null : JSON.stringify(this.selfCheck),
      ],
    );
    await this.flushActivity();
  }

  /** What the verifier did since the last heartbeat, added to this minute's counts of its source address. */
  private async flushActivity(): Promise<void> {
    const activity = this.gauges.activity?.();
    if (!activity) return;
    const now = countsOf(activity);
    const kinds: string[] = [];
    const names: string[] = [];
    const deltas: number[] = [];
    for (const [key, total] of now) {
      const delta = total - (this.flushed.get(key) ?? 0);
      if (delta <= 0) continue;
      const [kind, name] = key.split('\t') as [string, string];
      kinds.push(kind);
      names.push(name);
      deltas.push(delta);
    }
    if (deltas.length === 0) return;
    await addActivity(this.pool, this.identity.sourceAddress ?? '', kinds, names, deltas);
    this.flushed = now;
  }

  /** Stops the heartbeat, writes what is left of the activity, and removes the node's row. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    clearInterval(this.timer);
    await this.beating;
    this.isClosed = true;
    await this.flushActivity().catch(() => undefined);
    await this.pool.query('DELETE FROM nodes WHERE id = $1', [this.id]).catch(() => undefined);
  }
}

async function addActivity(
  db: Queryable,
  sourceAddress: string,
  kinds: readonly string[],
  names: readonly string[],
  counts: readonly number[],
): Promise<void> {
  await db.query(
    `INSERT INTO source_activity (source_address, minute, kind, name, count)
     SELECT $1, date_trunc('minute', now()), kind, name, count
       FROM unnest($2::text[], $3::text[], $4::bigint[]) AS t (kind, name, count)
     ON CONFLICT (source_address, minute, kind, name)
       DO UPDATE SET count = source_activity.count + EXCLUDED.count`,
    [sourceAddress, kinds, names, counts],
  );
  // Older than the hour `status` shows (and a margin): swept by the node that writes, cheaply, by minute.
  await db.query(`DELETE FROM source_activity WHERE minute < now() - interval '2 hours'`);
}

export interface NodePresenceOptions extends NodeIdentity {
  /** The node's verifier: its counts are this node's activity, its settings its HELO name. */
  readonly verifier: Pick<OnlineVerifier, 'stats' | 'settings'>;
  /** The node's list work, when it takes any. */
  readonly processor?: { readonly partsInHand: number } | undefined;
  /** The verifier's DNS servers, for the self-check. */
  readonly dnsServers?: NodeSelfCheckSettings['dnsServers'];
  /** The node's highest checks level (a node that checks offline only has no address to check). */
  readonly level: NodeSelfCheckSettings['level'];
  readonly dnsbl?: readonly string[] | undefined;
  readonly onSelfCheck?: (check: AddressCheck) => void;
}

/**
 * A team node's presence: its row in `nodes` kept alive, its activity counted, and — a node that works on lists —
 * the check of its own source address, its result written to its row and told to `onSelfCheck`.
 */
export async function startNodePresence(
  register: (identity: NodeIdentity) => Promise<NodeRegistration>,
  options: NodePresenceOptions,
): Promise<{ readonly registration: NodeRegistration; readonly selfCheck: AddressSelfCheck }> {
  const heloName = options.verifier.settings.heloName;
  const registration = await register({
    role: options.role,
    sourceAddress: options.sourceAddress,
    ...(options.role === 'api' ? {} : { heloName }),
  });
  const processor = options.processor;
  registration.watch({
    ...(processor ? { partsInHand: () => processor.partsInHand } : {}),
    activity: () => options.verifier.stats,
  });
  if (options.role === 'api')
    return { registration, selfCheck: new AddressSelfCheck(undefined, 'an API node works on no lists') };
  const selfCheck = startNodeSelfCheck(
    {
      sourceAddress: options.sourceAddress,
      heloName,
      dnsServers: options.dnsServers,
      dnsbl: options.dnsbl,
      level: options.level,
    },
    (check) => {
      void registration.setSelfCheck(check);
      options.onSelfCheck?.(check);
    },
  );
  return { registration, selfCheck };
}
