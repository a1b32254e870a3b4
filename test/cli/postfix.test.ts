// Mailbox checks against real mail software: Debian's Postfix with postgrey on loopback (test/helpers/postfix.ts),
// hardened as many real servers are — fully-qualified HELO name and sender required, the sender's domain must
// resolve, greylisting, Postfix's error tarpit, a connection rate limit. Through the built CLI, as a new user
// runs it: `doctor` names the refused step and the option to set, `clean --checks smtp` gives the right code for
// every kind of address, a refused identity ends its rows unknown at once with the cause in the summary, and 600
// addresses at one domain all get their real code within the server's limits.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, outputOf, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { startPostfix, type PostfixOptions, type PostfixWorld } from '../helpers/postfix.js';

/** The identity a well-set-up verifier gives: a name and a sender domain that DNS knows. */
const IDENTITY = ['--helo-name', 'probe.mailsieve.test', '--mail-from', 'check@mailsieve.test'];
const SENDER_ZONES = {
  'mailsieve.test': { mx: [[10, 'mx.mailsieve.test']] as [number, string][] },
  'mx.mailsieve.test': { a: ['127.0.0.9'] },
};

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * Runs the built CLI on a machine whose host name has no dot (its own UTS namespace: the host's name is not
 * touched), so the default HELO name is `localhost` and the sender `postmaster@localhost`, as on the machine
 * of the issue.
 */
function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  const child = spawn('unshare', ['--uts', 'sh', '-c', `hostname mailsieve-box && exec ${quoted}`], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return outputOf(child);
}

/** `clean --checks smtp` of a list at a Postfix world, as a new user runs it. */
function cleanSmtp(
  world: PostfixWorld,
  input: string,
  home: Record<string, string>,
  options: readonly string[],
): Promise<CliResult> {
  return runCli(['clean', input, '--checks', 'smtp', ...world.network, ...options], home);
}

function workspace(rows: readonly string[]): { input: string; home: Record<string, string> } {
  const dir = tempDir('mailsieve-postfix-');
  cleanups.push(() => dir.remove());
  const input = join(dir.path, 'people.csv');
  writeFileSync(input, ['email', ...rows].join('\n') + '\n');
  return { input, home: { MAILSIEVE_HOME: join(dir.path, 'home') } };
}

/** address → Validation Code, from a results file. */
function codesOf(path: string): Map<string, string> {
  const [header, ...rows] = readFileSync(path, 'utf8').trim().split('\n');
  const code = header.split(',').indexOf('Validation Code');
  return new Map(rows.map((row) => [row.split(',')[0], row.split(',')[code]]));
}

