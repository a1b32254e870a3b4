// Where a list's callback may go. A service reachable from other machines must not be made to POST to this
// machine or its private network (loopback, private, link-local, unique-local, CGNAT, unspecified): unless
// the service allows private callbacks (`serve --allow-private-callbacks`; the embedded service does), E7
// refuses such a `callback_url` (the host name resolved, every address checked), and the node that delivers
// (an API node, or a team server's worker: `worker --allow-private-callbacks`) resolves the name again when it
// connects, checks each address and connects to exactly the address it checked (DNS may change in between:
// a name public at E7 may name 127.0.0.1 or 169.254.169.254 when the list ends).
//
// Callback names are resolved by c-ares (node:dns's Resolver), asking the node's DNS servers (`--dns-servers`)
// or else the system's (resolv.conf), within CALLBACK_RESOLVE_TIMEOUT_MS: never by the system's lookup
// (dns.lookup, getaddrinfo), which runs on libuv's thread pool with no time limit of its own. There, a name
// whose name server never answers held a pool thread for 10 s and more, and a client's eight such names queued
// every other lookup of the node (a good callback name, a database host) behind them for 40 s.
// `localhost` and names under it are this machine (RFC 6761) without asking; /etc/hosts is not read.
import { promises as dnsPromises } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import { formatServer, systemDnsServers, type DnsServer } from '../../engine/online/dns.js';
import { withDeadline } from '../../engine/online/cache.js';
import { isPrivateAddress } from '../../engine/online/privateAddress.js';

export { isPrivateAddress };

/** How long resolving a callback's host name may take, at E7 and at each delivery's connection. */
export const CALLBACK_RESOLVE_TIMEOUT_MS = 5000;

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

interface Resolved {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Where callback names are resolved: the node's DNS servers when it has some, else the system's. */
export interface CallbackResolution {
  readonly allowPrivate: boolean;
  readonly dnsServers?: readonly DnsServer[] | undefined;
}

/** A name that gave no address: it does not exist, no name server answered in time, or one failed. */
export class CallbackNameError extends Error {
  /** As a socket's lookup error carries it (undici reports the message). */
  readonly code: string;
  /** What happened, in words, after the name. */
  readonly reason: string;

  constructor(host: string, kind: 'not-found' | 'no-answer' | 'failed', detail?: string) {
    const reason =
      kind === 'not-found'
        ? 'does not resolve'
        : kind === 'no-answer'
          ? 'could not be resolved: its name server did not answer in time'
          : `could not be resolved (${detail ?? 'the name server failed'})`;
    super(`${host} ${reason}`);
    this.reason = reason;
    this.code = kind === 'not-found' ? 'ENOTFOUND' : kind === 'no-answer' ? 'ETIMEOUT' : 'ESERVFAIL';
  }
}

const resolvers = new Map<string, dnsPromises.Resolver>();

function resolverFor(servers: readonly DnsServer[]): dnsPromises.Resolver {
  const id = servers.map(formatServer).join(',');
  let resolver = resolvers.get(id);
  if (!resolver) {
    resolver = new dnsPromises.Resolver({ timeout: 2000, tries: 2 });
    resolver.setServers(servers.map(formatServer));
    resolvers.set(id, resolver);
  }
  return resolver;
}

const LOOPBACK: readonly Resolved[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];
/** Answers of c-ares that say the name has no address (rather than that nobody said). */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);
const NO_ANSWER = new Set(['ETIMEOUT', 'ECONNREFUSED', 'ECANCELLED']);

