// `npm run bench -- hostile`: can a client overload the team server (issue 36)? A good key runs E1 at a steady
// rate (open loop: requests sent on schedule whatever the answers, each timed from when it was due) and
// 1,000-row lists with offline checks back to back (E7, E8 polled every second, E10), first with nothing else
// (quiet), then while hostile clients (hostileClients.ts, a worker thread) run at once: keyless sockets holding
// half-sent 16 MB bodies, one-line zips, a flood of E8/E10, a key past its limits streaming large uploads and an
// exhausted key sending E6. Quiet and hostile alternate for BENCH_ROUNDS rounds against a team server node
// (`serve --database`: the API and a verifier node in one process, on PostgreSQL), then BENCH_SINGLE_ROUNDS
// against a single node (`serve --data-dir`). Each phase has a fresh database (or data folder) and a fresh
// node, so that no work queued in one phase runs in the next, and the node's peak RSS (VmHWM) of each phase is
// comparable. Targets: under the hostile clients E1's p99 stays within 3× and the list's time within 2× of the
// quiet phases', and the node's peak RSS within 200 MB of theirs. Every wait has a deadline: hostile clients
// stop at the end of their phase, lists past it count as unfinished, a node that will not stop is killed, and a
// node past BENCH_RSS_CAP_MB has its hostile clients stopped at once (the phase goes on and says so).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { runCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import type { ClientFigures, HostileMessage, HostileOptions, HostileSummary } from './hostileClients.js';
import { percentile } from './identity.js';
import { ensureListData } from './listData.js';
import { fmt, spawnLogging, stop } from './util.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', '..', '..', 'bin', 'mailsieve.js');
const out = join(here, '..', '..', '..', 'test', 'bench', 'out');

/** Issue 36's targets: hostile against quiet, same run. */
const E1_P99_TARGET = 3;
const LIST_TARGET = 2;
const RSS_TARGET_MB = 200;
/** An E1 request not answered this long after it was due counts as failed, at this time. */
const E1_TIMEOUT_MS = 5_000;
/** E1's connections (open loop: requests past them wait their turn, timed from when they were due). */
const E1_CONNECTIONS = 64;
const WARM_UP_SECONDS = 2;
/** How long the hostile clients may take to open their stalled sockets before the measures start. */
const RAMP_TIMEOUT_MS = 10_000;
/** A list started in the measured window must end this long after it, or it counts as unfinished. */
const LIST_GRACE_MS = 30_000;
/** Setup's own list (the flood key's) must end within this. */
const SETUP_LIST_MS = 60_000;
/** Hostile clients told to stop, and a node sent SIGTERM, are given this long before they are killed. */
const STOP_MS = 10_000;
/** A trial key's queries (the spec's trial), used up by E1 calls before the phase. */
const TRIAL_QUERIES = 100;

const ADDRESSES = ['jane.doe@example.com', 'john.smith@gmail.com', 'info@company.co.uk', 'sales@acme.io'];

export interface HostileBenchOptions {
  readonly seconds: number;
  /** Quiet/hostile pairs against a team server node, then against a single node. */
  readonly rounds: number;
  readonly singleRounds: number;
  /** The good key's E1 requests a second. */
  readonly rate: number;
  readonly listRows: number;
  readonly pollMs: number;
  readonly stalled: number;
  readonly zips: number;
  readonly floodConnections: number;
  readonly uploads: number;
  readonly uploadMB: number;
  readonly e6Clients: number;
  readonly rssCapMB: number;
  /**
   * The hostile clients' nice value (0 to 19): above 0 their own work (writing gigabytes of half bodies into
   * loopback, fetch's own cost) yields to the node's, as it would on the attackers' own machines.
   */
  readonly hostileNice: number;
}

type ServerKind = 'team' | 'single';

interface Keys {
  readonly good: string;
  readonly zip: string;
  readonly flood: string;
  readonly limited: string;
  readonly exhausted: string;
}

