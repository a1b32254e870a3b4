// `npm run bench -- e1`: E1 (GET /v5/ev, offline checks, a `--rate-limit 0` key) on loopback against a bare
// Fastify route that answers the same body, measured alternately in one run: each round loads the bare route,
// E1 for that address, E1 for ten kinds of address in turn, and E1 over a store holding activity data (every
// answer then looks for an engagement score), one after the other, with wrk (`-t1 -c32`, as issue 23
// measured; autocannon where wrk is not installed). Target (issue 23): E1 reaches at least 60% of the bare
// route's requests/s (the median of the rounds' ratios).
import autocannon from 'autocannon';
import { execFile, execFileSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BARE_BODY, fmt, spawnLogging, spawnUntil, stop } from './util.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', '..', '..', 'bin', 'mailsieve.js');

const TARGET_RATIO = 0.6;
const CONNECTIONS = 32;

const ADDRESSES = [
  'jane.doe@example.com',
  'john.smith@gmail.com',
  'jane.doe@gmial.com',
  'info@company.co.uk',
  'bad address@example.com',
  'x@mailinator.com',
  'user@yahoo.con',
  'someone@münchen.de',
  'no-at-sign.example.com',
  'sales@acme.io',
];

/**
 * The activity store's addresses: more than EngagementScores keeps (4,096), so that E1 looks most of them up
 * in the store; every other one has events.
 */
const ACTIVITY_ADDRESSES = 20_000;
const activityAddress = (i: number) => `person${i}@example.com`;

interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Connection errors, timeouts and answers other than 2xx. */
  readonly failures: number;
}

/** A loader: requests/s of `paths` (in turn) at `url` over `seconds`. */
type Load = (url: string, paths: readonly string[], seconds: number) => Promise<LoadResult>;

function findWrk(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    const path = join(folder, 'wrk');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** wrk with a Lua script that asks the paths of a file in turn. */
function wrkLoad(wrk: string, dir: string): Load {
  const script = join(dir, 'paths.lua');
  writeFileSync(
    script,
    `local paths = {}
for line in io.lines(os.getenv("PATHS_FILE")) do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
`,
  );
  let files = 0;
  return async (url, paths, seconds) => {
    const pathsFile = join(dir, `paths-${files++}.txt`);
    writeFileSync(pathsFile, `${paths.join('\n')}\n`);
    // One path is asked as wrk's URL, without a script (the script's request() costs wrk time per request).
    const target = paths.length === 1 ? [`${url}${paths[0]}`] : ['-s', script, url];
    const { stdout } = await promisify(execFile)(
      wrk,
      ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...target],
      { env: { ...process.env, PATHS_FILE: pathsFile } },
    );
    const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? 0);
    const ms = (percent: number) => {
      const match = new RegExp(`^\\s+${percent}%\\s+([\\d.]+)(us|ms|s)$`, 'm').exec(stdout);
      if (!match) return Number.NaN;
      return Number(match[1]) * { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
    };
    const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
    return {
      rps: number(/Requests\/sec:\s+([\d.]+)/),
      p50: ms(50),
      p99: ms(99),
      failures:
        number(/Non-2xx or 3xx responses: (\d+)/) +
        (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
    };
  };
}

const autocannonLoad: Load = async (url, paths, seconds) => {
  let i = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
  };
};

/**
 * A `mailsieve serve` over `dataDir` with a `--rate-limit 0` key: its base URL and key. As a team operates it
 * (issue 28): with `--metrics`, and its log (one JSON line a request) kept in `<dataDir>.log`.
 */
