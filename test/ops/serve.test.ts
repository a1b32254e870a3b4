// `mailsieve serve` as an operator runs it (docs/operations.md): its log (one line a request, a list's steps,
// in JSON or text) never holds a key, whether the key came in the query (E1–E6) or the header (E7–E10), was
// right or wrong; its health and readiness answer with no key; its API document is OpenAPI 3.1 that a real
// validator accepts, made from the zod contracts.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOfflineKey, spawnCli, startCli } from '../helpers/cli.js';
import { freePort } from '../helpers/ports.js';
import { tempDir } from '../helpers/service.js';
import { getStatus, submit } from '../service/lists/helpers.js';
import { listResourceSchema } from '../../shared/api/list.js';
import { textLine } from '../../service/ops/log.js';

interface Served {
  url: string;
  key: string;
  /** Every line printed so far. */
  lines(): string[];
  stop(): Promise<void>;
}

const dirs: { remove(): void }[] = [];

/** A data dir of its own with a `--rate-limit 0` key checking offline. */
async function storeWithKey(): Promise<{ path: string; key: string }> {
  const dir = tempDir('mailsieve-ops-');
  dirs.push(dir);
  return { path: dir.path, key: await createOfflineKey(dir.path) };
}

async function serve(args: string[]): Promise<Served> {
  const dir = await storeWithKey();
  const started = await startCli(
    ['serve', '--port', '0', '--data-dir', dir.path, ...args],
    /listening on (http:\/\/\S+)/,
  );
  let printed = '';
  started.child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  started.child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  return {
    url: started.match[1],
    key: dir.key,
    lines: () => printed.split('\n').filter((line) => line !== ''),
    stop: async () => void (await started.stop()),
  };
}

afterAll(() => {
  for (const dir of dirs) dir.remove();
});

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the log of serve (--log-format json)', () => {
  let node: Served;
  beforeAll(async () => {
    node = await serve(['--log-format', 'json']);
  });
  afterAll(() => node?.stop());

  it('logs one line a request and a list’s steps, with the key id and never a key', async () => {
    const wrong = 'wrong-key-0123456789abcdef';
    const asked = [
      `/v5/ev?email=jane%40example.com&api_key=${node.key}`,
      `/v5/ev?email=jane%40example.com&api_key=${wrong}`,
      // Not UTF-8 percent-encoding: answered 400 before the route runs, and logged under the route.
      `/v5/ev?email=jane%E0%A4&api_key=${node.key}`,
      `/v5/key?api_key=${node.key}`,
      `/no/such/path?api_key=${node.key}`,
    ];
    for (const path of asked) await fetch(`${node.url}${path}`);
    await fetch(`${node.url}/v5/key`, { headers: { api_key: node.key } });
    await fetch(`${node.url}/v5/key`, { headers: { api_key: wrong } });
    // A list (header key), done; and one that cannot be read (ragged rows): failed.
    const sent = await submit(node.url, node.key, 'email\njane@example.com\njohn@example.org\n', {
      query: { header: 'true', name: 'ops.csv' },
    });
    expect(sent.status).toBe(202);
    const id = sent.json<{ list_id: number }>().list_id;
    const bad = await submit(node.url, node.key, 'email,n\njane@example.com,1\njohn@example.com\n', {
      query: { header: 'true' },
    });
    const badId = bad.json<{ list_id: number }>().list_id;
    // Refused by the upload's own hook, before its handler runs: logged under its route all the same.
    const refused = await submit(node.url, wrong, 'email\njane@example.com\n', { query: { header: 'true' } });
    expect(refused.status).toBe(401);
    await until(async () => {
      const list = listResourceSchema.parse((await getStatus(node.url, node.key, id)).json());
      const other = listResourceSchema.parse((await getStatus(node.url, node.key, badId)).json());
      return list.status === 'Results' && other.status === 'Invalid';
    }, 'the lists');
    await until(() => node.lines().some((line) => line.includes('"list failed"')), 'the failed list’s line');

    const lines = node.lines();
    for (const line of lines) {
      expect(line).not.toContain(node.key);
      expect(line).not.toContain(wrong);
      expect(line).not.toContain('api_key=');
    }
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requests = records.filter((record) => record.msg === 'request');
    // One line a request: 7 above, the 3 submissions, the status polls.
    expect(requests.length).toBeGreaterThanOrEqual(10);
    const e1 = requests.filter((record) => record.route === '/v5/ev');
    expect(e1.map((record) => record.status)).toEqual([200, 401, 400]);
    expect(e1[0]).toMatchObject({ level: 'info', keyId: 1 });
    expect(typeof e1[0].reqId).toBe('string');
    expect(typeof e1[0].ms).toBe('number');
    expect(typeof e1[0].time).toBe('string');
    expect(e1[1].keyId).toBeUndefined();
    expect(requests.some((record) => record.route === 'unmatched' && record.status === 404)).toBe(true);
    expect(requests.filter((record) => record.route === '/v5/list').map((record) => record.status)).toEqual([
      202, 202, 401,
    ]);
    const steps = records.filter((record) => record.listId === id).map((record) => record.event);
    expect(steps).toEqual(['accepted', 'planned', 'part done', 'finished']);
    for (const record of records.filter((r) => r.listId === id)) expect(record.keyId).toBe(1);
    const failed = records.find((record) => record.listId === badId && record.event === 'failed');
    expect(failed).toMatchObject({ level: 'warn', status: 'Invalid', keyId: 1 });
  });

  it('answers /healthz and /readyz with no key, and counts nothing at /metrics without --metrics', async () => {
    const health = await fetch(`${node.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${node.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: [{ name: 'store', ok: true }] });
    expect((await fetch(`${node.url}/metrics`)).status).toBe(404);
  });

  it('serves an OpenAPI 3.1 document of E1–E10 and /v5/key that a validator accepts', async () => {
    const response = await fetch(`${node.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { parameters?: { name: string; required: boolean }[] }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(document.openapi).toBe('3.1.0');
    await SwaggerParser.validate(structuredClone(document) as never);
    expect(Object.keys(document.paths).sort()).toEqual([
      '/ae',
      '/v5/ei/bulk',
      '/v5/eppend',
      '/v5/eppend/bulk',
      '/v5/ev',
      '/v5/key',
      '/v5/list',
      '/v5/list/{list_id}',
      '/v5/list/{list_id}/purchase',
      '/v5/list/{list_id}/results',
      '/v5/td',
    ]);
    // Made from the contracts: E7's query parameters and E8's members are those the zod schemas name.
    const e7 = document.paths['/v5/list'].post.parameters!.map((p) => p.name);
    expect(e7).toEqual(
      expect.arrayContaining(['email_column', 'header', 'delimiter', 'callback_url', 'services']),
    );
    const e1 = document.paths['/v5/ev'].get.parameters!;
    expect(e1.find((p) => p.name === 'email')?.required).toBe(true);
    expect(Object.keys(document.components.schemas.ListResource.properties ?? {})).toEqual(
      expect.arrayContaining(['list_id', 'status', 'records', 'services', 'online']),
    );
  });
});

