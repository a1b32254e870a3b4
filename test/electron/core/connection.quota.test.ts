// The key's quota in the desktop core (issue #29): the connection test on our own service asks `GET /v5/key`
// (not billable) instead of an E1 call, so testing a trial key leaves its queries whole, and tells the quota;
// the saved connection's quota is asked the same way. A service without `GET /v5/key` (the provider: 404)
// is tested with an E1 call as before, and its quota stays unknown. Only numbers leave the core.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { TRIAL_QUOTA } from '../../../service/store/keys.js';
import { keyInfoSchema } from '../../../shared/api/listServices.js';
import type { ConnectionTest, KeyQuota } from '../../../shared/desktop/contract.js';
import { startRecordingProxy, type RecordingProxy } from '../../helpers/recordingProxy.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

let service: TestService;
let provider: RecordingProxy;
let home: ReturnType<typeof tempDir>;
let core: DesktopCore;

beforeAll(async () => {
  service = await startTestService();
  // The provider's service: ours behind a proxy that has no `GET /v5/key`.
  provider = await startRecordingProxy(service.url);
  provider.answer = (request) =>
    request.path === '/v5/key' ? { status: 404, body: 'Not found' } : undefined;
});
afterAll(async () => {
  await provider?.close();
  await service?.close();
});
beforeEach(() => {
  home = tempDir();
  core = createDesktopCore({
    home: home.path,
    secrets: new FileSecretStore(home.path),
    mode: 'browser',
    hasNativeDialogs: false,
    version: 'test',
  });
});
afterEach(async () => {
  await core.close();
  home.remove();
});

/** What the key has used, asked of the service directly (not billable either). */
async function used(key: string): Promise<number> {
  const response = await fetch(`${service.url}/v5/key`, { headers: { api_key: key } });
  return keyInfoSchema.parse(await response.json()).quota?.used ?? 0;
}

async function value<T>(reply: Promise<{ ok: boolean; value?: unknown; error?: { message: string } }>) {
  const answer = await reply;
  if (!answer.ok) throw new Error(answer.error?.message);
  return answer.value as T;
}

describe('the key’s quota in the desktop core', () => {
  it('tests a trial key on our service without spending a query, and tells its quota', async () => {
    const key = service.key({ quota: TRIAL_QUOTA });
    const input = { kind: 'provider' as const, baseUrl: service.url, apiKey: key };
    const tested = await value<ConnectionTest>(core.handle('connection:test', input));
    expect(tested).toMatchObject({
      mode: 'safe_to_send',
      quota: {
        status: 'limited',
        limit: 100,
        used: 0,
        left: 100,
        period: 'total',
        renewsAt: null,
        isTrial: true,
      },
    });
    // Saving tests it again: still nothing spent.
    expect((await core.handle('connection:set', input)).ok).toBe(true);
    expect(await used(key)).toBe(0);
    for (let i = 0; i < 3; i++)
      await fetch(`${service.url}/v5/ev?email=p${i}@example.com&api_key=${encodeURIComponent(key)}`);
    expect(await value<KeyQuota>(core.handle('connection:get-quota', {}))).toMatchObject({
      status: 'limited',
      used: 3,
      left: 97,
    });
    // Numbers only: the key is in no reply.
    expect(JSON.stringify(tested)).not.toContain(key);
  });

  it('says a key without a quota has none, and the local service’s key none either', async () => {
    expect(await value<KeyQuota>(core.handle('connection:get-quota', {}))).toEqual({ status: 'unlimited' });
    const key = service.key();
    const input = { kind: 'provider' as const, baseUrl: service.url, apiKey: key };
    expect((await value<ConnectionTest>(core.handle('connection:test', input))).quota).toEqual({
      status: 'unlimited',
    });
    expect((await core.handle('connection:set', input)).ok).toBe(true);
    expect(await value<KeyQuota>(core.handle('connection:get-quota', {}))).toEqual({ status: 'unlimited' });
  });

  it('tests a service without GET /v5/key (404) with an E1 call, as before; its quota is not known', async () => {
    const key = service.key({ quota: { limit: 50, period: 'month', isTrial: false } });
    const input = { kind: 'provider' as const, baseUrl: provider.url, apiKey: key };
    const tested = await value<ConnectionTest>(core.handle('connection:test', input));
    expect(tested).toMatchObject({ mode: 'safe_to_send', quota: { status: 'unknown' } });
    expect(provider.count('GET', /^\/v5\/ev$/)).toBe(1);
    expect(await used(key)).toBe(1);
    expect((await core.handle('connection:set', input)).ok).toBe(true);
    expect(await value<KeyQuota>(core.handle('connection:get-quota', {}))).toEqual({ status: 'unknown' });
  });

  it('refuses a wrong key, and a key without verification, in words as the E1 call did', async () => {
    const wrong = await core.handle('connection:test', {
      kind: 'provider',
      baseUrl: service.url,
      apiKey: 'not-a-key-of-this-service',
    });
    expect(wrong).toMatchObject({
      ok: false,
      error: {
        code: 'connection-failed',
        message: expect.stringContaining('refused the API key (401)') as string,
      },
    });
    const noValidation = await core.handle('connection:test', {
      kind: 'provider',
      baseUrl: service.url,
      apiKey: service.key({ services: ['intelligence'] }),
    });
    expect(noValidation).toMatchObject({
      ok: false,
      error: { message: 'The service refused this API key for verification (403). Nothing was saved.' },
    });
  });
});
