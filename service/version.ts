// This Mailsieve's version, as package.json says it: found by walking up from this module, so it holds for the
// compiled modules (dist/service/…) and the bundled CLI (dist/cli/…) alike.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const parsed = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (parsed.name === 'mailsieve' && parsed.version) return parsed.version;
      } catch {
        // not ours: keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return 'unknown';
}

let cached: string | undefined;

/** The version of this Mailsieve (package.json), or 'unknown'. */
export function mailsieveVersion(): string {
  cached ??= findVersion();
  return cached;
}
