// Browser mode's web host: the token, the cookie, the Host and cross-site checks, server-sent events, uploads,
// downloads and the renderer's CSP.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { REQUEST_HEADER, startWebHost, type WebHost } from '../../../electron/web/host.js';
import { tempDir } from '../../helpers/service.js';

describe('the web host', () => {
  let home: ReturnType<typeof tempDir>;
  let core: DesktopCore;
  let host: WebHost;
  let cookie: string;

  beforeAll(async () => {
    home = tempDir();
    const renderer = join(home.path, 'renderer');
    mkdirSync(join(renderer, 'assets'), { recursive: true });
    writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>Mailsieve</title>');
    writeFileSync(join(renderer, 'assets', 'app.js'), 'export {};');
    writeFileSync(join(home.path, 'secret.txt'), 'not for the web');
    core = createDesktopCore({
      home: home.path,
      secrets: new FileSecretStore(home.path),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
    });
    host = await startWebHost({ core, rendererDir: renderer });
    const launch = await fetch(host.newLaunchUrl(), { redirect: 'manual' });
    expect(launch.status).toBe(303);
    expect(launch.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict; Path=\//);
    cookie = launch.headers.get('set-cookie')!.split(';')[0]!;
  });
  afterAll(async () => {
    await host.close();
    await core.close();
    home.remove();
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${host.origin}${path}`, {
      method: 'POST',
      headers: { cookie, [REQUEST_HEADER]: '1', 'content-type': 'application/json', ...headers },
      body,
    });

  it('serves the renderer with a strict CSP, and nothing outside it', async () => {
    const index = await fetch(`${host.origin}/`);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await (await fetch(`${host.origin}/assets/app.js`)).text()).toBe('export {};');
    const escape = await fetch(`${host.origin}/..%2Fsecret.txt`);
    expect(await escape.text()).not.toContain('not for the web');
  });

  it('refuses the API without the session, from another origin, without its header, or by another Host', async () => {
    expect((await fetch(`${host.origin}/api/call/app:get-info`, { method: 'POST', body: '{}' })).status).toBe(
      401,
    );
    expect((await fetch(`${host.origin}/launch?token=wrong`, { redirect: 'manual' })).status).toBe(403);
    expect((await post('/api/call/app:get-info', '{}', { [REQUEST_HEADER]: '' })).status).toBe(403);
    expect((await post('/api/call/app:get-info', '{}', { origin: 'http://evil.example' })).status).toBe(403);
    const port = new URL(host.origin).port;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/api/call/app:get-info',
          method: 'POST',
          headers: { host: `attacker.example:${port}`, cookie, [REQUEST_HEADER]: '1' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(421);
    const ok = (await (await post('/api/call/app:get-info', '{}')).json()) as {
      ok: boolean;
      value: { mode: string };
    };
    expect(ok).toMatchObject({ ok: true, value: { mode: 'browser', hasNativeDialogs: false } });
    expect(await (await post('/api/call/nope:nothing', '{}')).json()).toMatchObject({
      ok: false,
      error: { code: 'unknown-channel' },
    });
    expect(await (await post('/api/call/jobs:get', '{"jobId":"x"}')).json()).toMatchObject({
      ok: false,
      error: { code: 'invalid-input' },
    });
  });

  it('trades a launch token once, for a session secret that is not the token', async () => {
    const launchUrl = host.newLaunchUrl();
    const token = new URL(launchUrl).searchParams.get('token')!;
    const first = await fetch(launchUrl, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const session = first.headers.get('set-cookie')!.split(';')[0];
    expect(session).not.toContain(token);
    expect((await post('/api/call/app:get-info', '{}', { cookie: session })).status).toBe(200);
    // The token on its own is no session.
    expect(
      (await post('/api/call/app:get-info', '{}', { cookie: `mailsieve_session=${token}` })).status,
    ).toBe(401);
    const again = await fetch(launchUrl, { redirect: 'manual' });
    expect(again.status).toBe(403);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('This launch link was already used');
  });

  it('writes a launch file only the user can read, forwarding to a token it removes once used', async () => {
    const file = host.writeLaunchFile(join(home.path, 'launch'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home.path, 'launch')).mode & 0o777).toBe(0o700);
    const target = /url=(\S+?)"/.exec(readFileSync(file, 'utf8'))![1];
    expect((await fetch(target, { redirect: 'manual' })).status).toBe(303);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a launch token after it expired', async () => {
    const shortLived = await startWebHost({
      core,
      rendererDir: join(home.path, 'renderer'),
      launchTtlMs: 50,
    });
    try {
      const launchUrl = shortLived.newLaunchUrl();
      await new Promise((resolve) => setTimeout(resolve, 120));
      const late = await fetch(launchUrl, { redirect: 'manual' });
      expect(late.status).toBe(403);
      expect(late.headers.get('set-cookie')).toBeNull();
      expect(await late.text()).toContain('expired');
    } finally {
      await shortLived.close();
    }
  });

  it('takes an upload, streams events, and sends an export as a download', async () => {
    const controller = new AbortController();
    const stream = await fetch(`${host.origin}/api/events`, {
      headers: { cookie },
      signal: controller.signal,
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const reader = stream.body!.getReader();
    let text = '';
    const read = async (until: RegExp) => {
      while (!until.test(text)) {
        const { value } = (await reader.read()) as { value?: Uint8Array };
        text += new TextDecoder().decode(value);
      }
    };
    await read(/event: ready/);

    const upload = await fetch(`${host.origin}/api/files?name=${encodeURIComponent('my list.csv')}`, {
      method: 'POST',
      headers: { cookie, [REQUEST_HEADER]: '1', 'content-type': 'application/octet-stream' },
      body: 'email\nbad\n',
    });
    const staged = (await upload.json()) as {
      ok: true;
      value: { fileId: string; name: string; size: number };
    };
    expect(staged.value).toMatchObject({ name: 'my list.csv', size: 10 });
    const refusedName = (await (
      await post('/api/files?name=evil.exe', 'x', { 'content-type': 'application/octet-stream' })
    ).json()) as { ok: boolean };
    expect(refusedName.ok).toBe(false);
    const inspected = (await (
      await post('/api/call/files:inspect', JSON.stringify({ fileId: staged.value.fileId }))
    ).json()) as {
      value: { rowCount: number; columns: { suggestedRole: string }[] };
    };
    expect(inspected.value.rowCount).toBe(1);

    // A connection change is pushed to the event stream.
    await post('/api/call/connection:set', JSON.stringify({ kind: 'embedded' }));
    await read(/event: connection:changed\ndata: \{"kind":"embedded"/);
    controller.abort();
    expect((await fetch(`${host.origin}/api/exports/999`, { headers: { cookie } })).status).toBe(404);
  });
});
