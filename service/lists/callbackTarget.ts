// Where a list's callback may go. A service reachable from other machines must not be made to POST to this
// machine or its private network (loopback, private, link-local, unique-local, CGNAT, unspecified): unless
// the service allows private callbacks (`serve --allow-private-callbacks`; the embedded service does), E7
// refuses such a `callback_url` (the host name resolved, every address checked), and delivery connects only
// to addresses that pass the same check, looked up again at connection time (DNS may change in between).
import { lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Agent } from 'undici';

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(network, prefix, 'ipv6');

/** True for an address on this machine or a private, link-local or otherwise non-public network. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is checked as the IPv4 address it is.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1], 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

function resolveAll(host: string): Promise<string[]> {
  if (isIP(host)) return Promise.resolve([host]);
  return new Promise((resolve, reject) =>
    lookup(host, { all: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses.map((a) => a.address)),
    ),
  );
}

/**
 * Why `callbackUrl` may not be used, in words (E7 answers 400 with it), or undefined when it may: a private
 * target when they are not allowed, or a host name that does not resolve.
 */
export async function callbackTargetProblem(
  callbackUrl: string,
  allowPrivate: boolean,
): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const url = new URL(callbackUrl);
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = await resolveAll(host);
  } catch {
    return `The callback URL's host '${host}' does not resolve.`;
  }
  const blocked = addresses.find(isPrivateAddress);
  if (blocked !== undefined)
    return `The callback URL's host '${host}' is on this machine or a private network (${blocked}); this service delivers callbacks to public addresses only.`;
  return undefined;
}

/** A lookup that answers only public addresses, for the delivery's connections. */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 4);
    const allowed = addresses.filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0)
      return callback(
        Object.assign(new Error(`${hostname} resolves only to private addresses`), { code: 'EPRIVATE' }),
        '',
        4,
      );
    if ((options as { all?: boolean }).all)
      return (callback as (e: null, a: typeof allowed) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};

let publicAgent: Agent | undefined;

/** The dispatcher callbacks are delivered with when private targets are not allowed. */
export async function publicOnlyDispatcher(): Promise<Agent> {
  if (!publicAgent) {
    const { Agent } = await import('undici');
    publicAgent ??= new Agent({ connect: { lookup: publicLookup } });
  }
  return publicAgent;
}

/** E7's check of its `callback_url`, under the processor's setting: the problem in words, or undefined. */
export function callbackProblemOf(
  params: { readonly callback_url?: string | undefined },
  processor: { readonly allowsPrivateCallbacks: boolean },
): Promise<string | undefined> {
  if (params.callback_url === undefined) return Promise.resolve(undefined);
  return callbackTargetProblem(params.callback_url, processor.allowsPrivateCallbacks);
}