interface E1Figures {
  /** Every request's time from when it was due to its answer (a timed-out one at its time out). */
  readonly ms: number[];
  readonly failed: number;
}

interface ListRun {
  readonly ms: number;
  readonly outcome: 'done' | 'failed' | 'unfinished';
  readonly listId?: number;
  readonly why?: string;
}

interface Phase {
  readonly server: ServerKind;
  readonly hostile: boolean;
  readonly round: number;
  readonly e1: E1Figures;
  readonly lists: ListRun[];
  readonly peakRssMB: number;
  /** CPU seconds over the measured window: the node's, this process's (the good key's), the hostile clients'. */
  readonly nodeCpuS: number;
  readonly goodCpuS: number;
  readonly hostileCpuS: number;
  readonly rssCapped: boolean;
  readonly summary?: HostileSummary;
  /** The phase's wall time, setup and stops included. */
  readonly wallMs: number;
}

const MiB = 1024 * 1024;

/** VmHWM (peak) and VmRSS of a process, in MB (NaN once it is gone). */
function memoryOf(pid: number | undefined): { peakMB: number; rssMB: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakMB: kb('VmHWM') / 1024, rssMB: kb('VmRSS') / 1024 };
  } catch {
    return { peakMB: Number.NaN, rssMB: Number.NaN };
  }
}

/** A process's CPU time so far (user + system), in seconds, from /proc (NaN once it is gone). */
function cpuOf(pid: number | undefined): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** /proc's clock ticks a second (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

/** This process's CPU time so far (the good key's E1 and lists), in seconds. */
function ownCpu(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
}

/** Stops a node (SIGTERM); one still running STOP_MS later is killed. */
async function stopWithin(child: ChildProcess): Promise<void> {
  await Promise.race([stop(child), sleep(STOP_MS)]);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

/** A node: `serve --database` (API and verifier in one process) or `serve --data-dir`, its log to a file. */
async function startNode(server: ServerKind, dir: string, database: string | undefined) {
  const url = `http://127.0.0.1:${await freePort()}`;
  // BENCH_NODE_FLAGS: Node's own flags for the node (say `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
  const args = [
    ...flags,
    cli,
    'serve',
    '--port',
    new URL(url).port,
    '--data-dir',
    join(dir, 'node'),
    '--log-format',
    'json',
  ];
  // The verifier checks its own address in DNS at start: a port where nothing answers, never this machine's
  // resolver (offline lists need no DNS).
  if (server === 'team') args.push('--database', database as string, '--dns-servers', '127.0.0.1:9');
  const child = await spawnLogging(
    process.execPath,
    args,
    () =>
      fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.ok,
        () => false,
      ),
    join(dir, 'node.log'),
  );
  return { child, url };
}

/** The phase's keys, made with `mailsieve keys create` as the docs show (`store`: --database or --data-dir). */
async function makeKeys(store: string[], together: boolean): Promise<Keys> {
  const make = async (args: string[]) => {
    const made = await runCli(['keys', 'create', ...store, ...args]);
    if (made.code !== 0) throw new Error(`keys create ${args.join(' ')} failed: ${made.stderr}`);
    return made.stdout.trim();
  };
  const wanted: Record<keyof Keys, string[]> = {
    good: ['--rate-limit', '0', '--label', 'bench good'],
    zip: ['--trial', '--label', 'bench one-line zips'],
    flood: ['--label', 'bench E8/E10 flood'],
    limited: ['--max-lists', '1', '--max-bytes-day', String(MiB), '--label', 'bench past its limits'],
    exhausted: ['--trial', '--services', 'validation,intelligence', '--label', 'bench exhausted'],
  };
  const names = Object.keys(wanted) as (keyof Keys)[];
  // A single node's store is one SQLite file: its keys are made one after the other.
  const keys = together
    ? await Promise.all(names.map((name) => make(wanted[name])))
    : await names.reduce<Promise<string[]>>(
        async (made, name) => [...(await made), await make(wanted[name])],
        Promise.resolve([]),
      );
  return Object.fromEntries(names.map((name, i) => [name, keys[i]])) as unknown as Keys;
}

