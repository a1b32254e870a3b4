// A small DNS stub client over UDP (TCP when an answer is truncated), built on dns-packet rather than
// node:dns: node's resolver gives no TTL for MX records and folds SERVFAIL, timeouts and "no such
// domain" into error codes that cannot always be told apart, and a verifier must tell them apart exactly:
// NXDOMAIN is an invalid address (310), SERVFAIL or silence is "unknown" (5).
//
// On top of it, mailRouting(): the mail servers of a domain by RFC 5321 §5.1 (MX, else the domain's own
// A/AAAA as an implicit MX), null MX (RFC 7505), cached per domain for the records' TTL.
import dgram from 'node:dgram';
import { getServers } from 'node:dns';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, RecordType, StringAnswer } from 'dns-packet';
import { TtlCache, withDeadline, type SharedKnowledge } from './cache.js';

export interface DnsServer {
  readonly host: string;
  readonly port: number;
}

export const formatServer = (s: DnsServer): string =>
  net.isIPv6(s.host) ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;

/**
 * Parses `HOST[:PORT][,…]`: IPv4 or IPv6 addresses (IPv6 with a port in brackets: `[::1]:5353`), port 53
 * when absent. Returns the servers, or the first entry that is not one.
 */
export function parseDnsServers(
  text: string,
): { ok: true; servers: DnsServer[] } | { ok: false; bad: string } {
  const servers: DnsServer[] = [];
  for (const raw of text.split(',').map((s) => s.trim())) {
    if (raw === '') continue;
    let host = raw;
    let port = 53;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
    if (bracketed) {
      host = bracketed[1]!;
      if (bracketed[2] !== undefined) port = Number(bracketed[2]);
    } else if (net.isIPv6(raw)) {
      host = raw;
    } else {
      const colon = raw.lastIndexOf(':');
      if (colon > 0) {
        host = raw.slice(0, colon);
        port = /^\d+$/.test(raw.slice(colon + 1)) ? Number(raw.slice(colon + 1)) : Number.NaN;
      }
    }
    if (!net.isIP(host) || !Number.isInteger(port) || port < 1 || port > 65535)
      return { ok: false, bad: raw };
    servers.push({ host, port });
  }
  return servers.length > 0 ? { ok: true, servers } : { ok: false, bad: text };
}

/** The system's resolvers (resolv.conf on Linux), as node reads them. */
export function systemDnsServers(): DnsServer[] {
  const parsed = parseDnsServers(getServers().join(','));
  return parsed.ok ? parsed.servers : [];
}

export type DnsResponse =
  | {
      readonly ok: true;
      readonly rcode: 'NOERROR' | 'NXDOMAIN';
      readonly answers: readonly Answer[];
      readonly authorities: readonly Answer[];
      readonly additionals: readonly Answer[];
      readonly server: string;
    }
  | { readonly ok: false; readonly reason: string };

export interface DnsClientOptions {
  readonly servers: readonly DnsServer[];
  /** How long one server is given for one query. */
  readonly attemptTimeoutMs?: number;
  /** How long a query may take in all, over every server and retry (from when it is sent). */
  readonly queryTimeoutMs?: number;
  /**
   * Queries outstanding at once (default 64); more wait their turn. A list starting a thousand checks at
   * once would otherwise burst a thousand datagrams at one resolver, which drops some of them.
   */
  readonly maxInFlight?: number;
  /** The local address queries leave from (a verifier node's source address); default: the system's choice. */
  readonly sourceAddress?: string | undefined;
}

type Exchange =
  { kind: 'response'; packet: DecodedPacket } | { kind: 'timeout' } | { kind: 'error'; code: string };

const RCODE_NAMES: Record<number, string> = { 1: 'FORMERR', 2: 'SERVFAIL', 4: 'NOTIMP', 5: 'REFUSED' };
const EDNS_PAYLOAD = 1232; // the DNS flag day 2020 size: fits any path MTU, avoids fragmentation

