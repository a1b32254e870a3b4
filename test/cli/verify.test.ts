import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

describe('mailsieve verify', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('uses the embedded service with a provisioned key when no base URL is given', async () => {
    const home = tempDir();
    cleanups.push(() => home.remove());
    const result = await runCli(['verify', '--json', 'jane.doe@gmial.com', 'no-at-sign.example.com'], {
      MAILSIEVE_HOME: home.path,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      safe_to_send: { status: 'valid', status_code: 10, email_corrections: ['jane.doe@gmail.com'] },
    });
    expect(lines[1]).toMatchObject({ safe_to_send: { status: 'invalid', status_code: 150 } });
    // The provisioned key is reused, not multiplied.
    await runCli(['verify', 'a@example.com'], { MAILSIEVE_HOME: home.path });
    const keys = await runCli(['keys', 'list', '--json'], { MAILSIEVE_HOME: home.path });
    expect(keys.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('prints a readable table with each code’s meaning', async () => {
    const home = tempDir();
    cleanups.push(() => home.remove());
    const result = await runCli(['verify', 'jane.doe@gmial.com', 'info@example.com'], {
      MAILSIEVE_HOME: home.path,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('jane.doe@gmial.com  valid  10 Syntax OK');
    expect(result.stdout).toContain('did you mean jane.doe@gmail.com?');
    expect(result.stdout).toMatch(/info@example\.com .*role account/);
  });

  it('talks to a remote service by base URL and key, and reports a bad key in one line without the key', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const key = (
      await runCli(['keys', 'create', '--data-dir', dir.path, '--mode', 'email_validation'])
    ).stdout.trim();
    const server = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path],
      /listening on (http:\/\/\S+)/,
    );
    cleanups.push(() => server.stop());
    const base = server.match[1];
    const ok = await runCli(['verify', '--json', '--base-url', base, '--api-key', key, 'a@example.com']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ email_validation: { status: 'unknown', status_code: 10 } });
    const bad = await runCli(['verify', '--base-url', base, '--api-key', `${key}zz`, 'a@example.com']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/^mailsieve: .*401.*\n$|^mailsieve: .*Invalid API key.*\n$/);
    expect(bad.stderr).not.toContain(key);
  });
});