const ev = (key: string, i: number) =>
  `/v5/ev?api_key=${key}&email=${encodeURIComponent(ADDRESSES[i % ADDRESSES.length])}`;

/** E1 at `rate` a second for `seconds`, open loop; each request timed from when it was due. */
async function steadyE1(url: string, key: string, rate: number, seconds: number): Promise<E1Figures> {
  const pool = new Pool(url, { connections: E1_CONNECTIONS });
  const ms: number[] = [];
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  const send = (i: number, due: number) => {
    const done = (async () => {
      try {
        const answer = await pool.request({
          path: ev(key, i),
          method: 'GET',
          signal: AbortSignal.timeout(Math.max(1, Math.ceil(due + E1_TIMEOUT_MS - performance.now()))),
        });
        await answer.body.dump();
        if (answer.statusCode !== 200) failed++;
      } catch {
        failed++;
      }
      ms.push(performance.now() - due);
    })();
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  };
  const started = performance.now();
  const total = Math.round(rate * seconds);
  for (let i = 0; i < total;) {
    const now = performance.now();
    for (; i < total && started + (i * 1000) / rate <= now; i++) send(i, started + (i * 1000) / rate);
    if (i < total) await sleep(Math.max(0, started + (i * 1000) / rate - performance.now()));
  }
  await Promise.all(inFlight);
  await pool.destroy();
  return { ms, failed };
}

/** One list of the good key: E7, E8 every `pollMs` until Results, E10; its time, within `deadline`. */
async function runList(
  url: string,
  key: string,
  body: Buffer,
  rows: number,
  pollMs: number,
  deadline: number,
) {
  const started = performance.now();
  const signal = () => AbortSignal.timeout(Math.max(1, Math.ceil(deadline - performance.now())));
  const ended = (outcome: ListRun['outcome'], why?: string, listId?: number): ListRun => ({
    ms: performance.now() - started,
    outcome,
    ...(why ? { why } : {}),
    ...(listId !== undefined ? { listId } : {}),
  });
  let listId: number | undefined;
  try {
    const sent = await fetch(`${url}/v5/list?header=true&name=bench.csv`, {
      method: 'POST',
      headers: { api_key: key, 'content-type': 'text/csv' },
      body,
      signal: signal(),
    });
    const text = await sent.text();
    if (sent.status !== 202) return ended('failed', `E7 answered ${sent.status}: ${text.slice(0, 200)}`);
    listId = (JSON.parse(text) as { list_id: number }).list_id;
    for (;;) {
      const answer = await fetch(`${url}/v5/list/${listId}`, { headers: { api_key: key }, signal: signal() });
      const status = answer.ok
        ? ((await answer.json()) as { status: string }).status
        : `HTTP ${answer.status}`;
      if (status === 'Results') break;
      if (status !== 'Pending' && status !== 'Processing' && !status.startsWith('HTTP 5'))
        return ended('failed', `the list ended ${status}`, listId);
      await sleep(Math.min(pollMs, Math.max(0, deadline - performance.now())));
      if (performance.now() >= deadline) return ended('unfinished', undefined, listId);
    }
    const results = await fetch(`${url}/v5/list/${listId}/results`, {
      headers: { api_key: key },
      signal: signal(),
    });
    const lines = (await results.text()).split('\n').filter((line) => line !== '').length;
    if (results.status !== 200 || lines !== rows + 1)
      return ended('failed', `E10 answered ${results.status} with ${lines} lines`, listId);
    return ended('done', undefined, listId);
  } catch (error) {
    if (performance.now() >= deadline - 1) return ended('unfinished', undefined, listId);
    return ended('failed', error instanceof Error ? error.message : String(error), listId);
  }
}

