// The mail world of the cluster benchmark (issue 21), on loopback: a DNS server with 10,000 domains, each with
// an MX at one of a few shared mail hosts (127.1.0.1, .2, …, one SMTP port for all), and those hosts, which
// judge a client by its source address as real servers do: at most 2 connections at once per source address
// (a third gets 421), smtp-server's 100 ms wait before the greeting, Postfix's error tarpit scaled down (after
// 10 RCPT errors in a session each reply waits 1 s; after 20 the session is cut with 421). Each domain's rows
// are p0@, p1@, … (most exist, some are unknown users); one domain in ten accepts any address. Anything else
// asked for is a catch-all probe. The world counts, per source address, what a mail server would see, and
// the DNS and SMTP questions per domain and per host; `summary()` gives the figures, `reset()` clears them.
//
// startClusterWorld() runs the servers in a worker thread (a core of their own, as in onlineServers.ts);
// the model functions below (domains, hosts, rows, expected codes) are pure and shared with clusterData.ts.
import { Worker } from 'node:worker_threads';
import { workerScriptUrl } from '../../service/workerUrl.js';
import { startDnsServer, type TestZone } from '../helpers/dnsServer.js';
import { startMailFarm, type ClientLog, type MailboxBehaviour } from '../helpers/smtpServer.js';

export interface ClusterWorldOptions {
  /** Domains (default 10,000). */
  readonly domains?: number;
  /** List rows, spread evenly over the domains: row r is p⌊r / domains⌋ at domain r mod domains (default 100,000). */
  readonly rows?: number;
  /** Mail hosts, each domain's MX one of them (default 6). */
  readonly hosts?: number;
  /** The hosts' addresses are <hostNetwork>.1, .2, … (default `127.1.0`: all of 127.0.0.0/8 is loopback). */
  readonly hostNetwork?: string;
  /** Share of the domains that accept any address (default 0.1). */
  readonly catchAllShare?: number;
  /** Share of the other domains' rows that are unknown users, 550 5.1.1 (default 0.15). */
  readonly unknownShare?: number;
  /** Connections at once per source address per host; one more gets 421 (default 2). */
  readonly maxConnectionsPerClient?: number;
  /** The error tarpit per session (default Postfix's 10 / 20 errors, its 1 s sleep). */
  readonly errorLimits?: { readonly soft: number; readonly hard: number; readonly sleepMs: number };
  /** Offer STARTTLS (default false: TLS handshakes would make the world's core, not the nodes, the limit). */
  readonly tls?: boolean;
  /** Seed of the world's choices: hosts, catch-all domains, unknown users (default 21). */
  readonly seed?: number;
}

export type ClusterWorldConfig = Required<ClusterWorldOptions>;

export function clusterWorldConfig(options: ClusterWorldOptions = {}): ClusterWorldConfig {
  const config: ClusterWorldConfig = {
    domains: 10_000,
    rows: 100_000,
    hosts: 6,
    hostNetwork: '127.1.0',
    catchAllShare: 0.1,
    unknownShare: 0.15,
    maxConnectionsPerClient: 2,
    errorLimits: { soft: 10, hard: 20, sleepMs: 1000 },
    tls: false,
    seed: 21,
    ...options,
  };
  if (!Number.isInteger(config.domains) || config.domains < 1) throw new Error('domains: a whole number ≥ 1');
  if (!Number.isInteger(config.rows) || config.rows < 0) throw new Error('rows: a whole number ≥ 0');
  if (!Number.isInteger(config.hosts) || config.hosts < 1 || config.hosts > 254)
    throw new Error('hosts: a whole number from 1 to 254');
  if (!/^127\.\d{1,3}\.\d{1,3}$/.test(config.hostNetwork))
    throw new Error(
      `hostNetwork: three parts of a loopback address, such as 127.1.0 (not ${config.hostNetwork})`,
    );
  return config;
}

// ---- The model: pure functions of the configuration ----

const DOMAIN_SUFFIX = '.cluster.example.net';
export const domainName = (domain: number): string => `d${domain}${DOMAIN_SUFFIX}`;
/** The MX host name of host `host` (0-based); domains share them, as they share a provider's mail servers. */
export const hostName = (host: number): string => `mx${host + 1}.hosts.example.net`;
export const hostAddress = (config: ClusterWorldConfig, host: number): string =>
  `${config.hostNetwork}.${host + 1}`;

/** The murmur3 finaliser: a well-mixed 32-bit hash of a 32-bit value. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A number in [0, 1) chosen by the seed and the parts, the same each time. */
export function unitHash(seed: number, ...parts: number[]): number {
  let h = fmix(seed ^ 0x9e3779b9);
  for (const part of parts) h = fmix(h ^ fmix((part + 0x7f4a7c15) >>> 0));
  return h / 2 ** 32;
}