/** Counts of what the client did, for the status endpoint, the bench and tests. */
export interface DnsStats {
  queries: number;
}

export class DnsClient {
  readonly stats: DnsStats = { queries: 0 };
  private readonly attemptTimeoutMs: number;
  private readonly queryTimeoutMs: number;
  private readonly open = new Set<{ close(): void }>();
  private isClosed = false;
  private inFlight = 0;
  private readonly turns: (() => void)[] = [];

  constructor(private readonly options: DnsClientOptions) {
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 1500;
    this.queryTimeoutMs = options.queryTimeoutMs ?? 4000;
  }

  get servers(): readonly DnsServer[] {
    return this.options.servers;
  }

  /**
   * One question, asked of each server in turn (twice round at most) until one gives an answer it means:
   * NOERROR or NXDOMAIN. SERVFAIL, REFUSED, silence and unreachable servers are failures, never negatives.
   */
  async query(name: string, type: RecordType): Promise<DnsResponse> {
    if (this.options.servers.length === 0) return { ok: false, reason: 'no DNS server is configured' };
    if (this.inFlight >= (this.options.maxInFlight ?? 64))
      await new Promise<void>((resolve) => this.turns.push(resolve));
    this.inFlight++;
    try {
      return await this.ask(name, type);
    } finally {
      this.inFlight--;
      this.turns.shift()?.();
    }
  }

  private async ask(name: string, type: RecordType): Promise<DnsResponse> {
    const servers = this.options.servers;
    const deadline = Date.now() + this.queryTimeoutMs;
    const failures = new Map<string, string>();
    const givenUp = new Set<DnsServer>();
    for (let round = 0; round < 2; round++) {
      for (const server of servers) {
        if (givenUp.has(server)) continue;
        const remaining = deadline - Date.now();
        if (remaining <= 0 || this.isClosed) break;
        const label = formatServer(server);
        let exchange = await this.exchangeUdp(server, name, type, Math.min(this.attemptTimeoutMs, remaining));
        if (exchange.kind === 'response' && exchange.packet.flag_tc)
          exchange = await this.exchangeTcp(server, name, type, Math.max(1, deadline - Date.now()));
        if (exchange.kind === 'response') {
          const rcode = (exchange.packet.flags ?? 0) & 0xf;
          if (rcode === 0 || rcode === 3)
            return {
              ok: true,
              rcode: rcode === 0 ? 'NOERROR' : 'NXDOMAIN',
              answers: exchange.packet.answers ?? [],
              authorities: exchange.packet.authorities ?? [],
              additionals: exchange.packet.additionals ?? [],
              server: label,
            };
          failures.set(label, `${label} answered ${RCODE_NAMES[rcode] ?? `rcode ${rcode}`}`);
          givenUp.add(server);
        } else if (exchange.kind === 'timeout') {
          failures.set(label, `${label} did not answer in time`);
        } else {
          failures.set(
            label,
            exchange.code === 'ECONNREFUSED'
              ? `${label} refused the query (nothing listens there)`
              : `${label} could not be reached (${exchange.code})`,
          );
          givenUp.add(server);
        }
      }
    }
    return { ok: false, reason: [...failures.values()].join('; ') || 'the DNS query timed out' };
  }