async function resolveAll(host: string, servers: readonly DnsServer[] | undefined): Promise<Resolved[]> {
  const family = isIP(host);
  if (family !== 0) return [{ address: host, family: family as 4 | 6 }];
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return [...LOOPBACK];
  const asked = servers && servers.length > 0 ? servers : systemDnsServers();
  if (asked.length === 0) throw new CallbackNameError(host, 'failed', 'this machine has no name server');
  const resolver = resolverFor(asked);
  // c-ares gives up by itself (2 tries of 2 s, growing): the deadline is the promise made to the caller.
  const answers = await withDeadline(
    Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]),
    Date.now() + CALLBACK_RESOLVE_TIMEOUT_MS,
    () => undefined,
  );
  if (!answers) throw new CallbackNameError(host, 'no-answer');
  const [v4, v6] = answers;
  const found = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
  ];
  if (found.length > 0) return found;
  const codes = answers.map((answer) =>
    answer.status === 'rejected' ? String((answer.reason as { code?: unknown }).code) : 'ENODATA',
  );
  if (codes.every((code) => NO_SUCH_NAME.has(code))) throw new CallbackNameError(host, 'not-found');
  if (codes.some((code) => NO_ANSWER.has(code))) throw new CallbackNameError(host, 'no-answer');
  const code = codes.find((c) => !NO_SUCH_NAME.has(c)) ?? 'an error';
  throw new CallbackNameError(host, 'failed', `its name server answered ${code.replace(/^E/, '')}`);
}

/**
 * Why `callbackUrl` may not be used, in words (E7 answers 400 with it), or undefined when it may: a private
 * target when they are not allowed, or a host name that does not resolve.
 */
export async function callbackTargetProblem(
  callbackUrl: string,
  resolution: CallbackResolution,
): Promise<string | undefined> {
  if (resolution.allowPrivate) return undefined;
  const url = new URL(callbackUrl);
  const host = hostOf(url);
  let addresses: Resolved[];
  try {
    addresses = await resolveAll(host, resolution.dnsServers);
  } catch (error) {
    if (!(error instanceof CallbackNameError)) throw error;
    return `The callback URL's host '${host}' ${error.reason}.`;
  }
  // The address is not named: a client would learn what this network's names resolve to.
  if (addresses.some((a) => isPrivateAddress(a.address)))
    return `The callback URL's host '${host}' is on this machine or a private network; this service delivers callbacks to public addresses only.`;
  return undefined;
}

/**
 * The lookup of a delivery's connections: the name resolved (as `resolution` says), every private address
 * left out unless allowed; the connection goes to an address it answers, and to no other.
 */
function checkedLookup(resolution: CallbackResolution): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, resolution.dnsServers).then(
      (addresses) => {
        const allowed = resolution.allowPrivate
          ? addresses
          : addresses.filter((a) => !isPrivateAddress(a.address));
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = wanted ? allowed.filter((a) => a.family === wanted) : allowed;
        if (usable.length === 0)
          return callback(
            Object.assign(
              new Error(
                allowed.length === 0
                  ? `${hostname} resolves only to addresses on this machine or a private network`
                  : `${hostname} has no IPv${wanted} address`,
              ),
              { code: allowed.length === 0 ? 'EPRIVATE' : 'ENOTFOUND' },
            ),
            '',
            4,
          );
        if ((options as { all?: boolean }).all)
          return (callback as (e: null, a: Resolved[]) => void)(null, usable);
        callback(null, usable[0].address, usable[0].family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 4),
    );
  };
}

const agents = new Map<string, Agent>();

/**
 * The dispatcher callbacks are delivered with: an agent whose connections go only where `checkedLookup` says
 * (private targets allowed or not: undici's own agent would resolve names with the system's lookup).
 */
export async function callbackDispatcher(resolution: CallbackResolution): Promise<Agent> {
  const servers = resolution.dnsServers ?? [];
  const id = `${resolution.allowPrivate}|${servers.map(formatServer).join(',')}`;
  let agent = agents.get(id);
  if (!agent) {
    const { Agent } = await import('undici');
    agent = agents.get(id) ?? new Agent({ connect: { lookup: checkedLookup(resolution) } });
    agents.set(id, agent);
  }
  return agent;
}

/** E7's check of its `callback_url`, under the processor's setting: the problem in words, or undefined. */
export function callbackProblemOf(
  params: { readonly callback_url?: string | undefined },
  processor: { readonly callbackResolution: CallbackResolution },
): Promise<string | undefined> {
  if (params.callback_url === undefined) return Promise.resolve(undefined);
  return callbackTargetProblem(params.callback_url, processor.callbackResolution);
}
