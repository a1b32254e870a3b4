import { isIP } from 'node:net';
import { isLoopbackHost } from '../shared/api/loopback.js';
import { buildService, type OnlineServiceOptions, type Service } from './http/app.js';
import type { RequestTimeouts } from './http/bodies.js';
import type { ListServiceOptions } from './lists/node/processor.js';
import { openServiceDb, type ServiceDb } from './store/db.js';
import type { TeamNode, TeamOptions } from './pg/team.js';
import type { NodeRegistration } from './pg/nodes.js';
import type { AddressSelfCheck } from './engine/online/selfCheck.js';
import type { AddressCheck } from './engine/online/addressCheck.js';
import type { Logger } from 'pino';
import type { Metrics } from './ops/metrics.js';

export type TlsOption =
  | { readonly kind: 'none' }
  | { readonly kind: 'self-signed' }
  | { readonly kind: 'files'; readonly cert: string | Buffer; readonly key: string | Buffer };

export interface StartOptions {
  readonly dataDir: string;
  readonly host?: string;
  /** 0 for an ephemeral port. */
  readonly port?: number;
  readonly tls?: TlsOption;
  /**
   * Addresses of the load balancers in front of this service (`serve --trust-proxy`, comma-separated IPs or
   * CIDRs): a request from one of them is taken to come from the client its X-Forwarded-For names, for the
   * per-address limit of failed authentications.
   */
  readonly trustProxy?: string;
  /** An already-open database (the embedded service shares one); otherwise opened from dataDir. */
  readonly db?: ServiceDb;
  /**
   * DNS/SMTP checks: the service's ceiling level and the verifier's settings (DNS servers, SMTP port…).
   * `allowPrivateMx` defaults to whether the service listens on loopback and is neither a team node nor
   * behind a proxy.
   */
  readonly online?: OnlineServiceOptions;
  /** List processing (E7–E10): limits, worker threads, callback retries. */
  readonly lists?: ListServiceOptions;
  /**
   * A team server's node (docs/team-server.md): keys, usage, lists and their queue in this PostgreSQL database,
   * and whether this node also works on lists (`--workers 0`: it serves the API only).
   */
  readonly team?: Omit<TeamOptions, 'dataDir'> & { readonly url: string; readonly workers: boolean };
  /**
   * A team node that works on lists checks its source address (service/engine/online/selfCheck.ts): the block
   * lists asked (default DEFAULT_DNSBL_ZONES), and who hears each result (the node's log).
   */
  readonly selfCheck?: {
    readonly dnsbl?: readonly string[];
    readonly onCheck?: (check: AddressCheck) => void;
  };
  /** The node's log (docs/operations.md "Logs"); without it nothing is logged. */
  readonly logger?: Logger;
  /** How long a client may take to send a request (`serve --request-timeout`, `--upload-idle-timeout`). */
  readonly timeouts?: Partial<RequestTimeouts>;
  /** Prometheus metrics, served at `GET /metrics`. */
  readonly metrics?: Metrics;
}

export interface RunningService extends Service {
  readonly db: ServiceDb;
  /** Base URL with the bound port, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** PEM certificate when serving TLS (self-signed or given), for clients that must trust it. */
  readonly certificate?: string;
  /** A team server's node: its row in `nodes` (what `mailsieve status` shows of it). */
  readonly registration?: NodeRegistration;
  /** A team server's node that works on lists: the check of its source address (for readiness). */
  readonly selfCheck?: AddressSelfCheck;
  close(): Promise<void>;
}

export class UnsafeBindError extends Error {}

/** How long closing waits for requests in flight before it closes their connections. */
export const CLOSE_GRACE_MS = 2000;

async function selfSignedFor(host: string): Promise<{ key: string; cert: string }> {
  const altNames: { type: 2 | 7; value?: string; ip?: string }[] = [
    { type: 2, value: 'localhost' },
    { type: 7, ip: '127.0.0.1' },
    { type: 7, ip: '::1' },
  ];
  if (isIP(host)) altNames.push({ type: 7, ip: host });
  else if (host !== 'localhost') altNames.push({ type: 2, value: host });
  // Loaded only when needed: the certificate library costs ~80 ms of start-up to every command otherwise.
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: host }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames }],
  });
  return { key: pems.private, cert: pems.cert };
}

/**
 * Starts the Email Data Service. The spec requires HTTPS; plain HTTP is allowed only on a loopback address,
 * where nothing crosses a network.
 */
