// `mailsieve clean --checks …` against a real loopback world: a DNS server (dns2) with the online tests'
// zones and a farm of SMTP servers (smtp-server). Each code is read from the results file; the explanations
// side file, the retries of greylisting, SMTP through a SOCKS5 proxy (simple-socks) and Automatic's fallback
// with a resolver that does not answer are each exercised end to end through the built CLI.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import socks5 from 'simple-socks';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { closedUdpPort, startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';

let dns: TestDnsServer;
let farm: MailFarm;
let network: string[];
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  farm = await startMailFarm(SERVERS, 7);
  dns = await startDnsServer(zones(farm));
  network = ['--dns-servers', dns.address, '--smtp-port', String(farm.port)];
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await dns.close();
  await farm.close();
});

function workspace(rows: readonly string[]): { dir: string; input: string; home: Record<string, string> } {
  const dir = tempDir('mailsieve-checks-');
  cleanups.push(() => dir.remove());
  const input = join(dir.path, 'people.csv');
  writeFileSync(input, ['email,name', ...rows.map((r, i) => `${r},person ${i + 1}`)].join('\n') + '\n');
  return { dir: dir.path, input, home: { MAILSIEVE_HOME: join(dir.path, 'home') } };
}

/** address → Validation Code of each row, in row order, from a results file. */
function codesOf(path: string): [string, string][] {
  const [header, ...rows] = readFileSync(path, 'utf8').trim().split('\n');
  const code = header.split(',').indexOf('Validation Code');
  return rows.map((row) => {
    const fields = row.split(',');
    return [fields[0], fields[code]];
  });
}

const CLEAN_ARGS = ['--helo-name', 'probe.mailsieve.test', '--mail-from', 'check@mailsieve.test', '--json'];

interface CleanJson {
  results: string;
  checks: { level: string; choice: string; reason: string };
  offline: boolean;
  explain?: string | null;
  online?: { rows_to_check: number; rows_checked: number; domains_total: number; retry_rows: number };
}

