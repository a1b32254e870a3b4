// `mailsieve doctor` tells the block lists this machine's recent mailbox checks met (issue 39): a list whose
// checks a mail server refused "blocked using zen.spamhaus.org" leaves that in the service's data folder, and
// doctor run afterwards on the same machine — without --source-address, its probe domain's server refusing
// relaying before any block list is looked at — says so with the date and exits 1. Real loopback DNS and SMTP
// servers, the built CLI.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { blockListNamed } from '../../service/engine/online/classify.js';

const SPAMHAUS =
  '554 5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/127.0.0.1';

let dns: TestDnsServer;
let farm: MailFarm;
let network: string[];
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  farm = await startMailFarm(
    {
      listed: { kind: 'smtp', domains: ['listed.example.net'], acceptAll: true, rcptReply: SPAMHAUS },
      // The probe domain's server: it refuses relaying for the probe's postmaster@, as many do.
      probe: {
        kind: 'smtp',
        domains: ['other.example.org'],
        acceptAll: true,
      },
    },
    11,
  );
  dns = await startDnsServer({
    'listed.example.net': { mx: [[10, 'mx.listed.example.net']] },
    'mx.listed.example.net': { a: [farm.ip('listed')] },
    'gmail.com': { mx: [[5, 'gmail-smtp-in.l.google.com']] },
    'gmail-smtp-in.l.google.com': { a: [farm.ip('probe')] },
    'mailsieve.test': { mx: [[10, 'mx.mailsieve.test']] },
    'mx.mailsieve.test': { a: ['127.0.0.9'] },
  });
  network = ['--dns-servers', dns.address, '--smtp-port', String(farm.port)];
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await dns.close();
  await farm.close();
});

const IDENTITY = ['--helo-name', 'probe.mailsieve.test', '--mail-from', 'check@mailsieve.test'];

describe('doctor and the block lists met', () => {
  it('names the list a refusal used, a well-known one, or the server’s own', () => {
    expect(blockListNamed(SPAMHAUS, 'mx.a')).toBe('zen.spamhaus.org');
    expect(blockListNamed('550 5.7.1 listed in bl.spamcop.net', 'mx.a')).toBe('bl.spamcop.net');
    expect(blockListNamed('554 Your IP is on the Barracuda reputation list', 'mx.a')).toBe('Barracuda');
    expect(
      blockListNamed(
        '550 5.7.1 part of their network is on our block list (S3140).',
        'mx.bigmail.example.net',
      ),
    ).toBe("mx.bigmail.example.net's own block list");
  });

  it('says the block list a list met, with the date, where the probe alone calls the machine fine', async () => {
    const dir = tempDir('mailsieve-doctor-bl-');
    cleanups.push(() => dir.remove());
    const dataDir = join(dir.path, 'service');
    const home = { MAILSIEVE_HOME: join(dir.path, 'home') };
    // Before any list: the probe's server takes the identity; nothing met.
    const before = await runCli(['doctor', ...network, ...IDENTITY, '--data-dir', dataDir], home);
    expect(before.stdout).toMatch(/^Identity ok /m);
    expect(before.stdout).toMatch(/^Blocks {3}ok {4}No mailbox check from this machine met a block list/m);

    const input = join(dir.path, 'list.csv');
    writeFileSync(input, 'email\nann@listed.example.net\nbo@listed.example.net\n');
    const cleaned = await runCli(
      ['clean', input, '--checks', 'smtp', ...network, ...IDENTITY, '--data-dir', dataDir, '--json'],
      home,
    );
    expect(cleaned.code, cleaned.stderr).toBe(0);

    const after = await runCli(['doctor', ...network, ...IDENTITY, '--data-dir', dataDir], home);
    const today = new Date().toISOString().slice(0, 10);
    expect(after.stdout).toMatch(/^Identity ok /m);
    expect(after.stdout).toMatch(
      /^Blocks {3}FAIL {2}Mailbox checks from this machine were refused for block lists/m,
    );
    expect(after.stdout).toContain(
      `zen.spamhaus.org: from the default address, 2 times on ${today} — mx.listed.example.net said "${SPAMHAUS}"`,
    );
    expect(after.code).toBe(1);
    expect(after.stderr).toBe(
      "mailsieve: mail servers refused this machine's recent mailbox checks for zen.spamhaus.org (see above): use another source address (--source-address) or ask for its removal.\n",
    );
    const json = await runCli(['doctor', '--json', ...network, ...IDENTITY, '--data-dir', dataDir], home);
    expect(JSON.parse(json.stdout)).toMatchObject({
      block_lists_met: [{ list: 'zen.spamhaus.org', source: '', host: 'mx.listed.example.net', times: 2 }],
    });
  });
});