export async function startService(options: StartOptions): Promise<RunningService> {
  const host = options.host ?? '127.0.0.1';
  const tlsOption = options.tls ?? { kind: 'none' };
  if (tlsOption.kind === 'none' && !isLoopbackHost(host))
    throw new UnsafeBindError(
      `Refusing to serve plain HTTP on ${host}: the API requires HTTPS off this machine. ` +
        'Use --tls-self-signed or --tls-cert/--tls-key, or bind to 127.0.0.1.',
    );
  const tls =
    tlsOption.kind === 'self-signed'
      ? await selfSignedFor(host)
      : tlsOption.kind === 'files'
        ? { key: tlsOption.key, cert: tlsOption.cert }
        : undefined;
  const db = options.db ?? openServiceDb(options.dataDir);
  let team: TeamNode | undefined;
  if (options.team) {
    const { url, workers: _workers, ...teamOptions } = options.team;
    try {
      // PostgreSQL's client and pg-boss are loaded only by a team node: the single service starts without them.
      const { openTeamNode } = await import('./pg/team.js');
      team = await openTeamNode(url, { ...teamOptions, dataDir: options.dataDir });
    } catch (error) {
      if (!options.db) db.close();
      throw error;
    }
  }
  // A service that other machines reach checks no mailbox at this machine's or its network's addresses, unless
  // told to (`serve --allow-private-mx`); on loopback it serves this machine's user, whose office server may be
  // one. A team node or a service behind a proxy (`--trust-proxy`) serves others even on loopback: nginx in front.
  const isLocalOnly = isLoopbackHost(host) && !options.team && !options.trustProxy;
  const online = { ...options.online, allowPrivateMx: options.online?.allowPrivateMx ?? isLocalOnly };
  const service = buildService({
    db,
    fastify: {
      ...(tls ? { https: tls } : {}),
      ...(options.trustProxy ? { trustProxy: options.trustProxy } : {}),
    },
    online,
    dataDir: options.dataDir,
    ...(options.lists ? { lists: options.lists } : {}),
    ...(team ? { team, listWorkers: options.team?.workers !== false } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
  });
  try {
    await service.app.listen({ host, port: options.port ?? 0 });
  } catch (error) {
    await service.app.close().catch(() => undefined);
    await team?.close();
    if (!options.db) db.close();
    throw error;
  }
  // List work begins: lists that were waiting or running when the service last stopped are taken up again.
  await service.lists?.start();
  let registration: NodeRegistration | undefined;
  let selfCheck: AddressSelfCheck | undefined;
  if (team) {
    const { startNodePresence } = await import('./pg/nodes.js');
    const onCheck = options.selfCheck?.onCheck;
    ({ registration, selfCheck } = await startNodePresence((identity) => team.register(identity), {
      role: options.team?.workers !== false ? 'api+worker' : 'api',
      sourceAddress: options.online?.sourceAddress,
      verifier: service.online,
      processor: service.lists,
      dnsServers: options.online?.dnsServers,
      level: options.online?.checks ?? 'smtp',
      dnsbl: options.selfCheck?.dnsbl,
      ...(onCheck ? { onSelfCheck: onCheck } : {}),
    }));
    const check = selfCheck;
    // A source address on a block list is not fit to check mailboxes from (a node that checks mailboxes).
    if (options.team?.workers !== false)
      service.readiness.register('source-address', () => {
        const fit = check.readiness();
        return fit.ok ? undefined : fit.detail;
      });
  }
  const address = service.app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const hostPart = isIP(host) === 6 ? `[${host.replace(/^\[|\]$/g, '')}]` : host;
  return {
    ...service,
    db,
    url: `${tls ? 'https' : 'http'}://${hostPart}:${port}`,
    ...(tls ? { certificate: String(tls.cert) } : {}),
    ...(registration ? { registration } : {}),
    ...(selfCheck ? { selfCheck } : {}),
    async close() {
      await selfCheck?.close();
      // Fastify waits for requests still in flight; a client that stopped halfway would hold the shutdown
      // until its request timeout (30 s by default). Give them a short grace, then close every connection.
      const grace = setTimeout(() => service.app.server.closeAllConnections(), CLOSE_GRACE_MS);
      try {
        await service.app.close();
      } finally {
        clearTimeout(grace);
      }
      await team?.close();
      if (!options.db) db.close();
    },
  };
}
