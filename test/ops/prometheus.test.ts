// A real Prometheus (Debian's `prometheus`) scraping a team server as docs/operations.md says to: the scrape
// config and the alerting rules are read out of that file and run as written (only the targets and the
// interval are this test's), against two API nodes (`serve --metrics-port`: their metrics on a port of their
// own, not on the API's) and a worker (`--http-port`) that
// checks a list online against a loopback world of DNS and mail servers, one of which refuses it with a block
// list reply. After the list, the metrics the docs name are asked of Prometheus' HTTP API.
import { freePort } from '../helpers/ports.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema } from '../../shared/api/list.js';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import { getStatus, submit } from '../service/lists/helpers.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';
import { ROOT } from '../helpers/browserApp.js';

// js-yaml, a declared devDependency without types: required.
const yaml = createRequire(import.meta.url)('js-yaml') as {
  load(text: string): unknown;
  dump(value: unknown): string;
};

const PROMETHEUS = '/usr/bin/prometheus';
const DOC = join(ROOT, 'docs', 'operations.md');

/** The ```yaml blocks of docs/operations.md: the scrape config, then the rules. */
function docBlocks(): string[] {
  const text = readFileSync(DOC, 'utf8');
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]);
}

let team: TeamCluster;
let apis: TeamProcess[];
let apiMetricsPorts: number[];
let worker: TeamProcess;
let workerPort: number;
let farm: MailFarm;
let dns: TestDnsServer;
let prometheus: ChildProcess | undefined;
let promUrl: string;
let dir: string;

beforeAll(async () => {
  if (!existsSync(PROMETHEUS))
    throw new Error(`${PROMETHEUS} is missing: the operations test needs apt-get install prometheus`);
  farm = await startMailFarm({ mailbox: SERVERS.mailbox, blocklist: SERVERS.blocklist }, 21);
  const all = zones(farm);
  const keep = ['users.example.net', 'mx.users.example.net', 'bigmail.example.net', 'mx.bigmail.example.net'];
  dns = await startDnsServer(Object.fromEntries(keep.map((name) => [name, all[name]])));
  team = await startTeam();
  apiMetricsPorts = [await freePort(), await freePort()];
  apis = await Promise.all(apiMetricsPorts.map((port) => team.api(['--metrics-port', String(port)])));
  workerPort = await freePort();
  worker = await team.worker('127.0.0.2', [
    '--http-port',
    String(workerPort),
    ...mailFarmArgs(dns, farm),
    '--max-wait',
    '0',
    // The mail farm is on loopback, which a worker does not ask unless told to.
    '--allow-private-mx',
  ]);
  dir = mkdtempSync(join(tmpdir(), 'mailsieve-prometheus-'));
}, 120_000);

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await team?.close();
  await dns?.close();
  await farm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const response = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as {
    status: string;
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  expect(body.status).toBe('success');
  return body.data.result;
}