export const hostOf = (config: ClusterWorldConfig, domain: number): number =>
  Math.floor(unitHash(config.seed, 1, domain) * config.hosts);
export const isCatchAllDomain = (config: ClusterWorldConfig, domain: number): boolean =>
  unitHash(config.seed, 2, domain) < config.catchAllShare;
/** Whether row `index` of a domain that is not catch-all exists (else: an unknown user). */
export const isExistingRow = (config: ClusterWorldConfig, domain: number, index: number): boolean =>
  unitHash(config.seed, 3, domain, index) >= config.unknownShare;
/** How many rows domain `domain` has. */
export const rowsOf = (config: ClusterWorldConfig, domain: number): number =>
  Math.floor(config.rows / config.domains) + (domain < config.rows % config.domains ? 1 : 0);
export const rowAddress = (config: ClusterWorldConfig, row: number): string =>
  `p${Math.floor(row / config.domains)}@${domainName(row % config.domains)}`;

/** The codes a verifier should give a row: the mailbox exists, it does not, or the domain takes anything. */
export const EXPECTED = { exists: 50, unknownUser: 400, catchAll: 45 } as const;

/** A row's domain and index, or undefined when `address` is not a row of this world (a catch-all probe). */
export function parseRow(
  config: ClusterWorldConfig,
  address: string,
): { domain: number; index: number } | undefined {
  const at = address.lastIndexOf('@');
  const local = /^p(\d{1,9})$/.exec(address.slice(0, at));
  const host = address.slice(at + 1).toLowerCase();
  if (!local || !host.endsWith(DOMAIN_SUFFIX)) return undefined;
  const label = /^d(\d{1,9})$/.exec(host.slice(0, -DOMAIN_SUFFIX.length));
  if (!label) return undefined;
  const domain = Number(label[1]);
  const index = Number(local[1]);
  if (domain >= config.domains || index >= rowsOf(config, domain)) return undefined;
  return { domain, index };
}

/** The expected code of row `row` (0-based, in the world's order, not a list's). */
export function expectedCodeOfRow(config: ClusterWorldConfig, row: number): number {
  const domain = row % config.domains;
  if (isCatchAllDomain(config, domain)) return EXPECTED.catchAll;
  return isExistingRow(config, domain, Math.floor(row / config.domains))
    ? EXPECTED.exists
    : EXPECTED.unknownUser;
}

/** The expected code of an address, or undefined when it is not a row of this world. */
export function expectedCode(config: ClusterWorldConfig, address: string): number | undefined {
  const row = parseRow(config, address.toLowerCase());
  return row === undefined ? undefined : expectedCodeOfRow(config, row.index * config.domains + row.domain);
}

// ---- The servers ----

/** What the mail hosts saw of one source address (summed over the hosts), and what the DNS server saw. */
export interface SourceSummary {
  /** TCP connections to the mail hosts, refused ones included. */
  readonly connections: number;
  /** Connections answered `421 4.7.0 Too many connections from your IP`. */
  readonly refused: number;
  /** Most connections open at once to one host (the limit is about this one). */
  readonly peakPerHost: number;
  /** Most connections open at once to all hosts together. */
  readonly peak: number;
  readonly rcpts: number;
  /** RCPT replies 4xx/5xx (unknown users, probes refused). */
  readonly errors: number;
  /** Replies delayed by the error tarpit. */
  readonly tarpitted: number;
  /** Sessions cut with 421 for too many errors. */
  readonly cut: number;
  /** DNS questions from this address. */
  readonly dnsQuestions: number;
}

export interface ClusterWorldSummary {
  /**
   * Share of the time since the start (or the last reset) that the world's thread was busy, its event loop
   * utilisation: near 1, the world and not the nodes sets the pace.
   */
  readonly busy: number;
  /** Per source address (`127.0.0.2`, …). */
  readonly sources: Record<string, SourceSummary>;
  readonly dns: {
    readonly questions: number;
    readonly mxQuestions: number;
    /** Domains asked for their MX at least once. */
    readonly domainsAsked: number;
    readonly maxMxPerDomain: number;
    /** A and AAAA questions per mail host name (the MX answers carry the A records as glue). */
    readonly addressQuestionsPerHost: Record<string, number>;
  };
  readonly smtp: {
    readonly connections: number;
    readonly refused: number;
    readonly rcpts: number;
    /** RCPTs for list rows; distinct rows asked; most RCPTs for one row; rows asked more than once. */
    readonly rowRcpts: number;
    readonly rowsAsked: number;
    readonly maxRcptsPerRow: number;
    readonly rowsAskedAgain: number;
    /** RCPTs for addresses that are not list rows: catch-all probes. */
    readonly probes: number;
    readonly domainsProbed: number;
    readonly maxProbesPerDomain: number;
    readonly tarpitted: number;
    readonly cut: number;
    /** Per host address: connections and RCPTs. */
    readonly hosts: Record<string, { readonly connections: number; readonly rcpts: number }>;
  };
}

