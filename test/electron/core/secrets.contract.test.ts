// A stored API key never comes back: not from any channel of the contract (called here over the web host, as
// browser mode's renderer calls them), not in an event, not in an error message; no output schema has a
// member that could carry one; and the preload exposes nothing but the contract's operations.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANNELS, CHANNEL_NAMES, EVENTS } from '../../../shared/desktop/contract.js';
import { METHOD_OF_CHANNEL } from '../../../shared/desktop/methods.js';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { REQUEST_HEADER, SESSION_COOKIE, startWebHost, type WebHost } from '../../../electron/web/host.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** Member names of every object inside a zod schema, recursively. */
function memberNames(schema: z.ZodType, seen = new Set<unknown>()): string[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  const children: unknown[] = [];
  const names: string[] = [];
  if (def.type === 'object') {
    for (const [name, child] of Object.entries(def.shape as Record<string, unknown>)) {
      names.push(name);
      children.push(child);
    }
  }
  for (const field of ['element', 'innerType', 'in', 'out', 'valueType', 'left', 'right'])
    if (def[field]) children.push(def[field]);
  if (Array.isArray(def.options)) children.push(...(def.options as unknown[]));
  return [...names, ...children.flatMap((child) => memberNames(child as z.ZodType, seen))];
}

describe('stored keys stay in the core', () => {
  let service: TestService;
  let key: string;
  let home: ReturnType<typeof tempDir>;
  let core: DesktopCore;
  let host: WebHost;
  let cookie: string;
  const events: string[] = [];

  beforeAll(async () => {
    service = await startTestService();
    key = service.key({ services: ['validation', 'corrections', 'intelligence'] });
    home = tempDir();
    core = createDesktopCore({
      home: home.path,
      secrets: new FileSecretStore(home.path),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
    });
    core.on((event, payload) => events.push(`${event} ${JSON.stringify(payload)}`));
    host = await startWebHost({ core, rendererDir: join(home.path, 'no-renderer') });
    const launch = await fetch(host.newLaunchUrl(), { redirect: 'manual' });
    cookie = (launch.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie.startsWith(`${SESSION_COOKIE}=`)).toBe(true);
  });
  afterAll(async () => {
    await host?.close();
    await core?.close();
    await service?.close();
    home?.remove();
  });

  const call = async (channel: string, input: unknown): Promise<string> => {
    const response = await fetch(`${host.origin}/api/call/${channel}`, {
      method: 'POST',
      headers: { cookie, [REQUEST_HEADER]: '1', 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    return response.text();
  };

  it('no output schema of a channel or an event has a member for a key', () => {
    const names = [...Object.values(CHANNELS).map((c) => c.output), ...Object.values(EVENTS)].flatMap(
      (schema) => memberNames(schema),
    );
    expect(names).toContain('keyMask');
    expect(
      names.filter((name) => /key|secret|token|password|credential/i.test(name) && name !== 'keyMask'),
    ).toEqual([]);
  });

  it('no channel, event or error message returns the stored key', async () => {
    const replies: string[] = [];
    // Set the provider key (tested by a call first), then use every channel with it stored.
    const set = await call('connection:set', { kind: 'provider', baseUrl: service.url, apiKey: key });
    expect(JSON.parse(set)).toMatchObject({
      ok: true,
      value: { kind: 'provider', provider: { keyMask: `••••${key.slice(-4)}` } },
    });
    replies.push(set);
    const list = join(home.path, 'list.csv');
    writeFileSync(list, 'email\njane@example.com\nbad\n');
    const staged = JSON.parse(await call('files:add-path', { path: list })) as { value: { fileId: string } };
    const fileId = staged.value.fileId;
    const mapping = { delimiter: ',', header: true, roles: ['email'] };
    const started = JSON.parse(
      await call('jobs:start', { fileId, mapping, options: { reportOnly: false, split: false } }),
    ) as {
      value: { jobIds: number[] };
    };
    const jobId = started.value.jobIds[0];
    // The provider is polled every 5 s (the spec's rule), so wait for the job here rather than in a fixed time.
    let detail = '';
    for (let i = 0; i < 200; i++) {
      detail = await call('jobs:get', { jobId });
      if (/"status":"(completed|failed)"/.test(detail)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(detail).toContain('"status":"completed"');
    const inputs: Record<string, unknown> = {
      'app:get-info': {},
      'connection:get': {},
      'connection:test': { kind: 'provider', baseUrl: service.url },
      'connection:set': { kind: 'provider', baseUrl: service.url },
      'files:add-path': { path: list },
      'files:list-recent': {},
      'files:inspect': { fileId },
      'files:precheck': { fileId, mapping, split: false },
      'files:cancel': { fileId },
      'jobs:start': { fileId, mapping, options: { reportOnly: true, split: false } },
      'jobs:list': {},
      'jobs:activity': {},
      'jobs:get': { jobId },
      'jobs:preview': { jobId, status: 'invalid' },
      'jobs:export': { jobId, kind: 'all' },
      'jobs:counts': { jobId },
      'jobs:save-report': { jobId, report: 'match-report' },
      'verify:address': { email: 'john@gmial.com' },
      'people:lookup': { by: 'email', email: 'john@example.com' },
      'people:import': { kind: 'people', path: list },
      'people:import-cancel': {},
      'jobs:cancel': { jobId },
      'connection:get-services': {},
      'connection:get-quota': {},
      'connection:set-services': { services: ['email_validation', 'email_intelligence'] },
      'checks:get': {},
      'checks:set': { choice: 'offline' },
      'keys:clear': {},
      'outcomes:import': { jobId, bounces: { path: list } },
      'outcomes:get': { jobId },
      'jobs:changes': { jobId },
      'jobs:delete': { jobId },
    };
    // A job that awaits no purchase cannot be bought: the refusal is checked for the key like the rest.
    // Nor can a completed job run again.
    const refusals = {
      'jobs:purchase': { jobId, fields: ['age'] },
      'jobs:rerun': { jobId },
      'jobs:finish-now': { jobId: 999_999 },
      'jobs:recheck': { jobId: 999_999 },
      'jobs:recheck-cancel': { jobId: 999_999 },
      'checks:preflight': {},
      // No earlier run of the list: nothing changed to export.
      'jobs:export-changes': { jobId },
    };
    expect([...Object.keys(inputs), ...Object.keys(refusals)].sort()).toEqual([...CHANNEL_NAMES].sort());
    const purchase = await call('jobs:purchase', refusals['jobs:purchase']);
    expect(JSON.parse(purchase)).toMatchObject({ ok: false, error: { code: 'not-awaiting-purchase' } });
    const rerun = await call('jobs:rerun', refusals['jobs:rerun']);
    expect(JSON.parse(rerun)).toMatchObject({ ok: false, error: { code: 'invalid-input' } });
    // No such job to finish; and the network check is read-only (this machine may have no resolver).
    const finishNow = await call('jobs:finish-now', refusals['jobs:finish-now']);
    expect(JSON.parse(finishNow)).toMatchObject({ ok: false, error: { code: 'not-found' } });
    const preflight = await call('checks:preflight', refusals['checks:preflight']);
    const exportChanges = await call('jobs:export-changes', refusals['jobs:export-changes']);
    expect(JSON.parse(exportChanges)).toMatchObject({ ok: false, error: { code: 'invalid-input' } });
    expect(rerun).not.toContain(key);
    for (const [channel, input] of Object.entries(inputs)) replies.push(await call(channel, input));
    // A wrong key is refused without being echoed either.
    const wrong = 'wrong-key-do-not-echo-12345';
    const refused = await call('connection:test', { kind: 'provider', baseUrl: service.url, apiKey: wrong });
    expect(JSON.parse(refused)).toMatchObject({ ok: false, error: { code: 'connection-failed' } });
    expect(refused).not.toContain(wrong);

    const everything = [...replies, purchase, rerun, finishNow, preflight, exportChanges, ...events].join(
      '\n',
    );
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(encodeURIComponent(key));
    expect(replies.filter((reply) => !(JSON.parse(reply) as { ok: boolean }).ok)).toEqual([]);
    // keys:clear removed it from disk.
    expect(existsSync(join(home.path, 'secrets.json'))).toBe(false);
  });

  it('the preload exposes one function per operation, the shell operations and on(), nothing else', () => {
    let exposed: Record<string, unknown> = {};
    const electron = {
      contextBridge: { exposeInMainWorld: (_name: string, api: Record<string, unknown>) => (exposed = api) },
      ipcRenderer: { invoke: () => Promise.resolve(), on: () => undefined },
      webUtils: { getPathForFile: () => '' },
    };
    const source = readFileSync(join(ROOT, 'dist', 'electron', 'main', 'preload.cjs'), 'utf8');
    runInNewContext(source, {
      require: (name: string) => (name === 'electron' ? electron : undefined),
      module: {},
      exports: {},
    });
    expect(Object.keys(exposed).sort()).toEqual(
      [
        ...Object.values(METHOD_OF_CHANNEL),
        'addFile',
        'openListDialog',
        'saveExport',
        'showInFolder',
        'savePagePdf',
        'pickReferenceFile',
        'pathForFile',
        'on',
      ].sort(),
    );
    for (const value of Object.values(exposed)) expect(typeof value).toBe('function');
  });
});
