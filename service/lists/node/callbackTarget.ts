// Where a list's callback may go. A service reachable from other machines must not be made to POST to this
// machine or its private network (loopback, private, link-local, unique-local, CGNAT, unspecified): unless
// the service allows private callbacks (`serve --allow-private-callbacks`; the embedded service does), E7
// refuses such a `callback_url` (the host name resolved, every address checked), and the node that delivers
// (an API node, or a team server's worker: `worker --allow-private-callbacks`) resolves the name again when it
// connects, checks each address and connects to exactly the address it checked (DNS may change in between:
// a name public at E7 may name 127.0.0.1 or 169.254.169.254 when the list ends). A node given DNS servers
// (`--dns-servers`) resolves callback names with them, as it does mail domains.
import { lookup, promises as dnsPromises } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Agent } from 'undici';
import { formatServer, type DnsServer } from '../../engine/online/dns.js';
import { isPrivateAddress } from '../../engine/online/privateAddress.js';

export { isPrivateAddress };

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

interface Resolved {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Where callback names are resolved: the node's DNS servers when it has some, else the system's lookup. */
export interface CallbackResolution {
  readonly allowPrivate: boolean;
  readonly dnsServers?: readonly DnsServer[] | undefined;
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

async function resolveAll(host: string, servers: readonly DnsServer[] | undefined): Promise<Resolved[]> {
  const family = isIP(host);
  if (family !== 0) return [{ address: host, family: family as 4 | 6 }];
  if (servers && servers.length > 0) {
    const resolver = resolverFor(servers);
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length === 0) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
    return found;
  }
  return new Promise((resolve, reject) =>
    lookup(host, { all: true }, (error, addresses) =>
      error
        ? reject(error)
        : resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))),
    ),
  );
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
  } catch {
    return `The callback URL's host '${host}' does not resolve.`;
  }
  const blocked = addresses.find((a) => isPrivateAddress(a.address));
  if (blocked !== undefined)
    return `The callback URL's host '${host}' is on this machine or a private network (${blocked.address}); this service delivers callbacks to public addresses only.`;
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
 * The dispatcher callbacks are delivered with: undefined (undici's own) when private targets are allowed and
 * the system resolves names; otherwise an agent whose connections go only where `checkedLookup` says.
 */
export async function callbackDispatcher(resolution: CallbackResolution): Promise<Agent | undefined> {
  const servers = resolution.dnsServers ?? [];
  if (resolution.allowPrivate && servers.length === 0) return undefined;
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
