// `people:lookup` against a provider: a key without the intelligence service and a key the service does not
// know each answer a sentence a person can act on (403, 401), never the key itself; a malformed query is
// refused at the boundary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDesktopCore, PROVIDER_KEY, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

describe('people:lookup', () => {
  let service: TestService;
  let home: ReturnType<typeof tempDir>;
  let secrets: FileSecretStore;
  let core: DesktopCore;

  beforeAll(async () => {
    service = await startTestService();
    home = tempDir();
    secrets = new FileSecretStore(home.path);
    core = createDesktopCore({
      home: home.path,
      secrets,
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
    });
  });
  afterAll(async () => {
    await core?.close();
    await service?.close();
    home?.remove();
  });

  it('says why the provider refused: no intelligence service (403), an unknown key (401)', async () => {
    const key = service.key({ services: ['validation'] });
    const set = await core.handle('connection:set', { kind: 'provider', baseUrl: service.url, apiKey: key });
    expect(set.ok).toBe(true);

    const denied = await core.handle('people:lookup', { by: 'email', email: 'jane@example.com' });
    expect(denied).toMatchObject({ ok: false, error: { code: 'not-enabled' } });
    expect(!denied.ok && denied.error.message).toMatch(/^This API key may not look people up \(403\)/);
    expect(JSON.stringify(denied)).not.toContain(key);

    const unknown = 'unknown-key-never-echoed-0001';
    secrets.set(PROVIDER_KEY, unknown);
    const refused = await core.handle('people:lookup', { by: 'email', email: 'jane@example.com' });
    expect(refused).toEqual({
      ok: false,
      error: {
        code: 'key-refused',
        message: 'The service refused the API key (401): set a valid key on the Connection screen.',
      },
    });
  });

  it('refuses an incomplete query before calling the service', async () => {
    const noPlace = await core.handle('people:lookup', {
      by: 'postal',
      first: 'Jane',
      last: 'Doe',
      street: '1 A St',
    });
    expect(noPlace).toMatchObject({
      ok: false,
      error: { code: 'invalid-input', message: 'Enter the ZIP code, or the city and state' },
    });
    const badHash = await core.handle('people:lookup', { by: 'hash', hash: 'abc' });
    expect(badHash).toMatchObject({ ok: false, error: { code: 'invalid-input' } });
  });
});