describe('clean --checks', () => {
  it('dns: 20, 310 and 325 in the results file, and says which level ran and why', async () => {
    const { input, home } = workspace([
      'alice@users.example.net',
      'someone@missing.example.net',
      'someone@nullmx.example.net',
      'someone@nomail.example.net',
      'not-an-address',
    ]);
    const run = await runCli(['clean', input, '--checks', 'dns', ...network, ...CLEAN_ARGS], home);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as CleanJson;
    expect(out.checks).toMatchObject({ level: 'dns', choice: 'dns' });
    expect(out.offline).toBe(false);
    expect(codesOf(out.results)).toEqual([
      ['alice@users.example.net', '20'],
      ['someone@missing.example.net', '310'],
      ['someone@nullmx.example.net', '325'],
      ['someone@nomail.example.net', '325'],
      ['not-an-address', '150'],
    ]);
    expect(out.online).toMatchObject({ rows_to_check: 4, rows_checked: 4, domains_total: 4, retry_rows: 0 });
    const words = await runCli(['clean', input, '--checks', 'dns', ...network], home);
    expect(words.code, words.stderr).toBe(0);
    expect(words.stdout).toMatch(/^Checks: dns: chosen, checking domains \(DNS\)$/m);
    expect(words.stdout).toMatch(/^ {2}checks: {8}dns: chosen/m);
    expect(words.stdout).not.toContain('checked offline');
  }, 120_000);

  it('smtp: 50, 400, 410 and 45, and --explain writes what answered for each row', async () => {
    const { input, home } = workspace([
      'alice@users.example.net',
      'nobody@users.example.net',
      'carol@users.example.net',
      'ann@catchall.example.net',
      'someone@nomail.example.net',
      'abuse@users.example.net',
    ]);
    const started = Date.now();
    const run = await runCli(
      ['clean', input, '--checks', 'smtp', '--explain', ...network, ...CLEAN_ARGS],
      home,
    );
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as CleanJson;
    expect(out.checks.level).toBe('smtp');
    expect(codesOf(out.results)).toEqual([
      ['alice@users.example.net', '50'],
      ['nobody@users.example.net', '400'],
      ['carol@users.example.net', '410'],
      ['ann@catchall.example.net', '45'],
      ['someone@nomail.example.net', '325'],
      ['abuse@users.example.net', '500'],
    ]);
    expect(out.explain).toBe(out.results.replace(/\.csv$/, '.explain.csv'));
    const explain = readFileSync(out.explain!, 'utf8').trim().split('\n');
    expect(explain[0]).toBe('Row,Email,Status Code,Checked,Why,Step,Host,Reply,Source,Checked At');
    // The evidence of each verdict after its why: the step, the host and its reply, where the check went
    // out from (no --source-address: the machine's default route) and when.
    const times = explain.slice(1).map((row) => row.slice(row.lastIndexOf(',') + 1));
    for (const time of times) {
      expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(Date.parse(time)).toBeGreaterThanOrEqual(Math.floor(started / 1000) * 1000);
      expect(Date.parse(time)).toBeLessThanOrEqual(Date.now());
    }
    expect(explain.slice(1).map((row) => row.slice(0, row.lastIndexOf(',')))).toEqual([
      '1,alice@users.example.net,50,smtp,mx.users.example.net: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused),smtp,mx.users.example.net,250 Accepted,default route',
      '2,nobody@users.example.net,400,smtp,mx.users.example.net: 550 5.1.1 User unknown,smtp,mx.users.example.net,550 5.1.1 User unknown,default route',
      '3,carol@users.example.net,410,smtp,mx.users.example.net: 552 5.2.2 Mailbox full,smtp,mx.users.example.net,552 5.2.2 Mailbox full,default route',
      '4,ann@catchall.example.net,45,smtp,mx.catchall.example.net: the mailbox was accepted; the domain accepts any address (a random one was accepted),smtp,mx.catchall.example.net,250 Accepted,default route',
      '5,someone@nomail.example.net,325,dns,DNS: nomail.example.net has no MX and no address: the domain takes no mail,dns,nomail.example.net,no MX and no address,default route',
      '6,abuse@users.example.net,500,offline,decided offline: Usernames of this kind not accepted,syntax,,,',
    ]);
    expect(explain).toHaveLength(7);
  }, 120_000);

  it('asks a greylisted address again after --retry-delay, and --max-wait 0 leaves it unknown', async () => {
    const { input, home } = workspace(['gina@grey.example.net', 'alice@users.example.net']);
    const retried = await runCli(
      [
        'clean',
        input,
        '--checks',
        'smtp',
        '--retry-delay',
        '1',
        '--max-wait',
        '60',
        ...network,
        ...CLEAN_ARGS,
      ],
      home,
    );
    expect(retried.code, retried.stderr).toBe(0);
    const out = JSON.parse(retried.stdout) as CleanJson;
    expect(codesOf(out.results)).toEqual([
      ['gina@grey.example.net', '50'],
      ['alice@users.example.net', '50'],
    ]);
    // The CLI showed the wait: the count and the time of the retry.
    expect(retried.stderr).toMatch(/^1 row waiting for a retry at \d\d:\d\d /m);

    const { input: again, home: home2 } = workspace(['gina@grey.example.net']);
    // A fresh triple for the server: another sender.
    const none = await runCli(
      [
        'clean',
        again,
        '--checks',
        'smtp',
        '--max-wait',
        '0',
        ...network,
        '--helo-name',
        'other.mailsieve.test',
        '--mail-from',
        'other@mailsieve.test',
        '--json',
        '--explain',
      ],
      home2,
    );
    expect(none.code, none.stderr).toBe(0);
    const noneOut = JSON.parse(none.stdout) as CleanJson;
    expect(codesOf(noneOut.results)).toEqual([['gina@grey.example.net', '5']]);
    expect(readFileSync(noneOut.explain!, 'utf8')).toMatch(/451 4\.7\.1 Greylisted.*temporary refusal/);
    // An unknown's evidence is the reply that left it so.
    expect(readFileSync(noneOut.explain!, 'utf8')).toMatch(
      /,smtp,mx\.grey\.example\.net,"451 4\.7\.1 Greylisted, please try again later",default route,\d{4}-[\d-]+T[\d:]+Z\n$/,
    );
    expect(none.stderr).not.toMatch(/waiting for a retry/);
  }, 120_000);

  it('smtp through a SOCKS5 proxy: the mail servers are reached only through it, with the same codes', async () => {
    // The proxy sends every connection to the farm's real port; the port the CLI is given has no server, so
    // a connection that did not go through the proxy would be refused.
    const proxied: string[] = [];
    const server = socks5.createServer({
      authenticate(user, password, _socket, callback) {
        setImmediate(callback, user === 'probe' && password === 's3cret!' ? undefined : new Error('bad'));
      },
      connectionOptions(destination, _origin, defaults, callback) {
        proxied.push(`${destination.address}:${destination.port}`);
        callback(null, { ...defaults, port: farm.port });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // Closing waits for every connection: the proxy's own ones are ended here, not left to the mail server.
    const tunnels = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      tunnels.add(socket);
      socket.once('close', () => tunnels.delete(socket));
    });
    cleanups.push(
      () =>
        new Promise((resolve) => {
          for (const socket of tunnels) socket.destroy();
          server.close(resolve);
        }),
    );
    const proxyPort = (server.address() as AddressInfo).port;
    const closedPort = 1;
    const { input, home } = workspace([
      'alice@users.example.net',
      'nobody@users.example.net',
      'carol@users.example.net',
      'ann@catchall.example.net',
    ]);
    const connectionsBefore = farm.log('mailbox').connections + farm.log('catchall').connections;
    const run = await runCli(
      [
        'clean',
        input,
        '--checks',
        'smtp',
        '--dns-servers',
        dns.address,
        '--smtp-port',
        String(closedPort),
        '--smtp-proxy',
        `socks5://probe:s3cret!@127.0.0.1:${proxyPort}`,
        '--explain',
        ...CLEAN_ARGS,
      ],
      home,
    );
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as CleanJson;
    expect(codesOf(out.results)).toEqual([
      ['alice@users.example.net', '50'],
      ['nobody@users.example.net', '400'],
      ['carol@users.example.net', '410'],
      ['ann@catchall.example.net', '45'],
    ]);
    expect(out.checks.reason).toBe(
      `smtp: chosen, checking mailboxes (DNS, then the mail servers) through socks5://127.0.0.1:${proxyPort}`,
    );
    const connections =
      farm.log('mailbox').connections + farm.log('catchall').connections - connectionsBefore;
    expect(connections).toBeGreaterThan(0);
    expect(proxied).toHaveLength(connections);
    expect(proxied.every((to) => to.endsWith(`:${closedPort}`))).toBe(true);
    // The password is never printed.
    expect(run.stdout + run.stderr).not.toContain('s3cret');
    // Each SMTP verdict's evidence names the proxy it went through (without its user or password); DNS does
    // not go through it.
    const explain = readFileSync(out.explain!, 'utf8');
    expect(explain).not.toContain('s3cret');
    expect(explain).not.toContain('probe:');
    expect(
      explain
        .trim()
        .split('\n')
        .slice(1)
        .map((row) => row.split(',').slice(-5, -1).join(',')),
    ).toEqual([
      `smtp,mx.users.example.net,250 Accepted,socks5 proxy 127.0.0.1:${proxyPort}`,
      `smtp,mx.users.example.net,550 5.1.1 User unknown,socks5 proxy 127.0.0.1:${proxyPort}`,
      `smtp,mx.users.example.net,552 5.2.2 Mailbox full,socks5 proxy 127.0.0.1:${proxyPort}`,
      `smtp,mx.catchall.example.net,250 Accepted,socks5 proxy 127.0.0.1:${proxyPort}`,
    ]);

    const refused = await runCli(
      ['clean', input, '--checks', 'smtp', '--smtp-proxy', 'http://127.0.0.1:8080'],
      home,
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^mailsieve: --smtp-proxy takes socks5:\/\/.*the scheme must be socks5/);
  }, 120_000);

  it('recheck: an offline run’s unknown rows checked against the loopback world, in place, in order', async () => {
    const rows = [
      'alice@users.example.net',
      'not-an-address',
      'nobody@users.example.net',
      'abuse@users.example.net',
      'someone@missing.example.net',
      'alice@users.example.net',
      'ann@catchall.example.net',
    ];
    const { input, home } = workspace(rows);
    const offline = await runCli(['clean', input, '--checks', 'offline', '--json'], home);
    expect(offline.code, offline.stderr).toBe(0);
    const first = JSON.parse(offline.stdout) as CleanJson;
    expect(codesOf(first.results).map(([, code]) => code)).toEqual([
      '10',
      '150',
      '10',
      '500',
      '10',
      '10',
      '10',
    ]);
    const before = readFileSync(first.results, 'utf8').split('\n');

    const run = await runCli(
      [
        'recheck',
        first.results,
        '--checks',
        'smtp',
        ...network,
        '--helo-name',
        'probe.mailsieve.test',
        '--mail-from',
        'check@mailsieve.test',
      ],
      home,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Checks: smtp: chosen/m);
    // Five rows were unknown (checked offline only); alice twice counts as two rows, asked once.
    expect(run.stdout).toMatch(/^Re-check: 5 unknown → 3 valid, 2 invalid$/m);
    const out = first.results.replace(/\.csv$/, '-recheck.csv');
    expect(run.stdout).toContain(`Results: ${out}`);
    expect(codesOf(out)).toEqual([
      ['alice@users.example.net', '50'],
      ['not-an-address', '150'],
      ['nobody@users.example.net', '400'],
      ['abuse@users.example.net', '500'],
      ['someone@missing.example.net', '310'],
      ['alice@users.example.net', '50'],
      ['ann@catchall.example.net', '45'],
    ]);
    // Every other field as it was: the original columns, and the rows not re-checked byte for byte.
    const after = readFileSync(out, 'utf8').split('\n');
    expect(after).toHaveLength(before.length);
    expect(after[0]).toBe(before[0]);
    expect(after[2]).toBe(before[2]);
    expect(after[4]).toBe(before[4]);
    after
      .slice(1, -1)
      .forEach((line, i) =>
        expect(line.split(',').slice(0, 2)).toEqual(before[i + 1].split(',').slice(0, 2)),
      );
    // The duplicate flag is of the whole list: kept.
    const duplicate = before[0].split(',').indexOf('Duplicate');
    expect(after[1].split(',')[duplicate]).toBe('true');
    // The original is untouched.
    expect(readFileSync(first.results, 'utf8').split('\n')).toEqual(before);
  }, 120_000);

  it('auto: falls back to offline within 5 s when the resolver does not answer, and says why', async () => {
    const { input, home } = workspace(['alice@users.example.net', 'not-an-address']);
    const closed = await closedUdpPort();
    // --json: the outcome on stdout, the words (which level ran and why) on stderr.
    const run = await runCli(['clean', input, '--json'], { ...home, MAILSIEVE_DNS_SERVERS: closed });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `^Checks: auto: DNS does not answer \\(asked ${closed.replaceAll('.', '\\.')}\\).*; checking offline`,
        'm',
      ),
    );
    const decided = JSON.parse(run.stdout) as CleanJson & { checks: { decided_in_ms: number } };
    expect(decided.checks.level).toBe('offline');
    expect(decided.offline).toBe(true);
    expect(decided.checks.decided_in_ms).toBeLessThan(5000);
    expect(codesOf(decided.results).map(([, code]) => code)).toEqual(['10', '150']);

    // With the resolver answering (MAILSIEVE_DNS_SERVERS, as the app takes it), auto checks domains.
    const online = await runCli(['clean', input, '--json'], {
      ...home,
      MAILSIEVE_DNS_SERVERS: dns.address,
      MAILSIEVE_SMTP_PORT: String(farm.port),
    });
    expect(online.code, online.stderr).toBe(0);
    const out = JSON.parse(online.stdout) as CleanJson;
    expect(out.checks).toMatchObject({
      level: 'dns',
      choice: 'auto',
      reason: 'auto: DNS answers, checking domains',
    });
    expect(codesOf(out.results)).toEqual([
      ['alice@users.example.net', '20'],
      ['not-an-address', '150'],
    ]);
  }, 120_000);
});
