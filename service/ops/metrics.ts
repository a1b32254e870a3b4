// Prometheus metrics of a node (prom-client): `GET /metrics` on an API node started with `--metrics` (beside the
// API) or `--metrics-port` (on that port alone), and on a worker's `--http-port`. The names are a contract (dashboards and alerts rely on them): docs/operations.md
// says what each means. HTTP requests are counted when their answers end (requests.ts); the rest
// arrives as events (events.ts) from the engine and the list pipeline, or is read when Prometheus scrapes
// (the lists by status, the queue's jobs).
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricObjectWithValues,
} from 'prom-client';
import { LIST_STATUSES } from '../../shared/api/list.js';
import { subscribe } from './events.js';

export interface QueueJobCount {
  readonly kind: 'plan' | 'part' | 'finish';
  readonly state: 'waiting' | 'active' | 'retry';
  readonly count: number;
}

/** What a node reads from its store when it is scraped. */
export interface NodeGauges {
  listsByStatus(): Promise<readonly { readonly status: string; readonly count: number }[]>;
  /** The team server's queue (pg-boss); a single service has none. */
  queueJobs?(): Promise<readonly QueueJobCount[]>;
}

/** Few buckets: an observation walks them, on every request. */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.5, 2.5, 10];

/**
 * The answered requests of one route, counted in plain numbers: a request adds to them in nanoseconds (through
 * prom-client's labelled series it cost 0.4 µs, 2% of an E1 request). Prometheus reads them when it scrapes:
 * the counter's `collect()` and RequestDurations.
 */
export class RouteRequests {
  /** Requests by status (100–599; index: the status). */
  readonly byStatus = new Float64Array(600);
  /** Requests by duration bucket (the last: above every bucket), not cumulative. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1);
  seconds = 0;
  count = 0;

  observe(status: number, seconds: number): void {
    this.byStatus[status]++;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]) bucket++;
    this.buckets[bucket]++;
    this.seconds += seconds;
    this.count++;
  }
}

type DurationValue = { value: number; labels: Record<string, string | number>; metricName: string };

const DURATION = 'mailsieve_http_request_duration_seconds';
const DURATION_HELP = 'Time to answer HTTP requests, by route';

/**
 * `mailsieve_http_request_duration_seconds`: a prom-client histogram (its name, help, type and registration)
 * whose values are read from the routes' RouteRequests when the registry asks for them.
 */
class RequestDurations extends Histogram<'route'> {
  constructor(
    private readonly routes: ReadonlyMap<string, RouteRequests>,
    registers: Registry[],
  ) {
    super({
      name: DURATION,
      help: DURATION_HELP,
      labelNames: ['route'],
      buckets: DURATION_BUCKETS,
      registers,
    });
  }

  override get(): Promise<MetricObjectWithValues<DurationValue>> {
    const values: DurationValue[] = [];
    for (const [route, requests] of this.routes) {
      // A route is a series once it has answered (its counts are made when it is registered).
      if (requests.count === 0) continue;
      let count = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        count += requests.buckets[i];
        values.push({ value: count, labels: { le, route }, metricName: `${DURATION}_bucket` });
      });
      values.push(
        { value: requests.count, labels: { le: '+Inf', route }, metricName: `${DURATION}_bucket` },
        { value: requests.seconds, labels: { route }, metricName: `${DURATION}_sum` },
        { value: requests.count, labels: { route }, metricName: `${DURATION}_count` },
      );
    }
    return Promise.resolve({
      name: DURATION,
      help: DURATION_HELP,
      // prom-client's MetricType enum is a type only (no value at run time).
      type: 'histogram',
      values,
      aggregator: 'sum',
      collect: () => undefined,
    } as unknown as MetricObjectWithValues<DurationValue>);
  }

  /** What the registry reads for the text format (prom-client asks this before get()). */
  getForPromString(): Promise<MetricObjectWithValues<DurationValue>> {
    return this.get();
  }
}

export class Metrics {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  private readonly routes = new Map<string, RouteRequests>();
  private readonly unsubscribe: (() => void)[] = [];
  private gauges: NodeGauges | undefined;
  /**
   * Whether they are served on a port of their own (`serve --metrics-port`), and then not beside the API
   * (service/ops/routes.ts): a port the public reaches through a proxy need not tell them.
   */
  readonly hasPortOfItsOwn: boolean;

