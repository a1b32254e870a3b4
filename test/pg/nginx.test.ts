// docs/team-server.md's nginx block, run as written (issue 27, point 10): the test reads it out of the Markdown,
// puts this machine's ports and a temporary folder in place of the doc's hosts and paths, and runs Debian's
// nginx with it (a non-daemon in a temporary prefix) in front of two API nodes serving TLS, as the doc's
// `serve` command does. Through it E1 takes the key as a query parameter and E7–E10 as the spec's `api_key`
// header (nginx drops header names with underscores unless told not to), and nginx's access log has no key.
// It does not pass a node's metrics or readiness to the public (issue 36, point 10), even from nodes that
// serve /metrics beside the API (`--metrics`).
import { freePort } from '../helpers/ports.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'selfsigned';
import { Agent, fetch as undiciFetch, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';

const NGINX = '/usr/sbin/nginx';
const DOC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'team-server.md');
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

/** The first ```nginx block of the doc. */
function docBlock(): string {
  const found = /```nginx\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'));
  if (!found?.[1]) throw new Error('docs/team-server.md has no nginx block');
  return found[1];
}

/** Replaces `from` (which the doc must hold) with `to`. */
function put(text: string, from: string | RegExp, to: string): string {
  if (typeof from === 'string' ? !text.includes(from) : !from.test(text))
    throw new Error(`the doc's nginx block no longer holds ${String(from)}: update this test`);
  return text.replace(from, to);
}

let team: TeamCluster;
let apis: TeamProcess[];
let prefix: string;
let nginx: ChildProcess | undefined;
let base: string;
let nginxOutput = '';

beforeAll(async () => {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: apt-get install nginx-light`);
  team = await startTeam();
  apis = await Promise.all([
    team.api(['--tls-self-signed', '--metrics']),
    team.api(['--tls-self-signed', '--metrics']),
  ]);
  await team.worker('127.0.0.2');
  prefix = mkdtempSync(join(tmpdir(), 'mailsieve-nginx-'));
  const pems = await generate([{ name: 'commonName', value: 'verify.example.com' }], {
    keySize: 2048,
    algorithm: 'sha256',
  });
  writeFileSync(join(prefix, 'cert.pem'), pems.cert);
  writeFileSync(join(prefix, 'key.pem'), pems.private, { mode: 0o600 });
  const port = await freePort();
  const [api1, api2] = apis.map((api) => new URL(api.url).host);
  let block = docBlock();
  block = put(block, 'server api-1:8433;', `server ${api1};`);
  block = put(block, 'server api-2:8433;', `server ${api2};`);
  block = put(block, /listen 443 ssl;/, `listen 127.0.0.1:${port} ssl;`);
  block = put(block, '/etc/nginx/tls/verify.example.com.pem', join(prefix, 'cert.pem'));
  block = put(block, '/etc/nginx/tls/verify.example.com.key', join(prefix, 'key.pem'));
  block = put(block, '/var/log/nginx/mailsieve.access.log', join(prefix, 'access.log'));
  const temp = (name: string) => `${name}_temp_path ${join(prefix, name)};`;
  writeFileSync(
    join(prefix, 'nginx.conf'),
    [
      'daemon off;',
      'master_process off;',
      `pid ${join(prefix, 'nginx.pid')};`,
      `error_log ${join(prefix, 'error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
      block,
      '}',
      '',
    ].join('\n'),
  );
  nginx = spawn(NGINX, ['-p', prefix, '-e', join(prefix, 'error.log'), '-c', join(prefix, 'nginx.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  nginx.stdout?.on('data', (chunk: Buffer) => (nginxOutput += chunk.toString()));
  nginx.stderr?.on('data', (chunk: Buffer) => (nginxOutput += chunk.toString()));
  base = `https://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await undiciFetch(`${base}/health`, { dispatcher: insecure });
      break;
    } catch {
      if (nginx.exitCode !== null || Date.now() > deadline)
        throw new Error(`nginx did not start: ${nginxOutput}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}, 90_000);

afterAll(async () => {
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((resolve) => nginx?.once('exit', resolve));
    nginx.kill('SIGTERM');
    await exited;
  }
  await team?.close();
  if (prefix) rmSync(prefix, { recursive: true, force: true });
});

const get = async (path: string, headers: Record<string, string> = {}) => {
  const response = await undiciFetch(`${base}${path}`, { headers, dispatcher: insecure });
  return { status: response.status, text: await response.text() };
};

describe("docs/team-server.md's nginx block in front of two API nodes", () => {
  it('passes E1 with the key as a parameter and E7–E10 with the api_key header; logs no key', async () => {
    const key = await team.key();
    const e1 = await get(`/v5/ev?email=jane%40example.com&api_key=${encodeURIComponent(key)}`);
    expect(e1.status, e1.text).toBe(200);

    const form = new FormData();
    form.append('file', new Blob(['email\njane@example.com\nbad address\n']), 'clients.csv');
    const sent = await undiciFetch(`${base}/v5/list?header=true`, {
      method: 'POST',
      headers: { api_key: key },
      body: form,
      dispatcher: insecure,
    });
    const sentText = await sent.text();
    expect(sent.status, sentText).toBe(202);
    const id = (JSON.parse(sentText) as { list_id: number }).list_id;

    // E8 through the balancer, which sends each request to the next node.
    let status = '';
    const deadline = Date.now() + 60_000;
    while (status !== 'Results') {
      const e8 = await get(`/v5/list/${id}`, { api_key: key });
      expect(e8.status, e8.text).toBe(200);
      status = (JSON.parse(e8.text) as { status: string }).status;
      if (Date.now() > deadline) throw new Error(`list ${id} still ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const e9 = await undiciFetch(`${base}/v5/list/${id}/purchase`, {
      method: 'POST',
      headers: { api_key: key },
      dispatcher: insecure,
    });
    expect(e9.status, await e9.text()).toBe(200);
    for (let i = 0; i < 2; i++) {
      const e10 = await get(`/v5/list/${id}/results`, { api_key: key });
      expect(e10.status, e10.text).toBe(200);
      expect(e10.text).toContain('jane@example.com');
    }

    const log = readFileSync(join(prefix, 'access.log'), 'utf8');
    expect(log).toContain('GET /v5/ev HTTP/1.1');
    expect(log).toContain(`GET /v5/list/${id}/results HTTP/1.1`);
    expect(log).not.toContain(key);
    expect(log).not.toContain('api_key');
  });

  it('does not pass /metrics or /readyz, which the nodes answer; passes /healthz', async () => {
    // The nodes themselves answer both (an orchestrator, or Prometheus on --metrics, asks them directly).
    for (const api of apis) {
      const direct = await undiciFetch(`${api.url}/metrics`, { dispatcher: insecure });
      expect(direct.status).toBe(200);
      expect(await direct.text()).toContain('mailsieve_http_requests_total');
      expect((await undiciFetch(`${api.url}/readyz`, { dispatcher: insecure })).status).toBe(200);
    }
    for (const path of ['/metrics', '/readyz', '/metrics?format=text', '//metrics']) {
      const through = await get(path);
      expect(through.status, path).toBe(404);
      expect(through.text, path).not.toContain('mailsieve_');
      expect(through.text, path).not.toContain('"checks"');
    }
    const health = await get('/healthz');
    expect(health.status).toBe(200);
    expect(health.text).toBe('{"status":"ok"}');
  });
});