async function startService(dataDir: string) {
  const key = execFileSync(
    process.execPath,
    [cli, 'keys', 'create', '--data-dir', dataDir, '--corrections', '--rate-limit', '0'],
    { encoding: 'utf8' },
  ).trim();
  const logFile = `${dataDir}.log`;
  const service = await spawnLogging(
    process.execPath,
    [cli, 'serve', '--port', '0', '--data-dir', dataDir, '--metrics', '--log-format', 'json'],
    /listening on (http:\/\/[^\s"]+)/,
    logFile,
  );
  return { child: service.child, url: service.match[1], key, logFile };
}

/** Imports activity for every other ACTIVITY_ADDRESSES address into `dataDir` (a few events each). */
function importActivity(dataDir: string, dir: string): void {
  const now = Date.now();
  const lines = ['email,source,event,occurred_at'];
  for (let i = 0; i < ACTIVITY_ADDRESSES; i += 2)
    for (let e = 0; e <= i % 4; e++)
      lines.push(
        `${activityAddress(i)},source-${e},${['open', 'click', 'seen'][(i + e) % 3]},${new Date(now - (i % 400) * 86_400_000 - e * 3_600_000).toISOString()}`,
      );
  const file = join(dir, 'activity.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  execFileSync(process.execPath, [cli, 'data', 'import', 'activity', file, '--data-dir', dataDir]);
}

async function answerOf(url: string, key: string, email: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/v5/ev?email=${encodeURIComponent(email)}&api_key=${key}`);
  return ((await response.json()) as { safe_to_send: Record<string, unknown> }).safe_to_send;
}

/** The lines of a file, read in chunks (a service's log of a run is hundreds of megabytes). */
function countLines(file: string): number {
  const fd = openSync(file, 'r');
  const chunk = Buffer.alloc(1 << 20);
  let lines = 0;
  try {
    for (let read; (read = readSync(fd, chunk, 0, chunk.length, null)) > 0; )
      for (let at = chunk.indexOf(10); at !== -1 && at < read; at = chunk.indexOf(10, at + 1)) lines++;
  } finally {
    closeSync(fd);
  }
  return lines;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export async function benchE1(options: { seconds: number; rounds: number }): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'mailsieve-bench-'));
  const wrk = findWrk();
  const load = wrk ? wrkLoad(wrk, dir) : autocannonLoad;
  const tool = wrk ? `wrk -t1 -c${CONNECTIONS}` : `autocannon, ${CONNECTIONS} connections (no wrk on PATH)`;
  const withActivity = join(dir, 'activity-store');
  importActivity(withActivity, dir);
  const bare = await spawnUntil(process.execPath, [join(here, 'bareServer.js')], /^listening (\d+)/);
  const plain = await startService(join(dir, 'store'));
  const active = await startService(withActivity);
  try {
    const ev = (service: { key: string }, email: string) =>
      `/v5/ev?email=${encodeURIComponent(email)}&api_key=${service.key}`;
    // The answers measured: E1's first is the bare route's body; no engagement score without activity data,
    // the score with it.
    const first = JSON.stringify({ safe_to_send: await answerOf(plain.url, plain.key, ADDRESSES[0]) });
    if (first !== JSON.stringify(BARE_BODY))
      throw new Error(`E1 answered ${first}, not the bare route's body`);
    if ('engagement_score' in (await answerOf(plain.url, plain.key, activityAddress(0))))
      throw new Error('E1 gave an engagement_score without activity data');
    if (typeof (await answerOf(active.url, active.key, activityAddress(0))).engagement_score !== 'number')
      throw new Error('E1 gave no engagement_score for an address with activity');
    const scenarios = [
      { name: 'bare route', url: `http://127.0.0.1:${bare.match[1]}`, paths: ['/bare'] },
      { name: 'E1', url: plain.url, paths: [ev(plain, ADDRESSES[0])] },
      { name: 'E1, 10 kinds', url: plain.url, paths: ADDRESSES.map((a) => ev(plain, a)) },
      {
        name: 'E1, activity',
        url: active.url,
        paths: Array.from({ length: ACTIVITY_ADDRESSES }, (_, i) => ev(active, activityAddress(i))),
      },
    ];
    // Warm up (JIT, connections; the activity store's answers prepared in the background) before measuring.
    for (const scenario of scenarios) await load(scenario.url, scenario.paths, 2);

    console.log(
      `\nE1 GET /v5/ev (offline checks) vs a bare Fastify route, alternating: ${tool}, ${options.seconds} s each, ${options.rounds} rounds`,
    );
    console.log(`  E1: ${ADDRESSES[0]}, whose answer is the bare route's body`);
    console.log(
      `  E1, 10 kinds: ${ADDRESSES.length} addresses in turn (typos, IDN, syntax errors, disposable, …)`,
    );
    console.log(
      `  E1, activity: ${fmt(ACTIVITY_ADDRESSES)} addresses in turn over a store with activity for half of them`,
    );
    const cell = (text: string, width: number) => text.padStart(width);
    const widths = scenarios.map((scenario) => Math.max(scenario.name.length, 8));
    console.log(
      `  round   ${scenarios.map((scenario, i) => cell(scenario.name, widths[i]) + (i > 0 ? '   /bare' : '')).join('   ')}   (req/s)`,
    );
    const rounds: LoadResult[][] = [];
    const line = (label: string, rps: number[], ratios: number[]) =>
      console.log(
        `  ${label.padEnd(6)}  ${rps.map((value, i) => cell(fmt(value), widths[i]) + (i > 0 ? cell(`${fmt(ratios[i] * 100, 1)}%`, 8) : '')).join('   ')}`,
      );
    for (let round = 1; round <= options.rounds; round++) {
      const results: LoadResult[] = [];
      for (const scenario of scenarios) {
        const result = await load(scenario.url, scenario.paths, options.seconds);
        if (result.failures > 0)
          throw new Error(
            `${scenario.name}: ${result.failures} failed requests (errors, timeouts or non-2xx)`,
          );
        results.push(result);
      }
      rounds.push(results);
      line(
        String(round),
        results.map((r) => r.rps),
        results.map((r) => r.rps / results[0].rps),
      );
    }
    // Per scenario: the median of the rounds' requests/s, and of the rounds' ratios to the bare route.
    const rps = scenarios.map((_, i) => median(rounds.map((results) => results[i].rps)));
    const ratiosOf = (i: number) => rounds.map((results) => results[i].rps / results[0].rps);
    const ratios = scenarios.map((_, i) => median(ratiosOf(i)));
    const p99 = scenarios.map((_, i) => median(rounds.map((results) => results[i].p99)));
    line('median', rps, ratios);
    console.log(
      `  p99 (median of rounds): ${scenarios.map((scenario, i) => `${scenario.name} ${fmt(p99[i], 2)} ms`).join(', ')}`,
    );
    const range = (values: number[]) =>
      `${fmt(Math.min(...values) * 100, 1)}–${fmt(Math.max(...values) * 100, 1)}%`;
    console.log(
      `  E1 ${fmt(ratios[1] * 100, 1)}% of the bare route (the median of the rounds' ratios, which range ${range(ratiosOf(1))}; target ≥ ${TARGET_RATIO * 100}%) ${ratios[1] >= TARGET_RATIO ? 'MET' : 'MISSED'}`,
    );
    // The services' logs hold a line a request (stopped first: what was buffered is written when they exit).
    await stop(active.child);
    await stop(plain.child);
    const logged = countLines(plain.logFile) + countLines(active.logFile);
    console.log(`  serve logged ${fmt(logged)} lines (a line a request) to its log files`);
    if (logged < rounds.length * 1000) throw new Error(`serve logged only ${logged} lines`);
    return {
      logged_lines: logged,
      bare_rps: rps[0],
      bare_p99_ms: p99[0],
      e1_rps: rps[1],
      e1_p99_ms: p99[1],
      e1_ratio: ratios[1],
      e1_ratio_min: Math.min(...ratiosOf(1)),
      e1_ratio_max: Math.max(...ratiosOf(1)),
      e1_kinds_rps: rps[2],
      e1_kinds_ratio: ratios[2],
      e1_activity_rps: rps[3],
      e1_activity_ratio: ratios[3],
    };
  } finally {
    await stop(active.child);
    await stop(plain.child);
    await stop(bare.child);
    rmSync(dir, { recursive: true, force: true });
  }
}
