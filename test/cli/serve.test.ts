import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { activityRows, daysAgo, query, writeCsv } from '../service/identity/fixture.js';

describe('mailsieve serve + keys (acceptance)', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('serves E1 with a key from `keys create --corrections`: gmial.com gets a correction, a wrong key 401', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const created = await runCli(['keys', 'create', '--data-dir', dir.path, '--corrections']);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(created.stdout).toBe(`${key}\n`);
    const server = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path],
      /listening on (http:\/\/\S+)/,
    );
    cleanups.push(() => server.stop());
    const base = server.match[1];

    const ok = await fetch(`${base}/v5/ev?email=jane.doe%40gmial.com&api_key=${key}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      safe_to_send: {
        address: 'jane.doe@gmial.com',
        status: 'valid',
        status_code: 10,
        email_corrections: ['jane.doe@gmail.com'],
      },
    });
    const wrong = await fetch(`${base}/v5/ev?email=jane.doe%40gmial.com&api_key=${key}x`);
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toBe('Invalid API key.');

    // A key revoked from another process stops working on the running service.
    expect((await runCli(['keys', 'revoke', key, '--data-dir', dir.path])).code).toBe(0);
    await new Promise((r) => setTimeout(r, 400));
    expect((await fetch(`${base}/v5/ev?email=a%40example.com&api_key=${key}`)).status).toBe(401);
  });

  it('E1 gives engagement_score exactly while activity imported by other processes is stored: import, clear, import again', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const key = (await runCli(['keys', 'create', '--data-dir', dir.path, '--rate-limit', '0'])).stdout.trim();
    const server = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path],
      /listening on (http:\/\/\S+)/,
    );
    cleanups.push(() => server.stop());
    const ev = async (email: string) =>
      (
        (await (await fetch(`${server.match[1]}/v5/ev?${query({ email, api_key: key })}`)).json()) as {
          safe_to_send: Record<string, unknown>;
        }
      ).safe_to_send;
    const scoreOf = async (email: string) => (await ev(email)).engagement_score;
    const importActivity = async (name: string, rows: string[][]) =>
      expect(
        (await runCli(['data', 'import', 'activity', writeCsv(dir.path, name, rows), '--data-dir', dir.path]))
          .code,
      ).toBe(0);
    // Asked before any activity is stored: no score, the answer as the spec's example.
    expect(await ev('jane.doe@example.com')).toEqual({
      address: 'jane.doe@example.com',
      status: 'valid',
      status_code: 10,
    });
    await importActivity('activity.csv', activityRows());
    // The running service sees another process's import within its recheck time (service/store/changes.ts).
    await expect.poll(() => scoreOf('jane.doe@example.com'), { timeout: 5000 }).toBe(7);
    expect(await ev('Jane.Doe@example.com')).toEqual({
      address: 'Jane.Doe@example.com',
      status: 'valid',
      status_code: 10,
      engagement_score: 7,
    });
    expect(await scoreOf('lurker@example.com')).toBe(0);
    expect(await ev('jim.doe@example.net')).not.toHaveProperty('engagement_score');
    expect((await runCli(['data', 'clear', '--yes', '--data-dir', dir.path])).code).toBe(0);
    await expect
      .poll(() => ev('jane.doe@example.com'), { timeout: 5000 })
      .not.toHaveProperty('engagement_score');
    expect(await ev('lurker@example.com')).not.toHaveProperty('engagement_score');
    await importActivity('again.csv', [
      ['email', 'source', 'event', 'occurred_at'],
      ['lurker@example.com', 'newsletter', 'click', daysAgo(1)],
    ]);
    // One click a day ago: 2 on the doubling scale, 10 for recency.
    await expect.poll(() => scoreOf('lurker@example.com'), { timeout: 5000 }).toBe(6);
    expect(await ev('jane.doe@example.com')).not.toHaveProperty('engagement_score');
  });

  it('serves HTTPS with a self-signed certificate', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const server = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path, '--tls-self-signed'],
      /listening on (https:\/\/\S+)/,
    );
    cleanups.push(() => server.stop());
    expect(server.match[1]).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses plain HTTP off loopback, and bad options, with one line', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const offLoopback = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', dir.path]);
    expect(offLoopback.code).not.toBe(0);
    expect(offLoopback.stderr).toMatch(/^mailsieve: Refusing to serve plain HTTP on 0\.0\.0\.0/);
    expect(offLoopback.stderr.trim().split('\n')).toHaveLength(1);
    for (const args of [
      ['serve', '--port', 'http', '--data-dir', dir.path],
      ['serve', '--tls-cert', '/nonexistent.pem', '--tls-key', '/nonexistent.key', '--data-dir', dir.path],
      ['keys', 'create', '--mode', 'loose', '--data-dir', dir.path],
      ['keys', 'create', '--rate-limit', '-3', '--data-dir', dir.path],
      ['keys', 'create', '--services', 'validation,telepathy', '--data-dir', dir.path],
      ['keys', 'create', '--allow', '/nonexistent/list.txt', '--data-dir', dir.path],
      ['keys', 'revoke', 'msk_nope', '--data-dir', dir.path],
    ]) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(/^mailsieve: .+\n$/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('refuses --allow and --suppress on a legacy (email_validation) key, saying why, and makes no key', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const list = join(dir.path, 'vip.txt');
    writeFileSync(list, 'vip@example.com\n');
    for (const flag of ['--allow', '--suppress']) {
      const result = await runCli([
        'keys',
        'create',
        '--mode',
        'email_validation',
        flag,
        list,
        '--data-dir',
        dir.path,
      ]);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        /^mailsieve: A key in email_validation \(legacy\) mode cannot have .*codes 55 and 255 do not occur/,
      );
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect((await runCli(['keys', 'list', '--data-dir', dir.path])).stdout).not.toMatch(/email_validation/);
    const allowed = await runCli([
      'keys',
      'create',
      '--mode',
      'safe_to_send',
      '--allow',
      list,
      '--data-dir',
      dir.path,
    ]);
    expect(allowed.code).toBe(0);
  });

  it('lists keys masked, never whole', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const key = (await runCli(['keys', 'create', '--data-dir', dir.path, '--label', 'shop'])).stdout.trim();
    const listed = await runCli(['keys', 'list', '--data-dir', dir.path]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`…${key.slice(-4)}`);
    expect(listed.stdout).toContain('"shop"');
    expect(listed.stdout).not.toContain(key);
    const json = await runCli(['keys', 'list', '--json', '--data-dir', dir.path]);
    expect(JSON.parse(json.stdout.trim())).toMatchObject({
      id: 1,
      mode: 'safe_to_send',
      services: ['validation'],
    });
  });
});