export interface ClusterWorldServers {
  /** `127.0.0.1:PORT`, as `dnsServers` / `--dns-servers` take it. */
  readonly dns: string;
  /** The port every mail host listens on (the verifier's `smtpPort`). */
  readonly smtpPort: number;
  /** The hosts' addresses, host 0 first. */
  readonly hosts: readonly string[];
  summary(): ClusterWorldSummary;
  /** Clears every count (between the rounds of a benchmark). */
  reset(): void;
  close(): Promise<void>;
}

const increment = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
const maxOf = (values: Iterable<number>) => {
  let max = 0;
  for (const value of values) if (value > max) max = value;
  return max;
};

/** Starts the world's servers in this thread. The benchmark wants startClusterWorld() (a thread of its own). */
export async function runClusterWorld(config: ClusterWorldConfig): Promise<ClusterWorldServers> {
  const specs: Record<string, MailboxBehaviour> = {};
  const byHost = Array.from({ length: config.hosts }, () => ({
    domains: [] as string[],
    users: [] as string[],
    acceptAllDomains: [] as string[],
  }));
  const zones: Record<string, TestZone> = {};
  for (let host = 0; host < config.hosts; host++) zones[hostName(host)] = { a: [hostAddress(config, host)] };
  for (let domain = 0; domain < config.domains; domain++) {
    const name = domainName(domain);
    const host = hostOf(config, domain);
    zones[name] = { mx: [[10, hostName(host)]] };
    const entry = byHost[host];
    entry.domains.push(name);
    if (isCatchAllDomain(config, domain)) entry.acceptAllDomains.push(name);
    else
      for (let index = 0; index < rowsOf(config, domain); index++)
        if (isExistingRow(config, domain, index)) entry.users.push(`p${index}@${name}`);
  }
  byHost.forEach((entry, host) => {
    specs[hostName(host)] = {
      kind: 'smtp',
      ...entry,
      tls: config.tls,
      maxConnectionsPerClient: config.maxConnectionsPerClient,
      errorLimits: config.errorLimits,
    };
  });
  const hostAddresses = byHost.map((_, host) => hostAddress(config, host));
  const farm = await startMailFarm(specs, { addresses: hostAddresses });

  const mxPerDomain = new Map<string, number>();
  const addressQuestions = new Map<string, number>();
  const dnsPerSource = new Map<string, number>();
  let dnsQuestions = 0;
  let mxQuestions = 0;
  const hostNames = new Set(Object.keys(specs));
  let since = performance.eventLoopUtilization();
  const dns = await startDnsServer(zones, {
    onQuestion({ name, type, from }) {
      dnsQuestions++;
      increment(dnsPerSource, from);
      if (type === 'MX') {
        mxQuestions++;
        increment(mxPerDomain, name);
      } else if ((type === 'A' || type === 'AAAA') && hostNames.has(name)) increment(addressQuestions, name);
    },
  });

  return {
    dns: dns.address,
    smtpPort: farm.port,
    hosts: hostAddresses,
    summary() {
      const rowAsks = new Map<string, number>();
      const probes = new Map<string, number>();
      let rowRcpts = 0;
      let probeCount = 0;
      const hosts: Record<string, { connections: number; rcpts: number }> = {};
      const peakPerHost = new Map<string, number>();
      for (const name of hostNames) {
        const log = farm.log(name);
        let connections = 0;
        for (const [source, client] of log.clients) {
          connections += client.connections;
          peakPerHost.set(source, Math.max(peakPerHost.get(source) ?? 0, client.peak));
        }
        hosts[farm.ip(name)] = { connections, rcpts: log.rcpts.length };
        for (const { address } of log.rcpts) {
          if (parseRow(config, address)) {
            rowRcpts++;
            increment(rowAsks, address);
          } else {
            probeCount++;
            increment(probes, address.slice(address.lastIndexOf('@') + 1));
          }
        }
      }
      const sources: Record<string, SourceSummary> = {};
      const sum = (pick: (client: ClientLog) => number) =>
        [...farm.clients.values()].reduce((total, client) => total + pick(client), 0);
      for (const address of new Set([...farm.clients.keys(), ...dnsPerSource.keys()])) {
        const client = farm.clients.get(address);
        sources[address] = {
          connections: client?.connections ?? 0,
          refused: client?.refused ?? 0,
          peakPerHost: peakPerHost.get(address) ?? 0,
          peak: client?.peak ?? 0,
          rcpts: client?.rcpts ?? 0,
          errors: client?.errors ?? 0,
          tarpitted: client?.tarpitted ?? 0,
          cut: client?.cut ?? 0,
          dnsQuestions: dnsPerSource.get(address) ?? 0,
        };
      }
      return {
        busy: performance.eventLoopUtilization(since).utilization,
        sources,
        dns: {
          questions: dnsQuestions,
          mxQuestions,
          domainsAsked: mxPerDomain.size,
          maxMxPerDomain: maxOf(mxPerDomain.values()),
          addressQuestionsPerHost: Object.fromEntries(addressQuestions),
        },
        smtp: {
          connections: sum((c) => c.connections),
          refused: sum((c) => c.refused),
          rcpts: sum((c) => c.rcpts),
          rowRcpts,
          rowsAsked: rowAsks.size,
          maxRcptsPerRow: maxOf(rowAsks.values()),
          rowsAskedAgain: [...rowAsks.values()].filter((n) => n > 1).length,
          probes: probeCount,
          domainsProbed: probes.size,
          maxProbesPerDomain: maxOf(probes.values()),
          tarpitted: sum((c) => c.tarpitted),
          cut: sum((c) => c.cut),
          hosts,
        },
      };
    },
    reset() {
      since = performance.eventLoopUtilization();
      farm.resetLogs();
      dns.queries.length = 0;
      mxPerDomain.clear();
      addressQuestions.clear();
      dnsPerSource.clear();
      dnsQuestions = 0;
      mxQuestions = 0;
    },
    close: async () => {
      await Promise.all([dns.close(), farm.close()]);
    },
  };
}

