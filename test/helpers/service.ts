import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService } from '../../service/server.js';
import { openServiceDb, type ServiceDb } from '../../service/store/db.js';
import { createKey, type KeyConfig } from '../../service/store/keys.js';

export function tempDir(prefix = 'mailsieve-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface TestService {
  readonly url: string;
  readonly db: ServiceDb;
  readonly service: RunningService;
  readonly dataDir: string;
  /** Creates a key on this service and returns it. */
  key(config?: Partial<KeyConfig>): string;
  close(): Promise<void>;
}

/** A real service on 127.0.0.1, port 0, over a fresh data folder. */
export async function startTestService(): Promise<TestService> {
  const dir = tempDir();
  const db = openServiceDb(dir.path);
  const service = await startService({ dataDir: dir.path, db, port: 0 });
  return {
    url: service.url,
    db,
    service,
    dataDir: dir.path,
    key: (config = {}) => createKey(db, { mode: 'safe_to_send', services: ['validation'], ...config }).key,
    async close() {
      await service.close();
      db.close();
      dir.remove();
    },
  };
}

/** GET with a raw query string, answering status, content type and text. */
export async function get(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; type: string; text: string; headers: Headers }> {
  const response = await fetch(url, init);
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
    headers: response.headers,
  };
}