describe('against a real Postfix with postgrey', () => {
  let world: PostfixWorld;

  beforeAll(async () => {
    world = await startPostfix({
      domains: [
        { name: 'acme.net', users: ['alice', 'bob'], full: ['fullbox'], disabled: ['gone'] },
        { name: 'any.net', catchAll: true },
        { name: 'grey.net', users: ['gina'], greylist: true },
        { name: 'implicit.net', users: ['ivan'] },
      ],
      greylistDelayS: 2,
      zones: {
        ...SENDER_ZONES,
        'nullmx.net': { mx: [[0, '.']] },
        'dead.net': { mx: [[10, 'mx.dead.net']] },
        // Nothing listens there: the connection is refused.
        'mx.dead.net': { a: ['127.0.0.2'] },
      },
    });
    cleanups.push(() => world.close());
    // No MX: mail goes to the domain's own address (RFC 5321 §5.1).
    world.dns.setZone('implicit.net', { a: [world.ip] });
  }, 60_000);

  describe('mailsieve doctor', () => {
    it('exits non-zero with the host name-derived HELO localhost, naming the refused step and the option', async () => {
      const result = await runCli(['doctor', ...world.network, '--probe-domain', 'acme.net']);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/^SMTP {5}ok {4}Port \d+ reachable/m);
      expect(result.stdout).toMatch(
        /^Identity FAIL {2}The mail server refused the HELO name 'localhost' \(504 5\.5\.2 <localhost>: Helo command rejected: need fully-qualified hostname\): set a fully-qualified name whose DNS points at this machine's address \(set --helo-name\)\. The sender postmaster@localhost will be refused by many mail servers: its domain is not fully-qualified/m,
      );
      expect(result.stderr).toMatch(/set --helo-name/);
    });

    it('flags a sender whose domain does not resolve before any probe, and names MAIL FROM when refused', async () => {
      const badSender = ['--helo-name', 'probe.mailsieve.test', '--mail-from', 'check@nowhere.test'];
      const closed = await runCli([
        'doctor',
        '--dns-servers',
        world.dns.address,
        '--smtp-port',
        '1',
        '--probe-domain',
        'acme.net',
        ...badSender,
      ]);
      expect(closed.code).toBe(1);
      expect(closed.stdout).toMatch(
        /^Identity FAIL {2}Not tried: .* The sender's domain nowhere\.test has no MX or address record in DNS: servers that check the sender refuse it\. Set a sender address of a domain you own \(set --mail-from\)\.$/m,
      );
      const refused = await runCli(['doctor', ...world.network, '--probe-domain', 'acme.net', ...badSender]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(
        /^Identity FAIL {2}The mail server refused the sender check@nowhere\.test \(450 4\.1\.8 <check@nowhere\.test>: Sender address rejected: Domain not found\): .*\(set --mail-from\)\.$/m,
      );
      expect(refused.stderr).toMatch(/set --mail-from/);
    });

    it('says mailbox checks can run with a proper HELO name and sender', async () => {
      const result = await runCli(['doctor', ...world.network, '--probe-domain', 'acme.net', ...IDENTITY]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        /^Identity ok {4}mx\.acme\.net took the HELO name 'probe\.mailsieve\.test' and the sender check@mailsieve\.test \(postmaster@acme\.net was accepted\)\.$/m,
      );
      expect(result.stdout).toMatch(/^Mailbox checks can run here/m);
    });
  });

  it('clean --checks smtp gives the right code for every kind of address', async () => {
    const rows = {
      'alice@acme.net': '50',
      'nobody@acme.net': '400',
      'fullbox@acme.net': '410',
      'gone@acme.net': '400',
      'whoever@any.net': '45',
      'gina@grey.net': '50',
      'ivan@implicit.net': '50',
      'someone@nullmx.net': '325',
      'someone@missing.net': '310',
      'someone@dead.net': '5',
    };
    const { input, home } = workspace(Object.keys(rows));
    const run = await cleanSmtp(world, input, home, [
      ...IDENTITY,
      '--probe-domain',
      'acme.net',
      // postgrey lets a retry through after 2 s.
      '--retry-delay',
      '4',
      '--max-wait',
      '30',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Identity: mx\.acme\.net took the HELO name/m);
    const results = /^Results: (.*)$/m.exec(run.stdout)![1];
    expect(Object.fromEntries(codesOf(results))).toEqual(rows);
    expect(run.stdout).toMatch(/^ {4}1 unknown: mx\.dead\.net could not be reached$/m);
  }, 90_000);

  it('clean with the refused default identity ends every row unknown at once, and names the cause and the option', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => `user${i}@acme.net`);
    const { input, home } = workspace(rows);
    const started = Date.now();
    const run = await cleanSmtp(world, input, home, ['--probe-domain', 'acme.net', '--max-wait', '120']);
    expect(run.code, run.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
    // Said before the list: the preflight's conversation.
    expect(run.stdout).toMatch(
      /^Identity: The mail server refused the HELO name 'localhost' .*\(set --helo-name\)\./m,
    );
    const results = /^Results: (.*)$/m.exec(run.stdout)![1];
    expect([...codesOf(results).values()]).toEqual(rows.map(() => '5'));
    expect(run.stdout).toMatch(
      /^ {4}40 unknown: mx\.acme\.net refused this machine's HELO name — set --helo-name$/m,
    );
  }, 60_000);
});

describe('a heavy domain at a real Postfix', () => {
  let world: PostfixWorld;

  beforeAll(async () => {
    world = await startPostfix({
      domains: [{ name: 'bulk.net', users: Array.from({ length: 200 }, (_, i) => `user${i}`) }],
      connectionRateLimit: 60,
      zones: SENDER_ZONES,
    });
    cleanups.push(() => world.close());
  }, 60_000);

  it('600 addresses at one domain (400 unknown users) all get their real code within 3 minutes, never refused for rate', async () => {
    // Mixed as a real list is: one existing user, then two unknown ones, and so on.
    const expected = new Map<string, string>();
    for (let i = 0; i < 200; i++) {
      expected.set(`user${i}@bulk.net`, '50');
      expected.set(`missing${2 * i}@bulk.net`, '400');
      expected.set(`missing${2 * i + 1}@bulk.net`, '400');
    }
    const rows = [...expected.keys()];
    const { input, home } = workspace(rows);
    const started = Date.now();
    const run = await cleanSmtp(world, input, home, [
      ...IDENTITY,
      '--probe-domain',
      'bulk.net',
      '--retry-delay',
      '20',
      '--max-wait',
      '150',
    ]);
    const took = Date.now() - started;
    expect(run.code, run.stderr).toBe(0);
    const results = /^Results: (.*)$/m.exec(run.stdout)![1];
    const codes = codesOf(results);
    const wrong = [...expected].filter(([address, code]) => codes.get(address) !== code);
    expect(
      wrong.length,
      `${wrong.length} rows without their real code, e.g. ${JSON.stringify(wrong.slice(0, 3))}`,
    ).toBe(0);
    expect(took).toBeLessThan(180_000);
    expect(world.log()).not.toMatch(/too many connections/);
    // Postfix's error tarpit was never reached: no "too many errors" disconnect.
    expect(world.log()).not.toMatch(/too many errors/);
  }, 240_000);
});

/**
 * A domain of `count` addresses at a Postfix with per-client limits (issue #26): 60% real mailboxes, mixed as a
 * real list is; `clean --checks smtp` must give every row its code within `withinMs`, and what Postfix's log
 * says of the verifier is returned for the test to judge.
 */