/** Asks until `expr` has a series with a value above `min` (Prometheus scrapes every second). */
async function eventually(expr: string, min = 0, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await query(expr);
    if (result.some((series) => Number(series.value[1]) > min)) return result;
    if (Date.now() > deadline)
      throw new Error(`no series of ${expr} above ${min}: ${JSON.stringify(result)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe('Prometheus scraping a team server (docs/operations.md)', () => {
  it('finds every metric the docs name after a list, and loads the docs’ alerting rules', async () => {
    const workerUrl = `http://127.0.0.1:${workerPort}`;
    // The worker serves health, readiness and metrics, and nothing else.
    expect((await fetch(`${workerUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${workerUrl}/readyz`);
    expect(ready.status, worker.output()).toBe(200);
    // …its source address's self-check among them (a listed address would make it not ready).
    expect(((await ready.json()) as { checks: { name: string }[] }).checks.map((c) => c.name).sort()).toEqual(
      ['postgres', 'queue', 'schema', 'source-address'],
    );
    expect((await fetch(`${workerUrl}/v5/key`)).status).toBe(404);
    for (const api of apis) expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    // An API node's metrics are on their own port (with its health and readiness), not on the API's.
    for (const [i, api] of apis.entries()) {
      expect((await fetch(`${api.url}/metrics`)).status).toBe(404);
      const own = `http://127.0.0.1:${apiMetricsPorts[i]}`;
      const metrics = await fetch(`${own}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('mailsieve_http_requests_total');
      expect((await fetch(`${own}/readyz`)).status).toBe(200);
      expect((await fetch(`${own}/v5/key`)).status).toBe(404);
    }

    // A list checked at SMTP level, one of its domains refusing this machine.
    const key = await team.key(['--checks', 'smtp']);
    const rows = ['email'];
    for (let i = 0; i < 40; i++)
      rows.push(i % 4 === 0 ? `someone${i}@bigmail.example.net` : `user${i}@users.example.net`);
    rows.push('alice@users.example.net');
    const sent = await submit(apis[0].url, key, `${rows.join('\n')}\n`, {
      query: { header: 'true', name: 'ops.csv' },
    });
    expect(sent.status).toBe(202);
    const id = sent.json<{ list_id: number }>().list_id;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const list = listResourceSchema.parse((await getStatus(apis[1].url, key, id)).json());
      if (list.status === 'Results') break;
      expect(['Pending', 'Processing'], worker.output()).toContain(list.status);
      if (Date.now() > deadline) throw new Error(`list still ${list.status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // A key past its quota, and one past its rate limit.
    const quotaKey = await team.key(['--quota', '1', '--quota-period', 'month']);
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++)
      statuses.push((await fetch(`${apis[0].url}/v5/ev?email=a@example.com&api_key=${quotaKey}`)).status);
    expect(statuses).toEqual([200, 403]);
    const slowKey = await team.key(['--rate-limit', '1']);
    const burst = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${apis[1].url}/v5/ev?email=a@example.com&api_key=${slowKey}`).then((r) => r.status),
      ),
    );
    expect(burst).toContain(429);

    // The worker said, in its log, that the blocking host refused it; no node's log holds a key.
    const logged = Date.now() + 5_000;
    while (!worker.output().includes('"host refusing"') && Date.now() < logged)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const refusing = worker
      .output()
      .split('\n')
      .filter((line) => line.includes('"host refusing"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(refusing[0]).toMatchObject({ level: 'warn', host: 'mx.bigmail.example.net', kind: 'block' });
    for (const node of [...apis, worker])
      for (const secret of [key, quotaKey, slowKey]) expect(node.output()).not.toContain(secret);

    // Prometheus with the docs' config: their targets replaced by this test's nodes.
    const [scrapeBlock, rulesBlock] = docBlocks();
    const config = yaml.load(scrapeBlock) as {
      global: Record<string, unknown>;
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      rule_files: string[];
    };
    config.global.scrape_interval = '1s';
    config.global.evaluation_interval = '1s';
    for (const job of config.scrape_configs) {
      // The docs' targets are each node's metrics port: this test's are on loopback.
      job.static_configs = [
        {
          targets:
            job.job_name === 'mailsieve-api'
              ? apiMetricsPorts.map((port) => `127.0.0.1:${port}`)
              : [new URL(workerUrl).host],
        },
      ];
    }
    writeFileSync(join(dir, 'mailsieve-rules.yml'), rulesBlock);
    config.rule_files = config.rule_files.map((file) => join(dir, file));
    writeFileSync(join(dir, 'prometheus.yml'), yaml.dump(config));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    let printed = '';
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stderr?.on('data', (chunk: Buffer) => (printed = (printed + chunk.toString()).slice(-8000)));
    const started = Date.now();
    for (;;) {
      const isReady = await fetch(`${promUrl}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (isReady) break;
      if (prometheus.exitCode !== null || Date.now() - started > 30_000)
        throw new Error(`Prometheus did not start: ${printed}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const up = await eventually('sum(up{job=~"mailsieve-.*"})', 2);
    expect(Number(up[0].value[1])).toBe(3);
    const routes = await eventually('mailsieve_http_requests_total{job="mailsieve-api"}');
    const byRoute = new Set(routes.map((series) => `${series.metric.route} ${series.metric.status}`));
    expect(byRoute).toContain('/v5/list 202');
    expect(byRoute).toContain('/v5/list/:list_id 200');
    expect(byRoute).toContain('/v5/ev 403');
    // Never a query in a route label.
    for (const series of routes) expect(series.metric.route).not.toContain('?');
    await eventually('mailsieve_http_request_duration_seconds_count{route="/v5/ev"}');
    await eventually('mailsieve_lists{status="Results"}');
    const queue = await query('mailsieve_queue_jobs');
    expect(queue.length).toBe(3 * 3 * 3); // kind × state, from each of the three nodes
    await eventually('mailsieve_rows_checked_total{job="mailsieve-worker",level="smtp"}', 40);
    await eventually('mailsieve_unknown_rows_total{job="mailsieve-worker",cause="blocked"}');
    await eventually('mailsieve_smtp_conversations_total{source_address="127.0.0.2",outcome="ok"}');
    await eventually('mailsieve_smtp_refusals_total{source_address="127.0.0.2",kind="block"}');
    await eventually('sum(mailsieve_quota_refusals_total)');
    await eventually('sum(mailsieve_rate_limited_total)');

    // The docs' alerting rules are loaded and evaluate.
    const rules = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string; health: string }[] }[] };
    };
    const loaded = rules.data.groups.flatMap((group) => group.rules);
    expect(loaded.map((rule) => rule.name).sort()).toEqual([
      'MailsieveNoWorker',
      'MailsieveSourceAddressRefused',
      'MailsieveUnknownRowsHigh',
    ]);
    // …and evaluate without error.
    const deadlineRules = Date.now() + 20_000;
    for (;;) {
      const answer = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as typeof rules;
      const health = answer.data.groups.flatMap((group) => group.rules).map((rule) => rule.health);
      if (health.every((h) => h === 'ok')) break;
      if (Date.now() > deadlineRules) throw new Error(`rules: ${JSON.stringify(answer.data.groups)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }, 180_000);
});
