import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FileSecretStore,
  maskSecret,
  SafeStorageSecretStore,
  SecretsUnavailableError,
  type SafeStorageLike,
} from '../../../electron/core/secrets.js';
import { tempDir } from '../../helpers/service.js';

/** A stand-in for Electron's safeStorage: a reversible transform, with the backend it reports. */
function fakeSafeStorage(backend: string, isAvailable = true): SafeStorageLike {
  return {
    isEncryptionAvailable: () => isAvailable,
    encryptString: (text) => Buffer.from([...Buffer.from(text, 'utf8')].map((b) => b ^ 0x5a)),
    decryptString: (data) => Buffer.from([...data].map((b) => b ^ 0x5a)).toString('utf8'),
    getSelectedStorageBackend: () => backend,
  };
}

describe('secrets', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => dir.remove());

  it('masks all but the last 4 characters', () => {
    expect(maskSecret('abcdefghijkl1234')).toBe('••••1234');
    expect(maskSecret('short')).toBe('••••t');
  });

  it('keeps keys in a file only the user can read, written whole', () => {
    const store = new FileSecretStore(dir.path);
    expect(store.has('k')).toBe(false);
    store.set('k', 'sk-live-0123456789');
    store.set('other', 'x');
    expect(store.get('k')).toBe('sk-live-0123456789');
    const file = join(dir.path, 'secrets.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    store.delete('k');
    expect(store.has('k')).toBe(false);
    expect(store.get('other')).toBe('x');
  });

  it('encrypts with safeStorage: the file holds no plain key', () => {
    const store = new SafeStorageSecretStore(dir.path, fakeSafeStorage('gnome_libsecret'), 'linux');
    expect(store.availability.isAvailable).toBe(true);
    store.set('k', 'sk-live-0123456789');
    const text = readFileSync(join(dir.path, 'secrets.safe.json'), 'utf8');
    expect(text).not.toContain('sk-live');
    expect(statSync(join(dir.path, 'secrets.safe.json')).mode & 0o777).toBe(0o600);
    expect(store.get('k')).toBe('sk-live-0123456789');
  });

  it('refuses Linux’s plain-text backend and says why', () => {
    const store = new SafeStorageSecretStore(dir.path, fakeSafeStorage('basic_text'), 'linux');
    expect(store.availability.isAvailable).toBe(false);
    expect(store.availability.message).toMatch(/keyring/);
    expect(() => store.set('k', 'v')).toThrow(SecretsUnavailableError);
    // basic_text is only refused on Linux (it is Linux's fallback).
    expect(
      new SafeStorageSecretStore(dir.path, fakeSafeStorage('basic_text'), 'darwin').availability.isAvailable,
    ).toBe(true);
    expect(
      new SafeStorageSecretStore(dir.path, fakeSafeStorage('kwallet5', false), 'linux').availability
        .isAvailable,
    ).toBe(false);
  });
});
