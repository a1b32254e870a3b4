// `mailsieve clean --base-url` (the built CLI) against a busy service: a real single-node service whose key
// takes one upload at a time (`--max-uploads 1`) and has one arriving already. The clean is refused with 429
// and Retry-After before its body is read, says on stderr what it waits for, and sends the file again, whole,
// once the wait has passed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli.js';
import { startTestService, tempDir } from '../helpers/service.js';
import { stalledUpload } from '../helpers/stalledUpload.js';

describe('mailsieve clean against a busy service', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('waits as the service asks when the key has an upload arriving, says so, then completes', async () => {
    const service = await startTestService();
    cleanups.push(() => service.close());
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const key = service.key({ maxUploads: 1 });
    // Another client of the key: an upload that has started and not arrived.
    const other = stalledUpload(service.url, key, 10 * 1024 * 1024);
    cleanups.push(() => other.close());
    expect(await other.within(300)).toBeUndefined();

    const input = join(dir.path, 'list.csv');
    const rows = 20_000;
    writeFileSync(
      input,
      `email,name\n${Array.from({ length: rows }, (_, i) => `p${i}@example.com,P ${i}`).join('\n')}\n`,
    );
    const started = Date.now();
    const run = spawnCli(['clean', input, '--base-url', service.url], {
      MAILSIEVE_API_KEY: key,
      MAILSIEVE_HOME: join(dir.path, 'home'),
    });
    cleanups.push(() => run.child.kill());
    // The refusal, in the service's words, with when it tries again.
    let stderr = '';
    run.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    while (!stderr.includes('Uploading again in')) {
      if (Date.now() - started > 20_000 || run.child.exitCode !== null)
        throw new Error(`no waiting line: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The other upload goes: the key may send this one when the wait has passed.
    other.close();
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /\nWaiting for the service: Too many uploads at once: this key may send 1 list at a time, and 1 is still arriving\. Send this list when one of them has been received\. \(HTTP 429\) Uploading again in 3[0-4] s\.\n/,
    );
    expect(result.stderr.match(/Waiting for the service/g)).toHaveLength(1);
    // Never sooner than the 30 s the service's Retry-After asked for; the whole file arrived.
    expect(Date.now() - started).toBeGreaterThanOrEqual(30_000);
    expect(result.stdout).toMatch(/20,000 records, status Results/);
    expect(result.stdout + result.stderr).not.toContain(key);
  }, 90_000);
});
