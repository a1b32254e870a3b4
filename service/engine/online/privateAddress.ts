// Addresses that a service reachable from other machines must not be made to connect to on a client's word:
// this machine, its private networks (loopback, private, link-local, unique-local, CGNAT), unspecified,
// multicast and reserved ones. List callbacks (service/lists/node/callbackTarget.ts) and mailbox checks
// (verifier.ts: MX hosts, unless `--allow-private-mx`) are refused there, and such a service's answers do not
// name the private addresses a client's names resolved to (hidePrivateAddresses): they would map the network.
import { BlockList, isIP } from 'node:net';

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

/** Whether a text may hold an address: IPv4's digit, dot, digit, or IPv6's two colons. */
const MAYBE_ADDRESS = /\d\.\d|:[0-9A-Fa-f]{0,4}:/;
/** Runs of the characters addresses are written with (checked with isIP before anything is done to one). */
const ADDRESS_LIKE = /[0-9A-Fa-f.:]+/g;

/**
 * `text` with every private address written in it (as isPrivateAddress says) replaced by the words "a private
 * address". Only whole addresses are replaced: an address with its port (`127.0.0.1:5353`, how the name servers
 * this service asks are named) is left as it is.
 */
export function hidePrivateAddresses(text: string): string {
  if (!MAYBE_ADDRESS.test(text)) return text;
  return text.replace(ADDRESS_LIKE, (run) => {
    // A sentence's full stop or a list's colon may follow an address.
    const address = run.replace(/[.:]+$/, '');
    return isIP(address) !== 0 && isPrivateAddress(address)
      ? `a private address${run.slice(address.length)}`
      : run;
  });
}
