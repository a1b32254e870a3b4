// `npm run bench [-- NAME…]`: runs the benchmarks (all, or those named), prints their figures and writes them
// to test/bench/out/latest.json. Timings are for reading as ratios against baselines measured in the same run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchE1, benchE1WarmUp } from './e1.js';
import { benchIdentity } from './identity.js';
import { benchOnline } from './online.js';
import { benchOnlineList } from './onlineList.js';
import { benchList } from './list.js';
import { benchApp } from './app.js';
import { benchLoad } from './load.js';
import { benchCluster } from './cluster.js';
import { benchRealMta } from './realMta.js';
import { benchHostile } from './hostile.js';
import { benchOutcomes } from './outcomes.js';

/** BENCH_E1_CONTROL: `observed` or `quiet` serves both of E1's places alike (e1.ts), unset the real comparison. */
function e1Control(value: string | undefined): 'observed' | 'quiet' | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'observed' || value === 'quiet') return value;
  throw new Error(`BENCH_E1_CONTROL is "observed" or "quiet", not "${value}"`);
}

const benches: Record<string, () => Promise<Record<string, number>>> = {
  e1: () =>
    benchE1({
      seconds: Number(process.env.BENCH_SECONDS ?? 5),
      // Eight: 40 quiet and 40 observed servers (e1.ts's PAIRS a round), whose E1 observed/quiet figure
      // moves by about 1% between runs (one server of each a round: ±5% a round).
      rounds: Number(process.env.BENCH_ROUNDS ?? 8),
      control: e1Control(process.env.BENCH_E1_CONTROL),
      // BENCH_E1_WARM_UP: seconds of warm-up of each server of the bare route and E1 (e1.ts; default 2).
      ...(process.env.BENCH_E1_WARM_UP ? { pairWarmUp: Number(process.env.BENCH_E1_WARM_UP) } : {}),
    }),
  'e1-warm-up': () =>
    benchE1WarmUp({
      servers: Number(process.env.BENCH_SERVERS ?? 8),
      seconds: Number(process.env.BENCH_SECONDS ?? 6),
    }),
  identity: () =>
    benchIdentity({
      people: Number(process.env.BENCH_PEOPLE ?? 1_000_000),
      records: 5_000,
      runs: 20,
      listRows: 100_000,
    }),
  online: () =>
    benchOnline({
      rows: Number(process.env.BENCH_ROWS ?? 100_000),
      domains: 2_000,
      inFlight: Number(process.env.BENCH_IN_FLIGHT ?? 1_000),
      grouped: process.env.BENCH_ORDER !== 'list',
      via: process.env.BENCH_ONLINE_VIA === 'verifier' ? 'verifier' : 'list',
    }),
  'online-list': () =>
    benchOnlineList({
      rows: Number(process.env.BENCH_ROWS ?? 100_000),
      domains: Number(process.env.BENCH_DOMAINS ?? 10_000),
    }),
  list: () =>
    benchList({
      runs: Number(process.env.BENCH_RUNS ?? 3),
      bounceEvery: Number(process.env.BENCH_BOUNCE_EVERY ?? 10),
    }),
  load: () =>
    benchLoad({
      people: Number(process.env.BENCH_PEOPLE ?? 200_000),
      seconds: Number(process.env.BENCH_SECONDS ?? 10),
      records: 5_000,
      e6Clients: 4,
    }),
  cluster: () =>
    benchCluster({
      rows: Number(process.env.BENCH_ROWS ?? 100_000),
      domains: Number(process.env.BENCH_DOMAINS ?? 10_000),
      hosts: Number(process.env.BENCH_HOSTS ?? 6),
      nodes: (process.env.BENCH_NODES ?? '1,2,3').split(',').map(Number),
      partRows: Number(process.env.BENCH_PART_ROWS ?? 2_000),
    }),
  'real-mta': () =>
    benchRealMta({
      rows: Number(process.env.BENCH_ROWS ?? 600),
      teamRows: Number(process.env.BENCH_TEAM_ROWS ?? 3_000),
      only: process.env.BENCH_REAL_MTA_ONLY,
    }),
  hostile: () =>
    benchHostile({
      seconds: Number(process.env.BENCH_SECONDS ?? 15),
      rounds: Number(process.env.BENCH_ROUNDS ?? 2),
      singleRounds: Number(process.env.BENCH_SINGLE_ROUNDS ?? 1),
      rate: Number(process.env.BENCH_RATE ?? 200),
      listRows: Number(process.env.BENCH_ROWS ?? 1_000),
      pollMs: Number(process.env.BENCH_POLL_MS ?? 100),
      stalled: Number(process.env.BENCH_STALLED ?? 300),
      zips: Number(process.env.BENCH_ZIPS ?? 8),
      floodConnections: Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 4),
      uploads: Number(process.env.BENCH_UPLOADS ?? 2),
      uploadMB: Number(process.env.BENCH_UPLOAD_MB ?? 50),
      e6Clients: Number(process.env.BENCH_E6_CLIENTS ?? 4),
      // The hostile clients stop when the node's RSS passes this (a shared machine's memory).
      rssCapMB: Number(process.env.BENCH_RSS_CAP_MB ?? 4_096),
      hostileNice: Number(process.env.BENCH_HOSTILE_NICE ?? 10),
    }),
  outcomes: () =>
    benchOutcomes({
      rows: Number(process.env.BENCH_ROWS ?? 1_000_000),
      bounceEvery: Number(process.env.BENCH_BOUNCE_EVERY ?? 10),
      runs: Number(process.env.BENCH_RUNS ?? 3),
    }),
  app: () =>
    benchApp({ runs: 5, rows: Number(process.env.BENCH_APP_ROWS ?? 1_000_000), historyJobs: 10_000 }),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((name) => !(name in benches));
if (unknown.length) {
  console.error(`Unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(benches).join(', ')}`);
  process.exit(2);
}
const results: Record<string, Record<string, number>> = {};
for (const name of wanted.length ? wanted : Object.keys(benches)) results[name] = await benches[name]();
const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'bench', 'out');
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'latest.json'),
  `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`,
);
