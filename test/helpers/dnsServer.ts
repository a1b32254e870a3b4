// A real DNS server on loopback (dns2, UDP and TCP on one port) serving test zones, that counts the
// queries it gets. Names it has no record for are NXDOMAIN with the SOA of their top-level domain, as an
// authoritative server answers; the top-level domains of the zones exist (SOA), so the verifier's check
// that a resolver can see the internet passes. Modes reproduce broken resolvers.
import dgram from 'node:dgram';
import net from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;
type Resource = dns2.Packet.Resource;
// dns2 encodes plain record objects (its own examples push them); its types ask for a toBuffer they do not use.
const rr = (record: Omit<Resource, 'toBuffer'>): Resource => record as Resource;

export interface TestZone {
  /** MX records: [preference, exchange]; exchange '.' is a null MX. */
  readonly mx?: readonly (readonly [number, string])[];
  readonly a?: readonly string[];
  readonly aaaa?: readonly string[];
  /** PTR records (reverse DNS: the zone is named `4.3.2.1.in-addr.arpa`): the names the address has. */
  readonly ptr?: readonly string[];
  /** TXT records, one string each (a block list's reason for a listed address). */
  readonly txt?: readonly string[];
  /** Answer SERVFAIL for every question about this name. */
  readonly servfail?: boolean;
  /** Never answer questions about this name. */
  readonly silent?: boolean;
  /** TTL of the records (default 3600). */
  readonly ttl?: number;
}

export interface DnsServerOptions {
  /**
   * `normal`: serve the zones. `isolated`: NXDOMAIN for every name, top-level domains included, like a
   * resolver with no upstream (this workplace's own resolver does that). `servfail`: SERVFAIL for everything.
   */
  readonly mode?: 'normal' | 'isolated' | 'servfail';
  /** Put the A records of MX hosts in the additional section of MX answers (default true). */
  readonly glue?: boolean;
  /**
   * Listen at this address and port instead of 127.0.0.1 and a free port: a system resolver (a real MTA's,
   * through its resolv.conf) asks port 53 only.
   */
  readonly listen?: { readonly address: string; readonly port: number };
  /** Called for every question, with the asking client's address (as `queries` has it, plus `from`). */
  readonly onQuestion?: (question: { name: string; type: string; from: string }) => void;
}

export interface TestDnsServer {
  /** `IP:PORT`, as `--dns-servers` takes it. */
  readonly address: string;
  readonly port: number;
  /** Every question received, as `name TYPE` (name lower-case, no trailing dot). */
  readonly queries: string[];
  /** How many questions named `name` (of `type`, when given). */
  count(name: string, type?: string): number;
  setZone(name: string, zone: TestZone | undefined): void;
  close(): Promise<void>;
}

const TYPE_NAMES: Record<number, string> = {
  1: 'A',
  2: 'NS',
  5: 'CNAME',
  6: 'SOA',
  12: 'PTR',
  15: 'MX',
  16: 'TXT',
  28: 'AAAA',
};

