// A verifier node's check of its own source address, as mail servers judge it before any mailbox: its reverse
// DNS name (PTR), whether that name resolves back to the address (forward-confirmed reverse DNS), whether the
// HELO name is that name, and whether the address is on DNS block lists (RFC 5782: the address's octets
// reversed under the list's zone; an A answer in 127.0.0.0/8 means listed, its TXT says why). Asked through
// the verifier's own DNS servers (`--dns-servers`) from the address itself, each lookup within the DNS
// client's time limits: a list that cannot be asked is "could not check", never "listed". See
// docs/operations.md, "Self-check".
import net from 'node:net';
import type { Answer } from 'dns-packet';
import { DnsClient, systemDnsServers, type DnsResponse, type DnsServer } from './dns.js';

/** Block lists asked by default: widely used by mail servers, free to query at low volume. */
export const DEFAULT_DNSBL_ZONES: readonly string[] = [
  'zen.spamhaus.org',
  'bl.spamcop.net',
  'b.barracudacentral.org',
];

export type AddressProblemKind = 'no-ptr' | 'not-confirmed' | 'helo-mismatch' | 'listed' | 'unchecked';

export interface AddressProblem {
  readonly kind: AddressProblemKind;
  /** What is wrong and what to do, in words. */
  readonly text: string;
}

export interface BlockListAnswer {
  readonly zone: string;
  readonly status: 'listed' | 'not-listed' | 'unchecked';
  /** The list's answer: its 127.0.0.x codes when listed. */
  readonly codes?: readonly string[];
  /** The list's reason (its TXT record), when it gave one. */
  readonly reason?: string;
  /** Why it could not be asked. */
  readonly detail?: string;
}

export interface AddressCheck {
  readonly address: string;
  readonly checked_at: string;
  /** The address's reverse names; `status` unchecked when DNS did not answer. */
  readonly ptr: { readonly status: 'found' | 'missing' | 'unchecked'; readonly names: readonly string[] };
  /** The PTR name that resolves back to the address, when one does. */
  readonly confirmed_name?: string;
  /** Whether the HELO name is a forward-confirmed reverse name of the address (undefined: not known). */
  readonly helo?: { readonly name: string; readonly matches: boolean | undefined };
  readonly block_lists: readonly BlockListAnswer[];
  /** On at least one block list: mail servers that use it refuse this address. */
  readonly is_listed: boolean;
  /** Nothing wrong was found and everything could be checked. */
  readonly ok: boolean;
  readonly problems: readonly AddressProblem[];
}

export interface AddressCheckOptions {
  readonly address: string;
  /** The node's HELO name, compared with the reverse name. */
  readonly heloName?: string | undefined;
  /** Block list zones (default DEFAULT_DNSBL_ZONES; empty: none asked). */
  readonly dnsbl?: readonly string[] | undefined;
  /** The verifier's DNS servers (default: the system's). */
  readonly dnsServers?: readonly DnsServer[] | undefined;
  /** Time one query may take over every server (default 3 s): the whole check takes at most about 3 of them. */
  readonly queryTimeoutMs?: number;
}

const trimDot = (name: string): string => name.replace(/\.$/, '').toLowerCase();

/** The address's 32 hexadecimal digits (IPv6) or 4 octets (IPv4), reversed, dot-separated. */
export function reversedAddress(address: string): string {
  if (net.isIPv4(address)) return address.split('.').reverse().join('.');
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = address.includes('::') ? groups(tail) : [];
  const middle = Array.from({ length: 8 - left.length - right.length }, () => '0');
  const hex = [...left, ...middle, ...right].map((g) => g.padStart(4, '0')).join('');
  return [...hex].reverse().join('.');
}

export function reverseName(address: string): string {
  return `${reversedAddress(address)}.${net.isIPv4(address) ? 'in-addr.arpa' : 'ip6.arpa'}`;
}

function sameAddress(a: string, b: string): boolean {
  return net.isIPv6(a) && net.isIPv6(b) ? reversedAddress(a) === reversedAddress(b) : a === b;
}