async function heavyDomainAt(
  limits: Omit<PostfixOptions, 'domains' | 'zones'>,
  count: number,
): Promise<{ took: number; wrong: [string, string][]; world: PostfixWorld; stdout: string; stderr: string }> {
  const real = Math.round(count * 0.6);
  const world = await startPostfix({
    domains: [{ name: 'paced.net', users: Array.from({ length: real }, (_, i) => `user${i}`) }],
    zones: SENDER_ZONES,
    ...limits,
  });
  cleanups.push(() => world.close());
  const expected = new Map<string, string>();
  for (let i = 0, r = 0, u = 0; i < count; i++)
    if (i % 5 === 1 || i % 5 === 3) expected.set(`missing${u++}@paced.net`, '400');
    else expected.set(`user${r++}@paced.net`, '50');
  const { input, home } = workspace([...expected.keys()]);
  const started = Date.now();
  const run = await cleanSmtp(world, input, home, [
    ...IDENTITY,
    '--probe-domain',
    'paced.net',
    '--retry-delay',
    '20',
    '--max-wait',
    '150',
  ]);
  const took = Date.now() - started;
  expect(run.code, run.stderr).toBe(0);
  const codes = codesOf(/^Results: (.*)$/m.exec(run.stdout)![1]);
  const wrong = [...expected].filter(([address, code]) => codes.get(address) !== code);
  return { took, wrong, world, stdout: run.stdout, stderr: run.stderr };
}

describe('a heavy domain at a Postfix with per-client limits (issue #26)', () => {
  it('count limit 2, rate limit 30 a minute: 600 addresses get their code within 60 s, never refused', async () => {
    const { took, wrong, world } = await heavyDomainAt(
      { connectionCountLimit: 2, connectionRateLimit: 30 },
      600,
    );
    expect(wrong.length, `rows without their code, e.g. ${JSON.stringify(wrong.slice(0, 3))}`).toBe(0);
    expect(took).toBeLessThan(60_000);
    expect(world.refusals('127.0.0.1')).toEqual({ concurrency: 0, rate: 0, recipientRate: 0 });
    expect(world.log()).not.toMatch(/too many errors/);
  }, 120_000);

  it('count limit 1: 600 addresses within 90 s, refused for connections at once at most once', async () => {
    const { took, wrong, world } = await heavyDomainAt(
      { connectionCountLimit: 1, connectionRateLimit: 30 },
      600,
    );
    expect(wrong.length, `rows without their code, e.g. ${JSON.stringify(wrong.slice(0, 3))}`).toBe(0);
    expect(took).toBeLessThan(90_000);
    const refusals = world.refusals('127.0.0.1');
    expect(refusals.concurrency).toBeLessThanOrEqual(1);
    expect(refusals.rate).toBe(0);
  }, 150_000);

  it("recipient rate limit 100 a minute: 160 addresses within the server's bound, refused in one burst at most", async () => {
    const { took, wrong, world, stdout, stderr } = await heavyDomainAt({ recipientRateLimit: 100 }, 160);
    expect(wrong.length, `rows without their code, e.g. ${JSON.stringify(wrong.slice(0, 3))}`).toBe(0);
    // The server takes 100 recipients a minute (the preflight's and the catch-all probe's count too): 162
    // need a second minute; a verifier that learns the limit finishes early in it.
    expect(took).toBeLessThan(120_000);
    const refusals = world.refusals('127.0.0.1');
    // Refused once, as far as one pipelined batch goes (at most the 10 refusals a conversation has), then kept under it.
    expect(refusals.recipientRate).toBeGreaterThanOrEqual(1);
    expect(refusals.recipientRate).toBeLessThanOrEqual(10);
    expect(stdout).not.toMatch(/unknown/);
    // Said while the list waited (clean's progress): which host sets the pace, and what it allows.
    expect(stderr).toMatch(
      /^Pace: mx\.paced\.net allows this computer 2 connections at a time, about 30 a minute and about \d+ addresses a minute: \d+ addresses wait for it$/m,
    );
  }, 180_000);

  it('3 recipients a conversation, 120 connections a minute: 300 addresses within 75 s, every code right', async () => {
    // Postfix answers the 4th RCPT of a conversation "452 4.5.3 Error: too many recipients" (as Microsoft's
    // servers answer the 2nd): the server's limit, not the address's answer. 300 addresses need 100
    // conversations, 50 s at 120 a minute; a verifier that kept its own 30 a minute took 198 s.
    const { took, wrong, world, stdout } = await heavyDomainAt(
      { recipientLimit: 3, connectionRateLimit: 120 },
      300,
    );
    expect(wrong.length, `rows without their code, e.g. ${JSON.stringify(wrong.slice(0, 3))}`).toBe(0);
    expect(took).toBeLessThan(75_000);
    expect(world.refusals('127.0.0.1')).toEqual({ concurrency: 0, rate: 0, recipientRate: 0 });
    // Learnt from the first conversation (and one opened beside it before the answer came, at most); after
    // that, no conversation asks past it.
    expect(world.overRecipientLimit('127.0.0.1').conversations).toBeLessThanOrEqual(2);
    expect(stdout).not.toMatch(/unknown/);
  }, 240_000);
});