/** The hostile clients in their own process (at `nice`): stopped by `stop()` (or their own deadline). */
function startHostile(options: HostileOptions, nice: number) {
  const child = fork(fileURLToPath(new URL('./hostileClients.js', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // Below the node's priority: on this one machine they stand for clients on machines of their own.
  if (nice !== 0 && child.pid !== undefined) setPriority(child.pid, nice);
  child.send(options);
  let onRamped: (ms: number) => void = () => undefined;
  const ramped = new Promise<number>((resolve) => (onRamped = resolve));
  let cpuS = Number.NaN;
  const done = new Promise<HostileSummary | undefined>((resolve, reject) => {
    child.on('message', (message: HostileMessage) => {
      if (message.type === 'ramped') onRamped(message.ms);
      else {
        cpuS = cpuOf(child.pid);
        resolve(message.summary);
      }
    });
    child.once('error', reject);
    child.once('exit', () => resolve(undefined));
  });
  let stopped: Promise<HostileSummary | undefined> | undefined;
  return {
    pid: child.pid,
    /** Resolves once the stalled sockets hold their half bodies (or after RAMP_TIMEOUT_MS: NaN). */
    ramped: () => Promise.race([ramped, sleep(RAMP_TIMEOUT_MS, Number.NaN)]),
    /** The clients' CPU seconds until they answered `stop` (NaN before). */
    cpuS: () => cpuS,
    stop() {
      stopped ??= (async () => {
        if (child.connected) child.send('stop');
        const summary = await Promise.race([done, sleep(STOP_MS, undefined)]);
        await stopWithin(child);
        return summary;
      })();
      return stopped;
    },
  };
}

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const at = (values: readonly number[], p: number) =>
  values.length ? percentile(sorted(values), p) : Number.NaN;

/** `202 ×3, 429 ×5`: answers by status. */
const byStatus = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .map(([status, n]) => `${status} ×${fmt(n)}`)
    .join(', ') || 'none';

export async function benchHostile(options: HostileBenchOptions): Promise<Record<string, number>> {
  const scratch = mkdtempSync(join(tmpdir(), 'mailsieve-bench-hostile-'));
  const list = await ensureListData(out, options.listRows);
  const listBody = readFileSync(list.path);
  const runs: { server: ServerKind; rounds: number }[] = [
    { server: 'team' as const, rounds: options.rounds },
    { server: 'single' as const, rounds: options.singleRounds },
  ].filter((run) => run.rounds > 0);
  let pg: PostgresCluster | undefined;
  const phases: Phase[] = [];

  async function runPhase(
    server: ServerKind,
    hostile: boolean,
    round: number,
  ): Promise<Omit<Phase, 'wallMs'>> {
    const name = `${server}-${hostile ? 'hostile' : 'quiet'}-${round}`;
    const dir = mkdtempSync(join(scratch, `${name}-`));
    // A fresh database (or store) a phase: what one phase queued (hostile lists) never runs in the next.
    const database =
      server === 'team' ? await (pg as PostgresCluster).createDatabase(name.replaceAll('-', '_')) : undefined;
    const store = database ? ['--database', database] : ['--data-dir', join(dir, 'node')];
    // A single node's keys are made before it opens its store; a team's once the node has migrated the database.
    const early = database ? undefined : await makeKeys(store, false);
    const node = await startNode(server, dir, database);
    let hostileClients: ReturnType<typeof startHostile> | undefined;
    let sampler: NodeJS.Timeout | undefined;
    try {
      const keys = early ?? (await makeKeys(store, true));
      // Setup, the same in both phases: the trial key used up, the flood key's list run, E1 warmed up.
      // (Its default rate limit may answer 429 to calls this quick: those are asked again.)
      let answered = 0;
      let status = 0;
      for (let i = 0; i < 10 * TRIAL_QUERIES && status !== 403; i++) {
        const answer = await fetch(`${node.url}${ev(keys.exhausted, i)}`, {
          signal: AbortSignal.timeout(E1_TIMEOUT_MS),
        });
        await answer.arrayBuffer();
        status = answer.status;
        if (status === 200) answered++;
        if (status === 429) await sleep(100);
      }
      if (status !== 403 || answered !== TRIAL_QUERIES)
        throw new Error(`the trial key answered ${answered} E1 calls, then ${status}`);
      const [floodList] = await Promise.all([
        runList(node.url, keys.flood, listBody, list.rows, 250, performance.now() + SETUP_LIST_MS),
        steadyE1(node.url, keys.good, options.rate, WARM_UP_SECONDS),
      ]);
      if (floodList.outcome !== 'done' || floodList.listId === undefined)
        throw new Error(
          `the flood key's list did not end in Results: ${floodList.outcome} ${floodList.why ?? ''}`,
        );

      let rssCapped = false;
      if (hostile) {
        const clients = startHostile(
          {
            url: node.url,
            keys,
            floodListId: floodList.listId,
            stalled: options.stalled,
            stalledBodyBytes: 16_000_000,
            zips: options.zips,
            zipLineBytes: 8 * MiB,
            floodConnections: options.floodConnections,
            uploads: options.uploads,
            uploadBytes: options.uploadMB * 1_000_000,
            e6Clients: options.e6Clients,
            e6Records: 5_000,
            maxSeconds: RAMP_TIMEOUT_MS / 1000 + options.seconds + LIST_GRACE_MS / 1000,
          },
          options.hostileNice,
        );
        hostileClients = clients;
        // A node whose memory runs away has its hostile clients stopped (this machine is shared).
        sampler = setInterval(() => {
          if (memoryOf(node.child.pid).rssMB > options.rssCapMB) {
            rssCapped = true;
            void clients.stop();
          }
        }, 250);
        await clients.ramped();
      }
      const windowEnd = performance.now() + options.seconds * 1000;
      const cpuAtStart = {
        node: cpuOf(node.child.pid),
        good: ownCpu(),
        hostile: cpuOf(hostileClients?.pid),
      };
      const lists: ListRun[] = [];
      const [e1] = await Promise.all([
        steadyE1(node.url, keys.good, options.rate, options.seconds),
        (async () => {
          while (performance.now() < windowEnd) {
            const run = await runList(
              node.url,
              keys.good,
              listBody,
              list.rows,
              options.pollMs,
              windowEnd + LIST_GRACE_MS,
            );
            lists.push(run);
            if (run.outcome === 'failed') {
              if (!hostile) throw new Error(`a list of the quiet phase failed: ${run.why ?? ''}`);
              await sleep(1000);
            }
          }
        })(),
      ]);
      const nodeCpuS = cpuOf(node.child.pid) - cpuAtStart.node;
      const goodCpuS = ownCpu() - cpuAtStart.good;
      const hostileCpuS = cpuOf(hostileClients?.pid) - cpuAtStart.hostile;
      const summary = await hostileClients?.stop();
      clearInterval(sampler);
      return {
        server,
        hostile,
        round,
        e1,
        lists,
        peakRssMB: memoryOf(node.child.pid).peakMB,
        nodeCpuS,
        goodCpuS,
        hostileCpuS,
        rssCapped,
        ...(summary ? { summary } : {}),
      };
    } finally {
      clearInterval(sampler);
      await hostileClients?.stop();
      await stopWithin(node.child);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const line = (phase: Phase) => {
    const done = phase.lists.filter((run) => run.outcome === 'done');
    const notDone = phase.lists.length - done.length;
    const label = `${phase.server} ${phase.hostile ? 'hostile' : 'quiet'} ${phase.round}`;
    console.log(
      `  ${label.padEnd(16)} ${fmt(at(phase.e1.ms, 50), 1).padStart(8)} ${fmt(at(phase.e1.ms, 99), 1).padStart(9)} ${fmt(phase.e1.failed).padStart(7)}` +
        `   ${fmt(done.length).padStart(5)}${notDone ? ` (+${notDone} not done)` : ''} ${fmt(
          at(
            phase.lists.map((run) => run.ms),
            50,
          ) / 1000,
          2,
        ).padStart(8)} s` +
        `   ${fmt(phase.peakRssMB).padStart(6)} MB${phase.rssCapped ? ` (hostile clients stopped at ${fmt(options.rssCapMB)} MB)` : ''}   CPU ${fmt(phase.nodeCpuS, 1)} s node, ${fmt(phase.goodCpuS, 1)} s good key${phase.hostile ? `, ${fmt(phase.hostileCpuS, 1)} s hostile clients` : ''}   (${fmt(phase.wallMs / 1000)} s in all)`,
    );
    for (const run of phase.lists.filter((r) => r.outcome !== 'done').slice(0, 3))
      console.log(
        `      list ${run.outcome} after ${fmt(run.ms / 1000, 1)} s${run.why ? `: ${run.why}` : ''}`,
      );
    const s = phase.summary;
    if (!s) return;
    const closedAfter = s.stalled.closedAfterMs;
    console.log(
      `      stalled: ${fmt(s.stalled.opened)} sockets opened, ${fmt(s.stalled.halfSent)} of them sent their whole half body, ${fmt(s.stalled.bytesSent / 1e9, 1)} GB of body sent in all (the first ${fmt(options.stalled)} sent or closed within ${fmt(s.stalled.rampMs / 1000, 1)} s), ` +
        `${fmt(s.stalled.closedByNode)} closed by the node${closedAfter.length ? ` (after ${fmt(Math.min(...closedAfter) / 1000, 1)}–${fmt(Math.max(...closedAfter) / 1000, 1)} s; ${byStatus(s.stalled.statuses)})` : ''}`,
    );
    const client = (what: string, f: ClientFigures) =>
      `${what}: ${fmt(f.sent)} sent, ${byStatus(f.statuses)}${f.sent > f.requests ? `, ${fmt(f.sent - f.requests)} unanswered at the end` : ''}${f.ms.length ? `, answered in ${fmt(at(f.ms, 50), 0)} ms (p50)` : ''}`;
    console.log(
      `      ${client(`one-line zips (${fmt(s.zips.zipBytes)} bytes)`, s.zips)}; ${client('E8/E10 flood', s.flood)}`,
    );
    const before = s.uploads.bytesBeforeAnswer;
    console.log(
      `      ${client(`${fmt(options.uploadMB)} MB uploads past limits`, s.uploads)}${before.length ? `, ${fmt(Math.max(...before) / 1e6, 1)} MB sent before an answer at most` : ''}; ${client('E6 of the exhausted key', s.e6)}`,
    );
  };

  try {
    if (runs.some((run) => run.server === 'team')) pg = await startPostgres();
    console.log(
      `\nHostile clients: a good key's E1 at ${fmt(options.rate)}/s (open loop, ${E1_TIMEOUT_MS / 1000} s time out) and ${fmt(list.rows)}-row offline lists back to back ` +
        `(E7, E8 every ${fmt(options.pollMs / 1000, 1)} s, E10), ${options.seconds} s a phase, quiet then hostile, a fresh database or store and node a phase`,
    );
    console.log(
      `  hostile: ${fmt(options.stalled)} keyless sockets holding half of a 16 MB E6 body; ${options.zips} one-line zips (8 MiB line) at once by a trial key; ` +
        `E8/E10 of its list on ${options.floodConnections} connections; ${options.uploads} × ${options.uploadMB} MB uploads by a key past --max-lists 1 and --max-bytes-day 1 MiB; ` +
        `${options.e6Clients} × 5,000-record E6 by an exhausted trial key`,
    );
    console.log(
      `  servers: team (serve --database, API and verifier in one process) × ${options.rounds} rounds; single (serve --data-dir) × ${options.singleRounds}`,
    );
    console.log(
      `  phase              E1 p50 (ms)  p99 (ms)  failed   lists   median   peak RSS   CPU in the measured window`,
    );
    for (const { server, rounds } of runs)
      for (let round = 1; round <= rounds; round++)
        for (const hostile of [false, true]) {
          const started = performance.now();
          const phase = { ...(await runPhase(server, hostile, round)), wallMs: performance.now() - started };
          phases.push(phase);
          line(phase);
        }
  } finally {
    await pg?.close();
    rmSync(scratch, { recursive: true, force: true });
  }

  const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  const results: Record<string, number> = {};
  for (const { server } of runs) {
    const of = (hostile: boolean) => phases.filter((p) => p.server === server && p.hostile === hostile);
    const figures = (hostile: boolean) => {
      const chosen = of(hostile);
      const e1 = chosen.flatMap((p) => p.e1.ms);
      const lists = chosen.flatMap((p) => p.lists);
      return {
        p50: at(e1, 50),
        p99: at(e1, 99),
        failed: chosen.reduce((sum, p) => sum + p.e1.failed, 0),
        // Lists not done count at the time they were given up at.
        listMs: at(
          lists.map((run) => run.ms),
          50,
        ),
        listsDone: lists.filter((run) => run.outcome === 'done').length,
        listsNotDone: lists.filter((run) => run.outcome !== 'done').length,
        rss: Math.max(...chosen.map((p) => p.peakRssMB)),
      };
    };
    const quiet = figures(false);
    const hostile = figures(true);
    const p99Ratio = hostile.p99 / quiet.p99;
    const listRatio = hostile.listMs / quiet.listMs;
    const rssDelta = hostile.rss - quiet.rss;
    console.log(
      `  ${server}: E1 p50 ${fmt(hostile.p50, 1)} ms / ${fmt(quiet.p50, 1)} ms quiet; p99 ${fmt(hostile.p99, 1)} ms / ${fmt(quiet.p99, 1)} ms quiet, ${fmt(p99Ratio, 2)}× (target ≤ ${E1_P99_TARGET}×) ${verdict(p99Ratio <= E1_P99_TARGET)}; ` +
        `failed ${fmt(hostile.failed)} / ${fmt(quiet.failed)} quiet`,
    );
    console.log(
      `  ${server}: list ${fmt(hostile.listMs / 1000, 2)} s / ${fmt(quiet.listMs / 1000, 2)} s quiet (median; ${fmt(hostile.listsNotDone)} not done), ${fmt(listRatio, 2)}× (target ≤ ${LIST_TARGET}×) ${verdict(listRatio <= LIST_TARGET)}`,
    );
    console.log(
      `  ${server}: peak RSS ${fmt(hostile.rss)} MB / ${fmt(quiet.rss)} MB quiet, ${rssDelta >= 0 ? '+' : ''}${fmt(rssDelta)} MB (target ≤ +${RSS_TARGET_MB} MB) ${verdict(rssDelta <= RSS_TARGET_MB)}`,
    );
    Object.assign(results, {
      [`${server}_e1_quiet_p50_ms`]: quiet.p50,
      [`${server}_e1_quiet_p99_ms`]: quiet.p99,
      [`${server}_e1_hostile_p50_ms`]: hostile.p50,
      [`${server}_e1_hostile_p99_ms`]: hostile.p99,
      [`${server}_e1_p99_ratio`]: p99Ratio,
      [`${server}_e1_quiet_failed`]: quiet.failed,
      [`${server}_e1_hostile_failed`]: hostile.failed,
      [`${server}_list_quiet_ms`]: quiet.listMs,
      [`${server}_list_hostile_ms`]: hostile.listMs,
      [`${server}_list_ratio`]: listRatio,
      [`${server}_lists_hostile_not_done`]: hostile.listsNotDone,
      [`${server}_rss_quiet_mb`]: quiet.rss,
      [`${server}_rss_hostile_mb`]: hostile.rss,
      [`${server}_rss_delta_mb`]: rssDelta,
    });
  }
  return results;
}
