// The stored provider key goes only to the exact origin it was saved with: `connection:test` and
// `connection:set` with another address need the key typed again, and a real listener on another loopback
// port sees no request until it is. A plain-HTTP provider off loopback is refused unless allowed.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkProviderAddress, providerKeyFor } from '../../../electron/core/connection/keyOrigin.js';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import type { ConnectionInfo } from '../../../shared/desktop/contract.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

describe('the provider key and its origin', () => {
  let service: TestService;
  let home: ReturnType<typeof tempDir>;
  let core: DesktopCore;
  let other: Server;
  let otherUrl: string;
  const seen: string[] = [];

  beforeAll(async () => {
    service = await startTestService();
    home = tempDir();
    core = createDesktopCore({
      home: home.path,
      secrets: new FileSecretStore(home.path),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
    });
    other = createServer((request: IncomingMessage, response) => {
      seen.push(`${request.url ?? ''} ${String(request.headers.api_key ?? '')}`);
      response.writeHead(401, { 'content-type': 'text/plain' }).end('Invalid API key.');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await core?.close();
    await service?.close();
    other?.close();
    home?.remove();
  });

  it('never sends the saved key to another origin: test and set need the key typed again', async () => {
    const key = service.key({ services: ['validation'] });
    const set = await core.handle('connection:set', { kind: 'provider', baseUrl: service.url, apiKey: key });
    expect(set.ok).toBe(true);
    // The same origin keeps working without the key.
    expect((await core.handle('connection:test', { kind: 'provider', baseUrl: `${service.url}/` })).ok).toBe(
      true,
    );

    for (const channel of ['connection:test', 'connection:set'] as const) {
      const reply = await core.handle(channel, { kind: 'provider', baseUrl: otherUrl });
      expect(reply).toMatchObject({ ok: false, error: { code: 'key-needed' } });
      expect(!reply.ok && reply.error.message).toContain('type the key again');
      expect(JSON.stringify(reply)).not.toContain(key);
    }
    expect(seen).toEqual([]);
    // Nothing was changed by the refused set: the saved address is still the service's.
    const info = (await core.handle('connection:get', {})) as { ok: true; value: ConnectionInfo };
    expect(info.value.provider?.baseUrl).toBe(service.url);

    // Typed again, the new key (not the saved one) goes there.
    const typed = await core.handle('connection:test', {
      kind: 'provider',
      baseUrl: otherUrl,
      apiKey: 'typed-for-the-other-origin',
    });
    expect(typed.ok).toBe(false);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.join('\n')).not.toContain(key);
    expect(seen.join('\n')).toContain('typed-for-the-other-origin');
  });

  it('refuses plain HTTP to a provider off loopback before any request, unless the user allows it', async () => {
    const reply = await core.handle('connection:test', {
      kind: 'provider',
      baseUrl: 'http://192.0.2.10:8080',
      apiKey: 'some-key',
    });
    expect(reply).toMatchObject({ ok: false, error: { code: 'insecure-address' } });
    expect(!reply.ok && reply.error.message).toContain('Allow plain HTTP on my network');
    expect(() => checkProviderAddress('http://192.0.2.10:8080', true)).not.toThrow();
    expect(() => checkProviderAddress('https://192.0.2.10', false)).not.toThrow();
    expect(() => checkProviderAddress('http://localhost:8080', false)).not.toThrow();
    expect(() => checkProviderAddress('http://[::1]:8080', false)).not.toThrow();
    expect(() => checkProviderAddress('http://10.0.0.5', false)).toThrow(/clear text/);
  });

  it('compares whole origins: scheme, host and port', () => {
    const saved = { key: 'k', origin: 'https://api.example.com' };
    expect(providerKeyFor('https://api.example.com/v5/', undefined, saved)).toBe('k');
    expect(providerKeyFor('https://API.example.com:443', undefined, saved)).toBe('k');
    for (const elsewhere of [
      'http://api.example.com',
      'https://api.example.com:8443',
      'https://api.example.com.evil.test',
      'https://evil.test/?https://api.example.com',
    ])
      expect(() => providerKeyFor(elsewhere, undefined, saved)).toThrow(/type the key again/);
    expect(providerKeyFor('https://other.test', 'typed', saved)).toBe('typed');
    expect(providerKeyFor('https://other.test', undefined, undefined)).toBeUndefined();
  });
});
