// E1 on loopback under a real HTTP load generator (autocannon), against a bare Fastify route measured in the
// same run. Target (issue 2): E1 with offline checks reaches at least 40% of the bare route's requests/s.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, spawnUntil, stop } from './util.js';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', '..', '..', 'bin', 'mailsieve.js');

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

interface LoadResult {
  rps: number;
  p99: number;
  p50: number;
  errors: number;
  non2xx: number;
}

async function load(url: string, paths: string[], seconds: number): Promise<LoadResult> {
  let i = 0;
  const result = await autocannon({
    url,
    connections: 32,
    pipelining: 1,
    duration: seconds,
    requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }],
  });
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    p50: result.latency.p50,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export async function benchE1(options: { seconds: number }): Promise<Record<string, number>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailsieve-bench-'));
  const bare = await spawnUntil(process.execPath, [join(here, 'bareServer.js')], /^listening (\d+)/);
  const key = execFileSync(
    process.execPath,
    [cli, 'keys', 'create', '--data-dir', dataDir, '--corrections', '--rate-limit', '0'],
    {
      encoding: 'utf8',
    },
  ).trim();
  const service = await spawnUntil(
    process.execPath,
    [cli, 'serve', '--port', '0', '--data-dir', dataDir],
    /listening on (http:\/\/\S+)/,
  );
  try {
    const bareUrl = `http://127.0.0.1:${bare.match[1]}`;
    const serviceUrl = service.match[1];
    const e1Paths = ADDRESSES.map((a) => `/v5/ev?email=${encodeURIComponent(a)}&api_key=${key}`);
    // Warm both up (JIT, connection pools) before measuring.
    await load(bareUrl, ['/bare'], 2);
    await load(serviceUrl, e1Paths, 2);
    const bareResult = await load(bareUrl, ['/bare'], options.seconds);
    const e1Result = await load(serviceUrl, e1Paths, options.seconds);
    if (e1Result.errors || e1Result.non2xx)
      throw new Error(`E1 answered ${e1Result.non2xx} non-2xx, ${e1Result.errors} errors`);
    const ratio = e1Result.rps / bareResult.rps;
    console.log('\nE1 GET /v5/ev (offline checks) vs a bare Fastify route, autocannon, 32 connections');
    console.log(
      `  bare route  ${fmt(bareResult.rps)} req/s   p50 ${bareResult.p50} ms   p99 ${bareResult.p99} ms`,
    );
    console.log(`  E1          ${fmt(e1Result.rps)} req/s   p50 ${e1Result.p50} ms   p99 ${e1Result.p99} ms`);
    console.log(
      `  ratio       ${fmt(ratio * 100, 1)}% of the bare route (target ≥ 40%)  ${ratio >= 0.4 ? 'MET' : 'MISSED'}`,
    );
    return {
      bare_rps: bareResult.rps,
      bare_p99_ms: bareResult.p99,
      e1_rps: e1Result.rps,
      e1_p99_ms: e1Result.p99,
      e1_ratio: ratio,
    };
  } finally {
    await stop(service.child);
    await stop(bare.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
