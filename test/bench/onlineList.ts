// `npm run bench -- online-list` (issue 11): a 100,000-row list over 10,000 domains, in list order (a domain's
// rows far apart, as in a real export), through the built `mailsieve clean --checks smtp` on its embedded
// service, against the online bench's loopback world (onlineServers.ts, in a worker thread: a DNS server and
// four mail servers, each with smtp-server's 100 ms greeting delay). Counted at the servers: DNS questions
// and catch-all probes per domain (targets ≤ 1). Compared with the lower bound that the conversation limits
// allow: every domain needs at least one conversation, each conversation takes at least the greeting delay
// plus its round trips (connect, EHLO, MAIL FROM, the RCPTs pipelined, the catch-all RCPT after them; the
// round-trip time measured on loopback by this run, before the list, under the same machine load), and at
// most `smtpMaxSessions` run at once in all and `smtpConcurrency` with one mail host; the ratio
// bound / wall time has a target of ≥ 50%. Loopback only, bounded by the row count.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/service.js';
import type { BenchCounts } from './onlineServers.js';
import { fmt } from './util.js';

export interface OnlineListBenchOptions {
  readonly rows: number;
  readonly domains: number;
}

/** The verifier's defaults the bound is computed from (service/engine/online/verifier.ts). */
const GREETING_DELAY_S = 0.1;
const MAX_SESSIONS = 50;
const PER_HOST = 2;
const RCPTS_PER_SESSION = 100;
/** The least round trips of a conversation: connect, EHLO, MAIL FROM, the RCPTs (pipelined), the catch-all RCPT. */
const ROUND_TRIPS = 5;

/**
 * The loopback round-trip time to a bench mail server now (the median of a few NOOPs on one conversation,
 * after its greeting), in seconds: the machine's load shows in it as it does in the list's conversations.
 */
async function measureRoundTrip(ip: string, port: number): Promise<number> {
  const socket = net.connect({ host: ip, port });
  socket.setNoDelay(true);
  let buffer = '';
  const waiters: ((line: string) => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let at: number;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (/^\d{3} /.test(line)) waiters.shift()?.(line);
    }
  });
  const reply = () => new Promise<string>((resolve) => waiters.push(resolve));
  try {
    await reply(); // the greeting, after its delay
    socket.write('EHLO bench.mailsieve.test\r\n');
    await reply();
    const times: number[] = [];
    for (let i = 0; i < 9; i++) {
      const started = process.hrtime.bigint();
      socket.write('NOOP\r\n');
      await reply();
      times.push(Number(process.hrtime.bigint() - started) / 1e9);
    }
    socket.write('QUIT\r\n');
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
  } finally {
    socket.destroy();
  }
}

/** The CLI of this checkout: the bench runs from dist/test/bench/. */
const CLI = fileURLToPath(new URL('../../../bin/mailsieve.js', import.meta.url));