// ---- In a worker thread ----

/** The world, running in a worker thread of its own. */
export interface ClusterWorld {
  readonly config: ClusterWorldConfig;
  readonly dns: string;
  readonly smtpPort: number;
  readonly hosts: readonly string[];
  /** How long the world took to start, ms (zones, mailbox sets, servers listening). */
  readonly startMs: number;
  summary(): Promise<ClusterWorldSummary>;
  reset(): Promise<void>;
  /**
   * Keeps the world's thread busy for `ms`, as a loaded machine does (what arrives meanwhile is read in one
   * go afterwards); resolves as the stall begins.
   */
  stall(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** @internal The messages between startClusterWorld and clusterWorld.thread.ts. */
export type ClusterWorldOperation =
  { readonly op: 'summary' | 'reset' | 'close' } | { readonly op: 'stall'; readonly ms: number };
export type ClusterWorldRequest = ClusterWorldOperation & { readonly id: number };
export type ClusterWorldReply =
  | { readonly ready: { dns: string; smtpPort: number; hosts: readonly string[] } }
  | { readonly failed: string }
  | { readonly id: number; readonly value?: unknown; readonly error?: string };

/** Starts the world in a worker thread (from dist/: `npm run build` after changing it). */
export async function startClusterWorld(options: ClusterWorldOptions = {}): Promise<ClusterWorld> {
  const config = clusterWorldConfig(options);
  const started = performance.now();
  const worker = new Worker(workerScriptUrl(import.meta.url, 'clusterWorld.thread'), { workerData: config });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 0;
  let failure: Error | undefined;
  const ready = await new Promise<{ dns: string; smtpPort: number; hosts: readonly string[] }>(
    (resolve, reject) => {
      worker.on('message', (reply: ClusterWorldReply) => {
        if ('ready' in reply) resolve(reply.ready);
        else if ('failed' in reply)
          reject(new Error(`the cluster mail world did not start: ${reply.failed}`));
        else {
          const waiter = pending.get(reply.id);
          pending.delete(reply.id);
          if (reply.error !== undefined) waiter?.reject(new Error(reply.error));
          else waiter?.resolve(reply.value);
        }
      });
      const fail = (error: Error) => {
        failure = error;
        reject(error);
        for (const waiter of pending.values()) waiter.reject(error);
        pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) =>
        fail(new Error(`the cluster mail world's thread ended (exit code ${code})`)),
      );
    },
  );
  const startMs = performance.now() - started;
  const ask = <T>(operation: ClusterWorldOperation): Promise<T> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...operation, id } satisfies ClusterWorldRequest);
    });
  };
  return {
    config,
    ...ready,
    startMs,
    summary: () => ask<ClusterWorldSummary>({ op: 'summary' }),
    reset: () => ask<void>({ op: 'reset' }),
    stall: (ms) => ask<void>({ op: 'stall', ms }),
    async close() {
      if (!failure) await ask<void>({ op: 'close' });
      await worker.terminate();
    },
  };
}