export async function startDnsServer(
  zones: Record<string, TestZone>,
  options: DnsServerOptions = {},
): Promise<TestDnsServer> {
  const records = new Map(Object.entries(zones).map(([name, zone]) => [name.toLowerCase(), zone]));
  const queries: string[] = [];
  const mode = options.mode ?? 'normal';
  const glue = options.glue ?? true;
  const tlds = () => new Set([...records.keys()].map((name) => name.slice(name.lastIndexOf('.') + 1)));

  const soaFor = (name: string) => {
    const tld = name.slice(name.lastIndexOf('.') + 1);
    return {
      name: tld,
      type: Packet.TYPE.SOA,
      class: Packet.CLASS.IN,
      ttl: 900,
      primary: `ns.${tld}`,
      admin: `hostmaster.${tld}`,
      serial: 1,
      refresh: 3600,
      retry: 600,
      expiration: 86400,
      minimum: 300,
    };
  };

  const create = () =>
    dns2.createServer({
      udp: true,
      tcp: true,
      handle(request, send, client) {
        const response = Packet.createResponseFromRequest(request);
        const question = request.questions[0];
        if (!question) return void send(response);
        const name = question.name.toLowerCase().replace(/\.$/, '');
        const type = TYPE_NAMES[question.type] ?? String(question.type);
        queries.push(`${name} ${type}`);
        if (options.onQuestion) {
          // TCP gives the socket, UDP the sender's address and port.
          const from =
            client instanceof net.Socket
              ? client.remoteAddress
              : 'port' in client && typeof client.address === 'string'
                ? client.address
                : undefined;
          options.onQuestion({ name, type, from: (from ?? '').replace(/^::ffff:/, '') });
        }
        response.header.ra = 1;
        if (mode === 'isolated') {
          response.header.rcode = 3;
          return void send(response);
        }
        if (mode === 'servfail') {
          response.header.rcode = 2;
          return void send(response);
        }
        const zone = records.get(name);
        if (zone?.silent) return;
        if (zone?.servfail) {
          response.header.rcode = 2;
          return void send(response);
        }
        if (!zone) {
          if (!name.includes('.') && tlds().has(name)) {
            if (question.type === Packet.TYPE.SOA) response.answers.push(rr(soaFor(name)));
            else response.authorities.push(rr(soaFor(name)));
            return void send(response);
          }
          response.header.rcode = 3;
          response.authorities.push(rr(soaFor(name)));
          return void send(response);
        }
        const ttl = zone.ttl ?? 3600;
        const base = { name, class: Packet.CLASS.IN, ttl };
        if (question.type === Packet.TYPE.MX) {
          for (const [priority, exchange] of zone.mx ?? []) {
            response.answers.push(rr({ ...base, type: Packet.TYPE.MX, priority, exchange }));
            const host = records.get(exchange.toLowerCase());
            if (glue && host)
              for (const address of host.a ?? [])
                response.additionals.push(
                  rr({ name: exchange, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl, address }),
                );
          }
        } else if (question.type === Packet.TYPE.A) {
          for (const address of zone.a ?? [])
            response.answers.push(rr({ ...base, type: Packet.TYPE.A, address }));
        } else if (question.type === Packet.TYPE.AAAA) {
          for (const address of zone.aaaa ?? [])
            response.answers.push(rr({ ...base, type: Packet.TYPE.AAAA, address }));
        } else if (question.type === Packet.TYPE.PTR) {
          for (const domain of zone.ptr ?? [])
            response.answers.push(rr({ ...base, type: Packet.TYPE.PTR, domain }));
        } else if (question.type === Packet.TYPE.TXT) {
          for (const data of zone.txt ?? [])
            response.answers.push(rr({ ...base, type: Packet.TYPE.TXT, data }));
        }
        if (response.answers.length === 0) response.authorities.push(rr(soaFor(name)));
        void send(response);
      },
    });
  // UDP and TCP on one port: find a port free for both, then listen; another process may take it in
  // between, so a failed listen is retried on a new port with a new server.
  let server: ReturnType<typeof create> | undefined;
  for (let attempt = 0; !server; attempt++) {
    const address = options.listen?.address ?? '127.0.0.1';
    const port = options.listen?.port ?? (await freeUdpAndTcpPort());
    const candidate = create();
    try {
      await new Promise<void>((resolve, reject) => {
        candidate.once('error', reject);
        candidate.listen({ udp: { port, address }, tcp: { port, address } }).then(() => resolve(), reject);
      });
      candidate.on('error', () => undefined);
      server = candidate;
    } catch (error) {
      await candidate.close().catch(() => undefined);
      if (attempt >= 10 || options.listen) throw error;
    }
  }
  const { port, address } = server.addresses().udp!;
  return {
    address: `${address}:${port}`,
    port,
    queries,
    count: (name, type) =>
      queries.filter((q) => (type ? q === `${name} ${type}` : q.startsWith(`${name} `))).length,
    setZone(name, zone) {
      if (zone) records.set(name.toLowerCase(), zone);
      else records.delete(name.toLowerCase());
    },
    close: () => server.close(),
  };
}

async function freeUdpAndTcpPort(): Promise<number> {
  const udp = dgram.createSocket('udp4');
  const port = await new Promise<number>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(0, '127.0.0.1', () => resolve(udp.address().port));
  });
  const tcp = net.createServer();
  const isFree = await new Promise<boolean>((resolve) => {
    tcp.once('error', () => resolve(false));
    tcp.listen(port, '127.0.0.1', () => resolve(true));
  });
  await new Promise((resolve) => tcp.close(resolve));
  await new Promise<void>((resolve) => udp.close(() => resolve()));
  return isFree ? port : freeUdpAndTcpPort();
}

/** A UDP socket on loopback that takes DNS queries and never answers: a resolver that is not there. */
export async function startSilentDnsServer(): Promise<{
  address: string;
  received: () => number;
  close(): Promise<void>;
}> {
  const socket = dgram.createSocket('udp4');
  let received = 0;
  socket.on('message', () => received++);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    received: () => received,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** A loopback UDP port with nothing listening (bound, then closed): queries to it are refused at once. */
export async function closedUdpPort(): Promise<string> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return `127.0.0.1:${port}`;
}
