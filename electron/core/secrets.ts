// API keys at rest. In the desktop app they are encrypted with Electron's safeStorage (the adapter below is
// all this module knows of it, so it is tested in Node); in CLI and browser mode they sit in a file only the
// user can read. A secret never leaves the core: callers get `has` and `mask`, and the core's own client is
// the only reader of `get`. Nothing here logs or puts a secret in an error message.
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SecretStore {
  readonly storage: 'safeStorage' | 'file';
  /** False with a reason when secrets cannot be kept here (Linux's plain-text safeStorage backend). */
  readonly availability: { readonly isAvailable: boolean; readonly message?: string };
  has(name: string): boolean;
  /** For the core's own use (the REST client). Never returned across the contract. */
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  delete(name: string): void;
}

export class SecretsUnavailableError extends Error {
  readonly code = 'secrets-unavailable';
}

/** `••••abcd`: the last 4 characters, enough to tell keys apart. Keys of 8 characters or fewer show 2. */
export function maskSecret(value: string): string {
  const shown = value.length > 8 ? 4 : Math.min(2, Math.max(0, value.length - 4));
  return `••••${shown > 0 ? value.slice(-shown) : ''}`;
}

function writePrivate(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

function readJson(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return {};
    return Object.fromEntries(
      Object.entries(parsed as Record<string, unknown>).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    );
  } catch {
    return {};
  }
}

/** CLI and browser mode: `secrets.json` in the app home, mode 0600, written atomically. */
export class FileSecretStore implements SecretStore {
  readonly storage = 'file' as const;
  readonly availability = { isAvailable: true };
  private readonly file: string;

  constructor(home: string) {
    this.file = join(home, 'secrets.json');
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  get(name: string): string | undefined {
    return readJson(this.file)[name];
  }

  set(name: string, value: string): void {
    writePrivate(this.file, `${JSON.stringify({ ...readJson(this.file), [name]: value })}\n`);
  }

  delete(name: string): void {
    const all = readJson(this.file);
    if (!(name in all)) return;
    delete all[name];
    if (Object.keys(all).length === 0) rmSync(this.file, { force: true });
    else writePrivate(this.file, `${JSON.stringify(all)}\n`);
  }
}

/** What this module needs of Electron's `safeStorage`. */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: `basic_text` means no keyring, the "encryption" is a fixed password. */
  getSelectedStorageBackend?(): string;
}

/** Whether safeStorage can keep secrets here, and why not. */
export function safeStorageAvailability(
  safeStorage: SafeStorageLike,
  platform: NodeJS.Platform = process.platform,
): { isAvailable: boolean; message?: string } {
  if (!safeStorage.isEncryptionAvailable())
    return {
      isAvailable: false,
      message: 'This system offers no encryption for stored keys, so Mailsieve will not store one.',
    };
  if (platform === 'linux' && safeStorage.getSelectedStorageBackend?.() === 'basic_text')
    return {
      isAvailable: false,
      message:
        'No system keyring was found (safeStorage would only obfuscate the key with a fixed password), so Mailsieve ' +
        'will not store a key. Install and unlock a keyring such as GNOME Keyring or KWallet, then restart Mailsieve.',
    };
  return { isAvailable: true };
}

/** The desktop app: each secret encrypted with safeStorage, stored base64 in `secrets.safe.json` (0600). */
export class SafeStorageSecretStore implements SecretStore {
  readonly storage = 'safeStorage' as const;
  readonly availability: { isAvailable: boolean; message?: string };
  private readonly file: string;

  constructor(
    home: string,
    private readonly safeStorage: SafeStorageLike,
    platform: NodeJS.Platform = process.platform,
  ) {
    this.file = join(home, 'secrets.safe.json');
    this.availability = safeStorageAvailability(safeStorage, platform);
  }

  has(name: string): boolean {
    return readJson(this.file)[name] !== undefined;
  }

  get(name: string): string | undefined {
    if (!this.availability.isAvailable) return undefined;
    const stored = readJson(this.file)[name];
    if (stored === undefined) return undefined;
    try {
      return this.safeStorage.decryptString(Buffer.from(stored, 'base64'));
    } catch {
      // Encrypted under another user or keyring: unreadable, as good as absent.
      return undefined;
    }
  }

  set(name: string, value: string): void {
    if (!this.availability.isAvailable) throw new SecretsUnavailableError(this.availability.message);
    const encrypted = this.safeStorage.encryptString(value).toString('base64');
    writePrivate(this.file, `${JSON.stringify({ ...readJson(this.file), [name]: encrypted })}\n`);
  }

  delete(name: string): void {
    const all = readJson(this.file);
    if (!(name in all)) return;
    delete all[name];
    writePrivate(this.file, `${JSON.stringify(all)}\n`);
  }
}