describe('the log of serve (--log-level warn)', () => {
  it('logs no request and no list step, but a list that failed', async () => {
    const { path, key } = await storeWithKey();
    const url = `http://127.0.0.1:${await freePort()}`;
    const served = spawnCli([
      'serve',
      '--port',
      new URL(url).port,
      '--data-dir',
      path,
      '--log-format',
      'json',
      '--log-level',
      'warn',
    ]);
    let badId = 0;
    try {
      await until(
        () =>
          fetch(`${url}/healthz`).then(
            (response) => response.ok,
            () => false,
          ),
        'the node to answer',
      );
      expect((await fetch(`${url}/v5/ev?email=jane%40example.com&api_key=${key}`)).status).toBe(200);
      expect((await fetch(`${url}/v5/ev?email=jane%E0%A4&api_key=${key}`)).status).toBe(400);
      expect((await fetch(`${url}/no/such/path`)).status).toBe(404);
      const bad = await submit(url, key, 'email,n\njane@example.com,1\njohn@example.com\n', {
        query: { header: 'true' },
      });
      badId = bad.json<{ list_id: number }>().list_id;
      await until(
        async () => listResourceSchema.parse((await getStatus(url, key, badId)).json()).status === 'Invalid',
        'the list to fail',
      );
    } finally {
      served.child.kill('SIGTERM');
    }
    const { stdout } = await served.done;
    const records = stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toEqual([expect.objectContaining({ level: 'warn', event: 'failed', listId: badId })]);
  });
});

describe('the log of serve (--log-format text)', () => {
  it('prints a line of text a request, without the key', async () => {
    const node = await serve(['--log-format', 'text']);
    try {
      await fetch(`${node.url}/v5/ev?email=jane%40example.com&api_key=${node.key}`);
      await until(() => node.lines().some((line) => line.includes(' request ')), 'the request line');
      const line = node.lines().find((l) => l.includes(' request '))!;
      expect(line).toMatch(
        /^\d{4}-\d\d-\d\dT\S+Z INFO {2}request reqId=\S+ route=\/v5\/ev status=200 ms=[\d.]+ keyId=1$/,
      );
      for (const printed of node.lines()) expect(printed).not.toContain(node.key);
    } finally {
      await node.stop();
    }
  });

  it('formats a record as the JSON log holds it', () => {
    expect(
      textLine({
        level: 'warn',
        time: '2026-01-01T00:00:00.000Z',
        msg: 'list failed',
        listId: 3,
        reason: 'no email column',
      }),
    ).toBe('2026-01-01T00:00:00.000Z WARN  list failed listId=3 reason="no email column"\n');
  });
});