const dataOf = (answer: Answer): unknown => (answer as { data?: unknown }).data;

function stringsOf(answer: Answer): string[] {
  const data = dataOf(answer);
  const list = Array.isArray(data) ? data : [data];
  return list.map((part) => (Buffer.isBuffer(part) ? part.toString('utf8') : String(part)));
}

async function askList(client: DnsClient, address: string, zone: string): Promise<BlockListAnswer> {
  const name = `${reversedAddress(address)}.${zone}`;
  const answer = await client.query(name, 'A');
  if (!answer.ok) return { zone, status: 'unchecked', detail: answer.reason };
  if (answer.rcode === 'NXDOMAIN') return { zone, status: 'not-listed' };
  const codes = answer.answers.filter((a) => a.type === 'A').map((a) => String(dataOf(a)));
  if (codes.length === 0) return { zone, status: 'not-listed' };
  // Spamhaus answers 127.255.255.x to queries it refuses (an open resolver, too many queries): no verdict.
  const refusals = codes.filter((code) => code.startsWith('127.255.255.'));
  if (refusals.length === codes.length)
    return {
      zone,
      status: 'unchecked',
      detail: `${zone} refused the query (${codes.join(', ')}): ask it through a resolver of your own`,
    };
  const listed = codes.filter((code) => code.startsWith('127.') && !code.startsWith('127.255.255.'));
  if (listed.length === 0)
    return { zone, status: 'unchecked', detail: `${zone} answered ${codes.join(', ')}, not a listing code` };
  const txt = await client.query(name, 'TXT');
  const reason = txt.ok
    ? txt.answers
        .filter((a) => a.type === 'TXT')
        .flatMap(stringsOf)
        .join(' ')
        .trim()
    : '';
  return { zone, status: 'listed', codes: listed, ...(reason ? { reason } : {}) };
}

async function forwardAddresses(client: DnsClient, name: string, ipv6: boolean): Promise<DnsResponse> {
  return client.query(name, ipv6 ? 'AAAA' : 'A');
}

