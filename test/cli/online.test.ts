// The command line of online checks against real loopback DNS and mail servers: `doctor`, `serve` with
// its online options, `keys create --checks`, and `verify --explain` on a served and on the embedded service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { closedUdpPort, startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';

let dns: TestDnsServer;
let farm: MailFarm;
let network: string[];
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  farm = await startMailFarm(SERVERS, 6);
  dns = await startDnsServer(zones(farm));
  network = ['--dns-servers', dns.address, '--smtp-port', String(farm.port)];
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await dns.close();
  await farm.close();
});

describe('mailsieve doctor', () => {
  it('says DNS answers, port 25 can be reached and the identity is taken, and exits 0', async () => {
    const result = await runCli([
      'doctor',
      ...network,
      '--helo-name',
      'probe.mailsieve.test',
      '--mail-from',
      'check@mailsieve.test',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^DNS {6}ok {4}DNS answers \(127\.0\.0\.1:\d+\): gmail\.com MX gmail-smtp-in\.l\.google\.com$/m,
    );
    expect(result.stdout).toMatch(
      /^SMTP {5}ok {4}Port \d+ reachable: gmail-smtp-in\.l\.google\.com \[127\.0\.6\.\d+\] greeted "220 /m,
    );
    expect(result.stdout).toMatch(
      /^Identity ok {4}gmail-smtp-in\.l\.google\.com took the HELO name 'probe\.mailsieve\.test' and the sender check@mailsieve\.test/m,
    );
  });

  it('says clearly and quickly that there is no network, and exits 1 with one line on stderr', async () => {
    const started = Date.now();
    const result = await runCli(['doctor', '--dns-servers', await closedUdpPort()]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^DNS {6}FAIL {2}DNS does not answer .*refused the query/m);
    expect(result.stdout).toMatch(/^SMTP {5}FAIL {2}Not tried/m);
    expect(result.stdout).toMatch(/No online checks can run here/);
    expect(result.stderr).toBe('mailsieve: online checks cannot run here (see above).\n');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('tells a closed port 25 from a DNS failure', async () => {
    const result = await runCli(['doctor', '--json', '--dns-servers', dns.address, '--smtp-port', '1']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as {
      dns: { ok: boolean };
      smtp: { ok: boolean; detail: string };
    };
    expect(report.dns.ok).toBe(true);
    expect(report.smtp).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/refused the connection/) as unknown,
    });
  });
});

describe('online checks from the command line', () => {
  it('serves with online options, and verify --explain shows the SMTP conversation without the key', async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const created = await runCli(['keys', 'create', '--data-dir', dir.path, '--checks', 'smtp']);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    const listed = await runCli(['keys', 'list', '--json', '--data-dir', dir.path]);
    expect(JSON.parse(listed.stdout)).toMatchObject({ checks: 'smtp' });
    const server = await startCli(
      [
        'serve',
        '--port',
        '0',
        '--data-dir',
        dir.path,
        ...network,
        '--helo-name',
        'probe.mailsieve.test',
        '--mail-from',
        'check@mailsieve.test',
      ],
      /listening on (http:\/\/\S+)/,
    );
    cleanups.push(() => server.stop());
    const base = server.match[1];
    const plain = await runCli([
      'verify',
      '--json',
      '--base-url',
      base,
      '--api-key',
      key,
      'alice@users.example.net',
      'nobody@users.example.net',
    ]);
    expect(plain.stderr).toBe('');
    const [alice, nobody] = plain.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(alice).toEqual({
      safe_to_send: {
        address: 'alice@users.example.net',
        status: 'safetosend',
        status_code: 50,
        domain_type: 'biz',
      },
    });
    expect(nobody).toMatchObject({ safe_to_send: { status: 'invalid', status_code: 400 } });
    const explained = await runCli([
      'verify',
      '--explain',
      '--base-url',
      base,
      '--api-key',
      key,
      'bob@users.example.net',
    ]);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(/^bob@users\.example\.net {2}safetosend {2}50 Valid address/);
    expect(explained.stdout).toMatch(/C: EHLO probe\.mailsieve\.test/);
    expect(explained.stdout).toMatch(/C: MAIL FROM:<check@mailsieve\.test>/);
    expect(explained.stdout).toMatch(/C: RCPT TO:<bob@users\.example\.net>\n\s+S: 250 Accepted/);
    expect(explained.stdout + explained.stderr).not.toContain(key);
  });

  it('runs the embedded service with --checks, and stays offline without it', async () => {
    const home = tempDir();
    cleanups.push(() => home.remove());
    const env = { MAILSIEVE_HOME: home.path };
    const online = await runCli(
      ['verify', '--json', '--explain', '--checks', 'smtp', ...network, 'carol@users.example.net'],
      env,
    );
    expect(online.stderr).toBe('');
    const answer = JSON.parse(online.stdout) as { safe_to_send: unknown; explain: string[] };
    expect(answer.safe_to_send).toMatchObject({ status: 'invalid', status_code: 410 });
    expect(answer.explain.join('\n')).toMatch(/S: 552 5\.2\.2 Mailbox full/);
    const offline = await runCli(['verify', '--json', ...network, 'carol@users.example.net'], env);
    expect(JSON.parse(offline.stdout)).toMatchObject({ safe_to_send: { status_code: 10 } });
  });

  it('refuses bad online options in one line', async () => {
    const bad = await runCli(['serve', '--port', '0', '--dns-servers', 'dns.example.com']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/^mailsieve: --dns-servers takes IP\[:PORT\] entries.*\n$/);
    const remote = await runCli([
      'verify',
      '--base-url',
      'http://127.0.0.1:9',
      '--api-key',
      'k',
      '--checks',
      'smtp',
      'a@example.com',
    ]);
    expect(remote.code).not.toBe(0);
    expect(remote.stderr).toMatch(/^mailsieve: --checks, .*the key decides\.\n$/);
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const level = await runCli(['keys', 'create', '--data-dir', dir.path, '--checks', 'mailbox']);
    expect(level.code).not.toBe(0);
    expect(level.stderr).toMatch(/--checks/);
  });
});
