// `npm run bench -- load`: does bulk work starve the rest of the service? E1 on loopback under 200
// connections (autocannon, 2 s timeout like wrk's), alone and then while 4 clients post 5,000-record E6
// bodies back to back, against a store with reference data (the identity bench's demo people; BENCH_PEOPLE,
// default 200,000). Targets (issue 14): under E6 load E1 keeps ≥ 40% of its requests/s alone, its p99 stays
// ≤ 4× its p99 alone, with 0 timeouts and 0 5xx; E6 p99 ≤ 500 ms. E6 is also measured alone, without E1.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { buildStore, percentile, prepareStore, sampleRecords } from './identity.js';
import { fmt, spawnUntil, stop } from './util.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', '..', '..', 'bin', 'mailsieve.js');
const out = join(here, '..', '..', '..', 'test', 'bench', 'out');

const ADDRESSES = [
  'jane.doe@example.com',
  'john.smith@gmail.com',
  'jane.doe@gmial.com',
  'info@company.co.uk',
  'bad address@example.com',
  'x@mailinator.com',
  'user@yahoo.con',
  'sales@acme.io',
];

interface E1Result {
  readonly rps: number;
  readonly p99: number;
  readonly p50: number;
  readonly timeouts: number;
  readonly errors: number;
  readonly status5xx: number;
  readonly non2xx: number;
}

async function e1Load(url: string, paths: string[], seconds: number): Promise<E1Result> {
  let i = 0;
  const result = await autocannon({
    url,
    connections: 200,
    pipelining: 1,
    duration: seconds,
    timeout: 2,
    requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }],
  });
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    p50: result.latency.p50,
    timeouts: result.timeouts,
    errors: result.errors,
    status5xx: result['5xx'],
    non2xx: result.non2xx,
  };
}

function startE6Clients(url: string, bodies: string[], concurrency: number) {
  const worker = new Worker(new URL('./loadClients.js', import.meta.url), {
    workerData: { url, bodies, concurrency },
  });
  const result = new Promise<{ times: number[]; failures: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    async stop() {
      worker.postMessage('stop');
      const answer = await result;
      await worker.terminate();
      return answer;
    },
  };
}

export async function benchLoad(options: {
  people: number;
  seconds: number;
  records: number;
  e6Clients: number;
}): Promise<Record<string, number>> {
  const cache = join(out, `identity-${options.people}`);
  if (!existsSync(join(cache, 'store')) || !existsSync(join(cache, 'import.json')))
    await buildStore(cache, options.people);
  const store = join(cache, 'store');
  prepareStore(store);
  const key = execFileSync(
    process.execPath,
    [
      cli,
      'keys',
      'create',
      '--data-dir',
      store,
      '--services',
      'validation,intelligence,eam,postal_append,email_append,alternate_email',
      '--rate-limit',
      '0',
      '--label',
      'bench load',
    ],
    { encoding: 'utf8' },
  ).trim();
  const service = await spawnUntil(
    process.execPath,
    [cli, 'serve', '--port', '0', '--data-dir', store],
    /listening on (http:\/\/\S+)/,
  );
  try {
    const base = service.match[1];
    const e1Paths = ADDRESSES.map((a) => `/v5/ev?email=${encodeURIComponent(a)}&api_key=${key}`);
    const bodies = (await sampleRecords(join(cache, 'csv', 'people.csv'), options.records, 12)).map((r) =>
      JSON.stringify(r),
    );
    const e6Url = `${base}/v5/ei/bulk?api_key=${key}`;
    // Warm up: JIT, connections, the bulk workers and the store's pages.
    await e1Load(base, e1Paths, 2);
    const warm = startE6Clients(e6Url, bodies, options.e6Clients);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await warm.stop();

    // E6 with nothing else to serve: the request thread idles, so a second bulk worker may help (bulkPool.ts).
    const e6Only = startE6Clients(e6Url, bodies, options.e6Clients);
    await new Promise((resolve) => setTimeout(resolve, options.seconds * 1000));
    const e6Alone = await e6Only.stop();
    const aloneTimes = e6Alone.times.sort((a, b) => a - b);
    const e6AloneP99 = aloneTimes.length ? percentile(aloneTimes, 99) : NaN;

    const alone = await e1Load(base, e1Paths, options.seconds);
    const clients = startE6Clients(e6Url, bodies, options.e6Clients);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const loaded = await e1Load(base, e1Paths, options.seconds);
    const e6 = await clients.stop();
    const times = e6.times.sort((a, b) => a - b);
    const e6P50 = times.length ? percentile(times, 50) : NaN;
    const e6P99 = times.length ? percentile(times, 99) : NaN;
    const rpsRatio = loaded.rps / alone.rps;
    const p99Ratio = loaded.p99 / Math.max(alone.p99, 1);
    const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
    console.log(
      `\nE1 under bulk load: autocannon, 200 connections, ${options.seconds} s each, 2 s timeout; ${options.e6Clients} E6 clients × ${fmt(options.records)} records, ${fmt(options.people)}-person store`,
    );
    const line = (name: string, r: E1Result) =>
      console.log(
        `  E1 ${name}  ${fmt(r.rps)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   timeouts ${r.timeouts}   5xx ${r.status5xx}   errors ${r.errors}`,
      );
    line('alone    ', alone);
    line('under E6 ', loaded);
    console.log(
      `  E1 throughput kept ${fmt(rpsRatio * 100, 1)}% (target ≥ 40%) ${verdict(rpsRatio >= 0.4)}   p99 ${fmt(p99Ratio, 2)}× alone (target ≤ 4×) ${verdict(p99Ratio <= 4)}   timeouts + 5xx ${loaded.timeouts + loaded.status5xx} (target 0) ${verdict(loaded.timeouts + loaded.status5xx === 0)}`,
    );
    console.log(
      `  E6 ${fmt(times.length)} answers (${e6.failures} failed): p50 ${fmt(e6P50, 1)} ms   p99 ${fmt(e6P99, 1)} ms (target ≤ 500 ms) ${verdict(e6P99 <= 500)}`,
    );
    console.log(
      `  E6 alone (no E1 load): ${fmt(aloneTimes.length)} answers (${e6Alone.failures} failed) in ${options.seconds} s: p50 ${fmt(aloneTimes.length ? percentile(aloneTimes, 50) : NaN, 1)} ms   p99 ${fmt(e6AloneP99, 1)} ms`,
    );
    return {
      e1_alone_rps: alone.rps,
      e1_alone_p99_ms: alone.p99,
      e1_loaded_rps: loaded.rps,
      e1_loaded_p99_ms: loaded.p99,
      e1_rps_ratio: rpsRatio,
      e1_p99_ratio: p99Ratio,
      e1_loaded_timeouts: loaded.timeouts,
      e1_loaded_5xx: loaded.status5xx,
      e6_requests: times.length,
      e6_failures: e6.failures,
      e6_p50_ms: e6P50,
      e6_p99_ms: e6P99,
      e6_alone_requests: aloneTimes.length,
      e6_alone_p99_ms: e6AloneP99,
    };
  } finally {
    await stop(service.child);
  }
}