/** Checks `address` as mail servers will: PTR, forward confirmation, HELO name, block lists. */
export async function checkSourceAddress(options: AddressCheckOptions): Promise<AddressCheck> {
  const { address } = options;
  const client = new DnsClient({
    servers: options.dnsServers ?? systemDnsServers(),
    queryTimeoutMs: options.queryTimeoutMs ?? 3000,
    attemptTimeoutMs: Math.min(1500, options.queryTimeoutMs ?? 3000),
    // Asked from the address itself, as mail servers' own lookups are about it.
    ...(net.isIP(address) ? { sourceAddress: address } : {}),
  });
  try {
    const zones = options.dnsbl ?? DEFAULT_DNSBL_ZONES;
    const lists = Promise.all(zones.map((zone) => askList(client, address, zone)));
    const problems: AddressProblem[] = [];
    const ptrAnswer = await client.query(reverseName(address), 'PTR');
    let ptr: AddressCheck['ptr'];
    let confirmed: string | undefined;
    let forwardUnchecked = false;
    if (!ptrAnswer.ok) {
      ptr = { status: 'unchecked', names: [] };
      problems.push({
        kind: 'unchecked',
        text: `the reverse DNS name (PTR) of ${address} could not be looked up (${ptrAnswer.reason}): check the DNS servers this node asks`,
      });
    } else {
      const names = ptrAnswer.answers.filter((a) => a.type === 'PTR').map((a) => trimDot(String(dataOf(a))));
      ptr = { status: names.length > 0 ? 'found' : 'missing', names };
      if (names.length === 0)
        problems.push({
          kind: 'no-ptr',
          text: `${address} has no reverse DNS name (PTR record): many mail servers refuse or distrust a client without one. Ask whoever runs the address (your hosting provider) to set its PTR to this node's HELO name, and that name's A record to ${address}`,
        });
      for (const name of names) {
        const forward = await forwardAddresses(client, name, net.isIPv6(address));
        if (!forward.ok) {
          forwardUnchecked = true;
          continue;
        }
        const found = forward.answers
          .filter((a) => a.type === 'A' || a.type === 'AAAA')
          .map((a) => String(dataOf(a)));
        if (found.some((ip) => sameAddress(ip, address))) {
          confirmed = name;
          break;
        }
      }
      if (names.length > 0 && !confirmed)
        problems.push(
          forwardUnchecked
            ? {
                kind: 'unchecked',
                text: `whether ${names.join(', ')} resolves back to ${address} could not be looked up: check the DNS servers this node asks`,
              }
            : {
                kind: 'not-confirmed',
                text: `the reverse name of ${address} (${names.join(', ')}) does not resolve back to it: mail servers check that the two agree. Give ${names[0]} an ${net.isIPv6(address) ? 'AAAA' : 'A'} record of ${address}, or set the PTR to a name that has one`,
              },
        );
    }
    let helo: AddressCheck['helo'];
    if (options.heloName !== undefined) {
      const name = trimDot(options.heloName);
      const matches =
        confirmed !== undefined
          ? name === confirmed || ptr.names.includes(name)
          : ptr.status === 'unchecked' || forwardUnchecked
            ? undefined
            : ptr.names.includes(name);
      helo = { name, matches };
      if (matches === false && ptr.names.length > 0)
        problems.push({
          kind: 'helo-mismatch',
          text: `the HELO name ${name} is not the reverse name of ${address} (${ptr.names.join(', ')}): many mail servers compare them. Give ${confirmed ?? ptr.names[0]} as the HELO name, or set the PTR to ${name}`,
        });
    }
    const blockLists = await lists;
    for (const list of blockLists) {
      if (list.status === 'listed')
        problems.push({
          kind: 'listed',
          text: `${address} is listed on ${list.zone} (${list.codes?.join(', ')}${list.reason ? `: ${list.reason}` : ''}): mail servers that use this list refuse it, and mailbox checks from it come back unknown. Ask the list for its removal (its site says how), or give this node another address`,
        });
      else if (list.status === 'unchecked')
        problems.push({
          kind: 'unchecked',
          text: `${list.zone} could not be asked (${list.detail}): whether ${address} is listed there is not known`,
        });
    }
    const isListed = blockLists.some((list) => list.status === 'listed');
    return {
      address,
      checked_at: new Date().toISOString(),
      ptr,
      ...(confirmed ? { confirmed_name: confirmed } : {}),
      ...(helo ? { helo } : {}),
      block_lists: blockLists,
      is_listed: isListed,
      ok: problems.length === 0,
      problems,
    };
  } finally {
    client.close();
  }
}

/** The self-check's state as a node reports it (its readiness, `status`). */
export type SelfCheckState =
  | { readonly status: 'not-run'; readonly reason: string }
  | { readonly status: 'checking'; readonly address: string }
  | { readonly status: 'done'; readonly check: AddressCheck };

/** One line a problem, for a log or a terminal. */
export function describeAddressCheck(check: AddressCheck): string[] {
  const lines: string[] = [];
  const ptr =
    check.ptr.status === 'found'
      ? `${check.ptr.names.join(', ')}${check.confirmed_name ? ` (resolves back to ${check.address})` : ''}`
      : check.ptr.status;
  lines.push(`Reverse DNS of ${check.address}: ${ptr}`);
  if (check.helo)
    lines.push(
      `HELO name ${check.helo.name}: ${check.helo.matches === undefined ? 'could not be compared' : check.helo.matches ? 'matches' : 'does not match'}`,
    );
  for (const list of check.block_lists)
    lines.push(
      `Block list ${list.zone}: ${list.status === 'listed' ? `LISTED (${list.codes?.join(', ')})${list.reason ? ` ${list.reason}` : ''}` : list.status === 'not-listed' ? 'not listed' : `could not check (${list.detail})`}`,
    );
  return lines;
}