function ask<T>(worker: Worker, message: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const listen = (reply: Record<string, unknown>) => {
      if (key in reply) {
        worker.off('message', listen);
        resolve(reply[key] as T);
      }
    };
    worker.on('message', listen);
    if (message) worker.postMessage(message);
  });
}

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export async function benchOnlineList(options: OnlineListBenchOptions): Promise<Record<string, number>> {
  const perDomain = Math.ceil(options.rows / options.domains);
  const worker = new Worker(new URL('./onlineServers.js', import.meta.url), {
    workerData: { domains: options.domains, perDomain },
  });
  const ready = await ask<{ dns: string; port: number; plainIp: string }>(worker, '', 'ready');
  const roundTrip = await measureRoundTrip(ready.plainIp, ready.port);
  const dir = tempDir('mailsieve-bench-online-list-');
  try {
    // List order: a stride walk over the domains (7919 is prime to the domain count), so a domain's rows
    // come `domains` rows apart.
    const lines = ['email'];
    for (let k = 0; k < options.rows; k++) {
      const domain = (k * 7919) % options.domains;
      const j = Math.floor(k / options.domains) % perDomain;
      lines.push(`p${j}@d${domain}.bench.example.net`);
    }
    const input = join(dir.path, 'bench.csv');
    writeFileSync(input, `${lines.join('\n')}\n`);
    const started = Date.now();
    const run = await runCli(
      [
        'clean',
        input,
        '--checks',
        'smtp',
        '--dns-servers',
        ready.dns,
        '--smtp-port',
        String(ready.port),
        '--helo-name',
        'bench.mailsieve.test',
        '--mail-from',
        'bench@mailsieve.test',
        '--json',
      ],
      { MAILSIEVE_HOME: join(dir.path, 'home') },
    );
    const seconds = (Date.now() - started) / 1000;
    if (run.code !== 0) throw new Error(`clean exited ${run.code}: ${run.stderr.slice(-2000)}`);
    const out = JSON.parse(run.stdout) as {
      results: string;
      list: { services: { email_validation?: { reporting?: { status_codes?: Record<string, number> } } } };
      checks: { level: string };
    };
    const codes = out.list.services.email_validation?.reporting?.status_codes ?? {};
    const counts = await ask<BenchCounts>(worker, 'counts', 'counts');
    // The bound: each domain needs ceil((its rows + one probe) / recipients per conversation) conversations,
    // each at least one greeting delay and its round trips long; at most MAX_SESSIONS at once in all, PER_HOST
    // per mail host (every domain has its own MX host name here).
    const conversationsPerDomain = Math.ceil((perDomain + 1) / RCPTS_PER_SESSION);
    const conversation = GREETING_DELAY_S + ROUND_TRIPS * roundTrip;
    const globalBound = (options.domains * conversationsPerDomain * conversation) / MAX_SESSIONS;
    const hostBound = Math.ceil(conversationsPerDomain / PER_HOST) * conversation;
    const bound = Math.max(globalBound, hostBound);
    const ratio = bound / seconds;
    const byCode = Object.entries(codes)
      .sort((a, b) => Number(a[0]) - Number(b[0]))
      .map(([c, n]) => `${c}: ${fmt(n)}`)
      .join(', ');
    const resultRows = readFileSync(out.results, 'utf8').split('\n').length - 2;
    console.log(
      `\nOnline list (mailsieve clean --checks ${out.checks.level}) — ${fmt(options.rows)} rows over ${fmt(options.domains)} domains in list order, loopback servers (100 ms greeting delay)`,
    );
    console.log(
      `  time        ${fmt(seconds, 1)} s   ${fmt(options.rows / seconds)} rows/s (whole command: start, upload, checks, download)`,
    );
    console.log(`  codes       ${byCode}  (${fmt(resultRows)} rows in the results file)`);
    console.log(
      `  DNS         ${fmt(counts.dnsQueries)} questions; ${fmt(counts.dnsQueries / options.domains, 2)} per domain, most for one: ${counts.maxQueriesPerDomain} (target ≤ 1)  ${counts.maxQueriesPerDomain <= 1 ? 'MET' : 'MISSED'}`,
    );
    console.log(
      `  catch-all   ${fmt(counts.probes)} probes; ${fmt(counts.probes / options.domains, 2)} per domain, most for one: ${counts.maxProbesPerDomain} (target ≤ 1)  ${counts.maxProbesPerDomain <= 1 ? 'MET' : 'MISSED'}`,
    );
    console.log(`  SMTP        ${fmt(counts.connections)} connections, ${fmt(counts.rcpts)} RCPT`);
    console.log(
      `  bound       ${fmt(bound, 1)} s (${fmt(options.domains * conversationsPerDomain)} conversations × (${GREETING_DELAY_S * 1000} ms greeting + ${ROUND_TRIPS} round trips of ${fmt(roundTrip * 1000, 2)} ms) ÷ ${MAX_SESSIONS} at once; ${PER_HOST} per host)`,
    );
    console.log(
      `  ratio       ${fmt(ratio * 100, 1)}% of the bound (target ≥ 50%)  ${ratio >= 0.5 ? 'MET' : 'MISSED'}`,
    );
    return {
      rows: options.rows,
      seconds,
      rows_per_s: options.rows / seconds,
      dns_queries: counts.dnsQueries,
      dns_queries_per_domain: counts.dnsQueries / options.domains,
      max_dns_queries_per_domain: counts.maxQueriesPerDomain,
      catch_all_probes: counts.probes,
      probes_per_domain: counts.probes / options.domains,
      max_probes_per_domain: counts.maxProbesPerDomain,
      smtp_connections: counts.connections,
      rcpts: counts.rcpts,
      round_trip_ms: roundTrip * 1000,
      bound_seconds: bound,
      ratio_to_bound: ratio,
    };
  } finally {
    dir.remove();
    await ask(worker, 'close', 'closed');
    await worker.terminate();
  }
}
