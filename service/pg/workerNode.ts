// A verifier node of a team server (`mailsieve worker`): it takes list work from the queue — plans, parts,
// completions — and checks addresses online from its own source address, with its own HELO name and its own
// politeness towards mail servers (they count per source address), sharing with the other nodes what can be
// shared (a domain's MX answer and catch-all verdict, in PostgreSQL). It serves no API: with
// `--http-port`, only its health, readiness and metrics (service/ops/routes.ts).
import { join } from 'node:path';
import { createOnlineVerifier, type ChecksLevel, type OnlineOptions } from '../engine/online/index.js';
import { ListProcessor, type ListServiceOptions } from '../lists/node/processor.js';
import { openServiceDb, SERVICE_DB_FILE } from '../store/db.js';
import { knownBouncersFor } from '../identity/bounces.list.js';
import { openTeamNode, type TeamOptions } from './team.js';
import { startNodePresence, type NodeRegistration } from './nodes.js';
import type { AddressSelfCheck } from '../engine/online/selfCheck.js';
import type { AddressCheck } from '../engine/online/addressCheck.js';
import { Readiness } from '../ops/readiness.js';
import type { Metrics } from '../ops/metrics.js';

export interface WorkerNodeOptions extends TeamOptions {
  readonly url: string;
  /** How the node's verifier reaches DNS and mail servers (source address, HELO name, sender, proxy, …). */
  readonly online?: OnlineOptions;
  /** The highest checks level this node runs lists at (default smtp: as far as each key allows). */
  readonly ceiling?: ChecksLevel;
  readonly lists?: ListServiceOptions;
  /** The self-check of the node's source address: block lists asked (default DEFAULT_DNSBL_ZONES). */
  readonly dnsbl?: readonly string[];
  /** Hears each result of the self-check (the node's log). */
  readonly onSelfCheck?: (check: AddressCheck) => void;
  /** Metrics of this node (its `--http-port`): the lists and queue are read from PostgreSQL when scraped. */
  readonly metrics?: Metrics;
}

export interface WorkerNode {
  /** The node's row in `nodes` (what `mailsieve status` shows of it). */
  readonly registration: NodeRegistration;
  /** The node's verifier's settings (its HELO name, given or the default). */
  readonly heloName: string;
  /** The node's check of its own source address (its state for readiness and `status`). */
  readonly selfCheck: AddressSelfCheck;
  /** What this node needs to be ready (`GET /readyz` on its `--http-port`); other parts register theirs here. */
  readonly readiness: Readiness;
  close(): Promise<void>;
}

export async function startWorkerNode(options: WorkerNodeOptions): Promise<WorkerNode> {
  // The node's own service database holds its reference data (the services of lists other than validation).
  const db = openServiceDb(options.dataDir);
  let team;
  try {
    team = await openTeamNode(options.url, options);
  } catch (error) {
    db.close();
    throw error;
  }
  const verifier = createOnlineVerifier({ ...options.online, shared: team.knowledge });
  const processor = new ListProcessor(
    team.lists,
    {
      keyById: (id) => team.keyById(id),
      serviceDbPath: join(options.dataDir, SERVICE_DB_FILE),
      knownBouncers: (key) => knownBouncersFor(db, key, options.lists?.nativeBinding),
    },
    options.lists ?? {},
    { verifier, ceiling: options.ceiling ?? 'smtp' },
  );
  await processor.start();
  const { registration, selfCheck } = await startNodePresence((identity) => team.register(identity), {
    role: 'worker',
    sourceAddress: options.online?.sourceAddress,
    verifier,
    processor,
    dnsServers: options.online?.dnsServers,
    level: options.ceiling ?? 'smtp',
    dnsbl: options.dnsbl,
    ...(options.onSelfCheck ? { onSelfCheck: options.onSelfCheck } : {}),
  });
  const readiness = new Readiness();
  team.registerReadiness(readiness);
  // A source address on a block list is not fit to check mailboxes from.
  readiness.register('source-address', () => {
    const fit = selfCheck.readiness();
    return fit.ok ? undefined : fit.detail;
  });
  options.metrics?.setGauges(team.gauges);
  return {
    readiness,
    registration,
    heloName: verifier.settings.heloName,
    selfCheck,
    async close() {
      await selfCheck.close();
      // Checks in flight end and their parts go back to the queue; then the queue stops, then the rest.
      processor.stop();
      await team.lists.close();
      await processor.close();
      await team.close();
      await verifier.close();
      db.close();
    },
  };
}