  private request(name: string, type: RecordType): { id: number; bytes: Buffer } {
    const id = randomInt(0, 65536);
    const packet: dnsPacket.Packet = {
      type: 'query',
      id,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type, name, class: 'IN' }],
      additionals: [
        {
          type: 'OPT',
          name: '.',
          udpPayloadSize: EDNS_PAYLOAD,
          extendedRcode: 0,
          ednsVersion: 0,
          flags: 0,
          flag_do: false,
          options: [],
        },
      ],
    };
    return { id, bytes: dnsPacket.encode(packet) };
  }

  private static matches(packet: DecodedPacket, id: number, name: string, type: RecordType): boolean {
    const question = packet.questions?.[0];
    return (
      packet.id === id &&
      packet.type === 'response' &&
      question !== undefined &&
      question.type === type &&
      trimDot(question.name) === trimDot(name)
    );
  }

  private exchangeUdp(
    server: DnsServer,
    name: string,
    type: RecordType,
    timeoutMs: number,
  ): Promise<Exchange> {
    this.stats.queries++;
    const { id, bytes } = this.request(name, type);
    return new Promise((resolve) => {
      const socket = dgram.createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
      const handle = { close: () => finish({ kind: 'timeout' }) };
      let done = false;
      const finish = (result: Exchange) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.open.delete(handle);
        socket.close();
        resolve(result);
      };
      const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
      this.open.add(handle);
      socket.on('error', (error: NodeJS.ErrnoException) =>
        finish({ kind: 'error', code: error.code ?? 'error' }),
      );
      socket.on('message', (message) => {
        let packet: DecodedPacket;
        try {
          packet = dnsPacket.decode(message);
        } catch {
          return; // not a DNS message: keep waiting for the real answer
        }
        if (DnsClient.matches(packet, id, name, type)) finish({ kind: 'response', packet });
      });
      // A connected socket hears the ICMP "port unreachable" of a closed port as ECONNREFUSED at once,
      // and takes answers only from the server it asked.
      // A connect that fails (a server this source address cannot reach: EINVAL, ENETUNREACH) reports to its
      // callback, not as an 'error' event: the socket is then not connected, and a send would throw.
      const ask = () =>
        socket.connect(server.port, server.host, (error?: NodeJS.ErrnoException | null) => {
          if (error) finish({ kind: 'error', code: error.code ?? 'error' });
          else if (!done) socket.send(bytes);
        });
      const source = this.options.sourceAddress;
      if (source) socket.bind({ address: source, port: 0 }, ask);
      else ask();
    });
  }

  private exchangeTcp(
    server: DnsServer,
    name: string,
    type: RecordType,
    timeoutMs: number,
  ): Promise<Exchange> {
    this.stats.queries++;
    const { id, bytes } = this.request(name, type);
    return new Promise((resolve) => {
      const socket = net.connect({
        host: server.host,
        port: server.port,
        ...(this.options.sourceAddress ? { localAddress: this.options.sourceAddress } : {}),
      });
      const handle = { close: () => finish({ kind: 'timeout' }) };
      let done = false;
      let buffer = Buffer.alloc(0);
      const finish = (result: Exchange) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.open.delete(handle);
        socket.destroy();
        resolve(result);
      };
      const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
      this.open.add(handle);
      socket.on('error', (error: NodeJS.ErrnoException) =>
        finish({ kind: 'error', code: error.code ?? 'error' }),
      );
      socket.on('close', () => finish({ kind: 'error', code: 'closed' }));
      socket.on('connect', () => {
        const framed = Buffer.alloc(bytes.length + 2);
        framed.writeUInt16BE(bytes.length, 0);
        bytes.copy(framed, 2);
        socket.write(framed);
      });
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        if (buffer.length > 70_000) return finish({ kind: 'error', code: 'oversized answer' });
        if (buffer.length < 2) return;
        const length = buffer.readUInt16BE(0);
        if (buffer.length < length + 2) return;
        try {
          const packet = dnsPacket.decode(buffer.subarray(2, length + 2));
          finish(
            DnsClient.matches(packet, id, name, type)
              ? { kind: 'response', packet }
              : { kind: 'error', code: 'mismatched answer' },
          );
        } catch {
          finish({ kind: 'error', code: 'malformed answer' });
        }
      });
    });
  }

  /** Ends every query in flight (as timed out) and refuses new ones. */
  close(): void {
    this.isClosed = true;
    for (const handle of [...this.open]) handle.close();
    for (const turn of this.turns.splice(0)) turn();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Mail routing of a domain.

export interface MxHost {
  /** Host name, lower-case, no trailing dot. */
  readonly name: string;
  readonly preference: number;
  /** Addresses the answer carried for it (the additional section), when it did. */
  readonly addresses?: readonly string[];
}

export type MailRouting =
  | { readonly kind: 'mx'; readonly hosts: readonly MxHost[] }
  /** No MX: the domain's own address is its implicit MX (RFC 5321 §5.1). */
  | { readonly kind: 'implicit'; readonly hosts: readonly MxHost[] }
  | { readonly kind: 'nxdomain' }
  /** `MX 0 .` (RFC 7505): the domain states it accepts no mail. */
  | { readonly kind: 'null-mx' }
  /** Neither MX nor address records. */
  | { readonly kind: 'no-mail' }
  | { readonly kind: 'unknown'; readonly reason: string };

export interface RoutingResult {
  readonly routing: MailRouting;
  /** What DNS answered, for explain. */
  readonly notes: readonly string[];
}

export type HostAddresses =
  | { readonly ok: true; readonly addresses: readonly string[] }
  | { readonly ok: false; readonly kind: 'nxdomain' | 'no-address' | 'unknown'; readonly reason: string };

export interface ResolverOptions {
  /** A record's TTL is raised to this at least, so a list resolves a domain once (default 300 s). */
  readonly minTtlS?: number;
  /** …and lowered to this at most (default 1 day). */
  readonly maxTtlS?: number;
  /** How long a failed lookup (SERVFAIL, silence) is remembered before it is tried again (default 30 s). */
  readonly failureTtlS?: number;
  /** Most domains remembered (default 200,000). */
  readonly maxEntries?: number;
  /** MX answers shared with the other verifier nodes of a team server, asked for once for all of them. */
  readonly shared?: SharedKnowledge | undefined;
}

const trimDot = (name: string): string => (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase();
const isRoot = (name: string): boolean => name === '' || name === '.';

export class MailResolver {
  private readonly routes: TtlCache<RoutingResult>;
  private readonly hosts: TtlCache<HostAddresses & { ttlS: number }>;
  private readonly tlds: TtlCache<{ exists: boolean | undefined; note: string }>;
  private readonly minTtlS: number;
  private readonly maxTtlS: number;
  private readonly failureTtlS: number;
  private readonly shared: SharedKnowledge | undefined;

  constructor(
    readonly client: DnsClient,
    options: ResolverOptions = {},
  ) {
    this.shared = options.shared;
    this.minTtlS = options.minTtlS ?? 300;
    this.maxTtlS = options.maxTtlS ?? 86_400;
    this.failureTtlS = options.failureTtlS ?? 30;
    const max = options.maxEntries ?? 200_000;
    this.routes = new TtlCache(max);
    this.hosts = new TtlCache(max);
    this.tlds = new TtlCache(5_000);
  }

  private clampTtl(ttlS: number | undefined): number {
    return Math.min(this.maxTtlS, Math.max(this.minTtlS, ttlS ?? this.minTtlS)) * 1000;
  }

  private routingTtl = (result: RoutingResult & { ttlS?: number }): number =>
    result.routing.kind === 'unknown' ? this.failureTtlS * 1000 : this.clampTtl(result.ttlS);

  /**
   * The mail routing of `domain` (lower-case ASCII form), from the cache or asked once however many callers
   * ask at the same time. The lookup runs to its own time limits; a caller stops waiting at `deadline`.
   */
  async mailRouting(domain: string, deadline: number): Promise<RoutingResult> {
    const shared = this.shared;
    const { value, cached } = this.routes.getOrLoad(
      domain,
      shared
        ? () => shared.load('mx', domain, () => this.lookupRouting(domain), this.routingTtl)
        : () => this.lookupRouting(domain),
      this.routingTtl,
    );
    const result = await withDeadline(value, deadline, () => ({
      routing: {
        kind: 'unknown',
        reason: `DNS gave no answer for ${domain} within the time allowed`,
      } as const,
      notes: [`DNS: no answer for ${domain} MX within the time allowed`],
    }));
    return cached ? { routing: result.routing, notes: result.notes.map((n) => `${n} (cached)`) } : result;
  }

  private async lookupRouting(domain: string): Promise<RoutingResult & { ttlS?: number }> {
    const mx = await this.client.query(domain, 'MX');
    if (!mx.ok) return unknownRouting(domain, 'MX', mx.reason);
    if (mx.rcode === 'NXDOMAIN')
      return this.negative(
        domain,
        { kind: 'nxdomain' },
        mx,
        `DNS (${mx.server}): ${domain} does not exist (NXDOMAIN)`,
      );
    const records = mx.answers.filter((a) => a.type === 'MX');
    if (records.length > 0) {
      const ttlS = Math.min(...records.map((r) => r.ttl ?? 0));
      const real = records.filter((r) => !isRoot(r.data.exchange));
      // RFC 7505: a null MX is the only MX of a domain that takes no mail; beside other MXes it is noise.
      if (real.length === 0)
        return {
          routing: { kind: 'null-mx' },
          ttlS,
          notes: [`DNS (${mx.server}): ${domain} MX 0 . — a null MX (RFC 7505): the domain accepts no mail`],
        };
      const glue = new Map<string, string[]>();
      for (const extra of mx.additionals)
        if (extra.type === 'A' || extra.type === 'AAAA') {
          const key = trimDot(extra.name);
          glue.set(key, [...(glue.get(key) ?? []), extra.data]);
        }
      const hosts = real
        .map((r) => {
          const name = trimDot(r.data.exchange);
          const addresses = glue.get(name);
          return { name, preference: r.data.preference ?? 0, ...(addresses ? { addresses } : {}) };
        })
        .sort((a, b) => a.preference - b.preference);
      const listed = hosts.map(
        (h) => `${h.preference} ${h.name}${h.addresses ? ` [${h.addresses.join(', ')}]` : ''}`,
      );
      return {
        routing: { kind: 'mx', hosts },
        ttlS,
        notes: [`DNS (${mx.server}): ${domain} MX ${listed.join(', ')} (TTL ${ttlS} s)`],
      };
    }
    // No MX (NODATA): RFC 5321 §5.1, the domain itself is the implicit MX if it has an address.
    const notes = [`DNS (${mx.server}): ${domain} has no MX record; trying its address (RFC 5321 §5.1)`];
    for (const type of ['A', 'AAAA'] as const) {
      const answer = await this.client.query(domain, type);
      if (!answer.ok) return unknownRouting(domain, type, answer.reason, notes);
      const addresses = answer.answers.filter((a): a is StringAnswer => a.type === type);
      if (addresses.length > 0) {
        const ttlS = Math.min(...addresses.map((r) => r.ttl ?? 0));
        const list = addresses.map((a) => String(a.data));
        notes.push(
          `DNS (${answer.server}): ${domain} ${type} ${list.join(', ')} — mail goes to the domain itself`,
        );
        return {
          routing: { kind: 'implicit', hosts: [{ name: domain, preference: 0, addresses: list }] },
          ttlS,
          notes,
        };
      }
      if (answer.rcode === 'NXDOMAIN')
        return this.negative(
          domain,
          { kind: 'nxdomain' },
          answer,
          `DNS (${answer.server}): ${domain} does not exist (NXDOMAIN)`,
          notes,
        );
    }
    return this.negative(
      domain,
      { kind: 'no-mail' },
      mx,
      `DNS: ${domain} has neither MX nor address records`,
      notes,
    );
  }

  /**
   * A negative answer is believed only from a resolver that can see the internet: one that denies the
   * domain's top-level domain too (a resolver with no upstream, a captive network) would otherwise turn a
   * whole list into "domain does not exist". Such answers become unknown.
   */
  private async negative(
    domain: string,
    routing: MailRouting,
    answer: Extract<DnsResponse, { ok: true }>,
    note: string,
    earlier: readonly string[] = [],
  ): Promise<RoutingResult & { ttlS?: number }> {
    const tld = domain.slice(domain.lastIndexOf('.') + 1);
    const check = await this.tldCheck(tld);
    if (check.exists !== true)
      return {
        routing: { kind: 'unknown', reason: `${note}; but ${check.note}` },
        notes: [...earlier, note, `DNS: ${check.note} — the negative answer is not trusted`],
      };
    const soa = answer.authorities.find((a) => a.type === 'SOA');
    // RFC 2308 §5: a negative answer lives for the lesser of the SOA's TTL and its MINIMUM field.
    const ttlS = soa ? Math.min(soa.ttl ?? 0, soa.data.minimum ?? Number.MAX_SAFE_INTEGER) : undefined;
    return { routing, ...(ttlS !== undefined ? { ttlS } : {}), notes: [...earlier, note] };
  }

  /** Whether the resolvers know the top-level domain: the test of a resolver that sees the internet. */
  private async tldCheck(tld: string): Promise<{ exists: boolean | undefined; note: string }> {
    const { value } = this.tlds.getOrLoad(
      tld,
      async () => {
        const answer = await this.client.query(`${tld}.`, 'SOA');
        if (!answer.ok)
          return {
            exists: undefined,
            note: `the top-level domain .${tld} could not be looked up either (${answer.reason})`,
          };
        if (answer.rcode === 'NXDOMAIN')
          return {
            exists: false,
            note: `${answer.server} says even the top-level domain .${tld} does not exist: that resolver cannot see the internet (no network?)`,
          };
        return { exists: true, note: `.${tld} exists` };
      },
      (result) => (result.exists ? 3_600_000 : this.failureTtlS * 1000),
    );
    return value;
  }

  /** The addresses of a mail host (A, else AAAA), cached by host for the records' TTL. */
  async hostAddresses(host: string, deadline: number): Promise<HostAddresses> {
    if (net.isIP(host)) return { ok: true, addresses: [host] };
    const { value } = this.hosts.getOrLoad(
      host,
      async () => {
        for (const type of ['A', 'AAAA'] as const) {
          const answer = await this.client.query(host, type);
          if (!answer.ok) return { ok: false, kind: 'unknown', reason: answer.reason, ttlS: 0 } as const;
          if (answer.rcode === 'NXDOMAIN')
            return {
              ok: false,
              kind: 'nxdomain',
              reason: `${host} does not exist (NXDOMAIN)`,
              ttlS: this.minTtlS,
            } as const;
          const records = answer.answers.filter((a): a is StringAnswer => a.type === type);
          if (records.length > 0)
            return {
              ok: true,
              addresses: records.map((r) => String(r.data)),
              ttlS: Math.min(...records.map((r) => r.ttl ?? 0)),
            } as const;
        }
        return {
          ok: false,
          kind: 'no-address',
          reason: `${host} has no address record`,
          ttlS: this.minTtlS,
        } as const;
      },
      (result) =>
        !result.ok && result.kind === 'unknown' ? this.failureTtlS * 1000 : this.clampTtl(result.ttlS),
    );
    return withDeadline(value, deadline, () => ({
      ok: false,
      kind: 'unknown',
      reason: `no address for ${host} within the time allowed`,
      ttlS: 0,
    }));
  }

  clear(): void {
    this.routes.clear();
    this.hosts.clear();
    this.tlds.clear();
  }
}

function unknownRouting(
  domain: string,
  type: string,
  reason: string,
  notes: readonly string[] = [],
): RoutingResult {
  return {
    routing: { kind: 'unknown', reason: `DNS lookup of ${domain} ${type} failed: ${reason}` },
    notes: [...notes, `DNS: ${domain} ${type} failed — ${reason}`],
  };
}
