import { chmodSync, existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { startService, type RunningService } from '../../service/server.js';
import { openServiceDb, type ServiceDb } from '../../service/store/db.js';
import { createKey, findActiveKey } from '../../service/store/keys.js';
import { SERVICE_NAMES } from '../../shared/api/services.js';

/** The embedded key lives beside the service data it opens, in a file only the user can read. */
export const EMBEDDED_KEY_FILE = 'embedded.key';

export interface EmbeddedService {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly service: RunningService;
  close(): Promise<void>;
}

/**
 * Returns the key the app uses with its embedded service, creating one (every service, no rate limit: the
 * caller is this machine's own app) when none is stored or the stored one was revoked.
 */
export function provisionEmbeddedKey(db: ServiceDb, dataDir: string): string {
  const file = join(dataDir, EMBEDDED_KEY_FILE);
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored && findActiveKey(db, stored)) return stored;
  }
  const { key } = createKey(db, {
    label: 'embedded (this app)',
    mode: 'safe_to_send',
    services: SERVICE_NAMES,
    rateLimit: 0,
  });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${key}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
  return key;
}

/** Starts the embedded Email Data Service on an ephemeral loopback port with its provisioned key. */
export async function startEmbeddedService(dataDir: string): Promise<EmbeddedService> {
  const db = openServiceDb(dataDir);
  try {
    const apiKey = provisionEmbeddedKey(db, dataDir);
    const service = await startService({ dataDir, db, host: '127.0.0.1', port: 0 });
    return {
      baseUrl: service.url,
      apiKey,
      service,
      async close() {
        await service.close();
        db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