  constructor(gauges?: NodeGauges, options: { readonly hasPortOfItsOwn?: boolean } = {}) {
    this.gauges = gauges;
    this.hasPortOfItsOwn = options.hasPortOfItsOwn === true;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const routes = this.routes;
    new Counter({
      name: 'mailsieve_http_requests_total',
      help: 'HTTP requests answered, by route (the endpoint, never its query) and status',
      labelNames: ['route', 'status'],
      registers,
      collect() {
        this.reset();
        for (const [route, requests] of routes)
          requests.byStatus.forEach((count, status) => count > 0 && this.inc({ route, status }, count));
      },
    });
    new RequestDurations(routes, registers);
    const readGauges = () => this.gauges;
    new Gauge({
      name: 'mailsieve_lists',
      help: 'Lists kept by this service, by status',
      labelNames: ['status'],
      registers,
      async collect() {
        const gauges = readGauges();
        if (!gauges) return;
        const counts = await gauges.listsByStatus().catch(() => undefined);
        if (!counts) return;
        this.reset();
        for (const status of LIST_STATUSES) this.set({ status }, 0);
        for (const { status, count } of counts) this.set({ status }, count);
      },
    });
    new Gauge({
      name: 'mailsieve_queue_jobs',
      help: "Jobs of the team server's list queue, by kind (plan, part, finish) and state (waiting, active, retry)",
      labelNames: ['kind', 'state'],
      registers,
      async collect() {
        const gauges = readGauges();
        if (!gauges?.queueJobs) return;
        const counts = await gauges.queueJobs().catch(() => undefined);
        if (!counts) return;
        this.reset();
        for (const kind of ['plan', 'part', 'finish'])
          for (const state of ['waiting', 'active', 'retry']) this.set({ kind, state }, 0);
        for (const { kind, state, count } of counts) this.set({ kind, state }, count);
      },
    });
    const rowsChecked = new Counter({
      name: 'mailsieve_rows_checked_total',
      help: 'List rows whose checks ended, by checks level (offline, dns, smtp)',
      labelNames: ['level'],
      registers,
    });
    const unknownRows = new Counter({
      name: 'mailsieve_unknown_rows_total',
      help: 'List rows left unknown by online checks, by cause',
      labelNames: ['cause'],
      registers,
    });
    const conversations = new Counter({
      name: 'mailsieve_smtp_conversations_total',
      help: 'SMTP conversations opened (or that could not be), by source address and outcome',
      labelNames: ['source_address', 'outcome'],
      registers,
    });
    const refusals = new Counter({
      name: 'mailsieve_smtp_refusals_total',
      help: 'Refusals of this machine by mail servers, by source address and kind (concurrency, rate, policy, block)',
      labelNames: ['source_address', 'kind'],
      registers,
    });
    const quota = new Counter({
      name: 'mailsieve_quota_refusals_total',
      help: "Requests refused with 403 for their key's quota",
      registers,
    });
    const rate = new Counter({
      name: 'mailsieve_rate_limited_total',
      help: "Requests refused with 429 for their key's rate limit",
      registers,
    });
    const source = (address: string) => address || 'default';
    this.unsubscribe.push(
      subscribe('rows', ({ level, rows, unknown }) => {
        rowsChecked.inc({ level }, rows);
        for (const { cause, count } of unknown) unknownRows.inc({ cause }, count);
      }),
      subscribe('smtp.conversation', ({ sourceAddress, outcome }) =>
        conversations.inc({ source_address: source(sourceAddress), outcome }),
      ),
      subscribe('smtp.refusal', ({ sourceAddress, kind }) =>
        refusals.inc({ source_address: source(sourceAddress), kind }),
      ),
      subscribe('quota.refused', () => quota.inc()),
      subscribe('rate.limited', () => rate.inc()),
    );
  }

  /** The store read when scraped (set once the node's store is open). */
  setGauges(gauges: NodeGauges): void {
    this.gauges = gauges;
  }

  /** The counts of a route's answered requests (each answer adds to them as it ends: keep it cheap). */
  requestsOf(route: string): RouteRequests {
    let requests = this.routes.get(route);
    if (!requests) {
      requests = new RouteRequests();
      this.routes.set(route, requests);
    }
    return requests;
  }

  /** The exposition text (Prometheus' format). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  close(): void {
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.registry.clear();
  }
}
